package scenarios

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/zerosim/zerosim/internal/golden"
	"github.com/zerosim/zerosim/units"
)

func readTrainLog(t *testing.T, name string) *TrainLog {
	t.Helper()
	p := filepath.Join("testdata", "trainlog", name)
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	l, err := ParseTrainLog(p, data)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestParseTrainLog: the published logs (testdata/trainlog/README.md) parse
// to the steps, throughput or time and memory they print.
func TestParseTrainLog(t *testing.T) {
	for _, c := range []struct {
		file        string
		format      string
		steps       []int64
		first       float64 // the first step's tps or ms as printed
		reserved    int64   // the first step's (torchtitan) or the log's (Megatron) max reserved
		maxReserved int64
	}{
		{"torchtitan-pr1287-llama3-8b.log", TrainLogTorchtitan, []int64{200, 210, 220, 230, 240, 250}, 5856, int64(math.Round(49.66 * (1 << 30))), 0},
		{"torchtitan-pr1437-flex-debug.log", TrainLogTorchtitan, []int64{3, 4, 5, 6, 7, 8, 9, 10}, 30768, 0, 0},
		// Four ranks' lines of step 1 count once, with the first's tps.
		{"torchtitan-pr1884-llama3-8b-cp2.log", TrainLogTorchtitan, []int64{1, 10}, 86, int64(math.Round(33.21 * (1 << 30))), 0},
		{"megatron-llm-issue11.log", TrainLogMegatron, []int64{182, 183, 184, 185}, 126995.3, 0, 0},
		{"megatron-pr5662.log", TrainLogMegatron, []int64{20}, 744.0, 0, 6406 << 20},
		{"megatron-nccl-issue743.log", TrainLogMegatron, []int64{10}, 356.2, 0, 0},
		// tqdm bars cut before their "]"; 5.01 s/it is 5,010 ms.
		{"hf-transformers-issue262.log", TrainLogHFTrainer, []int64{2, 3}, 5010, 0, 0},
		// The bar at step 1,999 of 24,128 with DeepSpeed's line run on
		// after it; the loss dicts carry no time.
		{"hf-transformers-issue14531.log", TrainLogHFTrainer, []int64{1999}, 3330, 0, 0},
		// Batch 366's block: MemoryMonitor's peak_reserved_mem 51.3280 GB
		// (decimal), no throughput yet (SpeedMonitor's window not full).
		{"composer-llm-shearing-issue24.log", TrainLogComposer, []int64{366}, 0, 51_328_000_000, 0},
		// Batch 8's block of composer's older MemoryMonitor: reserved_mem
		// is the current reservation, not the peak, and is not read; the
		// lines before the header belong to a block cut off above.
		{"composer-llm-foundry-issue244.log", TrainLogComposer, []int64{8}, 0, 0, 0},
		// DeepSpeed's ThroughputTimer lines, CurrSamplesPerSec first; the
		// loss dicts of the Hugging Face Trainer beside them carry no time.
		{"deepspeed-fate-gpt2.log", TrainLogDeepSpeed, []int64{10, 20, 30, 40}, 111.33670009091573, 0, 0},
		// The "..." lines of the excerpt and the overflow lines are not steps.
		{"deepspeed-chat-step2-npu.log", TrainLogDeepSpeed, []int64{10, 450, 460, 470}, 25.704280480541442, 0, 0},
		// Megatron-DeepSpeed's report_memory line is read (max reserved
		// 17240 MiB); its ALCF iteration lines ("iteration=       2/") are
		// not Megatron-LM's.
		{"deepspeed-megatron-alcf-gas8.log", TrainLogDeepSpeed, []int64{3, 4, 5, 6, 7, 8, 9}, 74.68528989415996, 0, 17240 << 20},
		// NeMo's ProgressPrinter behind nemo_run's "ining-demo/0
		// [default0]:" prefix: global_step 0–19 (epoch 1's iteration 0 is
		// global step 19), train_step_timing 10.31 s first.
		{"nemo2-resiliency-demo.log", TrainLogNeMo, []int64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19}, 10310, 0, 0},
		// Metrics in another order (consumed_samples first), val_loss after.
		{"nemo2-bionemo-recipes-pr740.log", TrainLogNeMo, []int64{120, 121, 122, 123, 124, 125}, 31.46, 0, 0},
		// NEMO_LOG_MEMORY_USAGE=1: max_memory_reserved 64,286,097,408 B
		// (59.87 GiB) read, max_memory_allocated not.
		{"nemo2-aws-perf-readme-memory.log", TrainLogNeMo, []int64{74, 75, 76}, 8768, 64286097408, 0},
	} {
		l := readTrainLog(t, c.file)
		var steps []int64
		for _, s := range l.Steps {
			steps = append(steps, s.Step)
		}
		first := l.Steps[0].TPS + l.Steps[0].TimeMS + l.Steps[0].SamplesPerSec
		if l.Format != c.format || !equalInts(steps, c.steps) || math.Abs(first-c.first) > 1e-9*c.first || l.Steps[0].Reserved != c.reserved || l.MaxReserved != c.maxReserved {
			t.Errorf("%s: %s steps %v first %g reserved %d max %d, want %s %v %g %d %d", c.file, l.Format, steps, first, l.Steps[0].Reserved, l.MaxReserved,
				c.format, c.steps, c.first, c.reserved, c.maxReserved)
		}
	}
}

// TestParseTrainLogDeepSpeed: DeepSpeed's counters and memory as the
// published lines print them: micro_step is global_step × the engine's
// gradient accumulation (1 in FATE's and Megatron-DeepSpeed's, 4 in
// DeepSpeed-Chat's), and MaxMemAllocated (GiB, 1024**3, to 2 decimals) is
// kept as allocated memory, its largest and first line.
func TestParseTrainLogDeepSpeed(t *testing.T) {
	for _, c := range []struct {
		file      string
		micro     []int64
		allocated int64
		line      int
	}{
		// "MemA          llocated" as the page shows it: the time and
		// MaxMemAllocated are still read.
		{"deepspeed-fate-gpt2.log", []int64{10, 20, 30, 40}, int64(math.Round(6.12 * (1 << 30))), 3},
		{"deepspeed-chat-step2-npu.log", []int64{40, 1800, 1840, 1880}, int64(math.Round(38.49 * (1 << 30))), 22},
		{"deepspeed-megatron-alcf-gas8.log", []int64{3, 4, 5, 6, 7, 8, 9}, int64(math.Round(15.59 * (1 << 30))), 9},
	} {
		l := readTrainLog(t, c.file)
		var micro []int64
		for _, s := range l.Steps {
			micro = append(micro, s.MicroStep)
			if s.Epoch != 0 || s.Reserved != 0 || s.Memory {
				t.Errorf("%s: step %+v: want epoch 0 and no reserved memory", c.file, s)
			}
		}
		if !equalInts(micro, c.micro) || l.MaxAllocated != c.allocated || l.MaxAllocatedLine != c.line {
			t.Errorf("%s: micro steps %v, max allocated %d at line %d; want %v, %d at %d", c.file, micro, l.MaxAllocated, l.MaxAllocatedLine, c.micro, c.allocated, c.line)
		}
	}
}

