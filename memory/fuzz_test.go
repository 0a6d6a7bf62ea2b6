package memory

import (
	"testing"

	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/units"
)

// FuzzLayout: any spec either fails with an error or gives a layout that
// satisfies the invariants; it never panics.
func FuzzLayout(f *testing.F) {
	f.Add(int64(260), int64(7), int64(13), 2, int64(0), false, 0)
	f.Add(int64(1000), int64(50), int64(300), 4, int64(400), false, 1)
	f.Add(int64(1), int64(1), int64(1), 9, int64(1), true, 1)
	f.Fuzz(func(t *testing.T, a, b, c int64, shards int, bucket int64, perUnit bool, pad int) {
		if a > 1<<14 || b > 1<<14 || c > 1<<14 || bucket > 1<<16 || shards > 64 {
			t.Skip() // keep checkLayout's element walk small
		}
		spec := LayoutSpec{
			Params: []Param{{"a", a, 0}, {"b", b, 1}, {"c", c, 1}},
			Shards: shards, BucketElems: bucket, PerUnit: perUnit, Padding: Padding(pad),
		}
		l, err := NewLayout(spec)
		if err != nil {
			return
		}
		checkLayout(t, "fuzz", l)
		for r := range shards {
			l.RankNumel(r)
		}
	})
}

// FuzzAnalyze: scenario fields a user controls never make Analyze panic.
func FuzzAnalyze(f *testing.F) {
	f.Add(2, 1, 3, int64(260), int64(8), int64(0), 1, "toy", "bf16", int64(1))
	f.Add(8, 2, 1, int64(7e9), int64(131072000), int64(40e6), 2, "megatron", "fp8", int64(4))
	f.Fuzz(func(t *testing.T, dp, k, stage int, p1, p2, bucket int64, prefetch int, padding, precision string, mb int64) {
		s := &scenarios.Scenario{
			Name:          "fuzz",
			Parallelism:   scenarios.Parallelism{DP: dp, K: k, Stage: stage},
			Model:         scenarios.Model{Kind: "mlp", Hidden: 64, Groups: []scenarios.ParamGroup{{Name: "g", Precision: scenarios.DType(precision)}}, LayerList: []scenarios.Layer{{Name: "a", Params: units.Count(p1)}, {Name: "b", Params: units.Count(p2), Group: "g"}}},
			Training:      scenarios.Training{MicroBatch: mb},
			Communication: scenarios.Communication{BucketSize: units.Bytes(bucket), PrefetchDepth: &prefetch, Padding: scenarios.Padding(padding)},
		}
		if dp > 1<<12 {
			t.Skip()
		}
		if s.Cluster.Nodes, s.Cluster.GPUsPerNode = 1, dp; scenarios.Validate(s) != nil {
			return // the compute packages take only valid scenarios
		}
		r, err := Analyze(resolved(s), Options{})
		if err != nil {
			return
		}
		checkReport(t, "fuzz", r)
	})
}
