package zero

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/collectives"
	"github.com/zerosim/zerosim/internal/golden"
	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/units"
)

// llama8BRing is Llama 3.1 8B's block with a rank's 32,768 query rows, as
// in torchtitan's Table 2 (seq 32,768·cp).
func llama8BRing(cp int64) FLOPDims {
	return FLOPDims{Arch: "llama", Seq: 32768, KVSeq: 32768 * cp, Batch: 1, Hidden: 4096, Heads: 32, KVHeads: 8, FFN: 14336, Causal: true}
}

// TestRingAttentionCost checks the ring's traffic and exchange against hand
// counts from _attention.py (ringattn.go): X = b·(s/cp)·heads·head_dim =
// 32,768·4,096 elements; fused forward 10X a later round, backward 30X +
// 28X a later round; eager 20X + 46X and 84X + 60X; one all-gather of the
// rank's 4X bytes of k and v from each rank, each dk/dv exchange 8X. The
// exchange's times are those of the ring's RingNet (TestRingNetNCCL holds
// them to NCCL's model); what is checked here is how RingAttentionCost
// places them: issued and waited for, overlapped and exposed.
func TestRingAttentionCost(t *testing.T) {
	const x = 32768 * 4096
	g := GPUShape{Peak: 989e12, HBM: 2400e9, SMs: 132}
	e := Efficiency{GEMM: 0.4, Attention: 0.35, HBM: 0.88}
	for _, c := range []struct {
		cp       int64
		compiled bool
		fwd, bwd int64
	}{
		{2, true, 10 * x, (30 + 28) * x},
		{8, true, 70 * x, (30 + 28*7) * x},
		{8, false, (20 + 46*7) * x, (84 + 60*7) * x},
		{4, false, (20 + 46*3) * x, (84 + 60*3) * x},
	} {
		net := testRingNet(t, int(c.cp))
		r := RingSpec{CP: int(c.cp), Compiled: c.compiled, Net: net, Interference: 0.189}
		got, err := RingAttentionCost(llama8BRing(c.cp), r, g, e)
		if err != nil {
			t.Fatal(err)
		}
		if got.FwdBytes != c.fwd || got.BwdBytes != c.bwd || got.KV != 4*x || got.DKV != 8*x {
			t.Errorf("cp %d compiled %v: bytes %d/%d, KV %d, DKV %d; want %d/%d, %d, %d", c.cp, c.compiled, got.FwdBytes, got.BwdBytes, got.KV, got.DKV, c.fwd, c.bwd, 4*x, 8*x)
		}
		gather, dkv := ringNetTimes(t, net, 4*x, 8*x)
		if !ringNear(got.FwdComm, gather) || !ringNear(got.BwdComm, gather+float64(c.cp)*dkv) {
			t.Errorf("cp %d: comm %g/%g, want %g/%g", c.cp, got.FwdComm, got.BwdComm, gather, gather+float64(c.cp)*dkv)
		}
		hbm := 2400e9 * 0.88
		if c.compiled {
			// Waited for where issued: all exposed, no interference.
			if !ringNear(got.Fwd, float64(c.fwd)/hbm+gather) || !ringNear(got.Bwd, float64(c.bwd)/hbm+gather+float64(c.cp)*dkv) {
				t.Errorf("cp %d compiled: %g/%g s", c.cp, got.Fwd, got.Bwd)
			}
			continue
		}
		// Eager: each exchange hides behind a round of about 25 ms
		// (8.8 TFLOP at 346 TFLOP/s); only the last dk/dv is exposed.
		if round := 8.8e12 / 346e12; gather >= round || dkv >= round {
			t.Fatalf("cp %d: exchange %g s, send %g s, not under a round's %g s", c.cp, gather, dkv, round)
		}
		if got.FwdExposed != 0 || !ringNear(got.BwdExposed, dkv) {
			t.Errorf("cp %d eager: exposed %g/%g, want 0/%g", c.cp, got.FwdExposed, got.BwdExposed, dkv)
		}
		wantFwd := float64(c.fwd)/hbm + 0.189*gather
		wantBwd := float64(c.bwd)/hbm + dkv + 0.189*(gather+float64(c.cp-1)*dkv)
		if !ringNear(got.Fwd, wantFwd) || !ringNear(got.Bwd, wantBwd) {
			t.Errorf("cp %d eager: %g/%g s, want %g/%g", c.cp, got.Fwd, got.Bwd, wantFwd, wantBwd)
		}
	}
	if got, err := RingAttentionCost(llama8BRing(1), RingSpec{CP: 1}, g, e); err != nil || got != (RingCost{}) {
		t.Errorf("cp 1: %+v, %v; want nothing", got, err)
	}
	if _, err := RingAttentionCost(llama8BRing(2), RingSpec{CP: 2}, g, e); err == nil {
		t.Error("cp 2 without the ring's links: no error")
	}
}