// TestTrainLogDeepSpeedWallClock: the step DeepSpeed's CurrSamplesPerSec
// gives against the log's own clock. Lines 10 global steps apart are
// stamped 1.462–1.471 s (FATE) and 24.979–24.984 s (DeepSpeed-Chat)
// apart; the timer leaves out the time between micro-steps and the
// logging, so its median step is below the wall clock's mean, by less
// than 2%.
func TestTrainLogDeepSpeedWallClock(t *testing.T) {
	stamp := regexp.MustCompile(`^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d),(\d{3})\]`)
	for _, c := range []struct {
		file    string
		samples float64
		ga      int64
	}{
		{"deepspeed-fate-gpt2.log", 16, 1},
		{"deepspeed-chat-step2-npu.log", 64, 4},
	} {
		l := readTrainLog(t, c.file)
		data, err := os.ReadFile(filepath.Join("testdata", "trainlog", c.file))
		if err != nil {
			t.Fatal(err)
		}
		ss, err := l.Steady(StepWork{Samples: c.samples, GradAccum: c.ga})
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(data), "\n")
		at := func(s TrainLogStep) time.Time {
			m := stamp.FindStringSubmatch(lines[s.Line-1])
			if m == nil {
				t.Fatalf("%s:%d: no time stamp", c.file, s.Line)
			}
			ts, err := time.Parse("2006-01-02 15:04:05.000", m[1]+"."+m[2])
			if err != nil {
				t.Fatal(err)
			}
			return ts
		}
		used := l.Steps[ss.Warmup:]
		var wall float64
		for i := 1; i < len(used); i++ {
			wall += at(used[i]).Sub(at(used[i-1])).Seconds() / float64(used[i].Step-used[i-1].Step)
		}
		wall /= float64(len(used) - 1)
		if r := ss.Median.Seconds() / wall; !(r < 1 && r > 0.98) {
			t.Errorf("%s: median step %v, the clock's %.4f s per step: ratio %.4f, want in (0.98, 1)", c.file, ss.Median, wall, r)
		}
	}
}

// TestTrainLogDeepSpeedBeside: DeepSpeed's lines beside a trainer's own
// step lines (Megatron-DeepSpeed prints Megatron's iteration line too) are
// skipped; beside the Hugging Face Trainer's progress bar they are taken.
func TestTrainLogDeepSpeedBeside(t *testing.T) {
	ds := "[2023-12-29 13:02:51,116] [INFO] [timer.py:260:stop] epoch=0/micro_step=20/global_step=20, RunningAvgSamplesPerSec=111.0120624893855, CurrSamplesPerSec=111.13499047776766, MemAllocated=1.87GB, MaxMemAllocated=6.12GB\n"
	for _, c := range []struct {
		name, log string
		format    string
		step      int64
	}{
		{"megatron", ds + " iteration       20/ 100 | elapsed time per iteration (ms): 356.2 |\n", TrainLogMegatron, 20},
		{"hf bars", hfBars(40, "1.00s/it", "2.00s/it") + ds, TrainLogDeepSpeed, 20},
		{"composer", ds + composerBlockText(101, "40.1230", "0.5000"), TrainLogComposer, 101},
	} {
		l, err := ParseTrainLog("l.log", []byte(c.log))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if l.Format != c.format || len(l.Steps) != 1 || l.Steps[0].Step != c.step {
			t.Errorf("%s: %s %+v, want %s step %d", c.name, l.Format, l.Steps, c.format, c.step)
		}
	}
}

