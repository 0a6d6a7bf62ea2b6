package main

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/zerosim/zerosim/collectives"
	"github.com/zerosim/zerosim/reports"
	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/sim"
	"github.com/zerosim/zerosim/topology"
	"github.com/zerosim/zerosim/units"
	"github.com/zerosim/zerosim/zero"
)

func init() { commands = append(commands, newCollectiveCmd) }

type collectiveOpts struct {
	scenario                string
	nodes, gpusPerNode      int
	intraBW, interBW        string
	latency, intraLat, iLat string
	nics                    string
	nicsPerNode             int
	op, size, group, algo   string
	k                       int
	concurrent              bool
	calibration             string
	changed                 func(string) bool
}

func newCollectiveCmd(a *app) *cobra.Command {
	o := &collectiveOpts{}
	cmd := &cobra.Command{
		Use:   "collective",
		Short: "Simulate one collective (like nccl-tests) on a cluster",
		Long: `collective runs one reduce-scatter, all-gather or all-reduce on a simulated
cluster and prints, per buffer size, the time, algbw and busbw in nccl-tests'
conventions (size = all-gather output / reduce-scatter input; busbw = algbw ×
(n−1)/n for reduce-scatter and all-gather, × 2(n−1)/n for all-reduce) and the
wire bytes per link class (total, and the busiest rank's).

The cluster comes from --scenario FILE, else from the default example; the
cluster flags override it. Changing --nodes or --gpus-per-node makes every
GPU a rank.

--group is all (the dp·cp group), intra (the first of the K intra groups of
N/K contiguous ranks), inter (the first of the N/K inter groups of K ranks)
or explicit ranks in ring order (0,2,4,6). K is --k, else the scenario's
parallelism.k when it is > 1, else the number of nodes. With --concurrent,
every intra (or inter) group runs at the same time, as in a training step;
the time is the last one's finish and the bytes are summed over the groups.`,
		Example: `  zerosim collective --op allreduce --size 1MiB:1GiB
  zerosim collective --nodes 4 --gpus-per-node 8 --intra-bw 300GB/s --inter-bw 25GB/s --latency 500ns --size 64MiB --algo hierarchical
  zerosim collective --scenario seed000-k4.yaml --group inter --size 32MiB --format json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.changed = cmd.Flags().Changed
			return runCollective(a, o, a.out)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.scenario, "scenario", "", "scenario `FILE` giving the cluster (default: the default example)")
	f.IntVar(&o.nodes, "nodes", 0, "number of nodes")
	f.IntVar(&o.gpusPerNode, "gpus-per-node", 0, "GPUs per node")
	f.StringVar(&o.intraBW, "intra-bw", "", "intra-node (NVLink) bandwidth per GPU per direction, e.g. 300GB/s")
	f.StringVar(&o.interBW, "inter-bw", "", "inter-node bandwidth per NIC per direction, e.g. 25GB/s or 400Gbps")
	f.StringVar(&o.latency, "latency", "", "latency per step of both link classes, e.g. 500ns")
	f.StringVar(&o.intraLat, "intra-latency", "", "latency per step of intra-node links")
	f.StringVar(&o.iLat, "inter-latency", "", "latency per step of inter-node links")
	f.StringVar(&o.nics, "nics", "", "per_gpu (one NIC per GPU) or per_node (shared NICs)")
	f.IntVar(&o.nicsPerNode, "nics-per-node", 0, "NICs per node with --nics per_node")
	f.StringVar(&o.op, "op", "allreduce", "allreduce, reducescatter or allgather")
	f.StringVar(&o.size, "size", "64MiB", "buffer size, or a range LO:HI (one row per power of two)")
	f.StringVar(&o.group, "group", "all", "all, intra, inter or ranks such as 0,2,4,6")
	f.StringVar(&o.algo, "algo", "auto", "auto (NCCL's choice), nvls, nvlstree, or the alpha-beta ring, hierarchical or tree")
	f.IntVar(&o.k, "k", 0, "K for --group intra/inter")
	f.StringVar(&o.calibration, "calibration", "", "calibration `FILE` (zerosim calibrate) instead of the scenario's")
	f.BoolVar(&o.concurrent, "concurrent", false, "with --group intra or inter, run every group of that kind at once (they contend for shared links)")
	return cmd
}

// collectiveScenario loads the base scenario and applies the cluster flags.
func collectiveScenario(a *app, o *collectiveOpts) (*scenarios.Scenario, error) {
	s, err := a.loadScenario(o.scenario)
	if err != nil {
		return nil, err
	}
	c := &s.Cluster
	bw := func(flag, v string, dst *units.Bandwidth) error {
		if !o.changed(flag) {
			return nil
		}
		b, err := units.ParseBandwidth(v)
		if err != nil {
			return inputError{fmt.Errorf("--%s: %w", flag, err)}
		}
		*dst = b
		return nil
	}
	lat := func(flag, v string, dsts ...*units.Duration) error {
		if !o.changed(flag) {
			return nil
		}
		d, err := units.ParseDuration(v)
		if err != nil {
			return inputError{fmt.Errorf("--%s: %w", flag, err)}
		}
		for _, dst := range dsts {
			*dst = d
		}
		return nil
	}
	for _, err := range []error{
		bw("intra-bw", o.intraBW, &c.Intra.Bandwidth),
		bw("inter-bw", o.interBW, &c.Inter.Bandwidth),
		lat("latency", o.latency, &c.Intra.Latency, &c.Inter.Latency),
		lat("intra-latency", o.intraLat, &c.Intra.Latency),
		lat("inter-latency", o.iLat, &c.Inter.Latency),
	} {
		if err != nil {
			return nil, err
		}
	}
	if o.changed("nics") {
		c.NICs = scenarios.NICSharing(o.nics)
	}
	if o.changed("nics-per-node") {
		c.NICsPerNode = o.nicsPerNode
	}
	if o.changed("nodes") || o.changed("gpus-per-node") {
		if o.changed("nodes") {
			if o.nodes < 1 {
				return nil, inputError{fmt.Errorf("--nodes %d: need at least 1", o.nodes)}
			}
			c.Nodes = o.nodes
		}
		if o.changed("gpus-per-node") {
			if o.gpusPerNode < 1 {
				return nil, inputError{fmt.Errorf("--gpus-per-node %d: need at least 1", o.gpusPerNode)}
			}
			c.GPUsPerNode = o.gpusPerNode
		}
		if c.Nodes > 1<<20 || c.GPUsPerNode > 1<<10 {
			return nil, inputError{fmt.Errorf("--nodes %d × --gpus-per-node %d is too large", c.Nodes, c.GPUsPerNode)}
		}
		// Every GPU becomes a rank; keep cp when it divides the GPUs.
		cp := max(s.Parallelism.CP, 1)
		if (c.Nodes*c.GPUsPerNode)%cp != 0 {
			cp = 1
		}
		s.Parallelism.CP = cp
		s.Parallelism.DP = c.Nodes * c.GPUsPerNode / cp
		s.Cluster.LinkOverrides = nil // they name nodes of the old cluster
		s.Cluster.GPUOverrides = nil
	}
	return s, nil
}

// collectiveGroup resolves --group: the groups to run (one unless
// --concurrent).
func collectiveGroup(o *collectiveOpts, s *scenarios.Scenario, t *topology.Topology) ([][]int, error) {
	k := o.k
	if !o.changed("k") {
		k = 1
		if s.Parallelism.K > 1 {
			k = s.Parallelism.K
		} else if t.Ranks()%t.Nodes() == 0 {
			k = t.Nodes()
		}
	}
	if o.concurrent && o.group != "intra" && o.group != "inter" {
		return nil, fmt.Errorf("--concurrent needs --group intra or inter")
	}
	switch o.group {
	case "all", "":
		return [][]int{t.All()}, nil
	case "intra", "inter":
		var gs [][]int
		var err error
		if o.group == "intra" {
			gs, err = t.IntraGroups(k)
		} else {
			gs, err = t.InterGroups(k)
		}
		if err != nil {
			return nil, fmt.Errorf("--group %s: %w", o.group, err)
		}
		if o.concurrent {
			return gs, nil
		}
		return gs[:1], nil
	}
	var g []int
	for _, f := range strings.Split(o.group, ",") {
		r, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return nil, fmt.Errorf("--group %q: use all, intra, inter or ranks such as 0,2,4,6", o.group)
		}
		g = append(g, r)
	}
	return [][]int{g}, nil
}

// collectiveSizes parses --size: one size or LO:HI, doubling from LO.
func collectiveSizes(v string) ([]units.Bytes, error) {
	lo, hi, isRange := strings.Cut(v, ":")
	a, err := units.ParseBytes(lo)
	if err != nil {
		return nil, fmt.Errorf("--size: %w", err)
	}
	if !isRange {
		return []units.Bytes{a}, nil
	}
	b, err := units.ParseBytes(hi)
	if err != nil {
		return nil, fmt.Errorf("--size: %w", err)
	}
	if a <= 0 || b < a {
		return nil, fmt.Errorf("--size %q: a range needs 0 < LO ≤ HI", v)
	}
	var out []units.Bytes
	for s := a; s <= b && len(out) < 64; s *= 2 {
		out = append(out, s)
		if s > b/2 {
			break
		}
	}
	return out, nil
}

func describeCluster(s *scenarios.Scenario, t *topology.Topology) string {
	desc := fmt.Sprintf("%d nodes × %d GPUs", t.Nodes(), t.GPUsPerNode())
	seen := [topology.NumClasses]bool{}
	for _, l := range t.Links() {
		if seen[l.Class] || (l.Class == topology.Intra && t.GPUsPerNode() == 1) || (l.Class == topology.Inter && t.Nodes() == 1) {
			continue
		}
		seen[l.Class] = true
		desc += fmt.Sprintf(", %s %v %v", l.Class, l.Bandwidth, l.Latency)
	}
	if t.Nodes() > 1 {
		nics := s.Cluster.NICs
		if nics == "" {
			nics = "per_gpu"
		}
		desc += ", nics " + string(nics)
	}
	return desc
}

func runCollective(a *app, o *collectiveOpts, w io.Writer) error {
	op, err := collectives.ParseOp(o.op)
	if err != nil {
		return inputError{fmt.Errorf("--op: %w", err)}
	}
	algo, err := collectives.ParseAlgo(o.algo)
	if err != nil {
		return inputError{fmt.Errorf("--algo: %w", err)}
	}
	sizes, err := collectiveSizes(o.size)
	if err != nil {
		return inputError{err}
	}
	s, err := collectiveScenario(a, o)
	if err != nil {
		return err
	}
	topo, err := topology.Build(s)
	if err != nil {
		return inputError{err}
	}
	groups, err := collectiveGroup(o, s, topo)
	if err != nil {
		return inputError{err}
	}
	model, err := zero.Model(s)
	if err != nil {
		return inputError{err}
	}
	if o.calibration != "" {
		data, err := os.ReadFile(o.calibration)
		if err != nil {
			return inputError{fmt.Errorf("--calibration: %w", err)}
		}
		cf, err := scenarios.ParseCalibration(o.calibration, data)
		if err != nil {
			return inputError{fmt.Errorf("--calibration %w", err)}
		}
		cal, err := collectives.CalibrationOf(cf)
		if err != nil {
			return inputError{fmt.Errorf("--calibration %s: %w", o.calibration, err)}
		}
		model = cal.Model(collectives.HardwareOf(s))
	}
	group := groups[0]
	rep := &reports.CollectiveReport{Op: op.String(), Algorithm: algo.String(), Cluster: describeCluster(s, topo), Group: group, Groups: len(groups)}
	for _, c := range topology.Classes() {
		rep.Classes = append(rep.Classes, c.String())
	}
	n := int64(len(group))
	for _, size := range sizes {
		var cf units.Duration
		eng := sim.New()
		fab := collectives.NewFabricOptions(eng, topo, collectives.FabricOptions{Model: model})
		var hs []*collectives.Handle
		for _, g := range groups {
			spec := collectives.Spec{Op: op, Algo: algo, Group: g, Bytes: size}
			h, err := fab.Start(spec, nil)
			if err != nil {
				return inputError{err}
			}
			var c units.Duration
			if h.Plan.Timed {
				c, err = aloneTime(topo, model, spec)
			} else {
				c, err = collectives.ClosedForm(topo, spec)
			}
			if err != nil {
				return inputError{err}
			}
			cf = max(cf, c)
			hs = append(hs, h)
		}
		eng.Run()
		var end sim.Time
		for _, h := range hs {
			end = max(end, h.End())
		}
		h := hs[0]
		ps := int64(end - h.Start())
		name := h.Plan.Algo.String()
		if h.Plan.Timed {
			name += "/" + h.Plan.Proto.String()
		}
		row := reports.CollectiveRow{Size: int64(size), Count: int64(size) / 2, Algorithm: name, TimePS: ps, ClosedFormPS: int64(cf)}
		if ps > 0 {
			row.AlgBW = float64(size) * 1e3 / float64(ps) // B/ps·1e12 / 1e9
			factor := float64(n-1) / float64(n)
			if op == collectives.AllReduce {
				factor *= 2
			}
			row.BusBW = row.AlgBW * factor
		}
		tr := fab.Traffic()
		for _, c := range topology.Classes() {
			row.Bytes = append(row.Bytes, reports.ClassBytes{Class: c.String(), Total: int64(tr.Total[c]), MaxPerRank: int64(tr.MaxSent(c))})
		}
		rep.Rows = append(rep.Rows, row)
	}
	switch a.format {
	case "json":
		return reports.WriteCollectiveJSON(w, rep)
	case "csv":
		return reports.WriteCollectiveCSV(w, rep)
	case "nccl-tests":
		return reports.WriteCollectiveNCCLTests(w, rep)
	}
	return reports.WriteCollectiveTable(w, rep)
}

// aloneTime is a timed collective's time alone on the links: NCCL's model
// time, as the engine rounds it.
func aloneTime(topo *topology.Topology, m *collectives.Model, spec collectives.Spec) (units.Duration, error) {
	eng := sim.New()
	h, err := collectives.NewFabricOptions(eng, topo, collectives.FabricOptions{Model: m, NoTraffic: true}).Start(spec, nil)
	if err != nil {
		return 0, err
	}
	eng.Run()
	return units.Duration(h.End() - h.Start()), nil
}
