package zero

import (
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// fa1Figure is testdata/attention/fa1.csv: the A100 forward + backward
// figure's causal bars (TFLOP/s) by kernel, head_dim and sequence length.
func fa1Figure(t *testing.T) map[[3]string]float64 {
	t.Helper()
	recs := readAttentionCSV(t, "fa1.csv")
	out := map[[3]string]float64{}
	for _, r := range recs[1:] {
		v, err := strconv.ParseFloat(r[7], 64)
		if err != nil || r[2] != "A100" || r[3] != "fwd_bwd" || r[4] != "True" {
			t.Fatalf("fa1.csv: bad row %v", r)
		}
		out[[3]string{r[1], r[6], r[5]}] = v
	}
	return out
}

// TestFA1RatesMeasured holds FlashAttention-1's rate (training.
// attention_kernel: fa1) to the published figure's bars at every head_dim
// and sequence length it gives (testdata/attention/fa1.csv): on an A100
// the rate a scenario runs at is the bar over the A100's 312 TFLOP/s; on
// Hopper it is Hopper's FlashAttention-2 rate times FlashAttention-1's
// share of FlashAttention-2 on the same A100 panel at 8k; between
// published lengths and head_dims it lies between their bars.
func TestFA1RatesMeasured(t *testing.T) {
	fig := fa1Figure(t)
	bar := func(kernel string, hd, seq int64) float64 {
		v, ok := fig[[3]string{kernel, strconv.FormatInt(hd, 10), strconv.FormatInt(seq, 10)}]
		if !ok {
			t.Fatalf("fa1.csv: no %s bar at head_dim %d, %d tokens", kernel, hd, seq)
		}
		return v
	}
	rate := func(gpu string, hd, seq int64) float64 {
		return AttentionEfficiencyAt(gpu, scenarios.KernelFA1, 0.7, hd) * SeqLenScale(gpu, scenarios.KernelFA1, hd, seq)
	}
	near := func(what string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-9 {
			t.Errorf("%s: %.6f, want %.6f", what, got, want)
		}
	}
	for _, gpu := range []string{"A100-80GB", "A100-40GB"} {
		for _, hd := range []int64{64, 128} {
			for _, seq := range []int64{512, 1024, 2048, 4096, 8192, 16384} {
				near(gpu+" fa1 head_dim "+strconv.FormatInt(hd, 10)+" seq "+strconv.FormatInt(seq, 10), rate(gpu, hd, seq), bar("fa1", hd, seq)/312)
			}
		}
	}
	near("FA1AttentionEfficiency", AttentionEfficiency("A100-80GB", scenarios.KernelFA1, 0.7), bar("fa1", 128, 8192)/312)
	near("H100 fa1 at 128, 8k", rate("H100-80GB", 128, 8192), AttentionEfficiency("H100-80GB", scenarios.KernelFA2, 0.7)*bar("fa1", 128, 8192)/bar("fa2", 128, 8192))
	// Beyond the published lengths the nearest bar holds; between them
	// the rate lies strictly between its neighbours'.
	near("A100 fa1 at 256 tokens", rate("A100-80GB", 128, 256), bar("fa1", 128, 512)/312)
	near("A100 fa1 at 32k tokens", rate("A100-80GB", 64, 32768), bar("fa1", 64, 16384)/312)
	near("A100 fa1 at head_dim 32", rate("A100-80GB", 32, 2048), bar("fa1", 64, 2048)/312)
	near("A100 fa1 at head_dim 256", rate("A100-80GB", 256, 2048), bar("fa1", 128, 2048)/312)
	if r := rate("A100-80GB", 128, 3000); !(r > bar("fa1", 128, 2048)/312 && r < bar("fa1", 128, 4096)/312) {
		t.Errorf("A100 fa1 at 3,000 tokens: %.4f, not between the 2k and 4k bars", r)
	}
	if r := rate("A100-80GB", 96, 2048); !(r < bar("fa1", 64, 2048)/312 && r > bar("fa1", 128, 2048)/312) {
		t.Errorf("A100 fa1 at head_dim 96: %.4f, not between the 64 and 128 bars", r)
	}
	// and exactly where fa1rate.go says: linear in log2(seq) between
	// lengths (3,000 tokens is 0.55 of the way from 2k to 4k in log2,
	// 0.46 linearly) and linear in head_dim (80 is a quarter of the way
	// from 64 to 128; 96, the midpoint, cannot tell the ends apart).
	x := math.Log2(3000.0 / 2048)
	near("A100 fa1 at 3,000 tokens", rate("A100-80GB", 128, 3000), (bar("fa1", 128, 2048)+x*(bar("fa1", 128, 4096)-bar("fa1", 128, 2048)))/312)
	near("A100 fa1 at head_dim 80, 2k", rate("A100-80GB", 80, 2048), (0.75*bar("fa1", 64, 2048)+0.25*bar("fa1", 128, 2048))/312)
	near("A100 fa1 at head_dim 80, 3,000 tokens", rate("A100-80GB", 80, 3000), (0.75*(bar("fa1", 64, 2048)+x*(bar("fa1", 64, 4096)-bar("fa1", 64, 2048)))+
		0.25*(bar("fa1", 128, 2048)+x*(bar("fa1", 128, 4096)-bar("fa1", 128, 2048))))/312)
	// FlashAttention-1 is its own kernel: slower than FlashAttention-2
	// and, on this figure, below the rate zerosim gives the Triton kernel.
	for _, gpu := range []string{"A100-80GB", "H100-80GB"} {
		if a, b := AttentionEfficiency(gpu, scenarios.KernelFA1, 0.7), AttentionEfficiency(gpu, scenarios.KernelFA2, 0.7); a >= b/2 {
			t.Errorf("%s: fa1 %.3f is not below half fa2's %.3f (the figure: 80 against 182)", gpu, a, b)
		}
	}
	// Only FlashAttention-1 is rated by sequence length.
	for _, k := range []scenarios.AttentionKernel{scenarios.KernelFA2, scenarios.KernelTriton, scenarios.KernelCuDNN, scenarios.KernelEager} {
		if f := SeqLenScale("A100-80GB", k, 128, 512); f != 1 {
			t.Errorf("SeqLenScale(%s, 512) = %v, want 1", k, f)
		}
	}
}

// TestFA1Scenario runs a scenario through the rate it asks for: an A100
// MosaicGPT-1B shape (hidden 2,048, 16 heads of 128) at 2,048 tokens runs
// attention at the figure's 69 TFLOP/s, and at 16,384 tokens at 83; fa1 is
// refused where flash-attn 1.x does not run.
func TestFA1Scenario(t *testing.T) {
	doc := `version: 1
cluster:
  nodes: 1
  gpus_per_node: 8
  gpu: %s
model:
  kind: transformer
  arch: gpt
  vocab: 50257
  seq_len: %d
  hidden: 2048
  layers: 24
  heads: 16
parallelism:
  dp: 8
  zero_stage: 3
training:
  micro_batch: 1
  attention_kernel: fa1
`
	load := func(gpu string, seq int) (*scenarios.Scenario, error) {
		return scenarios.Load("fa1.yaml", []byte(fmt.Sprintf(doc, gpu, seq)), nil)
	}
	for _, c := range []struct {
		seq  int
		want float64
	}{{2048, 69.0 / 312}, {16384, 83.0 / 312}} {
		s, err := load("A100-80GB", c.seq)
		if err != nil {
			t.Fatal(err)
		}
		if got := AttentionEfficiencyOf(s); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("seq %d: attention at %.4f, want %.4f", c.seq, got, c.want)
		}
	}
	for _, gpu := range []string{"B200", "MI300X", "V100-32GB", "RTX5090"} {
		_, err := load(gpu, 2048)
		if err == nil {
			t.Errorf("%s: fa1 loaded, want it refused", gpu)
			continue
		}
		// One line naming the key's file:line:column, why, and the fix.
		if msg := err.Error(); strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "fa1.yaml:19:3: ") || !strings.Contains(msg, "attention_kernel=fa1 does not run on "+gpu) || !strings.Contains(msg, "(use attention_kernel: fa2 or triton)") {
			t.Errorf("%s: refusal %q, want one line at fa1.yaml:19:3 naming the GPU and the fix", gpu, msg)
		}
	}
	// flash-attn 1.x trains head dims up to 128 on sm80 and sm90, up to
	// 64 on sm86 and sm89 (fmha_api.cpp at v1.0.9; scenarios'
	// checkFA1HeadDim).
	loadHeads := func(gpu string, heads int) error {
		_, err := scenarios.Load("fa1.yaml", []byte(fmt.Sprintf(doc, gpu, 2048)), []string{fmt.Sprintf("model.heads=%d", heads)})
		return err
	}
	for _, c := range []struct {
		gpu   string
		heads int // head_dim 2048/heads
		ok    bool
	}{
		{"A100-40GB", 16, true}, {"A800-80GB", 16, true}, {"H100-80GB", 16, true},
		{"A100-80GB", 8, false}, {"A100-80GB", 512, false}, // head_dim 256, 4
		{"L40S", 32, true}, {"A10G", 32, true}, {"L4", 32, true}, {"RTX4090", 32, true},
		{"L40S", 16, false}, {"RTX4090", 16, false},
	} {
		err := loadHeads(c.gpu, c.heads)
		switch {
		case c.ok && err != nil:
			t.Errorf("%s, head_dim %d: fa1 refused (%v), want it loaded", c.gpu, 2048/c.heads, err)
		case !c.ok && err == nil:
			t.Errorf("%s, head_dim %d: fa1 loaded, want it refused", c.gpu, 2048/c.heads)
		case !c.ok && (!strings.HasPrefix(err.Error(), "fa1.yaml:19:3: attention_kernel=fa1 does not ") || !strings.Contains(err.Error(), "(use attention_kernel: fa2")):
			t.Errorf("%s, head_dim %d: refusal %q, want one line at fa1.yaml:19:3 with its fix", c.gpu, 2048/c.heads, err)
		}
	}
}

