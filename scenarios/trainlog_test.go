package scenarios

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
	} {
		l := readTrainLog(t, c.file)
		var steps []int64
		for _, s := range l.Steps {
			steps = append(steps, s.Step)
		}
		first := l.Steps[0].TPS + l.Steps[0].TimeMS
		if l.Format != c.format || !equalInts(steps, c.steps) || math.Abs(first-c.first) > 1e-9*c.first || l.Steps[0].Reserved != c.reserved || l.MaxReserved != c.maxReserved {
			t.Errorf("%s: %s steps %v first %g reserved %d max %d, want %s %v %g %d %d", c.file, l.Format, steps, first, l.Steps[0].Reserved, l.MaxReserved,
				c.format, c.steps, c.first, c.reserved, c.maxReserved)
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
	for _, c := range []struct {
		file           string
		tokens         float64
		warmup, lines  int
		first, last    int64
		median, lo, hi units.Duration
		medianTPS      float64
		reserved       int64
		errPart        string
	}{
		// tps 5,593 5,868 5,869 5,864 5,862 (step 200 is warm-up): median
		// 5,864, one GPU's 8192 tokens in 1.397 s.
		{file: "torchtitan-pr1287-llama3-8b.log", tokens: 8192, warmup: 1, lines: 5, first: 210, last: 250,
			median: ms(8192.0 / 5864 * 1e3), lo: ms(8192.0 / 5869 * 1e3), hi: ms(8192.0 / 5593 * 1e3), medianTPS: 5864, reserved: int64(math.Round(49.66 * (1 << 30)))},
		// Steps 4–10: median tps 34,824; memory 0.00GiB is none.
		{file: "torchtitan-pr1437-flex-debug.log", tokens: 1000, warmup: 1, lines: 7, first: 4, last: 10,
			median: ms(1000.0 / 34824 * 1e3), lo: ms(1000.0 / 35051 * 1e3), hi: ms(1000.0 / 33464 * 1e3), medianTPS: 34824},
		// Iterations 183–185: 125,553.7 127,804.5 130,554.9 ms.
		{file: "megatron-llm-issue11.log", warmup: 1, lines: 3, first: 183, last: 185, median: ms(127804.5), lo: ms(125553.7), hi: ms(130554.9)},
		{file: "torchtitan-pr1884-llama3-8b-cp2.log", tokens: 4096, errPart: "2 logged steps, 1 after skipping 1 of warm-up: need at least 3 (4 logged lines)"},
		{file: "megatron-pr5662.log", errPart: "1 logged steps, 0 after skipping 1 of warm-up: need at least 3"},
		// Two bars and no train_runtime summary to fall back on.
		{file: "hf-transformers-issue262.log", errPart: "2 logged steps, 1 after skipping 1 of warm-up: need at least 3 (4 logged lines): run longer, and capture the progress bar"},
		{file: "hf-transformers-issue14531.log", errPart: "1 logged steps, 0 after skipping 1 of warm-up"},
		{file: "composer-llm-shearing-issue24.log", errPart: "1 Composer blocks, none with Train throughput/batches_per_sec: add composer's SpeedMonitor"},
	} {
		l := readTrainLog(t, c.file)
		ss, err := l.Steady(c.tokens)
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
			ss.MedianTPS != c.medianTPS || ss.Reserved != c.reserved || ss.Q1 < ss.Min || ss.Q3 > ss.Max || ss.Q1 > ss.Median || ss.Q3 < ss.Median {
			t.Errorf("%s: %+v, want warm-up %d, %d lines %d–%d, median %v (%v–%v), tps %g, reserved %d", c.file, *ss, c.warmup, c.lines, c.first, c.last, c.median, c.lo, c.hi, c.medianTPS, c.reserved)
		}
	}
}

// TestParseTrainLogLines: colour codes, validation lines, restarts and
// mixed formats, and the errors' form.
func TestParseTrainLogLines(t *testing.T) {
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
		{"mixed", titan + "\n iteration       10/ 100 | elapsed time per iteration (ms): 356.2 |\n", 0, "l.log:2: a Megatron-LM iteration line"},
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
		"[token=100/200]:\n\t Train time/batch: 3\n\t Train throughput/batches_per_sec: 1.5000\n[batch=2/3]:\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
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
		ss, err := l.Steady(8192)
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
		ss, err := l.Steady(0)
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
		{"composer bad rate", "[batch=5/5]:\n\t Train throughput/batches_per_sec: fast\n", "l.log:2: throughput/batches_per_sec \"fast\" is not a rate"},
		{"composer then torchtitan", composerBlockText(101, "1.0", "0.5") + "step: 10  loss:  9.1  memory: 20.12GiB(25.00%)  tps: 1,234\n", "l.log:6: a torchtitan step line in a log of Composer batch lines (line 1)"},
		// A run resumed at step 4, then a new one from step 1.
		{"hf restart", "\r 80%|████████  | 4/5 [00:04<00:01,  1.00s/it]\r100%|██████████| 5/5 [00:05<00:00,  1.00s/it]\n" + hfBars(5, "1.00s/it"), "l.log:2: step 1 after step 5 (line 1)"},
	} {
		if _, err := ParseTrainLog("l.log", []byte(c.log)); err == nil || !strings.Contains(err.Error(), c.errPart) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.errPart)
		}
	}
}
