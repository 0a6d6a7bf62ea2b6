package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// exampleFile writes an embedded example to a temporary file.
func exampleFile(t *testing.T, name string) string {
	t.Helper()
	data, ok := scenarios.Example(name)
	if !ok {
		t.Fatalf("no example %q", name)
	}
	p := filepath.Join(t.TempDir(), name+".yaml")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

type memJSON struct {
	Stage      int    `json:"stage"`
	Estimator  string `json:"estimator"`
	Convention string `json:"convention"`
	K          int    `json:"k"`
	AtRest     int64  `json:"at_rest"`
	Peak       int64  `json:"peak"`
}

func runMemoryJSON(t *testing.T, args ...string) []memJSON {
	t.Helper()
	var out, errOut bytes.Buffer
	if code := Main(append([]string{"memory", "--format", "json"}, args...), nil, &out, &errOut); code != 0 {
		t.Fatalf("memory %v: exit %d: %s", args, code, errOut.String())
	}
	var doc struct {
		Reports []memJSON `json:"reports"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatalf("memory %v: %v\n%s", args, err, out.String())
	}
	return doc.Reports
}

// TestMemorySeedTables runs the CLI on the seed examples and checks the
// seeds' published figures (exact bytes per GPU).
func TestMemorySeedTables(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want []int64
	}{
		{"seed002-tiny", []string{"--convention", "seed002", exampleFile(t, "seed002-tiny")}, []int64{4160, 2600, 2340, 2080}},
		{"seed002-7b", []string{"--convention", "seed002", exampleFile(t, "seed002-7b")}, []int64{112e9, 38_500_000_000, 26_250_000_000, 14e9}},
		{"seed000-mlp", []string{"--convention", "seed000", "--stage", "1", exampleFile(t, "seed000-mlp")}, []int64{9_396_674_560}},
	} {
		rs := runMemoryJSON(t, tc.args...)
		if len(rs) != len(tc.want) {
			t.Fatalf("%s: %d reports, want %d", tc.name, len(rs), len(tc.want))
		}
		for i, r := range rs {
			if r.AtRest != tc.want[i] {
				t.Errorf("%s stage %d: %d B, want %d", tc.name, r.Stage, r.AtRest, tc.want[i])
			}
		}
	}
}

func TestMemoryEstimators(t *testing.T) {
	rs := runMemoryJSON(t, "--estimator", "all", "--stage", "2", exampleFile(t, "seed002-7b"))
	if len(rs) != 3 || rs[1].Estimator != "deepspeed" || rs[1].AtRest != 29_750_000_000 {
		t.Errorf("estimators: %+v, want deepspeed 29,750,000,000 B second", rs)
	}
	rs = runMemoryJSON(t, "--estimator", "deepspeed", "--stage", "3", exampleFile(t, "seed002-7b"))
	if len(rs) != 1 || rs[0].AtRest != 16_274_288_000 {
		t.Errorf("deepspeed zero3: %+v, want 16,274,288,000 B", rs)
	}
}

func TestMemoryDefaultAndSet(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := Main([]string{"memory", "--stage", "1"}, nil, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if !strings.Contains(out.String(), "ZeRO stage 1") || !strings.Contains(out.String(), "fp32 master params") {
		t.Errorf("default table:\n%s", out.String())
	}
	k1 := runMemoryJSON(t, "--stage", "1")
	k2 := runMemoryJSON(t, "--stage", "1", "--set", "parallelism.k=2")
	if k2[0].K != 2 || k2[0].AtRest <= k1[0].AtRest {
		t.Errorf("--set parallelism.k=2: k %d at rest %d (k=1: %d), want k 2 and more memory", k2[0].K, k2[0].AtRest, k1[0].AtRest)
	}
}

func TestMemoryInputErrors(t *testing.T) {
	for _, args := range [][]string{
		{"memory", "--stage", "4"},
		{"memory", "--units", "tb"},
		{"memory", "--estimator", "guess"},
		{"memory", "--convention", "paper"},
		{"memory", "--rank", "-1"},
		{"memory", "/nonexistent/scenario.yaml"},
		{"memory", "--set", "parallelism.k=3"},
	} {
		var out, errOut bytes.Buffer
		if code := Main(args, nil, &out, &errOut); code != exitInput {
			t.Errorf("%v: exit %d, want %d (stderr %q)", args, code, exitInput, errOut.String())
		}
	}
}

// TestMemoryEstimatorRefusal: --estimator takes all too (memory --help:
// "zerosim, deepspeed, megatron or all"); a bad value listed three.
func TestMemoryEstimatorRefusal(t *testing.T) {
	_, errOut, code := runCLI("memory", "--estimator", "guess")
	if want := "zerosim: --estimator: estimator \"guess\": use zerosim, deepspeed, megatron or all\n"; code != exitInput || errOut != want {
		t.Errorf("exit %d, %q; want %d, %q", code, errOut, exitInput, want)
	}
}