// TestUnpadBytes: under training.attention_unpad every block moves flash-
// attn's unpad_input and pad_input traffic (unpadBytes) at the memory-bound
// rate: forward (2·3h + 3h)·t·2 B, backward (3·3h + 2h)·t·2 B for a block
// of width h without GQA over t tokens; the embedding and head do not move,
// and with full recompute the rerun forward moves the forward's bytes
// again.
func TestUnpadBytes(t *testing.T) {
	const doc = `version: 1
cluster:
  nodes: 1
  gpus_per_node: 8
  gpu: A100-80GB
model:
  kind: transformer
  arch: gpt
  vocab: 50257
  seq_len: 2048
  hidden: 2048
  layers: 4
  heads: 16
parallelism:
  dp: 8
  zero_stage: 3
training:
  micro_batch: 2
  attention_kernel: fa1
`
	s, err := scenarios.Load("s.yaml", []byte(doc), nil)
	if err != nil {
		t.Fatal(err)
	}
	hbm := float64(s.Cluster.HBMBandwidth) * DefaultHBMEfficiency
	const h, tok = 2048, 2 * 2048
	fwd, bwd := float64((2*3*h+3*h)*tok*2)/hbm, float64((3*3*h+2*h)*tok*2)/hbm
	for _, rc := range []struct {
		policy  string
		rerunFw float64
	}{{"none", 0}, {"full", fwd}} {
		base := docCosts(t, doc, "training.recompute="+rc.policy)
		got := docCosts(t, doc, "training.recompute="+rc.policy, "training.attention_unpad=true")
		blocks := 0
		for i := range base {
			df, db := (got[i].Fwd - base[i].Fwd).Seconds(), (got[i].Bwd - base[i].Bwd).Seconds()
			if df == 0 && db == 0 {
				continue
			}
			blocks++
			if math.Abs(df-fwd) > 2e-12 || math.Abs(db-(bwd+rc.rerunFw)) > 2e-12 {
				t.Errorf("recompute %s, unit %s: forward +%.6g s, backward +%.6g s; want %.6g and %.6g", rc.policy, base[i].Name, df, db, fwd, bwd+rc.rerunFw)
			}
		}
		if blocks != 4 {
			t.Errorf("recompute %s: %d units moved, want the 4 blocks", rc.policy, blocks)
		}
	}
	if _, err := scenarios.Load("s.yaml", []byte(doc), []string{"training.attention_unpad=true", "training.attention=eager"}); err == nil {
		t.Error("attention_unpad with attention: eager loaded, want it refused")
	}
}

