package scenarios

import (
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
	} {
		l := readTrainLog(t, c.file)
		var steps []int64
		for _, s := range l.Steps {
			steps = append(steps, s.Step)
		}
		first := l.Steps[0].TPS + l.Steps[0].TimeMS
		if l.Format != c.format || !equalInts(steps, c.steps) || first != c.first || l.Steps[0].Reserved != c.reserved || l.MaxReserved != c.maxReserved {
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
		"validate step: 3 loss: 1 tps: 5\n"} {
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
