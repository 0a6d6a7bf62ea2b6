package zero

import (
	"testing"

	"github.com/zerosim/zerosim/memory"
	"github.com/zerosim/zerosim/scenarios"
)

// kernel is one eager kernel's traffic per token: the widths it reads and
// writes, each with its element size.
type kernel struct{ reads, writes [][2]int64 } // {width, bytes per element}

func (k kernel) bytes() (n int64) {
	for _, r := range append(k.reads, k.writes...) {
		n += r[0] * r[1]
	}
	return n
}

func sum(ks []kernel) (n int64) {
	for _, k := range ks {
		n += k.bytes()
	}
	return n
}

func rw(w, rb, wb int64, nreads int) kernel {
	k := kernel{writes: [][2]int64{{w, wb}}}
	for range nreads {
		k.reads = append(k.reads, [2]int64{w, rb})
	}
	return k
}

// TestLlamaElementwise lists an eager Llama block's kernels one by one
// (the chains zero/opchain.go cites: RMSNorm in fp32, RoPE, residual adds,
// SwiGLU, the GQA copies, and autograd's backward of each) and checks
// llamaChain's totals (a dense block's parts) against them, for Llama 2 7B (MHA, ibm-fms's
// rotation RoPE, and with ibm-fms's dropouts) and Llama 3.1 8B (GQA under
// SDPA, complex RoPE).
func TestLlamaElementwise(t *testing.T) {
	norm := func(h int64) (f, b []kernel) {
		f = []kernel{rw(h, 2, 4, 1), rw(h, 4, 4, 1), {reads: [][2]int64{{h, 4}}}, rw(h, 4, 4, 1), rw(h, 4, 2, 1), rw(h, 2, 2, 1)}
		b = []kernel{
			rw(h, 2, 2, 1), rw(h, 2, 2, 2), {reads: [][2]int64{{h, 2}}}, // weight * y: grad·w, grad·y, Σ over tokens
			rw(h, 2, 4, 1),                                              // type_as back
			rw(h, 4, 4, 1), rw(h, 4, 4, 2), {reads: [][2]int64{{h, 4}}}, // x·rstd: grad·rstd, grad·x, Σ over h
			{writes: [][2]int64{{h, 4}}},                   // mean: expanded gradient / h
			rw(h, 4, 4, 1), rw(h, 4, 4, 1), rw(h, 4, 4, 2), // pow: pow(1), 2·, grad·
			rw(h, 4, 4, 2), // two gradients of x.float() added
			rw(h, 4, 2, 1), // x.float() back to bf16
		}
		return f, b
	}
	for _, c := range []struct {
		name       string
		d          FLOPDims
		rope       scenarios.RoPEImpl
		kvExpanded bool
		dropout    bool
	}{
		{"llama2-7b fms", FLOPDims{Arch: "llama", Seq: 4096, Batch: 2, Hidden: 4096, Heads: 32, FFN: 11008}, scenarios.RoPERotation, true, false},
		{"llama2-7b fms dropout", FLOPDims{Arch: "llama", Seq: 4096, Batch: 2, Hidden: 4096, Heads: 32, FFN: 11008}, scenarios.RoPERotation, true, true},
		{"llama3.1-8b torchtitan", FLOPDims{Arch: "llama", Seq: 8192, Batch: 2, Hidden: 4096, Heads: 32, KVHeads: 8, FFN: 14336}, scenarios.RoPEComplex, true, false},
		{"llama3.1-8b flash", FLOPDims{Arch: "llama", Seq: 8192, Batch: 2, Hidden: 4096, Heads: 32, KVHeads: 8, FFN: 14336}, "", false, false},
	} {
		h, f := c.d.Hidden, c.d.FFN
		q := c.d.Heads * h / c.d.Heads
		kv := q
		if c.d.KVHeads > 0 {
			kv = c.d.KVHeads * h / c.d.Heads
		}
		nf, nb := norm(h)
		fwd := append(append([]kernel{}, nf...), nf...)
		bwd := append(append([]kernel{}, nb...), nb...)
		for i, w := range []int64{q, kv} {
			if c.rope == scenarios.RoPERotation {
				fwd = append(fwd, rw(w, 2, 4, 1), kernel{reads: [][2]int64{{w, 4}}, writes: [][2]int64{{2 * w, 4}}},
					kernel{reads: [][2]int64{{2 * w, 4}}, writes: [][2]int64{{w, 4}}}, rw(w, 4, 2, 1), rw(w, 2, 2, 1))
				bwd = append(bwd, rw(w, 2, 4, 1), kernel{reads: [][2]int64{{w, 4}}, writes: [][2]int64{{2 * w, 4}}},
					kernel{reads: [][2]int64{{2 * w, 4}}, writes: [][2]int64{{w, 4}}}, rw(w, 4, 2, 1), rw(w, 2, 2, 1))
				if i == 0 {
					fwd = append(fwd, rw(q, 2, 2, 1)) // the attention output's contiguous copy
				}
			} else {
				fwd = append(fwd, rw(w, 2, 4, 1), rw(w, 4, 4, 1), rw(w, 4, 2, 1))
				bwd = append(bwd, rw(w, 2, 4, 1), rw(w, 4, 4, 1), rw(w, 4, 2, 1))
			}
		}
		fwd = append(fwd, rw(h, 2, 2, 2), rw(h, 2, 2, 2), rw(f, 2, 2, 1), rw(f, 2, 2, 2))
		bwd = append(bwd, rw(h, 2, 2, 2), rw(h, 2, 2, 2), // residual gradients added
			rw(h, 2, 2, 2), rw(h, 2, 2, 2), rw(h, 2, 2, 2), // wq/wk/wv and w1/w3 input gradients added
			rw(f, 2, 2, 2), rw(f, 2, 2, 2), rw(f, 2, 2, 2)) // mul's two gradients, silu_backward
		if c.kvExpanded && kv != q {
			for range 2 { // k and v
				x := kernel{reads: [][2]int64{{kv, 2}}, writes: [][2]int64{{q, 2}}}
				fwd, bwd = append(fwd, x), append(bwd, kernel{reads: x.writes, writes: x.reads})
			}
		}
		if c.dropout {
			// ibm-fms: the attention and FFN outputs (h) and the SwiGLU
			// product (f); native_dropout writes its output and a 1-byte
			// mask, its backward reads the gradient and the mask.
			for _, w := range []int64{h, h, f} {
				fwd = append(fwd, kernel{reads: [][2]int64{{w, 2}}, writes: [][2]int64{{w, 2}, {w, 1}}})
				bwd = append(bwd, kernel{reads: [][2]int64{{w, 2}, {w, 1}}, writes: [][2]int64{{w, 2}}})
			}
		}
		tok := c.d.Seq * c.d.Batch
		d := c.d
		if err := d.fill(); err != nil {
			t.Fatal(err)
		}
		p, err := denseParts(d)
		if err != nil {
			t.Fatal(err)
		}
		gf, gb, err := llamaChain(d, p, c.rope, c.kvExpanded, c.dropout)
		if err != nil {
			t.Fatal(err)
		}
		if gf != tok*sum(fwd) || gb != tok*sum(bwd) {
			t.Errorf("%s: %d / %d B per token, kernels listed give %d / %d", c.name, gf/tok, gb/tok, sum(fwd), sum(bwd))
		}
	}
}

