package main

import (
	"encoding/json"
	"regexp"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// TestJSONProvenance: the JSON of run, fit, compare, verify and
// collective carries the zerosim block plan's carries, and the SHA-256 of the
// resolved scenario (sweep's and plan's scenario_sha256), so a result can
// be reproduced from the file alone (QA25 M3: only run, plan, sweep and
// calibrate did).
func TestJSONProvenance(t *testing.T) {
	data, _ := scenarios.Example("seed002-tiny")
	s, err := scenarios.Load("seed002-tiny.yaml", data, nil)
	if err != nil {
		t.Fatal(err)
	}
	tiny, _ := scenarios.Digest(s)
	hex64 := regexp.MustCompile(`^[0-9a-f]{64}$`)
	for _, tc := range []struct {
		args []string
		sha  string // the top level's scenario_sha256; "" where the variants carry theirs
	}{
		{[]string{"run", "seed002-tiny", "--format", "json"}, tiny},
		{[]string{"fit", "seed002-tiny", "--format", "json"}, tiny},
		{[]string{"verify", "seed002-tiny", "--format", "json"}, tiny},
		{[]string{"collective", "--size", "1MiB", "--format", "json"}, "any"},
		{[]string{"compare", "seed002-tiny", "--vary", "parallelism.k=1,2", "--format", "json"}, ""},
	} {
		code, out, errOut := runMain(t, "", tc.args...)
		if code != 0 {
			t.Fatalf("%q: exit %d: %s", tc.args, code, errOut)
		}
		var doc struct {
			Zerosim *struct {
				Version string `json:"version"`
			} `json:"zerosim"`
			SHA      string `json:"scenario_sha256"`
			Variants []struct {
				SHA string `json:"scenario_sha256"`
			} `json:"variants"`
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatalf("%q: %v", tc.args, err)
		}
		if doc.Zerosim == nil || doc.Zerosim.Version == "" {
			t.Errorf("%q: no zerosim block", tc.args)
		}
		switch tc.sha {
		case "":
			if len(doc.Variants) != 2 || !hex64.MatchString(doc.Variants[0].SHA) || doc.Variants[0].SHA == doc.Variants[1].SHA {
				t.Errorf("%q: the variants' scenario_sha256: %+v", tc.args, doc.Variants)
			}
		case "any":
			if !hex64.MatchString(doc.SHA) {
				t.Errorf("%q: scenario_sha256 %q", tc.args, doc.SHA)
			}
		default:
			if doc.SHA != tc.sha {
				t.Errorf("%q: scenario_sha256 %q, want %q", tc.args, doc.SHA, tc.sha)
			}
		}
	}
}
