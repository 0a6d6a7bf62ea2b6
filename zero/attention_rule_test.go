package zero

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// TestBlockAttentionOneRule checks that every block of every imported
// model (the hf presets and the hf_config test files), whichever path
// Costs times it by (the per-operation model for dense blocks, the FLOP
// count for MoE and MLA blocks), counts the core attention alike:
// 2·b·a·s²·(d_qk + d_v), d_v the width the kernel computes P·V at (flash
// pads MLA's value to d_qk), halved under flash and sdpa, whose kernels
// skip the masked key blocks, whole under eager (docs/compute-model.md);
// a block with a sliding window shorter than s counts the window under
// flash and every score under sdpa, given the mask (blockMask); a Gated
// DeltaNet block (Qwen3-Next) counts its chunked delta rule instead.
// Before the rule was shared, the MoE blocks of Mixtral, Qwen-MoE and
// gpt-oss and the MLA blocks of DeepSeek-V2/V3 counted it whole under
// every kernel.
func TestBlockAttentionOneRule(t *testing.T) {
	var models []string
	for _, dir := range []string{"../scenarios/testdata/hf-extra", "../scenarios/hfpresets"} {
		ents, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			if name, ok := strings.CutSuffix(e.Name(), ".json"); ok {
				if dir == "../scenarios/hfpresets" {
					models = append(models, "preset: "+name)
				} else {
					models = append(models, "hf_config: "+e.Name())
				}
			}
		}
	}
	const s, b = 1024, 2
	var param int
	for _, m := range models {
		for _, att := range []string{"flash", "sdpa", "eager"} {
			if att == "sdpa" && m == "hf_config: gpt-oss-20b.json" {
				continue // no SDPA path in transformers: the load refuses it
			}
			y := fmt.Sprintf("version: 1\ncluster: {nodes: 1, gpus_per_node: 8, gpu: H100-80GB}\n"+
				"model: {%s, layers: 4, seq_len: %d}\nparallelism: {dp: 8, zero_stage: 3}\n"+
				"training: {micro_batch: %d, attention: %s}\n", m, s, b, att)
			sc, err := scenarios.Load("../scenarios/testdata/hf-extra/s.yaml", []byte(y), nil)
			if err != nil {
				t.Fatalf("%s: %v", m, err)
			}
			cs, plan, err := costsAndPlan(sc, nil, Options{})
			if err != nil {
				t.Fatal(err)
			}
			base, _ := flopDims(sc)
			for i, l := range sc.Model.LayerList {
				if !l.Block {
					continue
				}
				heads, dqk := sc.Model.Heads, sc.Model.Hidden/sc.Model.Heads
				dv := dqk
				if x := l.Dims; x != nil && x.HeadDim > 0 {
					heads, dqk, dv = x.Heads, x.HeadDim, x.HeadDim
					if x.ValueHeadDim > 0 && att != "flash" {
						dv = x.ValueHeadDim
					}
				}
				want := int64(2 * b * heads * s * s * (dqk + dv))
				var local int64
				if x := l.Dims; x != nil {
					local = max(x.Window, x.AttentionChunk)
				}
				switch {
				case l.Dims != nil && l.Dims.LinearAttention != "":
					// No softmax attention under any kernel: the chunked
					// delta rule's 8·t·H_v·d_k·d_v (MaxText's count).
					x := l.Dims
					want = 8 * s * b * x.LinearValueHeads * x.LinearKeyHeadDim * x.LinearValueHeadDim
				case att == "eager", att == "sdpa" && local > 0 && local <= s:
					// Every score: eager's, and SDPA's under the mask
					// transformers materialises (blockMask).
				case att == "flash" && local > 0 && local < s:
					// MaxText's sliding-window count (gpt-oss' 128
					// tokens; no chunk is below s here):
					// 4·b·(s·w − w²/2)·a·d for d_qk = d_v = d.
					want = int64(b * heads * (dqk + dv) * (2*s*local - local*local))
				default:
					want /= 2
				}
				var got int64
				if plan[i].ok {
					f, err := BlockForwardFLOPs(layerFLOPDims(sc, base, l))
					if err != nil {
						t.Fatal(err)
					}
					got = cs[i].FwdFLOPs - f.GEMM
				} else {
					param++
					active := int64(l.Params)
					if l.ActiveParams > 0 {
						active = int64(l.ActiveParams)
					}
					got = cs[i].FwdFLOPs - 2*active*s*b
				}
				if got != want {
					t.Errorf("%s, attention %s, %s (per-operation model %v, window %d): attention %d FLOPs, want %d (d_qk %d, d_v %d)",
						m, att, l.Name, plan[i].ok, local, got, want, dqk, dv)
				}
			}
		}
	}
	if param == 0 {
		t.Fatal("no block under the FLOP count: the test checks one path only")
	}
}

// TestComputeClassesMoEAttention checks that ComputeClasses puts a MoE
// block's attention, which Costs times at the attention efficiency, in
// the attention class: Mixtral-8x7B at 2 layers, s = 4096, b = 1, flash:
// per block 2·a·s²·(d + d)/2 = 137,438,953,472 forward FLOPs and 2.5×
// that in backward, 7 × 137,438,953,472 FLOPs over both blocks at
// peak_bf16 × the fa2 efficiency, each of the four times rounded up to a
// picosecond.
func TestComputeClassesMoEAttention(t *testing.T) {
	y := "version: 1\ncluster: {nodes: 1, gpus_per_node: 8, gpu: H100-80GB}\n" +
		"model: {preset: mixtral-8x7b, layers: 2, seq_len: 4096}\nparallelism: {dp: 8, zero_stage: 3}\ntraining: {micro_batch: 1}\n"
	sc, err := scenarios.Load("s.yaml", []byte(y), nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := ComputeClasses(sc)
	if err != nil {
		t.Fatal(err)
	}
	want := 7 * 137438953472 / (float64(sc.Cluster.PeakBF16) * AttentionEfficiencyOf(sc))
	if d := c.Attention - want; d < 0 || d > 4e-12 || !c.Separate {
		t.Errorf("attention class %g s (separate %v), want %g s", c.Attention, c.Separate, want)
	}
}