// TestUnpadHostSync: flash-attn's unpad_input reads a value to the host in
// every block (memory's unpadSync), so FSDP1's deferred frees complete
// there even without a rate limiter. MosaicGPT-1B at 4,096 tokens,
// micro-batch 8, GA 32, on 8 A100-40GB (a row of 22d724c8's table, which ran):
// the simulated caching allocator runs short of room for the 6.13 GiB fp32
// loss input when the frees stay pending (since FSDP1's root holds its view
// gradients and parameters to the embedding's backward, memory/rootflat.go,
// it releases its cache and retries every step where it ran out before),
// and not with the block's sync.
func TestUnpadHostSync(t *testing.T) {
	tmpl, err := os.ReadFile("../testdata/validation/mosaicml-examples-gpt-a100-40gb-22d724c8.yaml")
	if err != nil {
		t.Fatal(err)
	}
	row := []string{"parallelism.dp=8", "training.micro_batch=8", "training.grad_accum=32", "model.hidden=2048", "model.layers=24",
		"model.heads=16", "model.seq_len=4096", "training.recompute=full"}
	short := func(sets ...string) (oom bool, retries int) {
		s, err := scenarios.Load("t.yaml", tmpl, append(row, sets...))
		if err != nil {
			t.Fatal(err)
		}
		r, err := Replay(s, Options{})
		if err != nil {
			t.Fatal(err)
		}
		return r.AllocatorOOM() != nil, r.AllocRetries()
	}
	if oom, retries := short(); oom || retries > 0 {
		t.Errorf("with attention_unpad's per-block sync: the simulated allocator runs out of memory (%v) or retries %d times a step, want it to fit without (the row ran)", oom, retries)
	}
	if oom, retries := short("training.attention_unpad=false"); !oom && retries == 0 {
		t.Error("without the sync: the row fits without releasing the cache; the test no longer shows what the sync releases")
	}
}
