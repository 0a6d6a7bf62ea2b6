package sweep

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"sync"

	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/zero"
)

// NetworkOptions tune NetworkSearch.
type NetworkOptions struct {
	// Tolerance is how far above its compute-bound time a step may be
	// (default 0.05: within 5 %).
	Tolerance float64
	// Stages are the ZeRO stages (default 0–3).
	Stages []int
	// Points is the number of bandwidths of each step-time curve (default 16).
	Points int
	Jobs   int
	// Configs, if it holds a stage, is the configuration searched for it
	// (plan passes each stage's fastest that fits); else Closest's, a
	// stage's configuration nearest to fitting (plan's Closest: none of
	// that stage fits); other stages run the scenario as configured.
	Configs, Closest map[int]Candidate
	// Progress, if set, is called after each replay with the number done
	// and the number to do, which shrinks when a stage's bisection ends
	// early (from several goroutines, never at once).
	Progress func(done, total int)
}

// netProgress counts NetworkSearch's replays for its Progress.
type netProgress struct {
	mu          sync.Mutex
	done, total int
	f           func(done, total int)
}

// add moves the counts by done and total and reports them.
func (p *netProgress) add(done, total int) {
	if p.f == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done, p.total = p.done+done, p.total+total
	p.f(p.done, p.total)
}

// bisectReplays is the most replays leastBandwidth runs: one at the
// lowest bandwidth, then one a step, each step taking the square root of
// the bracket's ratio until it is within 0.1 %.
func bisectReplays() int {
	n := 1
	for r := float64(maxNICBandwidth) / float64(minNICBandwidth); r > 1.001; r = math.Sqrt(r) {
		n++
	}
	return n
}

// stageReplays is the most replays stageBandwidth runs: the nominal step,
// the step at 25 TB/s and the same without overridden links, and a
// bisection.
func stageReplays() int { return 3 + bisectReplays() }

// Bandwidth search bounds, bytes per second per NIC: 1 MB/s to 25 TB/s
// (topology's upper limit on a link).
const (
	minNICBandwidth = int64(1e6)
	maxNICBandwidth = int64(25e12)
)

// StageBandwidth is the network one stage needs.
type StageBandwidth struct {
	Stage int
	K     int
	// Config is the configuration searched, nil for the scenario's own;
	// NoFit is set when it is the stage's closest to fitting, which does
	// not fit the GPU either.
	Config *Candidate
	NoFit  bool
	// Changed are Config's --set overrides (Candidate.Sets) that change the
	// file's scenario, in that order: with the stage's, what
	// `zerosim run FILE --set …` needs to reproduce NominalStep.
	Changed []string
	// ComputeBound is the step's compute (forward, backward, optimizer) on
	// the rank that computes the longest at its GPU's speed
	// (cluster.gpu_overrides; zero.RankStats.Alone), the step time no
	// network can beat; Target is ComputeBound · (1 + tolerance).
	// ComputeRank is that rank, −1 when every rank computes as long;
	// FullSpeedCompute the compute at full speed (zero.Result.Compute):
	// ComputeRank holds a rank only when the two differ.
	ComputeBound     int64
	Target           int64
	ComputeRank      int
	FullSpeedCompute int64
	// NICBandwidth is the least cluster.inter.bandwidth (bytes/s per NIC)
	// whose step is within Target, PerGPU the same per GPU (NICs × NIC
	// bandwidth / GPUs per node); 0 when even 25 TB/s is not enough:
	// Above then says what the step is bound by.
	NICBandwidth int64
	PerGPU       float64
	Step         int64
	// NominalStep is the step at the scenario's own bandwidth.
	NominalStep int64
	Above       *Remainder
	// Curve is the step time at log-spaced bandwidths per GPU.
	Curve []BandwidthPoint
}

// BandwidthPoint is one point of a step-time curve.
type BandwidthPoint struct {
	PerGPU float64
	Step   int64
}

