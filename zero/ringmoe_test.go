package zero

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/zerosim/zerosim/collectives"
	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/units"
)

// TestRingEveryAttentionBlock holds every softmax-attention block to its
// ring, not only the blocks the per-operation model sizes: MoE blocks
// (Mixtral 8x7B, Qwen3-30B-A3B) and multi-head latent attention blocks
// (DeepSeek-V2-Lite, whose blocks are all MLA: its dense layer 0 too)
// are left to the FLOP count, and before blockRing they exchanged nothing
// at cp > 1. The counts are typed from the models' configs and
// ringattn.go's definition (_attention.py at pytorch/pytorch 0123248),
// not from the code's helpers. Per block and micro-step a rank holds
// xq = b·(s/cp)·heads·qk elements of q, xo = b·(s/cp)·heads·v of the
// output, and xk = b·(s/cp)·kvh·qk of k, xv = b·(s/cp)·kvh·v of v (qk = v
// = head_dim but for MLA: qk = qk_nope_head_dim + qk_rope_head_dim = 192,
// v = v_head_dim = 128, as torchtitan 238fa99's deepseek_v3 hands them to
// SDPA, k_pe expanded to every head, so kvh = heads). The default
// scenario's training.attention is flash, SDPA with enable_gqa: k and v
// reach the ring at the config's num_key_value_heads (kvh; memory.
// RingKVHeads cites the sources). The exchange: bf16 k and v, KV = 2·xk +
// 2·xv bytes, all-gathered in forward, in backward and in the recomputed
// forward (full recompute: three gathers); fp32 dk and dv, DKV = 4·xk +
// 4·xv, sent cp times in backward. Compiled, all of it is exposed
// (ringattn.go), so a block's forward grows by the merge's 10·(cp−1)·xo
// bytes on HBM plus NCCL's all-gather of the cp·KV buffer over the cp
// ranks of the node, its backward by 6·xq + 12·xk + 12·xv + (cp−1)·(10·xq
// + 9·xk + 9·xv) bytes on HBM plus that all-gather and cp sends of DKV to
// the next rank over NVLink plus the rerun forward: the block's times must
// exceed the FLOP count's GEMM and attention seconds by exactly that.
func TestRingEveryAttentionBlock(t *testing.T) {
	for _, c := range []struct {
		preset                string
		layers                int64
		heads, kvh, qk, v, cp int64
		seq                   int64
	}{
		// config.json: 32 heads, head_dim 4096/32; kv_heads 8.
		{"mixtral-8x7b", 32, 32, 8, 128, 128, 2, 32768},
		// 32 heads of head_dim 128 (4096 ≠ hidden 2048); kv_heads 4.
		{"qwen3-30b-a3b", 48, 32, 4, 128, 128, 4, 32768},
		// 16 heads, qk_nope 128 + qk_rope 64, v_head_dim 128; MLA: k
		// per head.
		{"deepseek-v2-lite", 27, 16, 16, 192, 128, 2, 16384},
	} {
		t.Run(c.preset, func(t *testing.T) {
			s := loadDefault(t, "model.preset="+c.preset, "cluster.nodes=1", "parallelism.dp="+itoa(int(8/c.cp)), "parallelism.cp="+itoa(int(c.cp)),
				"model.seq_len="+itoa(int(c.seq)), "training.micro_batch=1", "parallelism.zero_stage=3", "training.recompute=full", "training.compile=blocks")
			n := c.cp
			xq, xo := (c.seq/n)*c.heads*c.qk, (c.seq/n)*c.heads*c.v
			xk, xv := (c.seq/n)*c.kvh*c.qk, (c.seq/n)*c.kvh*c.v
			kv, dkv := 2*xk+2*xv, 4*xk+4*xv
			res, err := Replay(s, Options{})
			if err != nil {
				t.Fatal(err)
			}
			got := cpRingPhase(t, res)
			sent := c.layers * (3*(n-1)*kv + n*dkv)
			logical := c.layers * (3*n*kv + n*dkv)
			if got.Sent != sent || got.Logical != logical || int64(got.Collectives) != c.layers*(3+n) {
				t.Errorf("ring: sent %d, logical %d, %d collectives; want %d, %d, %d", got.Sent, got.Logical, got.Collectives, sent, logical, c.layers*(3+n))
			}
			hbm := float64(s.Cluster.HBMBandwidth) * DefaultHBMEfficiency
			// The exchange on the one node: NCCL's all-gather of the
			// cp·KV buffer over cp ranks (its cost model, as the replay
			// times an all-gather), and each send of DKV to the next rank
			// over NVLink (latency plus bytes at the link's bandwidth).
			m, err := Model(s)
			if err != nil || m == nil {
				t.Fatalf("NCCL's model: %v, %v", m, err)
			}
			ch, err := m.Time(collectives.AllGather, collectives.Shape{Ranks: int(n), Nodes: 1}, collectives.Auto, units.Bytes(n*kv))
			if err != nil {
				t.Fatal(err)
			}
			gather := ch.Time.Seconds()
			send := (s.Cluster.Intra.Latency + units.TransferTime(units.Bytes(dkv), s.Cluster.Intra.Bandwidth)).Seconds()
			fwd := float64(10*(n-1)*xo)/hbm + gather
			bwd := float64(6*xq+12*xk+12*xv+(n-1)*(10*xq+9*xk+9*xv))/hbm + gather + float64(n)*send + fwd
			costs, plan, err := costsAndPlan(s, nil, Options{})
			if err != nil {
				t.Fatal(err)
			}
			blocks := int64(0)
			for u, l := range s.Model.LayerList {
				if !l.Block {
					continue
				}
				blocks++
				p := plan[u]
				if p.ok {
					t.Fatalf("block %s: sized by the per-operation model, want the FLOP count", l.Name)
				}
				// The block's own memory-bound work (blockOtherBytes, held
				// by TestBlockOtherBytes) is the rest of the Other class,
				// its forward's rerun under full recompute.
				elemF, elemB := p.elemFwd, p.elemBwd+p.elemFwd
				if p.elemFwd <= 0 || p.elemBwd <= 0 {
					t.Errorf("block %s: no memory-bound work (%g, %g s)", l.Name, p.elemFwd, p.elemBwd)
				}
				if !ringNear(p.FwdBy.Other-elemF, fwd) || !ringNear(p.BwdBy.Other-elemB, bwd) {
					t.Errorf("block %s: ring %g s forward, %g s backward; want %g, %g", l.Name, p.FwdBy.Other-elemF, p.BwdBy.Other-elemB, fwd, bwd)
				}
				for _, x := range []struct {
					name           string
					d              units.Duration
					by             ClassSeconds
					ringSecs, elem float64
				}{{"forward", costs[u].Fwd, p.FwdBy, fwd, elemF}, {"backward", costs[u].Bwd, p.BwdBy, bwd, elemB}} {
					flops := math.Round((x.by.GEMM + x.by.Attention) * float64(units.Second))
					want := flops + math.Ceil(x.ringSecs*float64(units.Second)) + math.Ceil(x.elem*float64(units.Second))
					if math.Abs(float64(x.d)-want) > 1 {
						t.Errorf("block %s: %s %d ps, want %g (FLOP count %g + ring + memory-bound work)", l.Name, x.name, int64(x.d), want, flops)
					}
				}
				if costs[u].Ring.KV != kv || costs[u].Ring.DKV != dkv {
					t.Errorf("block %s: KV %d, DKV %d; want %d, %d", l.Name, costs[u].Ring.KV, costs[u].Ring.DKV, kv, dkv)
				}
			}
			if blocks != c.layers {
				t.Errorf("%d blocks, want %d", blocks, c.layers)
			}
		})
	}
}