func equalInts(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestTrainLogSteady: the warm-up rule, the median and spread of the
// steps the logs print, and the refusal of a log too short.
func TestTrainLogSteady(t *testing.T) {
	ms := func(v float64) units.Duration { return units.Duration(math.Round(v * float64(units.Millisecond))) }
	s := func(v float64) units.Duration { return units.Duration(math.Round(v * float64(units.Second))) }
	for _, c := range []struct {
		file           string
		work           StepWork
		warmup, lines  int
		first, last    int64
		median, lo, hi units.Duration
		medianTPS      float64
		medianSPS      float64
		reserved       int64
		errPart        string
	}{
		// tps 5,593 5,868 5,869 5,864 5,862 (step 200 is warm-up): median
		// 5,864, one GPU's 8192 tokens in 1.397 s.
		{file: "torchtitan-pr1287-llama3-8b.log", work: StepWork{Tokens: 8192}, warmup: 1, lines: 5, first: 210, last: 250,
			median: ms(8192.0 / 5864 * 1e3), lo: ms(8192.0 / 5869 * 1e3), hi: ms(8192.0 / 5593 * 1e3), medianTPS: 5864, reserved: int64(math.Round(49.66 * (1 << 30)))},
		// Steps 4–10: median tps 34,824; memory 0.00GiB is none.
		{file: "torchtitan-pr1437-flex-debug.log", work: StepWork{Tokens: 1000}, warmup: 1, lines: 7, first: 4, last: 10,
			median: ms(1000.0 / 34824 * 1e3), lo: ms(1000.0 / 35051 * 1e3), hi: ms(1000.0 / 33464 * 1e3), medianTPS: 34824},
		// Iterations 183–185: 125,553.7 127,804.5 130,554.9 ms.
		{file: "megatron-llm-issue11.log", warmup: 1, lines: 3, first: 183, last: 185, median: ms(127804.5), lo: ms(125553.7), hi: ms(130554.9)},
		{file: "torchtitan-pr1884-llama3-8b-cp2.log", work: StepWork{Tokens: 4096}, errPart: "2 logged steps, 1 after skipping 1 of warm-up: need at least 3 (4 logged lines)"},
		{file: "megatron-pr5662.log", errPart: "1 logged steps, 0 after skipping 1 of warm-up: need at least 3"},
		// Two bars and no train_runtime summary to fall back on.
		{file: "hf-transformers-issue262.log", errPart: "2 logged steps, 1 after skipping 1 of warm-up: need at least 3 (4 logged lines): run longer, and capture the progress bar"},
		{file: "hf-transformers-issue14531.log", errPart: "1 logged steps, 0 after skipping 1 of warm-up"},
		{file: "composer-llm-shearing-issue24.log", errPart: "1 Composer blocks, none with Train throughput/batches_per_sec: add composer's SpeedMonitor"},
		// FATE's GPT-2 run on one GPU, train_batch_size 16 (micro 16, no
		// accumulation): global steps 20–40 at CurrSamplesPerSec 111.135,
		// 110.599, 109.533 (step 10 is warm-up); the median step is 16 /
		// 110.599 s.
		{file: "deepspeed-fate-gpt2.log", work: StepWork{Samples: 16, GradAccum: 1}, warmup: 1, lines: 3, first: 20, last: 40,
			median: s(16 / 110.59852763526753), lo: s(16 / 111.13499047776766), hi: s(16 / 109.53330286609649), medianSPS: 110.59852763526753},
		// DeepSpeed-Chat step 2 on one NPU, train_batch_size 64 (micro 16 ×
		// 4 accumulated × 1): global steps 450–470, micro_step 4× global.
		{file: "deepspeed-chat-step2-npu.log", work: StepWork{Samples: 64, GradAccum: 4}, warmup: 1, lines: 3, first: 450, last: 470,
			median: s(64 / 25.73380362582048), lo: s(64 / 25.811997512605966), hi: s(64 / 25.631224561934868), medianSPS: 25.73380362582048},
		// The same log against a scenario without accumulation.
		{file: "deepspeed-chat-step2-npu.log", work: StepWork{Samples: 16, GradAccum: 1},
			errPart: "deepspeed-chat-step2-npu.log:22: micro_step 40 at global_step 10: 4 engine.step() calls per optimizer step, the scenario's grad_accum is 1"},
		// Megatron-DeepSpeed (ALCF) at GRAD_ACC_STEPS=8 counts one
		// micro-step per optimizer step: its timer covers the last
		// micro-batch (step 6: 256 / 74.98 = 3.41 s against Megatron's
		// 16.09 s for that iteration), refused.
		{file: "deepspeed-megatron-alcf-gas8.log", work: StepWork{Samples: 256, GradAccum: 8},
			errPart: "deepspeed-megatron-alcf-gas8.log:9: micro_step 3 at global_step 3: 1 engine.step() calls per optimizer step, the scenario's grad_accum is 8"},
		// NeMo's resiliency demo: 20 lines, 2 of warm-up (10.31 s, 7.549
		// s); global steps 2–19, train_step_timing 7.556–7.592 s, the
		// median between the 9th and 10th of 18, (7.572 + 7.575) / 2.
		{file: "nemo2-resiliency-demo.log", warmup: 2, lines: 18, first: 2, last: 19, median: s((7.572 + 7.575) / 2), lo: s(7.556), hi: s(7.592)},
		// bionemo-recipes' Evo2: global steps 121–125 after 120's warm-up,
		// 0.03147–0.03215 s, median 0.03163 s.
		{file: "nemo2-bionemo-recipes-pr740.log", warmup: 1, lines: 5, first: 121, last: 125, median: s(0.03163), lo: s(0.03147), hi: s(0.03215)},
		{file: "nemo2-aws-perf-readme-memory.log", errPart: "3 logged steps, 2 after skipping 1 of warm-up: need at least 3 (4 logged lines): log more steps (MegatronStrategy progress_interval"},
	} {
		l := readTrainLog(t, c.file)
		ss, err := l.Steady(c.work)
		if c.errPart != "" {
			if err == nil || !strings.Contains(err.Error(), c.errPart) || !strings.HasPrefix(err.Error(), l.File+":") {
				t.Errorf("%s: error %v, want one naming the file with %q", c.file, err, c.errPart)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		if ss.Warmup != c.warmup || ss.Lines != c.lines || ss.First != c.first || ss.Last != c.last || ss.Median != c.median || ss.Min != c.lo || ss.Max != c.hi ||
			ss.MedianTPS != c.medianTPS || ss.MedianSamplesPerSec != c.medianSPS || ss.Reserved != c.reserved || ss.Q1 < ss.Min || ss.Q3 > ss.Max || ss.Q1 > ss.Median || ss.Q3 < ss.Median {
			t.Errorf("%s: %+v, want warm-up %d, %d lines %d–%d, median %v (%v–%v), tps %g, samples/s %g, reserved %d", c.file, *ss, c.warmup, c.lines, c.first, c.last, c.median, c.lo, c.hi, c.medianTPS, c.medianSPS, c.reserved)
		}
	}
}

// TestTrainLogNeMoSteadyMemory: NeMo's max_memory_reserved (bytes,
// torch.cuda.max_memory_reserved since the start) is the steady state's
// reserved memory, the largest over the lines used; the AWS README's three
// lines with a fourth of the same form after them.
func TestTrainLogNeMoSteadyMemory(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "trainlog", "nemo2-aws-perf-readme-memory.log"))
	if err != nil {
		t.Fatal(err)
	}
	next := "Training epoch 0, iteration 77/99 | global_step: 77 | max_memory_reserved: 64288194560 | max_memory_allocated: 62777982976 | train_step_timing in s: 8.75\n"
	l, err := ParseTrainLog("m.log", append(data, next...))
	if err != nil {
		t.Fatal(err)
	}
	ss, err := l.Steady(StepWork{})
	if err != nil {
		t.Fatal(err)
	}
	sec := func(v float64) units.Duration { return units.Duration(math.Round(v * float64(units.Second))) }
	if ss.First != 75 || ss.Last != 77 || ss.Median != sec(8.75) || ss.Reserved != 64288194560 || ss.ReservedLine != 6 {
		t.Errorf("%+v: want steps 75–77, median 8.75 s, reserved 64288194560 at line 6", *ss)
	}
}

// TestTrainLogNeMoWallClock: the resiliency demo's NeMo warnings stamp
// 22:35:19 after global step 9 and 22:36:30 after step 18: 71 s over steps
// 10–18, checkpointing (the async save scheduled at 22:35:22) included,
// 7.89 s a step. TimingCallback's median 7.5735 s leaves out what runs
// outside the batch hooks, so it lies below, by less than 10%.
func TestTrainLogNeMoWallClock(t *testing.T) {
	l := readTrainLog(t, "nemo2-resiliency-demo.log")
	ss, err := l.Steady(StepWork{})
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join("testdata", "trainlog", "nemo2-resiliency-demo.log"))
	if err != nil {
		t.Fatal(err)
	}
	stamp := regexp.MustCompile(`\[NeMo W (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) validation:389\]`)
	var at []time.Time
	for _, m := range stamp.FindAllStringSubmatch(string(data), -1) {
		ts, err := time.Parse("2006-01-02 15:04:05", m[1])
		if err != nil {
			t.Fatal(err)
		}
		at = append(at, ts)
	}
	if len(at) != 2 {
		t.Fatalf("%d validation stamps, want 2", len(at))
	}
	wall := at[1].Sub(at[0]).Seconds() / 9
	if r := ss.Median.Seconds() / wall; !(r < 1 && r > 0.9) {
		t.Errorf("median step %v, the clock's %.3f s per step: ratio %.4f, want in (0.9, 1)", ss.Median, wall, r)
	}
}