// NetworkPlan answers "what inter-node bandwidth does each ZeRO stage
// need to stay compute-bound" (deepspeedai/DeepSpeed#2928).
type NetworkPlan struct {
	Scenario  string
	Tolerance float64
	// NominalPerGPU is the scenario's inter-node bandwidth per GPU.
	NominalPerGPU float64
	Stages        []StageBandwidth
	// Degraded are the scenario's links slower than their class
	// (cluster.link_overrides): the sweep sets cluster.inter.bandwidth and
	// leaves them at their values.
	Degraded []scenarios.DegradedLink
}

// nicShare is the number of GPUs per NIC: per-GPU bandwidth = NIC bandwidth
// / share.
func nicShare(src Source) (float64, error) {
	s, err := src.Load()
	if err != nil {
		return 0, err
	}
	if s.Cluster.NICs == "per_node" && s.Cluster.NICsPerNode > 0 {
		return float64(s.Cluster.GPUsPerNode) / float64(s.Cluster.NICsPerNode), nil
	}
	return 1, nil
}

// stepAt replays src at stage (in configuration c, if set) with the NIC
// bandwidth bw.
func stepAt(src Source, stage int, c *Candidate, bw int64) (*zero.Result, error) {
	s, err := loadAt(src, stage, c, bw)
	if err != nil {
		return nil, err
	}
	return zero.Replay(s, zero.Options{NoCollectives: true})
}

// loadAt loads what stepAt replays.
func loadAt(src Source, stage int, c *Candidate, bw int64) (*scenarios.Scenario, error) {
	return src.Load(loadSets(stage, c, bw)...)
}

// loadSets are loadAt's --set overrides.
func loadSets(stage int, c *Candidate, bw int64) []string {
	sets := []string{"parallelism.zero_stage=" + strconv.Itoa(stage)}
	if c != nil {
		sets = c.Sets()
	} else if stage == 0 {
		sets = append(sets, "parallelism.k=1")
	}
	return append(sets, "cluster.inter.bandwidth="+strconv.FormatInt(bw, 10)+"B/s")
}

// NetworkSearch finds, for each stage of src as configured (K = 1 at stage
// 0), the least inter-node bandwidth at which the step stays within the
// tolerance of its compute-bound time, by bisection over the replay on the
// NIC bandwidth until the bracket is within 0.1 % (the step does not grow
// with bandwidth), and samples each stage's step-time curve.
func NetworkSearch(ctx context.Context, src Source, opt NetworkOptions) (*NetworkPlan, error) {
	if opt.Tolerance == 0 {
		opt.Tolerance = 0.05
	}
	if opt.Tolerance < 0 || math.IsNaN(opt.Tolerance) || opt.Tolerance > 10 {
		return nil, fmt.Errorf("tolerance %g: use a fraction such as 0.05", opt.Tolerance)
	}
	if opt.Stages == nil {
		opt.Stages = []int{0, 1, 2, 3}
	}
	if opt.Points <= 0 {
		opt.Points = 16
	}
	share, err := nicShare(src)
	if err != nil {
		return nil, err
	}
	base, err := src.Load()
	if err != nil {
		return nil, err
	}
	np := &NetworkPlan{Scenario: src.File, Tolerance: opt.Tolerance, NominalPerGPU: float64(base.Cluster.Inter.Bandwidth) / share,
		Degraded: base.Cluster.DegradedLinks()}
	np.Stages = make([]StageBandwidth, len(opt.Stages))
	p := &netProgress{f: opt.Progress}
	p.add(0, len(opt.Stages)*(stageReplays()+opt.Points))
	err = parallel(ctx, len(opt.Stages), opt.Jobs, func(i int) error {
		st := opt.Stages[i]
		var c *Candidate
		noFit := false
		if cfg, ok := opt.Configs[st]; ok {
			c = &cfg
		} else if cfg, ok := opt.Closest[st]; ok {
			c, noFit = &cfg, true
		}
		sb, err := stageBandwidth(src, st, c, opt.Tolerance, share, int64(base.Cluster.Inter.Bandwidth), p)
		if err != nil {
			return fmt.Errorf("stage %d: %w", st, err)
		}
		sb.NoFit = noFit
		if c != nil {
			if sb.Changed, err = c.Changed(src); err != nil {
				return fmt.Errorf("stage %d: %w", st, err)
			}
		}
		np.Stages[i] = sb
		return nil
	})
	if err != nil {
		return nil, err
	}
	return np, curves(ctx, src, np, share, opt, p)
}

