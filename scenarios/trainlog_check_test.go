package scenarios

import (
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
)

// megatronArg is an argument line as Megatron-LM prints it (48 − len(name)
// dots, megatron/training/arguments.py _print_args), deepspeedArg as
// DeepSpeed prints its config (29 − len(name), DeepSpeedConfig.print).
func megatronArg(name, v string) string {
	return "  " + name + " " + strings.Repeat(".", 48-len(name)) + " " + v
}

func deepspeedArg(name, v string) string {
	return "[2024-01-01 00:00:00,000] [INFO] [config.py:1000:print]   " + name + " " + strings.Repeat(".", 29-len(name)) + " " + v
}

const megaIter = " [2025-09-01 10:00:00] iteration        %d/  500000 | consumed samples:         1024 | elapsed time per iteration (ms): 14500.0 | global batch size:   %d | lm loss: 7.990000E+00 |"

// TestTrainLogRunFacts: what a log states of its run. Megatron's argument
// dump gives world_size, seq_length and global_batch_size, its iteration
// lines' "global batch size" overrides the argument (what ran); DeepSpeed's
// config dump (29-dot lines) gives train_batch_size, and its world_size
// (the data-parallel one) is not taken. torchtitan's start line (as
// torchtitan's CI log prints it), its capacity and model size lines; and
// the device its metrics lines imply (49.66 GiB at 52.28 %: 94.99 GiB).
func TestTrainLogRunFacts(t *testing.T) {
	iter := func(i, g int) string {
		return strings.Replace(strings.Replace(megaIter, "%d", strconv.Itoa(i), 1), "%d", strconv.Itoa(g), 1)
	}
	titan := "[rank0]:[titan] 2025-11-25 19:44:58,838 - root - INFO - "
	step := func(i int, mem string) string {
		return titan + "step:  " + strconv.Itoa(i) + "  loss:  8.0277  grad_norm:  1.4604  memory: " + mem + "  tps: 5,756  tflops: 0.41  mfu: 0.04%"
	}
	for _, c := range []struct {
		name, log string
		want      RunFacts
	}{
		{"megatron", strings.Join([]string{megatronArg("global_batch_size", "256"), megatronArg("seq_length", "4096"), megatronArg("world_size", "16"),
			deepspeedArg("world_size", "4"), iter(1, 128), iter(2, 128)}, "\n"),
			RunFacts{GlobalBatch: 128, GlobalBatchLine: 6, GlobalBatchWhat: "global batch size", WorldSize: 16, WorldSizeLine: 3, SeqLen: 4096, SeqLenLine: 2, SeqLenWhat: "seq_length"}},
		{"megatron arguments only", strings.Join([]string{megatronArg("global_batch_size", "256"), strings.Replace(iter(1, 0), "| global batch size:   0 ", "", 1)}, "\n"),
			RunFacts{GlobalBatch: 256, GlobalBatchLine: 1, GlobalBatchWhat: "global_batch_size"}},
		{"deepspeed", strings.Join([]string{deepspeedArg("train_batch_size", "64"), deepspeedArg("world_size", "8"), megatronArg("world_size", "oops"),
			"[2024-01-01 00:00:01,000] [INFO] [logging.py:96:log_dist] [Rank 0] epoch=0/micro_step=10/global_step=10, RunningAvgSamplesPerSec=25.7, CurrSamplesPerSec=25.7, MemAllocated=4.2GB, MaxMemAllocated=9.1GB"}, "\n"),
			RunFacts{GlobalBatch: 64, GlobalBatchLine: 1, GlobalBatchWhat: "train_batch_size"}},
		{"torchtitan", strings.Join([]string{
			titan + "CUDA capacity: NVIDIA H100 80GB HBM3 with 79.11GiB memory",
			titan + "Model llama3 8B size: 8,030,261,248 total parameters",
			titan + "Trainer is initialized with local batch size 8, global batch size 64, gradient accumulation steps 1, sequence length 2048, total steps 10 (warmup 2)",
			step(1, "60.00GiB(75.84%)"), step(2, "61.00GiB(77.11%)")}, "\n"),
			RunFacts{GlobalBatch: 64, GlobalBatchLine: 3, GlobalBatchWhat: "global batch size", SeqLen: 2048, SeqLenLine: 3, SeqLenWhat: "sequence length",
				Params: 8030261248, ParamsLine: 2, DeviceGiB: 79.11, DeviceLine: 1, DeviceWhat: "capacity"}},
		{"torchtitan percent", strings.Join([]string{step(1, " 1.21GiB(0.86%)"), step(2, "49.66GiB(52.28%)"), step(3, "40.00GiB(42.11%)")}, "\n"),
			RunFacts{DeviceGiB: 49.66 / 52.28 * 100, DeviceLine: 2, DeviceWhat: "memory 49.66GiB is 52.28% of it", pct: 52.28}},
	} {
		l, err := ParseTrainLog(c.name, []byte(c.log))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got := l.Run
		if math.Abs(got.DeviceGiB-c.want.DeviceGiB) < 1e-9 {
			got.DeviceGiB = c.want.DeviceGiB
		}
		if got != c.want {
			t.Errorf("%s: facts %+v, want %+v", c.name, got, c.want)
		}
	}
	if d := readTrainLog(t, "torchtitan-pr1287-llama3-8b.log").Run.DeviceGiB; math.Abs(d-94.99) > 0.005 {
		t.Errorf("torchtitan pull request #1287: device %.4f GiB, want 94.99 (49.66 GiB at 52.28 %%)", d)
	}
}