// TestParseTrainLogNeMo: NeMo's progress bar lines as published (each its
// own run's last line), the refusals, and NeMo's lines beside other
// formats; the last step read is checked.
func TestParseTrainLogNeMo(t *testing.T) {
	printer := "Training epoch 0, iteration 20/99 | lr: 3e-05 | global_batch_size: 4 | global_step: 20 | reduced_train_loss: 1.181 | train_step_timing in s: 0.2456 | consumed_samples: 84\n"
	ds := "[2023-12-29 13:02:51,116] [INFO] [timer.py:260:stop] epoch=0/micro_step=20/global_step=20, RunningAvgSamplesPerSec=111.0120624893855, CurrSamplesPerSec=111.13499047776766, MemAllocated=1.87GB, MaxMemAllocated=6.12GB\n"
	for _, c := range []struct {
		name, log string
		format    string
		step      int64
		ms        float64
		reserved  int64
		errPart   string
	}{
		// NVIDIA/dgxc-benchmarking READMEs (testdata/trainlog/README.md):
		// MegatronProgressBar's last redraw, no rate; the step is the
		// bar's count, the time TimingCallback's.
		{name: "dgxc grok1", log: "Epoch 0: : 100%|██████████| 50/50 [23:22<00:00, reduced_train_loss=0.186, global_step=49.00, consumed_samples=51200.0, train_step_timing in s=24.00]\n", format: TrainLogNeMo, step: 50, ms: 24000},
		{name: "dgxc nemotron 15b", log: "Epoch 0: : 100%|██████████| 100/100 [10:48<00:00, reduced_train_loss=0.0172, global_step=99.00, consumed_samples=25600.0, train_step_timing in s=3.130]\n", format: TrainLogNeMo, step: 100, ms: 3130},
		{name: "dgxc llama3.1 405b", log: "Epoch 0: : 100%|██████████| 50/50 [16:26<00:00, v_num=gjbq, reduced_train_loss=11.70, global_step=49.00, consumed_samples=12600.0, train_step_timing in s=12.80]\n", format: TrainLogNeMo, step: 50, ms: 12800},
		// GPT-3 175B's bar with val_loss after the timing.
		{name: "dgxc gpt3 175b", log: "Epoch 0: : 100%|██████████| 50/50 [31:51<00:00, reduced_train_loss=6.130, global_step=50.0, consumed_samples=76800.0, train_step_timing in s=5.900, val_loss=6.250]\n", format: TrainLogNeMo, step: 50, ms: 5900},
		// Redraws after carriage returns: each bar a step (the last one
		// checked); a bar showing
		// max_memory_reserved (3 significant digits) gives its bytes.
		{name: "redraws", log: "Epoch 0: :  10%|█         | 1/10 [00:03<00:27, reduced_train_loss=11.00, global_step=0.000, train_step_timing in s=3.000]\rEpoch 0: :  20%|██        | 2/10 [00:05<00:20, reduced_train_loss=10.90, global_step=1.000, max_memory_reserved=6.43e+10, train_step_timing in s=2.500]\n",
			format: TrainLogNeMo, step: 2, ms: 2500, reserved: 64_300_000_000},
		// NVIDIA-NeMo/Speech issue #11900: a bar whose metrics print empty.
		{name: "empty values", log: "Epoch 0: :   0%|          | 614/? [23:53<00:00, v_num=, reduced_train_loss=, global_step=, consumed_samples=, train_step_timing in s=, val_loss=]\n",
			errPart: "l.log:1:134: the progress bar prints \"train_step_timing in s=\" with no value"},
		{name: "bar epoch 1", log: "Epoch 1: : 10%|█         | 5/50 [00:10<01:30, global_step=54.00, train_step_timing in s=2.000]\n", errPart: "l.log:1:7: NeMo progress bar of epoch 1"},
		{name: "printer timing", log: strings.Replace(printer, "0.2456", "-1", 1), errPart: "l.log:1:142: train_step_timing in s \"-1\" is not a time: is the file a NeMo log?"},
		{name: "printer step", log: strings.Replace(printer, "global_step: 20", "global_step: 2.5", 1), errPart: "l.log:1:85: global_step \"2.5\" is not a step count"},
		// Without TimingCallback the printer has no time: not a step.
		{name: "printer no timing", log: strings.Replace(printer, " | train_step_timing in s: 0.2456", "", 1), errPart: "l.log: no training step found"},
		// Without global_step the epoch's iteration numbers the step.
		{name: "printer no global_step", log: strings.Replace(printer, " | global_step: 20", "", 1), format: TrainLogNeMo, step: 20, ms: 245.6},
		{name: "printer and bar", log: printer + "Epoch 0: : 21%|██        | 21/99 [00:10<00:30, global_step=21.00, train_step_timing in s=0.2500]\n", errPart: "l.log:2: a NeMo progress bar line in a log of ProgressPrinter lines (line 1)"},
		// NeMo's lines are the trainer's own: over DeepSpeed's and the
		// Trainer's bars, not mixed with Megatron-LM's.
		{name: "beside deepspeed", log: ds + printer, format: TrainLogNeMo, step: 20, ms: 245.6},
		{name: "beside hf bars", log: hfBars(40, "1.00s/it", "2.00s/it") + printer, format: TrainLogNeMo, step: 20, ms: 245.6},
		{name: "beside megatron", log: printer + " iteration       21/ 100 | elapsed time per iteration (ms): 356.2 |\n", errPart: "l.log:2: a Megatron-LM iteration line in a log of NeMo train_step_timing lines (line 1)"},
		// Megatron-Bridge's training_log line is Megatron-LM's.
		{name: "megatron-bridge", log: " [2026-09-16 15:26:14] iteration       20/     200 | consumed samples:          160 | elapsed time per iteration (ms): 789.8 | learning rate: 2.000000E-06 | global batch size:     8 | lm loss: 3.581810E+00 | loss scale: 1.0 |\n",
			format: TrainLogMegatron, step: 20, ms: 789.8},
	} {
		l, err := ParseTrainLog("l.log", []byte(c.log))
		if c.errPart != "" {
			if err == nil || !strings.Contains(err.Error(), c.errPart) {
				t.Errorf("%s: error %v, want %q", c.name, err, c.errPart)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		st := l.Steps[len(l.Steps)-1]
		if l.Format != c.format || st.Step != c.step || math.Abs(st.TimeMS-c.ms) > 1e-9*c.ms || st.Reserved != c.reserved || st.Memory != (c.reserved > 0) {
			t.Errorf("%s: %s %+v, want %s step %d, %g ms, reserved %d", c.name, l.Format, st, c.format, c.step, c.ms, c.reserved)
		}
	}
}

// TestParseTrainLogLines: colour codes, validation lines, restarts and
// mixed formats, and the errors' form.
func TestParseTrainLogLines(t *testing.T) {
	dsTimer := "[2023-12-29 13:02:51,116] [INFO] [timer.py:260:stop] epoch=0/micro_step=20/global_step=20, RunningAvgSamplesPerSec=111.0120624893855, CurrSamplesPerSec=111.13499047776766, MemAllocated=1.87GB, MaxMemAllocated=6.12GB"
	titan := "[rank0]:[titan] 2025-06-16 22:31:04,970 - root - INFO - \x1b[31mstep: 210  \x1b[32mloss:  6.0388  \x1b[33mmemory: 49.66GiB(52.28%)  \x1b[34mtps: 5,593  \x1b[36mtflops: 323.92  \x1b[35mmfu: 32.75%\x1b[39m"
	for _, c := range []struct {
		name, log string
		steps     int
		errPart   string
	}{
		{"colour", titan + "\n", 1, ""},
		{"validate", titan + "\n[titan] - root - INFO - \x1b[33mvalidate step: 210  \x1b[32mloss:  6.1  \x1b[33mmemory: 50.00GiB(52.6%)  \x1b[34mtps: 9,000\x1b[39m\n", 1, ""},
		{"wps", "step: 10  loss:  9.1  memory: 20.12GiB(25.00%)  wps: 1,234  mfu: 30.00%\n", 1, ""},
		{"restart", strings.ReplaceAll(titan, "210", "220") + "\n" + titan + "\n", 0, "l.log:2: step 210 after step 220 (line 1)"},
		// qa20 M5: a resume from a checkpoint logs step numbers already
		// read; they were merged as another rank's lines.
		{"resume", strings.ReplaceAll(titan, "210", "200") + "\n" + titan + "\n" + strings.ReplaceAll(titan, "210", "200") + "\n" + titan + "\n", 0,
			"l.log:3: step 200 after step 210 (line 2) on the [rank0] lines: the log holds more than one run (a restart, or a resume from a checkpoint, logs its step numbers again); give the lines of one run, e.g. from line 3 on for the last"},
		{"resume without prefix", strings.ReplaceAll(titan[8:], "210", "200") + "\n" + titan[8:] + "\n" + strings.ReplaceAll(titan[8:], "210", "200") + "\n", 0, "l.log:3: step 200 after step 210 (line 2): the log holds"},
		// Without prefixes, ranks' logs put one after another read the
		// same, and the error says so (final read R2).
		{"ranks without prefix", strings.ReplaceAll(titan[8:], "210", "200") + "\n" + titan[8:] + "\n" + strings.ReplaceAll(titan[8:], "210", "200") + "\n", 0, "last; or it holds several ranks' logs one after another without torchrun's [rankN]: prefixes: give one rank's"},
		// One rank's lines after another's (torchrun's per-rank blocks),
		// and the same line repeated, are one run.
		{"rank blocks", strings.ReplaceAll(titan, "210", "200") + "\n" + titan + "\n" + strings.ReplaceAll(strings.ReplaceAll(titan, "210", "200"), "rank0", "rank1") + "\n" + strings.ReplaceAll(titan, "rank0", "rank1") + "\n", 2, ""},
		{"same line twice", titan[8:] + "\n" + titan[8:] + "\n", 1, ""},
		{"mixed", titan + "\n iteration       10/ 100 | elapsed time per iteration (ms): 356.2 |\n", 0, "l.log:2: a Megatron-LM iteration line"},
		{"deepspeed ranks", "[rank0]:" + dsTimer + "\n" + dsTimer + "\n", 1, ""},
		{"deepspeed restart", strings.Replace(dsTimer, "=20,", "=30,", 2) + "\n" + dsTimer + "\n", 0, "l.log:2: step 20 after step 30 (line 1)"},
		{"deepspeed rate", strings.Replace(dsTimer, "CurrSamplesPerSec=111.13499047776766", "CurrSamplesPerSec=fast", 1) + "\n", 0, "l.log:1:153: CurrSamplesPerSec \"fast\" is not a rate"},
		{"deepspeed before v0.8.0", "[2021-11-26 03:07:16,494] [INFO] [timer.py:181:stop] 0/2000, SamplesPerSec=9.526738918021234\n", 0,
			"l.log:1: DeepSpeed's throughput line of a version before v0.8.0"},
		{"deepspeed step lines only", "[2023-12-29 13:02:51,108] [INFO] [logging.py:96:log_dist] [Rank 0] step=20, skipped=0, lr=[0.0004336766652213271], mom=[(0.9, 0.999)]\n", 0,
			"l.log:1: DeepSpeed step lines (\"[Rank 0] step=…, skipped=…\") but no throughput line"},
		{"none", "hello\n", 0, "l.log: no training step found"},
		{"empty", "", 0, "l.log: no training step found"},
	} {
		l, err := ParseTrainLog("l.log", []byte(c.log))
		if c.errPart != "" {
			if err == nil || !strings.Contains(err.Error(), c.errPart) {
				t.Errorf("%s: error %v, want %q", c.name, err, c.errPart)
			}
			continue
		}
		if err != nil || len(l.Steps) != c.steps {
			t.Errorf("%s: %v, %+v; want %d steps", c.name, err, l, c.steps)
		}
	}
}

// FuzzParseTrainLog: no input panics; an error is one line naming the
// file; a parsed log has steps in order, and its steady state (when it has
// one) lies within its range.
// prefiltered are the patterns ParseTrainLog runs through find, with the
// literal and start it gives them.
var prefiltered = []struct {
	re         *regexp.Regexp
	lit, start string
}{
	{dsLine, "/global_step=", "epoch="}, {dsOld, "SamplesPerSec=", ""}, {dsStep, "] step=", "[Rank "},
	{nemoLine, "Training epoch ", "Training epoch "}, {titanLine, "step:", "step:"}, {megaLine, "iteration", "iteration"},
	{nemoBar, nemoTiming + "=", "Epoch "}, {hfSummary, "'train_runtime':", ""}, {hfLoss, "{'loss':", ""},
}

// checkPrefilters: on every line (and carriage-return segment) of data,
// find and findIndex give what the pattern alone gives (the index form
// for every pattern; for nemoBar only where the match holds the timing
// metric, as ParseTrainLog requires), and compHeader and tqdmBar what
// compHead and hfBar give.
func checkPrefilters(t *testing.T, data string) {
	t.Helper()
	for _, line := range strings.FieldsFunc(data, func(r rune) bool { return r == '\n' || r == '\r' }) {
		for _, p := range prefiltered {
			got, want := findIndex(p.re, line, p.lit, p.start), p.re.FindStringSubmatchIndex(line)
			if p.re == nemoBar && want != nil && !strings.Contains(line[want[6]:want[7]], nemoTiming+"=") {
				continue
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("%s on %q: prefiltered %v, the pattern %v", p.re, line, got, want)
			}
			if g, w := find(p.re, line, p.lit, p.start), p.re.FindStringSubmatch(line); fmt.Sprint(g) != fmt.Sprint(w) {
				t.Fatalf("%s on %q: prefiltered %q, the pattern %q", p.re, line, g, w)
			}
		}
		if g, w := compHeader(line), compHead.FindStringSubmatch(line); fmt.Sprint(g) != fmt.Sprint(w) {
			t.Fatalf("compHead on %q: prefiltered %q, the pattern %q", line, g, w)
		}
		if g, w := tqdmBar(line), hfBar.FindStringSubmatch(line); fmt.Sprint(g) != fmt.Sprint(w) {
			t.Fatalf("hfBar on %q: prefiltered %q, the pattern %q", line, g, w)
		}
	}
}

// TestTrainLogPrefilters: checkPrefilters on the published logs, and on
// lines where a literal comes first in a word ("substep:"), after a
// multi-byte rune, or twice.
func TestTrainLogPrefilters(t *testing.T) {
	logs, _ := filepath.Glob("testdata/trainlog/*.log")
	for _, p := range logs {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		checkPrefilters(t, string(b))
	}
	checkPrefilters(t, "substep: 3 loss: 1 step: 4 loss: 2\n→step: 5  loss: 1\nxiteration 1/ 2 | iteration 3/ 4 |\n é Training epoch 0, iteration 1/9 | a\n"+
		"[Rank x] step=1 [Rank 0] step=2, skipped=0, lr=\nEpochs Epoch 3: |x| 4/9 [train_step_timing in s=1]\nepoch=a epoch=1/micro_step=2/global_step=3, RunningAvgSamplesPerSec=1, CurrSamplesPerSec=2\n"+
		"[batch=3/4]:  \t\n  1/2 [00:01<00:02, 1.0it/s]\n")
}

func FuzzParseTrainLog(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/trainlog/*.log")
	for _, p := range seeds {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, s := range []string{"", "step: 1 loss: tps: 0\n", "step: 99999999999999999999 loss: 1 tps: 1\n",
		"step: 1  loss: 1  memory: 999999999.9GiB(1%)  tps: 9,999,999,999,999,999,999\n",
		" iteration 1/ 2 | elapsed time per iteration (ms): 0.0 |\n memory (MB) | a | max reserved: 1e9\n",
		"validate step: 3 loss: 1 tps: 5\n",
		" 10%|█         | 1/10 [00:02<00:18,  2.00s/it]\r 20%|██        | 2/10 [00:04<00:16,  0.00it/s]\r 30%|███       | 3/10 [00:06<00:14,  99999999999.9s/it]\n{'train_runtime': '0', 'train_samples_per_second': 1, 'train_steps_per_second': 0.0, 'epoch': 1}\n",
		"{'train_runtime': 12.5, 'train_samples_per_second': 8.0, 'train_steps_per_second': 0.8, 'train_loss': 1.0, 'epoch': 1.0}\n",
		"[batch=1/2]:\n\t Train throughput/batches_per_sec: 0.0000\n\t Train memory/peak_reserved_mem: 999999999.9\n[epoch=1][batch=2/2]:\n\t Train time/batch: 99999999999999999999\n",
		"[token=100/200]:\n\t Train time/batch: 3\n\t Train throughput/batches_per_sec: 1.5000\n[batch=2/3]:\n",
		"epoch=0/micro_step=99999999999999999999/global_step=1, RunningAvgSamplesPerSec=inf, CurrSamplesPerSec=nan, MaxMemAllocated=999999999.9GB\n",
		"epoch=1/micro_step=5/global_step=9, RunningAvgSamplesPerSec=-inf, CurrSamplesPerSec=1e-300,\nepoch=0/micro_step=8/global_step=2, RunningAvgSamplesPerSec=1, CurrSamplesPerSec=0.0,\n",
		"0/2000, SamplesPerSec=1\n[Rank 0] step=1, skipped=0, lr=[1]\n",
		"Training epoch 0, iteration 0/1 | global_step: 1e+300 | train_step_timing in s: nan | max_memory_reserved: 1e999\nTraining epoch 2, iteration 9/-1 | train_step_timing in s: 0\n",
		"Epoch 0: : 1%|| 1/? [00:01<?, train_step_timing in s=inf, max_memory_reserved=-1]\rEpoch 0: | | 99999999999999999999/9 [train_step_timing in s=1e-9]\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkPrefilters(t, string(data))
		l, err := ParseTrainLog("f.log", data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f.log") || strings.ContainsAny(err.Error(), "\n\r") {
				t.Fatalf("error %q is not one line naming the file", err)
			}
			return
		}
		for i := 1; i < len(l.Steps); i++ {
			if l.Steps[i].Step <= l.Steps[i-1].Step {
				t.Fatalf("steps out of order: %+v", l.Steps)
			}
		}
		ss, err := l.Steady(StepWork{Tokens: 8192, Samples: 64, GradAccum: 4})
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f.log") || strings.ContainsAny(err.Error(), "\n\r") {
				t.Fatalf("error %q is not one line naming the file", err)
			}
			return
		}
		if ss.Min > ss.Median || ss.Median > ss.Max || ss.Min <= 0 {
			t.Fatalf("steady state %+v out of its range", *ss)
		}
	})
}

// hfBars is a Hugging Face Trainer stderr line: tqdm's bars for steps
// 1.. of total, one rate each, joined by carriage returns as tqdm redraws.
func hfBars(total int, rates ...string) string {
	var b strings.Builder
	for i, r := range rates {
		fmt.Fprintf(&b, "\r%3d%%|█         | %d/%d [00:%02d<01:00, %s]", (i+1)*100/total, i+1, total, i, r)
	}
	return b.String() + "\n"
}

// composerBlockText is Composer's console block for batch n of 200.
func composerBlockText(n int, peakGB, batchesPerSec string) string {
	return fmt.Sprintf("[batch=%d/200]:\n\t Train time/batch: %d\n\t Train memory/peak_reserved_mem: %s\n\t Train loss/train/total: 2.3456\n\t Train throughput/batches_per_sec: %s\n", n, n-1, peakGB, batchesPerSec)
}

// TestTrainLogSteadyFormats: the Trainer's tqdm rates (s/it and it/s, an
// evaluation bar and a dataset bar among them) and Composer's
// batches_per_sec reduce to the steady state the rates give by hand; the
// Trainer's train_runtime summary stands in, with a note, only when the
// bars are too few.
func TestTrainLogSteadyFormats(t *testing.T) {
	s := func(v float64) units.Duration { return units.Duration(math.Round(v * float64(units.Second))) }
	summary := "{'train_runtime': 1891.9246, 'train_samples_per_second': 5.816, 'train_steps_per_second': 0.365, 'train_loss': 0.31064462523529496, 'epoch': 3.0}\n"
	// Steps 1–11; 0.50it/s is 2 s; the first two lines are warm-up.
	hf := "Map: 100%|██████████| 669/669 [00:00<00:00, 3076.21 examples/s]\n" +
		hfBars(11, "12.00s/it", "3.00s/it", "2.00s/it", "2.10s/it", " 0.50it/s") +
		"{'loss': 1.234, 'grad_norm': 0.5, 'learning_rate': 2e-05, 'epoch': 0.01}\n" +
		" 50%|█████     | 1/2 [00:01<00:01,  1.00it/s]\n" +
		strings.Replace(hfBars(11, "x", "x", "x", "x", "x", "1.90s/it", "2.20s/it", "2.00s/it", "2.30s/it", "1.80s/it", "2.00s/it"), "x]", "?it/s]", -1) + summary
	var comp strings.Builder
	for i, r := range []string{"0.2000", "0.5000", "0.4000", "0.5000", "0.2500"} {
		comp.WriteString(composerBlockText(101+i, []string{"40.1230", "40.1230", "41.0000", "41.0000", "41.5000"}[i], r))
	}
	for _, c := range []struct {
		name, log     string
		format        string
		warmup, lines int
		first, last   int64
		median, lo    units.Duration
		hi            units.Duration
		reserved      int64
		reservedLine  int
		note          string
	}{
		// 2.0 2.1 2.0 1.9 2.2 2.0 2.3 1.8 2.0 s: median 2.0 s.
		{name: "hf", log: hf, format: TrainLogHFTrainer, warmup: 2, lines: 9, first: 3, last: 11, median: s(2), lo: s(1.8), hi: s(2.3)},
		// Three bars of 690: the summary's 1891.9246 s over 690 steps.
		{name: "hf summary", log: hfBars(690, "3.00s/it", "2.50s/it", "2.40s/it") + summary, format: TrainLogHFTrainer,
			median: s(1891.9246 / 690), lo: s(1891.9246 / 690), hi: s(1891.9246 / 690), note: "train_runtime 1891.9246 s over the bar's 690 steps"},
		// No bar at all: 1 / 0.365 steps per second.
		{name: "hf summary only", log: summary, format: TrainLogHFTrainer, median: s(1 / 0.365), lo: s(1 / 0.365), hi: s(1 / 0.365), note: "1 / train_steps_per_second 0.365"},
		// Batches 102–105: 2.0 2.5 2.0 4.0 s, median 2.25 s; the peak of the
		// used blocks 41.5 GB at block 105's header, line 4 × 5 + 1.
		{name: "composer", log: comp.String(), format: TrainLogComposer, warmup: 1, lines: 4, first: 102, last: 105,
			median: s(2.25), lo: s(2), hi: s(4), reserved: 41_500_000_000, reservedLine: 21},
	} {
		l, err := ParseTrainLog("l.log", []byte(c.log))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		ss, err := l.Steady(StepWork{})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if l.Format != c.format || ss.Warmup != c.warmup || ss.Lines != c.lines || ss.First != c.first || ss.Last != c.last ||
			ss.Median != c.median || ss.Min != c.lo || ss.Max != c.hi || ss.Reserved != c.reserved || ss.ReservedLine != c.reservedLine ||
			(c.note == "") != (ss.Note == "") || !strings.Contains(ss.Note, c.note) {
			t.Errorf("%s: %s %+v, want %s warm-up %d, %d lines %d–%d, median %v (%v–%v), reserved %d at %d, note %q",
				c.name, l.Format, *ss, c.format, c.warmup, c.lines, c.first, c.last, c.median, c.lo, c.hi, c.reserved, c.reservedLine, c.note)
		}
	}
	for _, c := range []struct{ name, log, errPart string }{
		{"loss only", "{'loss': 1.234, 'grad_norm': 0.5, 'learning_rate': 2e-05, 'epoch': 0.01}\n", "l.log:1: Hugging Face Trainer log lines ({'loss': …}) but no progress bar"},
		{"composer epoch without time/batch", "[epoch=1][batch=5/5]:\n\t Train throughput/batches_per_sec: 0.0027\n", "l.log:1: Composer block [epoch=1][batch=5/5] prints no Train time/batch"},
		{"composer bad rate", "[batch=5/5]:\n\t Train throughput/batches_per_sec: fast\n", "l.log:2:37: throughput/batches_per_sec \"fast\" is not a rate"},
		{"composer then torchtitan", composerBlockText(101, "1.0", "0.5") + "step: 10  loss:  9.1  memory: 20.12GiB(25.00%)  tps: 1,234\n", "l.log:6: a torchtitan step line in a log of Composer batch lines (line 1)"},
		// A run resumed at step 4, then a new one from step 1.
		{"hf restart", "\r 80%|████████  | 4/5 [00:04<00:01,  1.00s/it]\r100%|██████████| 5/5 [00:05<00:00,  1.00s/it]\n" + hfBars(5, "1.00s/it"), "l.log:2: step 1 after step 5 (line 1)"},
	} {
		if _, err := ParseTrainLog("l.log", []byte(c.log)); err == nil || !strings.Contains(err.Error(), c.errPart) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.errPart)
		}
	}
}

// TestTrainLogDoc: docs/compute-model.md's figures for the DeepSpeed and
// NeMo excerpts are what Steady gives them: FATE's median rate at 16
// samples a step, DeepSpeed-Chat's at 64 (16 × 4 accumulated) with its
// step, the NeMo demo's median step and the bionemo-recipes excerpt's,
// and the AWS README's max_memory_reserved. Each fails when the document
// says another figure.
func TestTrainLogDoc(t *testing.T) {
	steady := func(file string, w StepWork) *SteadyState {
		t.Helper()
		ss, err := readTrainLog(t, file).Steady(w)
		if err != nil {
			t.Fatal(err)
		}
		return ss
	}
	fate := steady("deepspeed-fate-gpt2.log", StepWork{Samples: 16, GradAccum: 1})
	chat := steady("deepspeed-chat-step2-npu.log", StepWork{Samples: 64, GradAccum: 4})
	demo := steady("nemo2-resiliency-demo.log", StepWork{})
	evo := steady("nemo2-bionemo-recipes-pr740.log", StepWork{})
	aws := readTrainLog(t, "nemo2-aws-perf-readme-memory.log")
	var reserved int64
	for _, st := range aws.Steps {
		reserved = max(reserved, st.Reserved)
	}
	golden.CheckQuotes(t, "../docs/compute-model.md", "TestTrainLogDoc (Steady of the testdata/trainlog excerpts)",
		fmt.Sprintf("a median %.2f samples/s", fate.MedianSamplesPerSec),
		fmt.Sprintf("over %.2f, %.3f s,", chat.MedianSamplesPerSec, chat.Median.Seconds()),
		fmt.Sprintf("= %.4f s,", demo.Median.Seconds()),
		fmt.Sprintf("gives %.5f s over steps", evo.Median.Seconds()),
		fmt.Sprintf("max_memory_reserved (%s B)", commas(reserved)))
}

// TestTrainLogErrorColumns (L3): a bad number of a recognised line is
// named file:line:column, the column of its first byte (counted by hand
// on each line below).
func TestTrainLogErrorColumns(t *testing.T) {
	for _, c := range []struct{ log, want string }{
		// "step: 10  loss:  9.1  memory: 20.12GiB(25.00%)  tps: " is 53 bytes.
		{"step: 10  loss:  9.1  memory: 20.12GiB(25.00%)  tps: 99999999999999999\n", `l.log:1:54: tps "99999999999999999" is not a number`},
		// " [Rank 0] (after 10 iterations) memory (MB) | allocated: 1.0 | max allocated: 2.0 | reserved: 3.0 | max reserved: " is 114 bytes.
		{" [Rank 0] (after 10 iterations) memory (MB) | allocated: 1.0 | max allocated: 2.0 | reserved: 3.0 | max reserved: 9999999999999\n", `l.log:1:115: max reserved "9999999999999" MB is not a size`},
	} {
		_, err := ParseTrainLog("l.log", []byte(c.log))
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.log, err, c.want)
		}
	}
}

// TestTrainLogUnread (L2): a line its format's pattern recognises but
// that cannot be read (a broken number, a line cut off) is counted with
// the first one's file:line:column and why; it vanished without a word.
// A log with only such lines is refused at the first.
func TestTrainLogUnread(t *testing.T) {
	read := func(name string) string {
		data, err := os.ReadFile(filepath.Join("testdata", "trainlog", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	titan := strings.Split(read("torchtitan-pr1287-llama3-8b.log"), "\n")
	titan[5] = strings.Replace(titan[5], "tps: 5,868", "tps: 5,8x8", 1) // line 6
	titan[6] = titan[6][:strings.Index(titan[6], "tps:")+2]             // line 7, cut after "tp"
	mega := strings.Split(read("megatron-llm-issue11.log"), "\n")
	mega[1] = strings.Replace(mega[1], "(ms): 125553.7", "(ms): 12a553.7", 1) // line 2
	ds := "epoch=0/micro_step=10/global_step=10, RunningAvgSamplesPerSec=111.0, CurrSamplesPerSec=111.1, MemAllocated=1.87GB\n" +
		"epoch=0/micro_step=11/global_step=11, RunningAvgSamplesPerSec=111.0, CurrSa\n"
	for _, c := range []struct {
		name, log string
		steps, n  int
		at, why   string
	}{
		// Columns: the value after the field's name, or the line's end
		// (python3: line.index(value)+1, len(line)+1).
		{"torchtitan", strings.Join(titan, "\n"), 4, 2, "l.log:6:114", `tps "5,8x8" is not a number`},
		{"megatron", strings.Join(mega, "\n"), 3, 1, "l.log:2:98", `elapsed time per iteration (ms) "12a553.7" is not a number`},
		{"deepspeed cut", ds, 1, 1, "l.log:2:76", "no CurrSamplesPerSec (a line cut off?)"},
	} {
		l, err := ParseTrainLog("l.log", []byte(c.log))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if len(l.Steps) != c.steps || l.Unread != c.n || l.UnreadAt != c.at || l.UnreadWhy != c.why {
			t.Errorf("%s: %d steps, %d unread, first %s: %s; want %d, %d, %s: %s", c.name, len(l.Steps), l.Unread, l.UnreadAt, l.UnreadWhy, c.steps, c.n, c.at, c.why)
		}
	}
	_, err := ParseTrainLog("l.log", []byte(ds[strings.Index(ds, "\n")+1:]))
	if want := `l.log:1:76: no CurrSamplesPerSec (a line cut off?): 1 DeepSpeed throughput line, none readable (this is the first)`; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("only unread lines: %v, want %q", err, want)
	}
	// With DeepSpeed's step line, the broken throughput line is still
	// named (it said "enable the throughput timer", which was on).
	_, err = ParseTrainLog("l.log", []byte("[Rank 0] step=20, skipped=0, lr=[3e-05], mom=[(0.9, 0.999)]\n"+ds[strings.Index(ds, "\n")+1:]))
	if want := `l.log:2:76: no CurrSamplesPerSec (a line cut off?): 1 DeepSpeed throughput line, none readable (this is the first)`; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("a step line and only unread throughput lines: %v, want %q", err, want)
	}
}

// TestColAfterUnknown: a value colAfter cannot find on the line has no
// column (0), and the error then names file:line alone; before, it named
// column 1, a place it had not found. shift keeps the unknown unknown.
func TestColAfterUnknown(t *testing.T) {
	line := "step: 10  loss: 9.1  tps: 5,8x8"
	for _, c := range []struct {
		key, value string
		col        int
		loc        string
	}{
		{"tps:", "5,8x8", 27, "l.log:3:27"},
		{"wps:", "5,8x8", 0, "l.log:3"},
		{"tps:", "9.1", 0, "l.log:3"}, // the value is only before the key
	} {
		col := colAfter(line, c.key, c.value)
		if col != c.col || loc("l.log", 3, col) != c.loc || shift(10, col) != map[bool]int{true: 0, false: 10 + c.col}[c.col == 0] {
			t.Errorf("colAfter(%q, %q) = %d, loc %q, shift(10) %d; want %d, %q", c.key, c.value, col, loc("l.log", 3, col), shift(10, col), c.col, c.loc)
		}
	}
}