// TestCPRefusesLinearAttention: Gated DeltaNet blocks have no ring, and
// torchtitan's qwen3_5 raises for CP (torchtitan/models/qwen3_5/
// parallelize.py at b5bcd76), so the loader refuses cp > 1 for a model
// with them, naming the key; the same model with every layer softmax
// (full_attention_interval 1: gated attention only) loads and rings.
func TestCPRefusesLinearAttention(t *testing.T) {
	for _, c := range []struct {
		interval int
		want     string
	}{
		{4, "s.yaml:5:22: cp=2: 36 linear-attention (gated_delta_net) blocks carry their state along the whole sequence, which no ring passes between cp ranks (torchtitan's qwen3_5 raises NotImplementedError for CP at b5bcd76): use cp: 1 and shard over dp"},
		{1, ""},
	} {
		cfg := hfConfigVariant(t, "../scenarios/testdata/hf-extra/qwen3-next-80b-a3b-instruct.json", map[string]any{"full_attention_interval": c.interval, "num_hidden_layers": 4 * 12})
		yaml := "version: 1\nname: qn\ncluster: {nodes: 1, gpus_per_node: 8, gpu: H100-80GB}\nmodel: {hf_config: " + cfg + ", seq_len: 8192}\nparallelism: {dp: 4, cp: 2, zero_stage: 3}\n"
		s, err := scenarios.Load("s.yaml", []byte(yaml), nil)
		if c.want != "" {
			if err == nil || err.Error() != c.want {
				t.Errorf("interval %d: error %v, want %q", c.interval, err, c.want)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		plan, err := planCompute(s, nil, Options{})
		if err != nil {
			t.Fatal(err)
		}
		// Gated attention: 16 heads of 256 (q_proj doubled for the gate,
		// not the attention), 2 kv heads, reaching the ring unrepeated
		// under flash (memory.RingKVHeads): xk = xv = 4096·2·256.
		x := int64(4096 * 2 * 256)
		for u, l := range s.Model.LayerList {
			if l.Block && (plan[u].ring.KV != 4*x || plan[u].ring.DKV != 8*x) {
				t.Errorf("block %s: KV %d, DKV %d; want %d, %d", l.Name, plan[u].ring.KV, plan[u].ring.DKV, 4*x, 8*x)
			}
		}
	}
}

// hfConfigVariant writes the Hugging Face config at path with set's keys
// replaced to a temporary file and returns its path.
func hfConfigVariant(t *testing.T, path string, set map[string]any) string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	for k, v := range set {
		m[k] = v
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(out, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestRingAttentionCostMLA: multi-head latent attention's q and k are
// qk_nope_head_dim + qk_rope_head_dim = 192 wide per head, its v and output
// v_head_dim = 128 (DeepSeek-V2/V3; torchtitan 238fa99
// deepseek_v3/model/model.py hands SDPA q, k of (bsz, n_heads, seqlen,
// qk_head_dim) and v of (…, v_head_dim)). With 16 heads and 16,384 rows a
// rank holds xk = 16,384·16·192 and xv = 16,384·16·128 elements. Counted
// from ringattn.go's op list, tensor by tensor: the merge works on the
// output (v wide); the fp32 dq, dk and the k in the cats are q·k wide, dv
// and v value wide. Fused: forward 10·xv a later round; backward 18·xk +
// 12·xv + (19·xk + 9·xv) a later round. Eager: forward 4·xk + 16·xv +
// (4·xk + 42·xv) a later round; backward 12·xk + 8·xv + 64·(2·xk + xv)/3 +
// (35·xk + 25·xv) a later round. The exchange: 2·xk + 2·xv bytes of bf16
// k and v per rank and gather, 4·xk + 4·xv of fp32 dk and dv per send.
// One width (v = 0) gives the dense block's counts.
func TestRingAttentionCostMLA(t *testing.T) {
	const xk, xv = 16384 * 16 * 192, 16384 * 16 * 128
	g := GPUShape{Peak: 989e12, HBM: 3350e9, SMs: 132}
	e := Efficiency{GEMM: 0.4, Attention: 0.35, HBM: 0.88}
	d := FLOPDims{Arch: "llama", Seq: 16384, KVSeq: 32768, Batch: 1, Hidden: 2048, Heads: 16, HeadDim: 192, FFN: 10944, Causal: true}
	for _, c := range []struct {
		compiled bool
		cp       int64
		fwd, bwd int64
	}{
		{true, 2, 10 * xv, 18*xk + 12*xv + 19*xk + 9*xv},
		{true, 4, 30 * xv, 18*xk + 12*xv + 3*(19*xk+9*xv)},
		{false, 2, 4*xk + 16*xv + 4*xk + 42*xv, 12*xk + 8*xv + 64*(2*xk+xv)/3 + 35*xk + 25*xv},
		{false, 4, 4*xk + 16*xv + 3*(4*xk+42*xv), 12*xk + 8*xv + 64*(2*xk+xv)/3 + 3*(35*xk+25*xv)},
	} {
		got, err := RingAttentionCost(d, RingSpec{CP: int(c.cp), Compiled: c.compiled, Net: testRingNet(t, int(c.cp)), ValueHeadDim: 128}, g, e)
		if err != nil {
			t.Fatal(err)
		}
		if got.FwdBytes != c.fwd || got.BwdBytes != c.bwd || got.KV != 2*xk+2*xv || got.DKV != 4*xk+4*xv {
			t.Errorf("cp %d compiled %v: bytes %d/%d, KV %d, DKV %d; want %d/%d, %d, %d", c.cp, c.compiled,
				got.FwdBytes, got.BwdBytes, got.KV, got.DKV, c.fwd, c.bwd, 2*xk+2*xv, 4*xk+4*xv)
		}
	}
}

// TestCPEagerWarns: eager attention is no SDPA call, so PyTorch's context
// parallelism rings nothing for it; the loader says so (a warning: Megatron
// imports of --attention-backend unfused with context parallelism load as
// eager) and the run has no ring phase, while sdpa and flash ring.
func TestCPEagerWarns(t *testing.T) {
	const warn = "default.yaml: --set parallelism.cp=2: cp=2 with training.attention eager: no ring attention is modelled (PyTorch's context parallelism rings only SDPA calls, torchtitan refuses anything else under CP), so the k/v exchange and its time are left out; use training.attention: flash or sdpa for the ring"
	for _, c := range []struct {
		attention string
		warn      bool
	}{{"eager", true}, {"sdpa", false}, {"flash", false}} {
		s := loadDefault(t, "model.preset=mixtral-8x7b", "model.layers=2", "cluster.nodes=1", "parallelism.dp=4", "parallelism.cp=2",
			"model.seq_len=8192", "training.micro_batch=1", "parallelism.zero_stage=3", "training.attention="+c.attention)
		if got := slices.Contains(s.Warnings, warn); got != c.warn {
			t.Errorf("%s: warning %v, want %v (warnings %q)", c.attention, got, c.warn, s.Warnings)
		}
		res, err := Replay(s, Options{})
		if err != nil {
			t.Fatal(err)
		}
		ring := slices.ContainsFunc(res.Phases, func(p PhaseBytes) bool { return p.Phase == PhaseCPRing })
		if ring == c.warn {
			t.Errorf("%s: ring phase %v, want %v", c.attention, ring, !c.warn)
		}
	}
}