// testRingNet is the RingNet of the default scenario (H100s, 8 to a node,
// NCCL's model) on one node at cp: its dp·cp = 8 GPUs.
func testRingNet(t *testing.T, cp int) *RingNet {
	t.Helper()
	s := loadDefault(t, "model.preset=llama3.1-8b", "cluster.nodes=1", fmt.Sprintf("parallelism.dp=%d", 8/cp), fmt.Sprintf("parallelism.cp=%d", cp))
	return ringSpec(s, nil).Net
}

// ringNetTimes is net's all-gather of kv bytes from each rank and send of
// dkv bytes, in seconds.
func ringNetTimes(t *testing.T, net *RingNet, kv, dkv int64) (gather, send float64) {
	t.Helper()
	g, err := net.Gather(kv)
	if err != nil {
		t.Fatal(err)
	}
	d, err := net.Send(dkv)
	if err != nil {
		t.Fatal(err)
	}
	return g.Seconds(), d.Seconds()
}

func ringNear(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b)) }

// TestPlanComputeRing checks that the scenario's blocks carry the ring: in
// eager mode the only term that depends on communication.compute_interference
// is the ring's overlapped exchange, so the block times move by exactly
// c·(overlapped seconds), the forward's once more in backward under full
// recompute (the rerun forward runs the ring again).
func TestPlanComputeRing(t *testing.T) {
	src, tmpl := loadValidation(t, "../testdata/validation/torchtitan-llama3.1-8b-h100-cp")
	row := src.Rows[len(src.Rows)-1] // cp 8
	block := func(c string) unitPlan {
		t.Helper()
		s, err := scenarios.Load("cp.yaml", tmpl, append(row.sets(src.gpn), "training.compile=none", "communication.compute_interference="+c))
		if err != nil {
			t.Fatal(err)
		}
		if s.Parallelism.CP != 8 || s.Training.Recompute != scenarios.RecomputeFull {
			t.Fatalf("template row: cp %d, recompute %s", s.Parallelism.CP, s.Training.Recompute)
		}
		p, err := planCompute(s, nil, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for u, l := range s.Model.LayerList {
			if l.Block {
				return p[u]
			}
		}
		t.Fatal("no block")
		return unitPlan{}
	}
	off, on := block("0"), block("0.5")
	// The exchange of a block: sdpa's k and v at the queries' 32 heads
	// (repeat_kv), 32,768·4,096 elements each per rank, gathered by NCCL's
	// all-gather over the row's 8 ranks on one node; dk and dv in fp32
	// sent to the next rank over NVLink (latency plus bytes at its
	// bandwidth).
	x := int64(32768 * 4096)
	s, err := scenarios.Load("cp.yaml", tmpl, row.sets(src.gpn))
	if err != nil {
		t.Fatal(err)
	}
	m, err := Model(s)
	if err != nil || m == nil {
		t.Fatalf("NCCL's model: %v, %v", m, err)
	}
	c, err := m.Time(collectives.AllGather, collectives.Shape{Ranks: 8, Nodes: 1}, collectives.Auto, units.Bytes(8*4*x))
	if err != nil {
		t.Fatal(err)
	}
	gather := c.Time.Seconds()
	dkv := (s.Cluster.Intra.Latency + units.TransferTime(units.Bytes(8*x), s.Cluster.Intra.Bandwidth)).Seconds()
	dFwd := 0.5 * gather
	dBwd := 0.5*(gather+7*dkv) + dFwd
	if got := on.Fwd - off.Fwd; math.Abs(got-dFwd) > 1e-9 {
		t.Errorf("forward moved %g s, want %g", got, dFwd)
	}
	if got := on.Bwd - off.Bwd; math.Abs(got-dBwd) > 1e-9 {
		t.Errorf("backward moved %g s, want %g", got, dBwd)
	}
}

// TestContextParallelGap is the evidence behind docs/compute-model.md's
// known gap of torchtitan's CP rows. It takes the GEMM efficiency fitted
// on the same hardware, stack and versions without CP (Table 1's FSDP +
// torch.compile + Float8 row, torchtitan-llama3.1-8b-h100-float8) and finds,
// row by row of Table 2, the attention efficiency that reproduces the
// measured throughput. Rows cp 1 and 2 agree with each other and rows cp 4
// and 8 agree with each other, a third lower: a step between cp 2 and cp 4
// that no attention efficiency shared by all rows, and nothing in the ring
// as _attention.py runs it (whose costs grow smoothly with cp), produces.
// When a model change closes the gap this test fails: update the doc.
func TestContextParallelGap(t *testing.T) {
	f8src, f8tmpl := loadValidation(t, "../testdata/validation/torchtitan-llama3.1-8b-h100-float8")
	_, gemm := runValidation(t, "torchtitan-llama3.1-8b-h100-float8", f8src, f8tmpl, validationVariant{})
	src, tmpl := loadValidation(t, "../testdata/validation/torchtitan-llama3.1-8b-h100-cp")
	need := make([]float64, len(src.Rows))
	for i, r := range src.Rows {
		lo, hi := 0.05, 0.6
		for range 24 {
			a := (lo + hi) / 2
			s, err := scenarios.Load("cp.yaml", tmpl, append(r.sets(src.gpn),
				fmt.Sprintf("training.attention_efficiency=%g", a), fmt.Sprintf("training.compute_efficiency=%g", gemm)))
			if err != nil {
				t.Fatal(err)
			}
			res, err := Replay(s, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Utilization.TokensPerGPU > r.TokensPerGPU {
				hi = a
			} else {
				lo = a
			}
		}
		need[i] = (lo + hi) / 2
		t.Logf("cp %d, seq %d: attention efficiency %.3f at GEMM efficiency %.4f", r.CP, r.SeqLen, need[i], gemm)
	}
	if len(need) != 4 {
		t.Fatalf("%d rows, want cp 1, 2, 4, 8", len(need))
	}
	low, high := math.Max(need[2], need[3]), math.Min(need[0], need[1])
	if math.Abs(need[0]/need[1]-1) > 0.15 || math.Abs(need[2]/need[3]-1) > 0.1 || low/high > 0.8 {
		t.Errorf("the step between cp 2 and cp 4 changed: %.3f", need)
	}
	// docs/compute-model.md's table of the ring's cost and the rows'
	// errors: each row as the validation suite runs it (calibrated on cp 1),
	// the ring's cost in its first block (RingAttentionCost, as
	// planCompute adds it) against that block's time.
	cases, cpEff := runValidation(t, "torchtitan-llama3.1-8b-h100-cp", src, tmpl, validationVariant{})
	var b strings.Builder
	b.WriteString("| cp | seq | ring per block: forward, backward (with the rerun forward) | of the block's time | fused traffic forward / backward | exchange forward / backward, all exposed | error, calibrated on cp 1 (" +
		fmt.Sprintf("%.4f", cpEff) + ") | attention efficiency that reproduces the row at GEMM " + fmt.Sprintf("%.4f", gemm) + " |\n")
	b.WriteString("|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	attnShare := map[int]float64{} // the attention class's share of a block, by cp
	for i, r := range src.Rows {
		if c := cases[i].row; c.CP != r.CP || c.SeqLen != r.SeqLen {
			t.Fatalf("validation case %d is cp %d seq %d, row cp %d seq %d", i, c.CP, c.SeqLen, r.CP, r.SeqLen)
		}
		s, err := scenarios.Load("cp.yaml", tmpl, append(r.sets(src.gpn), fmt.Sprintf("training.compute_efficiency=%g", cpEff)))
		if err != nil {
			t.Fatal(err)
		}
		plans, err := planCompute(s, nil, Options{})
		if err != nil {
			t.Fatal(err)
		}
		base, _ := flopDims(s)
		gpu, eff, ring := planContext(s, nil)
		u := slices.IndexFunc(s.Model.LayerList, func(l scenarios.Layer) bool { return l.Block })
		rc, err := RingAttentionCost(layerFLOPDims(s, base, s.Model.LayerList[u]), ring, gpu, eff)
		if err != nil {
			t.Fatal(err)
		}
		bwd := rc.Bwd
		if ringReruns(string(s.Training.Recompute)) {
			bwd += rc.Fwd
		}
		ms := func(sec float64) string { return fmt.Sprintf("%.1f ms", 1e3*sec) }
		gb := func(n int64) string { return fmt.Sprintf("%.1f GB", float64(n)/1e9) }
		attnShare[r.CP] = (plans[u].FwdBy.Attention + plans[u].BwdBy.Attention) / (plans[u].FwdBy.Total() + plans[u].BwdBy.Total())
		share := "no ring"
		if r.CP > 1 {
			share = fmt.Sprintf("%.1f %%", 100*(rc.Fwd+bwd)/(plans[u].Fwd+plans[u].Bwd))
		}
		fmt.Fprintf(&b, "| %d | %d | %s, %s | %s | %s / %s | %s / %s | %+.1f %% | %.3f |\n", r.CP, r.SeqLen, ms(rc.Fwd), ms(bwd), share,
			gb(rc.FwdBytes), gb(rc.BwdBytes), ms(rc.FwdExposed), ms(rc.BwdExposed), 100*cases[i].tokenErr, need[i])
	}
	golden.CheckQuotes(t, "../docs/compute-model.md", "TestContextParallelGap (the attention class of planCompute's block, forward and backward)",
		fmt.Sprintf("the attention share of a block grows from %.0f %% at cp 1 to %.0f %% at cp 8", 100*attnShare[1], 100*attnShare[8]))
	golden.CheckBlocks(t, "../docs/compute-model.md", *updateValidation, golden.Block{
		Begin: "<!-- context parallelism: generated by TestContextParallelGap in zero/ (go test ./zero -run TestContextParallelGap -update) -->\n",
		End:   "<!-- end of context parallelism -->", Text: b.String()})
}