// stageBandwidth bisects one stage, counting its replays in p.
func stageBandwidth(src Source, stage int, c *Candidate, tol, share float64, nominal int64, p *netProgress) (StageBandwidth, error) {
	used := 0
	tick := func() { used++; p.add(1, 0) }
	defer func() { p.add(0, used-stageReplays()) }() // the ones it did not need
	nom, err := stepAt(src, stage, c, nominal)
	tick()
	if err != nil {
		return StageBandwidth{}, err
	}
	sb := StageBandwidth{Stage: stage, K: nom.K, Config: c, ComputeRank: -1, NominalStep: int64(nom.StepTime)}
	topS, err := loadAt(src, stage, c, maxNICBandwidth)
	if err != nil {
		return sb, err
	}
	top, err := zero.Replay(topS, zero.Options{NoCollectives: true})
	tick()
	if err != nil {
		return sb, err
	}
	// The overridden links keep their values at every bandwidth swept:
	// without them (one more replay) the step at 25 TB/s is what the
	// sweep's bandwidth can reach, and their share is the difference.
	bound, free, ft := top, topS, top
	if len(topS.Cluster.LinkOverrides) > 0 {
		if free, err = src.Load(append(loadSets(stage, c, maxNICBandwidth), noLinkOverrides)...); err != nil {
			return sb, err
		}
		ft, err = zero.Replay(free, zero.Options{NoCollectives: true})
		tick()
		if err != nil {
			return sb, err
		}
		bound = ft
	}
	// The step waits for the rank that computes the longest at its GPU's
	// speed: a slower GPU's compute is the bound, not the full-speed one.
	// Both are taken at 25 TB/s on nominal links, where a
	// context-parallel ring's exchange inside the blocks costs (almost)
	// nothing: at the file's bandwidth it moved the bound with the very
	// bandwidth swept (cp 2 under [dp, cp]: 4.017 s at 2 GB/s, 0.345 s at
	// 50).
	sb.FullSpeedCompute = int64(bound.Compute)
	for i, r := range bound.Ranks {
		if i == 0 || int64(r.Alone) > sb.ComputeBound {
			sb.ComputeBound = int64(r.Alone)
			sb.ComputeRank = r.Rank
		}
	}
	if sb.ComputeBound == sb.FullSpeedCompute {
		sb.ComputeRank = -1
	}
	sb.Target = int64(math.Floor(float64(sb.ComputeBound) * (1 + tol)))
	if int64(top.StepTime) > sb.Target {
		sb.Above = remainder(top, sb.ComputeBound, topS)
		if links := int64(top.StepTime - ft.StepTime); links > 0 {
			a := remainder(ft, sb.ComputeBound, free)
			a.Step, a.Links, a.Free = int64(top.StepTime), links, int64(ft.StepTime)
			a.Degraded = topS.Cluster.DegradedLinks()
			sb.Above = a
		}
		a := sb.Above
		a.PlateauNIC, a.PlateauStep = leastBandwidth(src, stage, c, int64(math.Floor(float64(a.Step)*(1+tol))), a.Step, tick)
		a.PlateauPerGPU = float64(a.PlateauNIC) / share
		return sb, nil
	}
	sb.NICBandwidth, sb.Step = leastBandwidth(src, stage, c, sb.Target, int64(top.StepTime), tick)
	sb.PerGPU = float64(sb.NICBandwidth) / share
	return sb, nil
}

