package main

import (
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/internal/byhand"
	"github.com/zerosim/zerosim/scenarios"
)

// TestValidateAgreesWithRun: validate passed files run refused (qa22 M3),
// and the refusals that came after loading named no key or position: a
// micro-step's FLOPs overflowing int64 (training.micro_batch 1000000, or
// model.seq_len 16777216, the top of its own range), an intra bandwidth
// past the simulator's 25 TB/s named "default: NCCL buffers" (the
// scenario's name, not the file), a bare peak_bf16 read as FLOP/s, a
// training.mfu or attention efficiency so low the compute overflows, and
// model.hidden=1 saying "heads=32 is out of range (use 1 to 1)" (qa22
// L3, L13). Each is refused by validate and run alike, in one line at
// the key's position or its --set, with the fix: "validate ok" means run
// does not refuse the input.
func TestValidateAgreesWithRun(t *testing.T) {
	def, ok := scenarios.Example("default")
	if !ok {
		t.Fatal("no default example")
	}
	dir := t.TempDir()
	file := func(name, old, new string) string {
		t.Helper()
		if !strings.Contains(string(def), old) {
			t.Fatalf("default example has no %q", old)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(strings.Replace(string(def), old, new, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	mb := file("mb.yaml", "  micro_batch: 1\n", "  micro_batch: 1000000\n")
	bw := file("bw.yaml", "    preset: NVLink4\n", "    bandwidth: 1e9GB/s\n")
	pk := file("pk.yaml", "  gpu: H100-80GB\n", "  gpu: H100-80GB\n  peak_bf16: 989\n")
	overflow := "(the step's FLOPs or bytes do not fit in int64 at this size: lower training.micro_batch or model.seq_len, or raise parallelism.cp)"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"default", "--set", "training.micro_batch=1000000"},
			"zerosim: default.yaml: --set training.micro_batch=1000000: micro_batch 1000000 × seq_len 4096: FLOPs per micro-step overflow: value does not fit in 64 bits " + overflow},
		{[]string{mb}, "zerosim: " + mb + ":43:3: micro_batch 1000000 × seq_len 4096: FLOPs per micro-step overflow: value does not fit in 64 bits " + overflow},
		{[]string{"default", "--set", "model.seq_len=16777216"},
			"zerosim: default.yaml: --set model.seq_len=16777216: micro_batch 1 × seq_len 16777216: FLOPs per micro-step overflow: value does not fit in 64 bits " + overflow},
		{[]string{bw}, "zerosim: " + bw + ":16:5: bandwidth=1000000000.00 GB/s is out of range (use at most 25000.00 GB/s, where the simulator's exact rate arithmetic holds)"},
		{[]string{pk}, "zerosim: " + pk + ":13:14: peak_bf16: 989 what? use 989TFLOPS (a bare number is FLOP/s, and one below 1e9 is no GPU's peak)"},
		{[]string{"default", "--set", "training.mfu=1e-30"},
			"zerosim: default.yaml: --set training.mfu=1e-30: mfu=1e-30 is out of range (use a fraction in [0.0001, 1] such as 0.4)"},
		{[]string{"default", "--set", "training.attention_efficiency=1e-30"},
			"zerosim: default.yaml: --set training.attention_efficiency=1e-30: attention_efficiency=1e-30 is out of range (use a fraction in [0.0001, 1] such as 0.6)"},
		// (6·(P − 32000·4096) + 12·32·4096²) FLOPs a token × 200000·4096
		// tokens / (989 TFLOPS × 0.0001) = 3.8174e8 s ("%v": the figure,
		// checked against that arithmetic below).
		{[]string{"default", "--set", "training.mfu=0.0001", "--set", "training.micro_batch=200000"},
			"zerosim: default.yaml: --set training.mfu=0.0001: the step's compute at mfu 0.0001 takes %v s, longer than 4611686.018s, the longest zerosim times (raise training.mfu, or lower training.micro_batch or model.seq_len)"},
		{[]string{"default", "--set", "model.hidden=1"},
			"zerosim: default.yaml: --set model.hidden=1: hidden=1 is not a multiple of heads=32 (use a multiple of 32, or set model.heads to a divisor of 1)"},
		// An attention efficiency in range whose attention overflows:
		// said "(check cluster.peak_bf16, cluster.hbm_bandwidth and
		// training.compute_efficiency)", and "longer than 9223372.037s"
		// of 5.08e6 s: the block's backward, byhand.Llama27B at that
		// sequence and efficiency ("%v", checked below).
		{[]string{"default", "--set", "training.attention_efficiency=0.0001", "--set", "model.seq_len=4194304"},
			`zerosim: default.yaml: layer "block.0": %v s of compute is longer than 4611686.018s, the longest zerosim times (half the range of int64 picoseconds) (check cluster.peak_bf16, cluster.hbm_bandwidth, training.compute_efficiency and training.attention_efficiency, or lower training.micro_batch or model.seq_len)`},
	} {
		// A "%v" in want is a duration in seconds worked by hand: the
		// message must give it to 1e-12.
		seconds := map[string]float64{
			"default --set training.mfu=0.0001 --set training.micro_batch=200000":            float64(6*(byhand.DefaultParams-32000*4096)+12*32*4096*4096) * 200000 * 4096 / (989e12 * 0.0001),
			"default --set training.attention_efficiency=0.0001 --set model.seq_len=4194304": byhand.Llama27B(4194304, 0.0001).BlockBwd,
		}[strings.Join(c.args, " ")]
		for _, cmd := range []string{"validate", "run"} {
			args := append([]string{cmd}, c.args...)
			code, out, errOut := runMain(t, "", args...)
			oneLine(t, args, code, out, errOut)
			want := c.want
			if pre, post, ok := strings.Cut(want, "%v"); ok {
				num := strings.TrimSuffix(strings.TrimPrefix(strings.TrimSuffix(errOut, "\n"), pre), post)
				got, err := strconv.ParseFloat(num, 64)
				if err != nil || seconds == 0 || math.Abs(got-seconds) > 1e-12*seconds {
					t.Errorf("%q: %q gives %q s; by hand %v s", args, errOut, num, seconds)
				}
				want = pre + num + post
			}
			if errOut != want+"\n" {
				t.Errorf("%q:\n got %q\nwant %q", args, errOut, want+"\n")
			}
		}
	}
}
