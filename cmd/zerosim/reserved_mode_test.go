package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// reserveFields are the fields every machine-readable output gives about
// the reserve (qa16 M2).
type reserveFields struct {
	Mode    string `json:"reserved_mode"`
	Retries *int   `json:"allocator_retries"`
}

// TestReservedModeEverywhere: run's result.json, memory's JSON and CSV,
// a sweep row, compare's JSON and plan.csv/plan.json say how the reserve
// was obtained and, where it is simulated, how many times a step the
// simulated allocator released its cache, all alike. Torchtitan's Llama
// 3.1 8B row with default segments on a 78 GiB GPU: simulated, one
// release a step (the reserve it takes does not fit: device_fits
// false); with expandable segments
// simulated too; with memory.allocator_overhead 0.2 the fraction, named,
// and no retries.
func TestReservedModeEverywhere(t *testing.T) {
	sets := []string{"--set", "cluster.gpu_memory=78GiB", "--set", "memory.expandable_segments=false"}
	code, js, errOut := runMain(t, "", append([]string{"run", torchtitanTemplate, "--format", "json"}, sets...)...)
	if code != 0 {
		t.Fatalf("run: exit %d: %s", code, errOut)
	}
	var run struct {
		reserveFields
		Reserved   int64 `json:"reserved_peak_bytes"`
		DeviceFits bool  `json:"device_fits"`
	}
	if err := json.Unmarshal([]byte(js), &run); err != nil {
		t.Fatal(err)
	}
	if run.Mode != "simulated-default" || run.Retries == nil || *run.Retries != 1 || run.DeviceFits {
		t.Fatalf("run: reserved_mode %q, allocator_retries %v, device_fits %v; want simulated-default, 1, false", run.Mode, run.Retries, run.DeviceFits)
	}
	want := func(what string, got reserveFields) {
		t.Helper()
		if got.Mode != run.Mode || got.Retries == nil || *got.Retries != *run.Retries {
			t.Errorf("%s: reserved_mode %q, allocator_retries %v; want run's %q, %d", what, got.Mode, got.Retries, run.Mode, *run.Retries)
		}
	}
	code, js, errOut = runMain(t, "", append([]string{"memory", torchtitanTemplate, "--stage", "3", "--format", "json"}, sets...)...)
	var mem struct {
		Reports []reserveFields `json:"reports"`
	}
	if code != 0 || json.Unmarshal([]byte(js), &mem) != nil || len(mem.Reports) != 1 {
		t.Fatalf("memory: exit %d: %s", code, errOut)
	}
	want("memory --format json", mem.Reports[0])
	code, out, errOut := runMain(t, "", append([]string{"memory", torchtitanTemplate, "--stage", "3", "--format", "csv"}, sets...)...)
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if code != 0 || err != nil {
		t.Fatalf("memory csv: exit %d: %s %v", code, errOut, err)
	}
	total := recs[len(recs)-1]
	col := func(name string) string { return total[slices.Index(recs[0], name)] }
	if col("component") != "total" || col("reserved_bytes") != strconv.FormatInt(run.Reserved, 10) || col("reserved_mode") != run.Mode || col("allocator_retries") != strconv.Itoa(*run.Retries) {
		t.Errorf("memory csv total row %q (header %q), want run's reserve %d", total, recs[0], run.Reserved)
	}
	code, out, errOut = runMain(t, "", "sweep", torchtitanTemplate, "--format", "json", "--grid", "memory.expandable_segments=false,true", "--set", "cluster.gpu_memory=78GiB")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 3 {
		t.Fatalf("sweep: exit %d: %s\n%s", code, errOut, out)
	}
	var row, expandable reserveFields
	if json.Unmarshal([]byte(lines[1]), &row) != nil || json.Unmarshal([]byte(lines[2]), &expandable) != nil {
		t.Fatalf("sweep rows %q", lines[1:])
	}
	want("sweep row", row)
	if expandable.Mode != "simulated-expandable" || expandable.Retries == nil {
		t.Errorf("sweep row, expandable segments: %q, %v", expandable.Mode, expandable.Retries)
	}
	code, js, errOut = runMain(t, "", "compare", torchtitanTemplate, "--format", "json", "--vary", "memory.expandable_segments=false,true", "--set", "cluster.gpu_memory=78GiB")
	var cmp struct {
		Variants []reserveFields `json:"variants"`
	}
	if code != 0 || json.Unmarshal([]byte(js), &cmp) != nil || len(cmp.Variants) != 2 {
		t.Fatalf("compare: exit %d: %s", code, errOut)
	}
	want("compare variant", cmp.Variants[0])
	if cmp.Variants[1].Mode != "simulated-expandable" {
		t.Errorf("compare, expandable segments: %q", cmp.Variants[1].Mode)
	}
	dir := t.TempDir()
	code, _, errOut = runMain(t, "", append([]string{"plan", torchtitanTemplate, "-o", dir, "--stages", "2,3", "--k", "1", "--micro-batches", "2", "--recompute", "op", "--prefetch", "1"}, sets...)...)
	if code != 0 {
		t.Fatalf("plan: exit %d: %s", code, errOut)
	}
	data, err := os.ReadFile(filepath.Join(dir, "plan.csv"))
	if err != nil {
		t.Fatal(err)
	}
	recs, err = csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil || len(recs) < 2 {
		t.Fatalf("plan.csv: %v\n%s", err, data)
	}
	var plan struct {
		Rows []struct {
			reserveFields
			Stage int `json:"zero_stage"`
		} `json:"rows"`
	}
	if data, err = os.ReadFile(filepath.Join(dir, "plan.json")); err != nil || json.Unmarshal(data, &plan) != nil || len(plan.Rows) != len(recs)-1 {
		t.Fatalf("plan.json: %v, %d rows for plan.csv's %d", err, len(plan.Rows), len(recs)-1)
	}
	stage3 := false
	for i, rec := range recs[1:] {
		col := func(name string) string { return rec[slices.Index(recs[0], name)] }
		j := plan.Rows[i]
		if col("zero_stage") != strconv.Itoa(j.Stage) || col("reserved_mode") != j.Mode || col("allocator_retries") != retriesText(j.Retries) {
			t.Errorf("plan row %d: csv %q, json %+v", i+1, rec, j)
		}
		switch j.Stage {
		case 3:
			stage3 = true
			want("plan.json stage 3", j.reserveFields)
		default: // stage 2: the fraction, no simulation
			if j.Mode != "overhead 0.15 (default)" || j.Retries != nil {
				t.Errorf("plan row %d, stage %d: %q, %v", i+1, j.Stage, j.Mode, j.Retries)
			}
		}
	}
	if !stage3 {
		t.Errorf("plan.csv has no stage-3 row: %q", recs)
	}
	// A fraction the scenario sets: named in the JSON and in memory's text
	// (qa16 M3), no retries.
	code, js, errOut = runMain(t, "", "run", torchtitanTemplate, "--format", "json", "--set", "memory.allocator_overhead=0.2")
	var fixed reserveFields
	if code != 0 || json.Unmarshal([]byte(js), &fixed) != nil || fixed.Mode != "overhead 0.2 (memory.allocator_overhead)" || fixed.Retries != nil {
		t.Errorf("run with allocator_overhead 0.2: exit %d, %+v: %s", code, fixed, errOut)
	}
	code, out, errOut = runMain(t, "", "memory", torchtitanTemplate, "--stage", "3", "--set", "memory.allocator_overhead=0.2")
	if code != 0 || !strings.Contains(out, "reserved 82.36 GiB (caching allocator), device 83.35 GiB (+ CUDA context, NCCL buffers)\nallocator overhead 0.2, from memory.allocator_overhead\n") {
		t.Errorf("memory with allocator_overhead 0.2: exit %d: %s%s", code, out, errOut)
	}
}

func retriesText(n *int) string {
	if n == nil {
		return ""
	}
	return strconv.Itoa(*n)
}
