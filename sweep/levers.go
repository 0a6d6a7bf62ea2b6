package sweep

import (
	"strconv"

	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/units"
	"github.com/zerosim/zerosim/zero"
)

// Lever is one change of a scenario, replayed: its --set override, the
// step time and the replayed peak it gives, and its collectives' latency
// term.
type Lever struct {
	Set     string
	Step    units.Duration
	Peak    int64
	Latency *zero.LatencyTerm
}

// LatencyLevers replays the two changes that cut a latency-bound step's
// per-collective latency (zero.Result.LatencyBound) on src, whose scenario
// is s: fewer, larger collectives (communication.bucket_size 5× s's, at
// stages 0–2, where gradients and parameters move in buckets) and smaller
// groups (parallelism.k 8×, else 4× or 2× s's, the first zerosim runs: at
// stages 1–2 Megatron's distributed optimizer instances, HSDP replicas at
// 3; none at stage 0, which shards nothing). A change zerosim does not run
// is left out. The factors are zerosim's choice, not a source's: large
// enough to show each lever's effect in one replay each (40 MB buckets to
// 200 MB; K to the largest of 8×, 4×, 2× that divides the ranks), and what
// the finding reports is the replayed step, not a prediction.
func LatencyLevers(src Source, s *scenarios.Scenario) []Lever {
	var out []Lever
	try := func(set string) bool {
		v, err := src.Load(set)
		if err != nil {
			return false
		}
		res, err := zero.Replay(v, zero.Options{NoCollectives: true})
		if err != nil {
			return false
		}
		peak, _ := res.Peak()
		out = append(out, Lever{Set: set, Step: res.StepTime, Peak: peak, Latency: res.Latency})
		return true
	}
	if st := s.Parallelism.Stage; st >= 0 && st <= 2 {
		if b, err := units.Mul(int64(s.Communication.BucketSize), 5); err == nil && b > 0 {
			try("communication.bucket_size=" + units.Bytes(b).Exact())
		}
	}
	if s.Parallelism.Stage > 0 {
		for _, f := range []int{8, 4, 2} {
			if try("parallelism.k=" + strconv.Itoa(f*s.Parallelism.K)) {
				break
			}
		}
	}
	return out
}

// WithoutLinkOverrides replays src with cluster.link_overrides emptied (the
// GPU overrides and everything else kept): what the step would be with
// every link at its class's figures, one replay (on the symmetric fast
// path when nothing else breaks the symmetry). False when that scenario
// does not load or replay.
func WithoutLinkOverrides(src Source) (Lever, bool) {
	v, err := src.Load(noLinkOverrides)
	if err != nil {
		return Lever{}, false
	}
	res, err := zero.Replay(v, zero.Options{NoCollectives: true})
	if err != nil {
		return Lever{}, false
	}
	peak, _ := res.Peak()
	return Lever{Set: noLinkOverrides, Step: res.StepTime, Peak: peak, Latency: res.Latency}, true
}

// noLinkOverrides is the override that puts every link back at its
// class's figures (WithoutLinkOverrides, plan --network's free replay).
const noLinkOverrides = "cluster.link_overrides=[]"
