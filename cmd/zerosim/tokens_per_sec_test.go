package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCalibrateTokensPerSec (qatput33 U1): --tokens-per-sec T fits the
// compute efficiency to the step of the scenario's tokens per GPU per
// step at T, as --step-time does to that step. The default example trains
// micro-batch 1 × 1 accumulation × 4,096 tokens per GPU per step (dp 16,
// no cp: `zerosim run default` prints 65,536 tokens per step over 16
// GPUs), so 2,048 tok/s per GPU is a 2 s step and 3,000 tok/s a
// 4096/3000 s = 1.365333333333 s one (1,365,333,333,333 ps, rounded to the
// picosecond).
func TestCalibrateTokensPerSec(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		tps, step string
		ps        int64
		perSec    float64 // tps, as the JSON gives it back
	}{
		{"2048", "2s", 2_000_000_000_000, 2048},
		{"3000", "1365.333333333ms", 1_365_333_333_333, 3000},
	} {
		byTokens, byStep := filepath.Join(dir, "t"+tc.tps+".yaml"), filepath.Join(dir, "s"+tc.tps+".yaml")
		out, errOut, code := runCLI("calibrate", "--tokens-per-sec", tc.tps, "default", "--file", byTokens)
		if code != 0 {
			t.Fatalf("--tokens-per-sec %s: exit %d: %s", tc.tps, code, errOut)
		}
		if !strings.HasPrefix(out, "# zerosim calibrate --tokens-per-sec: default\n") ||
			!strings.Contains(out, "measured:            "+commasInt(tc.tps)+" tok/s per GPU: step ") ||
			!strings.Contains(out, ", 4,096 tokens per GPU per step over it\n") {
			t.Errorf("--tokens-per-sec %s: output does not say the throughput, the step and the tokens:\n%s", tc.tps, out)
		}
		if _, errOut, code := runCLI("calibrate", "--step-time", tc.step, "default", "--file", byStep); code != 0 {
			t.Fatalf("--step-time %s: exit %d: %s", tc.step, code, errOut)
		}
		a, b := readCal(t, byTokens).Compute, readCal(t, byStep).Compute
		if a == nil || b == nil || a.Efficiency != b.Efficiency || a.Method != "step-time" {
			t.Errorf("--tokens-per-sec %s wrote %+v; --step-time %s wrote %+v: want the same step-time fit", tc.tps, a, tc.step, b)
		}
		js, errOut, code := runCLI("calibrate", "--tokens-per-sec", tc.tps, "default", "--file", byTokens, "--format", "json")
		if code != 0 {
			t.Fatalf("json: exit %d: %s", code, errOut)
		}
		var got struct {
			Compute struct {
				MeasuredPS    int64   `json:"measured_ps"`
				TokensPerSec  float64 `json:"tokens_per_sec_per_gpu"`
				TokensPerStep float64 `json:"tokens_per_gpu_per_step"`
			} `json:"compute"`
		}
		if err := json.Unmarshal([]byte(js), &got); err != nil {
			t.Fatal(err)
		}
		if c := got.Compute; c.MeasuredPS != tc.ps || c.TokensPerStep != 4096 || c.TokensPerSec != tc.perSec {
			t.Errorf("--tokens-per-sec %s: JSON %+v; want measured_ps %d, 4096 tokens per GPU per step, %g tok/s per GPU", tc.tps, c, tc.ps, tc.perSec)
		}
	}
}

// commasInt writes a whole number of up to 6 digits with a thousands
// separator, as the report prints it.
func commasInt(s string) string {
	if len(s) <= 3 {
		return s
	}
	return s[:len(s)-3] + "," + s[len(s)-3:]
}

// TestCalibrateTokensPerSecRefused: a bad --tokens-per-sec, or it beside
// another measurement, or a scenario given with no measurement at all, is
// one line naming the flag and the fix, exit 2, no file written.
func TestCalibrateTokensPerSecRefused(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "cal.yaml")
	for _, tc := range []struct {
		args    []string
		mention string
	}{
		{[]string{"--tokens-per-sec", "3760", "--step-time", "2s", "default"}, "--step-time and --tokens-per-sec: give one measurement"},
		{[]string{"--tokens-per-sec", "3,760", "default"}, `--tokens-per-sec "3,760": write the number without separators: --tokens-per-sec 3760`},
		{[]string{"--tokens-per-sec", "0", "default"}, `--tokens-per-sec "0": want a throughput > 0, e.g. --tokens-per-sec 3760`},
		{[]string{"--tokens-per-sec", "-5", "default"}, `--tokens-per-sec "-5": want a throughput > 0`},
		{[]string{"--tokens-per-sec", "fast", "default"}, `--tokens-per-sec "fast": want the measured tokens/s per GPU, a number, e.g. --tokens-per-sec 3760`},
		{[]string{"--tokens-per-sec", "inf", "default"}, `--tokens-per-sec "inf": want the measured tokens/s per GPU`},
		{[]string{"--tokens-per-sec", "1e-30", "default"}, "--tokens-per-sec 1e-30: 4096 tokens per GPU per step at that rate is a step of"},
		{[]string{"--tokens-per-sec", "3760"}, "--tokens-per-sec needs the scenario of the measured run: zerosim calibrate --tokens-per-sec 3760 scenario.yaml"},
		{[]string{"--tokens-per-sec", "3760", "--nodes", "2", "default"}, "--nodes describes nccl-tests logs; with --tokens-per-sec the scenario is the argument"},
		// Neither: a scenario file alone was read as an nccl-tests log.
		{[]string{"s.yaml"}, "s.yaml: a scenario needs its measurement: zerosim calibrate --tokens-per-sec 3760 s.yaml (tokens/s per GPU), or --step-time 2.84s"},
	} {
		args := append([]string{"calibrate", "--file", file}, tc.args...)
		out, errOut, code := runCLI(args...)
		oneLine(t, args, code, out, errOut, tc.mention)
		if _, err := os.Stat(file); err == nil {
			t.Errorf("%q: wrote %s", args, file)
		}
	}
}

// TestCalibrateHelpTokensPerSec: the help names --tokens-per-sec, what it
// takes and how it converts.
func TestCalibrateHelpTokensPerSec(t *testing.T) {
	out, _, code := runCLI("calibrate", "--help")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{
		"--tokens-per-sec T",
		"measured throughput T, tokens/s per GPU (what published tables give)",
		"micro_batch × grad_accum × seq_len / cp",
		"zerosim calibrate --tokens-per-sec 3760 scenario.yaml --file calibration.yaml",
		"2 × 4096 tokens at 3760 tok/s is a\n2.178723s step",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("calibrate --help does not say %q", want)
		}
	}
}
