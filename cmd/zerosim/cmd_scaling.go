package main

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"
	"github.com/zerosim/zerosim/reports"
	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/zero"
)

func init() { commands = append(commands, newScalingCmd) }

func newScalingCmd(a *app) *cobra.Command {
	var maxRanks, minRanks, factor int
	var symmetric bool
	cmd := &cobra.Command{
		Annotations: map[string]string{writesFiles: "yes"},
		Use:         "scaling [FILE]",
		Short:       "Measure how the simulator's time and memory grow with the number of ranks",
		Long: `scaling replays one step of a scenario (default: the embedded gpt3-175b-16k,
GPT-3 175B with ZeRO-3 and prefetch 2) at growing cluster sizes, simulating
every rank, and reports the wall time, events and memory of each replay on this
machine. With -o DIR it writes scaling.png and scaling.svg (log–log).`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			file := "gpt3-175b-16k"
			if len(args) == 1 {
				file = args[0]
			}
			base, err := a.loadScenario(file)
			if err != nil {
				return err
			}
			if minRanks < 1 || maxRanks < minRanks || factor < 2 {
				return inputError{fmt.Errorf("--min %d, --max %d, --factor %d: need 1 ≤ min ≤ max and factor ≥ 2", minRanks, maxRanks, factor)}
			}
			gpn := base.Cluster.GPUsPerNode
			var pts []reports.ScalingPoint
			for ranks := max(minRanks, gpn); ranks <= maxRanks; ranks *= factor {
				s := *base
				s.Cluster.Nodes = ranks / gpn
				s.Parallelism.DP = ranks / s.Parallelism.CP
				s.Parallelism.K = 1
				if err := scenarios.Resolve(&s); err != nil {
					return inputError{fmt.Errorf("%d ranks: %w", ranks, err)}
				}
				pt, err := measure(&s, zero.Options{Full: !symmetric})
				if err != nil {
					return err
				}
				pts = append(pts, pt)
				fmt.Fprintf(a.err, "%d ranks: %.3f s\n", pt.Ranks, pt.Seconds)
			}
			if err := reports.WriteScalingTable(a.out, pts); err != nil {
				return err
			}
			if a.outDir != "" {
				if err := reports.BeginOutputDir(a.outDir); err != nil {
					return inputError{fmt.Errorf("-o: %w", err)}
				}
				files, err := reports.WriteScalingPlots(a.outDir, base.Name, pts)
				if err == nil {
					err = reports.FinishOutputDir(a.outDir, files)
				}
				if err != nil {
					return err
				}
				for _, f := range files {
					fmt.Fprintln(a.out, "wrote", f)
				}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.IntVar(&minRanks, "min", 8, "smallest number of ranks")
	f.IntVar(&maxRanks, "max", 16384, "largest number of ranks")
	f.IntVar(&factor, "factor", 4, "ranks grow by this factor per point")
	f.BoolVar(&symmetric, "symmetric", false, "use the symmetric fast path instead of simulating every rank")
	return cmd
}

// measure replays s once after a GC and samples the live heap meanwhile.
func measure(s *scenarios.Scenario, opt zero.Options) (reports.ScalingPoint, error) {
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	var peak atomic.Int64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if v := int64(ms.HeapAlloc); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	t0 := time.Now()
	res, err := zero.Replay(s, opt)
	elapsed := time.Since(t0)
	close(stop)
	<-sampled
	// A replay shorter than a sampling tick is seen once more here, with its
	// result still live.
	var end runtime.MemStats
	runtime.ReadMemStats(&end)
	if v := int64(end.HeapAlloc); v > peak.Load() {
		peak.Store(v)
	}
	if err != nil {
		return reports.ScalingPoint{}, err
	}
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	return reports.ScalingPoint{Ranks: res.N, Seconds: elapsed.Seconds(), AllocBytes: int64(after.TotalAlloc - before.TotalAlloc),
		PeakHeapBytes: peak.Load() - int64(before.HeapAlloc), Events: res.Events, Collectives: len(res.Collectives), StepPs: int64(res.StepTime)}, nil
}
