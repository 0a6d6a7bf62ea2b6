package zero

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// TestQGZExpertTensors3D (rev26): qgZ groups each gradient by
// max(shape[0], shape[1], world) (all_to_all_quant_reduce,
// deepspeed/runtime/comm/coalesced_collectives.py @ 17b3b557), so a 3-D
// expert tensor's layout sets its scale count. GLM-4.5-Air (hidden 4096,
// 128 routed experts of moe_intermediate_size 1408) holds them as
// Glm4MoeNaiveMoe's gate_up_proj (128, 2816, 4096) and down_proj (128,
// 4096, 1408). On 2 nodes of 8 (world 16, local 8), by hand:
//
//	gate_up: n = 1,476,395,008, groups max(128, 2816, 16) = 2816:
//	         intra n/2 + 4·2816 = 738,208,768; inter n/16 + 4·352 = 92,276,096
//	down:    n = 738,197,504, groups max(128, 4096, 16) = 4096:
//	         intra n/2 + 4·4096 = 369,115,136; inter n/16 + 4·512 = 46,139,392
//
// experts.1: 2,214,592,512 elements, intra 1,107,323,904 B, inter
// 138,415,488 B, nothing reduce-scattered.
func TestQGZExpertTensors3D(t *testing.T) {
	abs, err := filepath.Abs("../scenarios/testdata/hf-extra/glm-4.5-air.json")
	if err != nil {
		t.Fatal(err)
	}
	y := "version: 1\ncluster: {nodes: 2, gpus_per_node: 8, gpu: H100-80GB}\nparallelism: {dp: 16, zero_stage: 3}\nmodel: {hf_config: glm-4.5-air.json, layers: 2}\n"
	s, err := scenarios.Load(filepath.Join(filepath.Dir(abs), "x.yaml"), []byte(y), nil)
	if err != nil {
		t.Fatal(err)
	}
	var l *scenarios.Layer
	for i := range s.Model.LayerList {
		if s.Model.LayerList[i].Name == "experts.1" {
			l = &s.Model.LayerList[i]
		}
	}
	if l == nil {
		t.Fatal("no experts.1")
	}
	if sh, want := unitShapes(&s.Model, *l), [][]int64{{128, 2816, 4096}, {128, 4096, 1408}}; !reflect.DeepEqual(sh, want) {
		t.Errorf("experts.1 shapes %v, want %v", sh, want)
	}
	g, err := qgzPlan(&s.Model, *l, 16, 8)
	if err != nil {
		t.Fatal(err)
	}
	if want := (qgzUnit{Elems: 2_214_592_512, Intra: 1_107_323_904, Inter: 138_415_488}); g.Elems != want.Elems || g.Intra != want.Intra ||
		g.Inter != want.Inter || g.Fallback != want.Fallback {
		t.Errorf("experts.1: qgZ %+v, want %+v", g, want)
	}
}

// TestUnitShapesFusedLayouts (rev26): the parameter layouts of the classes
// that fuse their projections, each as the modeling file builds it (the
// classes and commits shapes.go cites): Llama 4's Llama4TextExperts
// gate_up_proj (E, h, 2·ffn) and down_proj (E, ffn, h); gpt-oss's
// GptOssExperts gate_up_proj (E, h, 2·ffn) with its bias (E, 2·ffn),
// down_proj (E, ffn, h) with its bias (E, h); Qwen3.5's Gated DeltaNet
// in_proj_qkv (2K + V, h), in_proj_z (V, h), in_proj_b and in_proj_a (H_v,
// h) each; Qwen3-Next's fused in_proj_qkvz and in_proj_ba. A 2-D tensor's two dimensions swapped leave qgZ's group count
// alone; these do not.
func TestUnitShapesFusedLayouts(t *testing.T) {
	for _, c := range []struct {
		config, unit string
		first        [][]int64 // the unit's tensors, from the first that differs by layout
		skip         int       // tensors before it
	}{
		{"llama-4-scout-17b-16e.json", "experts.0", [][]int64{{16, 5120, 16384}, {16, 8192, 5120}}, 0},
		{"gpt-oss-20b.json", "experts.0", [][]int64{{32, 2880, 5760}, {32, 5760}, {32, 2880, 2880}, {32, 2880}}, 0},
		// two norms, then the four input projections (16 key and 48
		// value heads of 128: K 2048, V 6144).
		{"qwen3.6-27b.json", "block.0", [][]int64{{10240, 5120}, {6144, 5120}, {48, 5120}, {48, 5120}}, 2},
		// Qwen3-Next's fused in_proj_qkvz (2K + 2V, h) and in_proj_ba
		// (2·H_v, h): 16 key and 32 value heads of 128, hidden 2048.
		{"qwen3-next-80b-a3b-instruct.json", "block.0", [][]int64{{12288, 2048}, {64, 2048}}, 2},
	} {
		abs, err := filepath.Abs("../scenarios/testdata/hf-extra/" + c.config)
		if err != nil {
			t.Fatal(err)
		}
		y := "version: 1\ncluster: {nodes: 1, gpus_per_node: 8, gpu: H100-80GB}\nparallelism: {dp: 8, zero_stage: 3}\nmodel: {hf_config: " + c.config + ", layers: 1}\n"
		s, err := scenarios.Load(filepath.Join(filepath.Dir(abs), "x.yaml"), []byte(y), nil)
		if err != nil {
			t.Fatalf("%s: %v", c.config, err)
		}
		found := false
		for _, l := range s.Model.LayerList {
			if l.Name != c.unit {
				continue
			}
			found = true
			sh := s.Model.UnitShapes(l)
			if len(sh) < c.skip+len(c.first) || !reflect.DeepEqual(sh[c.skip:c.skip+len(c.first)], c.first) {
				t.Errorf("%s %s: shapes %v, want %v from tensor %d", c.config, c.unit, sh, c.first, c.skip)
			}
		}
		if !found {
			t.Fatalf("%s: no %s", c.config, c.unit)
		}
	}
}

