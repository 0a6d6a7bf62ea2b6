package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// TestResolvedScenarioReplaysFiles: result.json of a run that read a
// config.json (model.hf_config) and a calibration file records both files
// with their SHA-256 (files[], as a sweep's meta line), and its
// resolved_scenario, saved in another directory, replays the same step with
// the same resolved digest (it names the files by absolute path; before,
// the relative calibration path was read from the new directory and the
// replay failed).
func TestResolvedScenarioReplaysFiles(t *testing.T) {
	src, dst := t.TempDir(), t.TempDir()
	cfg, err := os.ReadFile("../../docs/examples/hf/mixtral-8x7b/config.json")
	if err != nil {
		t.Fatal(err)
	}
	cal, err := os.ReadFile("../../docs/examples/calibration-h100-ndr.yaml")
	if err != nil {
		t.Fatal(err)
	}
	must(t, os.MkdirAll(filepath.Join(src, "hf"), 0o755))
	must(t, os.WriteFile(filepath.Join(src, "hf", "config.json"), cfg, 0o644))
	must(t, os.WriteFile(filepath.Join(src, "cal.yaml"), cal, 0o644))
	scen := filepath.Join(src, "s.yaml")
	must(t, os.WriteFile(scen, []byte("version: 1\nname: replay\ncluster: {nodes: 2, gpus_per_node: 8, gpu: H100-80GB}\n"+
		"model: {hf_config: hf/config.json, layers: 2, seq_len: 1024}\nparallelism: {dp: 16, zero_stage: 3}\ncommunication: {calibration: cal.yaml}\n"), 0o644))

	var res struct {
		StepPS int64 `json:"step_time_ps"`
		Files  []struct {
			Key, Path, SHA256 string
		} `json:"files"`
		Resolved json.RawMessage `json:"resolved_scenario"`
	}
	code, out, errOut := runMain(t, "", "run", scen, "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	must(t, json.Unmarshal([]byte(out), &res))
	hex256 := func(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }
	want := [][3]string{{"model.hf_config", "hf/config.json", hex256(cfg)}, {"communication.calibration", "cal.yaml", hex256(cal)}}
	if len(res.Files) != len(want) {
		t.Fatalf("files %+v, want %v", res.Files, want)
	}
	for i, f := range res.Files {
		if [3]string{f.Key, f.Path, f.SHA256} != want[i] {
			t.Errorf("files[%d] = %+v, want %v", i, f, want[i])
		}
	}
	replay := filepath.Join(dst, "replay.json")
	must(t, os.WriteFile(replay, res.Resolved, 0o644))
	step := res.StepPS
	code, out, errOut = runMain(t, "", "run", replay, "--format", "json")
	if code != 0 {
		t.Fatalf("replay from another directory: exit %d: %s", code, errOut)
	}
	must(t, json.Unmarshal([]byte(out), &res))
	if res.StepPS != step {
		t.Errorf("replayed step %d ps, want %d", res.StepPS, step)
	}
	digest := regexp.MustCompile(`resolved: sha256 [0-9a-f]{12}`)
	_, a, _ := runMain(t, "", "run", scen)
	_, b, _ := runMain(t, "", "run", replay)
	if da, db := digest.FindString(a), digest.FindString(b); da == "" || da != db {
		t.Errorf("replay digest %q, want %q", db, da)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
