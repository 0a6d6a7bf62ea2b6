package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// TestRunNamesAnUnnamedScenarioByFile: a scenario without name: (allowed,
// default "") is named by its file's base name in the report, result.json
// and report.html, not left blank (QA25 L9: "# zerosim run: ", "scenario":
// ""). The digest, which covers the scenario and not its file name, stays.
func TestRunNamesAnUnnamedScenarioByFile(t *testing.T) {
	data, _ := scenarios.Example("seed002-tiny")
	var lines []string
	for _, l := range strings.Split(string(data), "\n") {
		if !strings.HasPrefix(l, "name:") {
			lines = append(lines, l)
		}
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "my-run.yaml")
	if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "o")
	code, stdout, errOut := runMain(t, "", "run", file, "-o", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.HasPrefix(stdout, "# zerosim run: my-run\n") {
		t.Errorf("report starts %.40q", stdout)
	}
	result, _ := os.ReadFile(filepath.Join(out, "result.json"))
	if !strings.Contains(string(result), `"scenario": "my-run",`) {
		t.Errorf("result.json: %.200s", result)
	}
	html, _ := os.ReadFile(filepath.Join(out, "report.html"))
	if !strings.Contains(string(html), "<title>zerosim run: my-run</title>") {
		t.Error("report.html's title does not name my-run")
	}
}

// TestVerifyNamesAnUnnamedScenarioByFile: verify names a scenario without
// name: by its file's base name, as run does; it printed "# verify : N =
// 2 ranks" and "scenario": "".
func TestVerifyNamesAnUnnamedScenarioByFile(t *testing.T) {
	data, _ := scenarios.Example("seed002-tiny")
	var lines []string
	for _, l := range strings.Split(string(data), "\n") {
		if !strings.HasPrefix(l, "name:") {
			lines = append(lines, l)
		}
	}
	file := filepath.Join(t.TempDir(), "my-run.yaml")
	if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, errOut := runMain(t, "", "verify", file)
	if code != 0 || !strings.HasPrefix(stdout, "# verify my-run: N = 2 ranks") {
		t.Errorf("verify: exit %d, report starts %.40q, stderr %q", code, stdout, errOut)
	}
	code, stdout, errOut = runMain(t, "", "verify", file, "--format", "json")
	if code != 0 || !strings.Contains(stdout, `"scenario": "my-run",`) {
		t.Errorf("verify --format json: exit %d, stderr %q: %.300s", code, errOut, stdout)
	}
}