// TestOpRecomputeTimesBackward (rev26): the mms the op policy reruns are
// timed, not only counted: DeepSeek-V2-Lite's dense block.0 reruns wkv_a,
// wo and w3, 227,633,266,688 FLOPs at t = 4,096 (TestOpRecomputeFLOPsOneRule),
// so its backward under op is longer than under none by those FLOPs at the
// GEMM rate (effectiveFLOPS), to the picosecond of the rounding; under
// training.fp8 (torchao: the block's linears in fp8, FP8Linear) at the fp8
// rate (effectiveFP8). Plus the memory-bound ops the policy reruns (norms,
// RoPE, silu·mul, casts: none is in its save list), charged as the
// per-operation model's blocks are (blockTimes.seconds): the forward's
// memory-bound seconds (planCompute's elemFwd) times rerun / FwdFLOPs.
func TestOpRecomputeTimesBackward(t *testing.T) {
	const rerun = 227_633_266_688
	for _, fp8 := range []string{"", ", fp8: torchao"} {
		bwd := map[string]int64{}
		var eff, elem float64
		var fwdFLOPs int64
		for _, rc := range []string{"none", "op"} {
			doc := "version: 1\ncluster: {nodes: 1, gpus_per_node: 8, gpu: H100-80GB}\nmodel: {hf_config: hf-extra/deepseek-v2-lite.json, layers: 2, seq_len: 4096}\n" +
				"parallelism: {dp: 8, zero_stage: 3}\ntraining: {micro_batch: 1, recompute: " + rc + ", attention: sdpa" + fp8 + "}\n"
			s, err := scenarios.Load("../scenarios/testdata/s.yaml", []byte(doc), nil)
			if err != nil {
				t.Fatal(err)
			}
			costs, err := Costs(s)
			if err != nil {
				t.Fatal(err)
			}
			u := unitNamed(t, s, "block.0")
			bwd[rc] = int64(costs[u].Bwd)
			fwdFLOPs = costs[u].FwdFLOPs
			plan, err := planCompute(s, nil, Options{})
			if err != nil {
				t.Fatal(err)
			}
			elem = plan[u].elemFwd
			e, err := effectiveFLOPS(s)
			if fp8 != "" {
				e, err = effectiveFP8(s)
			}
			if err != nil {
				t.Fatal(err)
			}
			eff = float64(e)
		}
		if elem <= 0 {
			t.Fatalf("block.0%s: no memory-bound forward work", fp8)
		}
		want := float64(rerun)*1e12/eff + elem*1e12*float64(rerun)/float64(fwdFLOPs) // ps
		if d := float64(bwd["op"] - bwd["none"]); d < want-1 || d > want+1 {
			t.Errorf("block.0%s: backward under op − under none = %.0f ps, want %.0f ps (%d FLOPs at %.0f FLOP/s)", fp8, d, want, int64(rerun), eff)
		}
	}
}