// TestTrainLogCheckRun: a log whose stated run differs from the scenario
// (the default example: 2 nodes × 8 H100-80GB of 79.11 GiB usable, dp 16, micro_batch
// 1, grad_accum 1, seq_len 4096) is refused, naming both values and the
// --set that makes the scenario the logged run; a matching one passes.
func TestTrainLogCheckRun(t *testing.T) {
	data, _ := Example("default")
	s, err := Load("default", data, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		run  RunFacts
		want string // "" passes
	}{
		{"matching", RunFacts{GlobalBatch: 16, GlobalBatchLine: 1, GlobalBatchWhat: "global batch size", WorldSize: 16, WorldSizeLine: 2, SeqLen: 4096, SeqLenLine: 3, SeqLenWhat: "seq_length", DeviceGiB: 79.11, DeviceLine: 4, DeviceWhat: "capacity"}, ""},
		{"batch", RunFacts{GlobalBatch: 1024, GlobalBatchLine: 7, GlobalBatchWhat: "global batch size"},
			"log:7: the log's global batch size is 1024 sequences, the scenario's 16 (micro_batch 1 × grad_accum 1 × dp 16): the log is of another run; --set training.grad_accum=64"},
		{"batch not a multiple", RunFacts{GlobalBatch: 100, GlobalBatchLine: 7, GlobalBatchWhat: "train_batch_size"},
			"log:7: the log's train_batch_size is 100 sequences, the scenario's 16 (micro_batch 1 × grad_accum 1 × dp 16): the log is of another run; set training.micro_batch, training.grad_accum and parallelism.dp so that their product is 100"},
		{"world", RunFacts{WorldSize: 8, WorldSizeLine: 2},
			"log:2: the log ran world_size 8 GPUs, the scenario 16 (cluster.nodes 2 × gpus_per_node 8): the log is of another run; --set cluster.nodes=1 --set parallelism.dp=8"},
		{"seq", RunFacts{SeqLen: 8192, SeqLenLine: 3, SeqLenWhat: "sequence length"},
			"log:3: the log's sequence length is 8192 tokens, the scenario's model.seq_len 4096: the log is of another run; --set model.seq_len=8192"},
		{"device 95", RunFacts{DeviceGiB: 49.66 / 52.28 * 100, DeviceLine: 5, DeviceWhat: "memory 49.66GiB is 52.28% of it"},
			"log:5: the logged GPU has 94.99 GiB (torch's total_memory; memory 49.66GiB is 52.28% of it), the scenario's H100-80GB 79.11 GiB (cluster.gpu_memory): the log is of another GPU; set the scenario's cluster.gpu to it, or --set cluster.gpu_memory=95GiB"},
		{"device 40", RunFacts{DeviceGiB: 39.39, DeviceLine: 1, DeviceWhat: "capacity"}, "the logged GPU has 39.39 GiB"},
		{"params", RunFacts{Params: 70553706496, ParamsLine: 9},
			"log:9: the logged model has 70,553,706,496 parameters, the scenario's "},
	} {
		l := &TrainLog{File: "log", Run: c.run}
		err := l.CheckRun(s)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v, want none", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	// The bounds themselves: a device within 0.90–1.02 of the scenario's
	// 79.11 GiB (the H100's CUDA capacity, scenarios.cudaCapacity) and a count within 2 % of its parameters pass, just outside
	// them not.
	p := s.Model.TotalParams()
	for _, c := range []struct {
		name string
		run  RunFacts
		ok   bool
	}{
		{"1 % more parameters", RunFacts{Params: p + p/100, ParamsLine: 1}, true},
		{"1.9 % fewer parameters", RunFacts{Params: p - p*19/1000, ParamsLine: 1}, true},
		{"2.1 % more parameters", RunFacts{Params: p + p*21/1000, ParamsLine: 1}, false},
		{"2.1 % fewer parameters", RunFacts{Params: p - p*21/1000, ParamsLine: 1}, false},
		{"71.2 GiB (0.90001)", RunFacts{DeviceGiB: 71.2, DeviceLine: 1, DeviceWhat: "capacity"}, true},
		{"71.1 GiB (0.8987)", RunFacts{DeviceGiB: 71.1, DeviceLine: 1, DeviceWhat: "capacity"}, false},
		{"80.6 GiB (1.0188)", RunFacts{DeviceGiB: 80.6, DeviceLine: 1, DeviceWhat: "capacity"}, true},
		{"80.7 GiB (1.0201)", RunFacts{DeviceGiB: 80.7, DeviceLine: 1, DeviceWhat: "capacity"}, false},
	} {
		if err := (&TrainLog{File: "log", Run: c.run}).CheckRun(s); (err == nil) != c.ok {
			t.Errorf("%s: %v, want passing %v", c.name, err, c.ok)
		}
	}
}

// TestCalibrationDocRunChecks: docs/calibration.md states CheckRun's
// bounds as the code holds them (the device's 0.90–1.02 × gpu_memory,
// parameters within 2 %), names every fact it compares in CheckRun's
// order, and shows each of calibrate's refusals and the unfitted memory
// part (TestREADMEExamples runs those console blocks).
func TestCalibrationDocRunChecks(t *testing.T) {
	b, err := os.ReadFile("../docs/calibration.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for _, want := range []string{
		fmt.Sprintf("within\n    %.2f–%.2f × `cluster.gpu_memory`", deviceLow, deviceHigh),
		fmt.Sprintf("within %g %% of\n    the scenario's model", paramsTolerance*100),
		"cannot be reached at efficiency ≥ 0.0001",
		"so not measured on its GPU",
		"the log is of another run",
		"zerosim: warning: the memory part is not fitted (the compute part is written)",
	} {
		if !strings.Contains(doc, want) {
			t.Errorf("docs/calibration.md lacks %q", want)
		}
	}
	// CheckRun's order: device, parameters, world size, global batch,
	// sequence length.
	at := -1
	for _, fact := range []string{"- the GPU's memory", "- the parameters", "- the world size", "- the global batch", "- the sequence length"} {
		i := strings.Index(doc, fact)
		if i < 0 || i < at {
			t.Errorf("docs/calibration.md: %q missing or out of CheckRun's order", fact)
		}
		at = i
	}
}
