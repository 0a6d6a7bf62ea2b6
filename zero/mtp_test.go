package zero

import (
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// TestMTPHeadPass counts DeepSeek-V3's multi-token-prediction module by
// hand on scenarios/testdata/hf-extra/deepseek-v3.json at 3 layers, s =
// 4096, b = 1 (t = 4096, h = 7168, V = 129,280, one MTP module: block.3).
// The module sends its t tokens through the shared output head once more
// (DeepSeek-V3 report, arXiv:2412.19437 §2.2, eq. 22: P = OutHead(h^k)),
// so lm_head runs two passes of 2·t·h·V = 7,591,354,695,680 forward
// FLOPs: 15,182,709,391,360, backward twice that, and twice the one-pass
// time. The module's enorm, hnorm (3h with shared_head.norm) and eh_proj
// (2h·h) are in block.3's parameters, which the FLOP count charges 2·t
// each: attention 7168·1536 + 1536·128·192 + 7168·576 + 512·128·256 +
// 128·128·7168, norms 2·7168 + 1536 + 512, router 256·7168 + 256, the
// shared expert 3·7168·2048, MTP 3·7168 + 2·7168² = 335,779,072
// parameters, 2·t·335,779,072 + flash's causal half of 2·t²·128·(192 +
// 192) = 3,575,335,878,656 forward FLOPs.
func TestMTPHeadPass(t *testing.T) {
	y := "version: 1\ncluster: {nodes: 1, gpus_per_node: 8, gpu: H100-80GB}\n" +
		"model: {hf_config: deepseek-v3.json, layers: 3, seq_len: 4096, mtp_layers: 1}\nparallelism: {dp: 8, zero_stage: 3}\ntraining: {micro_batch: 1}\n"
	sc, err := scenarios.Load("../scenarios/testdata/hf-extra/s.yaml", []byte(y), nil)
	if err != nil {
		t.Fatal(err)
	}
	const pass = int64(2 * 4096 * 7168 * 129280)
	costs := func(mtp bool) map[string]LayerCost {
		c := *sc
		c.Model.LayerList = append([]scenarios.Layer(nil), sc.Model.LayerList...)
		for i, l := range c.Model.LayerList {
			if l.Dims != nil && l.Dims.MTP {
				d := *l.Dims
				d.MTP = mtp
				c.Model.LayerList[i].Dims = &d
			}
		}
		cs, err := Costs(&c)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]LayerCost{}
		for _, l := range cs {
			out[l.Name] = l
		}
		return out
	}
	if n := sc.Model.MTPModules(); n != 1 {
		t.Fatalf("%d MTP modules, want 1 (num_nextn_predict_layers)", n)
	}
	with, without := costs(true), costs(false)
	h := with["lm_head"]
	if h.FwdFLOPs != 2*pass || h.BwdFLOPs != 4*pass {
		t.Errorf("lm_head: fwd %d, bwd %d FLOPs; want 2·(2·t·h·V) = %d, %d", h.FwdFLOPs, h.BwdFLOPs, 2*pass, 4*pass)
	}
	if o := without["lm_head"]; o.FwdFLOPs != pass {
		t.Errorf("lm_head without the MTP pass: fwd %d FLOPs, want %d", o.FwdFLOPs, pass)
	}
	for _, x := range []struct {
		name      string
		got, want int64
	}{
		{"forward", int64(h.Fwd), 2 * int64(without["lm_head"].Fwd)},
		{"backward", int64(h.Bwd), 2 * int64(without["lm_head"].Bwd)},
	} {
		if d := x.got - x.want; d < -2 || d > 2 {
			t.Errorf("lm_head %s %d ps, want two passes of one = %d ps", x.name, x.got, x.want)
		}
	}
	if b := with["block.3"]; b.Params != 335_779_072 || b.FwdFLOPs != 3_575_335_878_656 {
		t.Errorf("block.3 (MTP): %d params, %d forward FLOPs; want 335,779,072 and 3,575,335,878,656", b.Params, b.FwdFLOPs)
	}
}