// leastBandwidth bisects for the least NIC bandwidth whose step is within
// target (the step at 25 TB/s, topStep, is), until the bracket is within
// 0.1 %, and returns it with its step; tick counts each replay.
func leastBandwidth(src Source, stage int, c *Candidate, target, topStep int64, tick func()) (int64, int64) {
	ok := func(bw int64) (int64, bool) {
		r, err := stepAt(src, stage, c, bw) // an error (a step beyond the time range) is too slow
		tick()
		if err != nil {
			return 0, false
		}
		return int64(r.StepTime), int64(r.StepTime) <= target
	}
	lo, hi, hiStep := minNICBandwidth, maxNICBandwidth, topStep
	if st, f := ok(lo); f {
		return lo, st
	}
	for float64(hi) > float64(lo)*1.001 && hi-lo > 1 {
		mid := int64(math.Sqrt(float64(lo)) * math.Sqrt(float64(hi))) // geometric: the bounds span 9 decades
		mid = min(max(mid, lo+1), hi-1)
		if st, f := ok(mid); f {
			hi, hiStep = mid, st
		} else {
			lo = mid
		}
	}
	return hi, hiStep
}

// Remainder is what keeps a stage's step above its compute-bound time at
// 25 TB/s per NIC, on the busiest rank (zero.Result.Busiest, whose
// compute, exposed communication, waiting and idle time make the step),
// and the bandwidth beyond which the network stops mattering.
type Remainder struct {
	// Step is the step at 25 TB/s per NIC.
	Step int64
	// Slowed is how much longer its compute ran because collectives ran
	// beside it (communication.compute_interference, Interference): not
	// communication, and no bandwidth removes the part NVLink's
	// collectives cause.
	Slowed       int64
	Interference float64
	// Exposed is its communication the compute does not hide: inside
	// the node over NVLink, and latency.
	Exposed int64
	// Waiting is the rest: waiting for peers and idle.
	Waiting int64
	// Links is what the overridden links (cluster.link_overrides, kept at
	// their values by the sweep) add: the step at 25 TB/s less Free, the
	// same without them, whose split the other parts are; Degraded names
	// the links slower than 25 TB/s. 0 and nil without overrides.
	Links, Free int64
	Degraded    []scenarios.DegradedLink
	// PlateauNIC is the least NIC bandwidth whose step is within the
	// tolerance of Step (PlateauPerGPU per GPU, PlateauStep the step
	// there): below it the network is what the step waits on, above it
	// more bandwidth buys less than the tolerance.
	PlateauNIC    int64
	PlateauPerGPU float64
	PlateauStep   int64
}

// remainder splits top's step above computeBound; s is top's scenario.
func remainder(top *zero.Result, computeBound int64, s *scenarios.Scenario) *Remainder {
	b := top.Busiest()
	r := &Remainder{Step: int64(top.StepTime), Slowed: max(int64(b.Compute-b.Alone), 0), Exposed: int64(b.ExposedComm)}
	r.Waiting = max(r.Step-computeBound-r.Slowed-r.Exposed, 0)
	if ci := s.Communication.ComputeInterference; ci != nil {
		r.Interference = *ci
	}
	return r
}

// curves samples each stage's step at log-spaced bandwidths per GPU from a
// tenth of the least answer to four times the largest of the answers and
// the nominal bandwidth.
func curves(ctx context.Context, src Source, np *NetworkPlan, share float64, opt NetworkOptions, p *netProgress) error {
	lo, hi := np.NominalPerGPU, np.NominalPerGPU
	for _, sb := range np.Stages {
		if sb.PerGPU > 0 {
			lo, hi = min(lo, sb.PerGPU), max(hi, sb.PerGPU)
		}
	}
	lo, hi = math.Max(lo/10, float64(minNICBandwidth)), hi*4
	type job struct{ s, p int }
	var jobsList []job
	for s := range np.Stages {
		np.Stages[s].Curve = make([]BandwidthPoint, opt.Points)
		for p := range opt.Points {
			jobsList = append(jobsList, job{s, p})
		}
	}
	return parallel(ctx, len(jobsList), opt.Jobs, func(i int) error {
		j := jobsList[i]
		per := lo * math.Pow(hi/lo, float64(j.p)/float64(max(opt.Points-1, 1)))
		nic := int64(math.Round(per * share))
		r, err := stepAt(src, np.Stages[j.s].Stage, np.Stages[j.s].Config, nic)
		p.add(1, 0)
		pt := BandwidthPoint{PerGPU: float64(nic) / share}
		if err == nil {
			pt.Step = int64(r.StepTime)
		}
		np.Stages[j.s].Curve[j.p] = pt
		return nil
	})
}