// TestBlockElementwise: an eager Llama block moves more than twice its
// kept tensors (the old count); GPT and compiled Llama blocks keep that
// count; rotation RoPE moves more than complex.
func TestBlockElementwise(t *testing.T) {
	load := func(doc string) (*scenarios.Scenario, FLOPDims, []memory.SavedTensor) {
		s, err := scenarios.Load("s.yaml", []byte(doc), nil)
		if err != nil {
			t.Fatal(err)
		}
		d, _ := flopDims(s)
		ts, err := blockSaved(s, d)
		if err != nil {
			t.Fatal(err)
		}
		return s, d, ts
	}
	kept := func(ts []memory.SavedTensor) (n int64) {
		for _, x := range ts {
			n += 2 * x.Bytes
		}
		return n
	}
	base := "version: 1\ncluster: {nodes: 1, gpus_per_node: 8, gpu: H100-80GB}\nparallelism: {dp: 8, zero_stage: 3}\n"
	var eager [3]int64
	for i, c := range []struct {
		model, training string
		oldCount        bool
	}{
		{"llama3.1-8b", "{}", false},
		{"llama3.1-8b", "{rope_impl: rotation}", false},
		{"llama3.1-8b", "{compile: blocks}", true},
		{"gpt3-1.3b", "{}", true},
	} {
		s, d, ts := load(base + "model: {preset: " + c.model + "}\ntraining: " + c.training + "\n")
		f, b, err := blockElementwise(s, d, false)
		if err != nil {
			t.Fatal(err)
		}
		if k := kept(ts); c.oldCount != (f == k && b == 2*k) {
			t.Errorf("%s %s: %d / %d B, kept tensors twice: %d", c.model, c.training, f, b, k)
		} else if !c.oldCount && !(f > k && b > 2*k) {
			t.Errorf("%s %s: eager chain %d / %d B not above the kept count %d / %d", c.model, c.training, f, b, k, 2*k)
		}
		if i < 2 {
			eager[i] = f
		}
	}
	if !(eager[1] > eager[0]) {
		t.Errorf("rotation RoPE %d B, complex %d B: want rotation above", eager[1], eager[0])
	}
}
