package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/zero"
)

// TestCSVConventions: the CSVs of sweep, plan (plan.csv) and compare write
// one convention: verdicts as true/false (compare wrote "1"), sizes as whole
// bytes (plan.csv's bucket size was "200MB") and MFU with 5 decimals
// (compare wrote 4), so seed000-k4's MFU at K=2 and K=4 reads the same in
// sweep's rows and compare's (0.00011 and 0.00012 on an Intel host; 4
// decimals give 0.0001 for both). The host is pinned to Intel, so that the
// pair does not hang on the A100 preset's host CPU. (At K=1 and K=4 the
// MFUs were 0.00024 and 0.00023 until each sample was counted once under
// cp, zero.cpCopies; halved, both read 0.00012.)
func TestCSVConventions(t *testing.T) {
	read := func(what, data string) [][]string {
		t.Helper()
		var lines []string
		for _, l := range strings.Split(data, "\n") {
			if !strings.HasPrefix(l, "# ") { // sweep's meta line
				lines = append(lines, l)
			}
		}
		recs, err := csv.NewReader(strings.NewReader(strings.Join(lines, "\n"))).ReadAll()
		if err != nil || len(recs) < 2 {
			t.Fatalf("%s: %v (%d records)", what, err, len(recs))
		}
		return recs
	}
	run := func(args ...string) string {
		t.Helper()
		code, out, errOut := runMain(t, "", args...)
		if code != 0 {
			t.Fatalf("%q: exit %d: %s", args, code, errOut)
		}
		return out
	}
	dir := t.TempDir()
	run("plan", "seed000-k4", "--stages", "1", "--recompute", "none", "-o", dir)
	plan, err := os.ReadFile(filepath.Join(dir, "plan.csv"))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][][]string{
		"sweep":   read("sweep", run("sweep", "seed000-k4", "--set", "cluster.host.cpu=intel", "--grid", "parallelism.k=2,4")),
		"plan":    read("plan.csv", string(plan)),
		"compare": read("compare", run("compare", "seed000-k4", "--set", "cluster.host.cpu=intel", "--vary", "parallelism.k=2,4", "--format", "csv")),
	}
	// The MFUs the two write, 0.00011 and 0.00012: the replays' to 5
	// decimals, which differ there and not at compare's old 4.
	var mfus []string
	for _, k := range []string{"2", "4"} {
		data, _ := scenarios.Example("seed000-k4")
		sc, err := scenarios.Load("seed000-k4", data, []string{"cluster.host.cpu=intel", "parallelism.k=" + k})
		if err != nil {
			t.Fatal(err)
		}
		r, err := zero.Replay(sc, zero.Options{})
		if err != nil {
			t.Fatal(err)
		}
		mfus = append(mfus, fmt.Sprintf("%.5f", r.Utilization.MFU))
	}
	if mfus[0] == mfus[1] {
		t.Fatalf("seed000-k4's MFU at K=2 and K=4 read alike, %q: the test no longer tells 5 decimals from 4", mfus)
	}
	mfu := regexp.MustCompile(`^[01]\.\d{5}$`)
	whole := regexp.MustCompile(`^(0|[1-9]\d*)$`)
	for name, recs := range files {
		head := recs[0]
		for _, rec := range recs[1:] {
			for i, v := range rec {
				col := head[i]
				switch {
				case col == "fits" || col == "device_fits" || col == "pareto":
					if v != "true" && v != "false" {
						t.Errorf("%s: %s %q, want true or false", name, col, v)
					}
				case col == "mfu":
					if !mfu.MatchString(v) {
						t.Errorf("%s: mfu %q, want 5 decimals", name, v)
					}
				case strings.HasSuffix(col, "_bytes") && v != "":
					if !whole.MatchString(v) {
						t.Errorf("%s: %s %q, want whole bytes", name, col, v)
					}
				case strings.HasPrefix(col, "bucket_size"):
					t.Errorf("%s: column %s does not say its unit", name, col)
				}
			}
			if name == "compare" && rec[0] == "metrics" {
				switch rec[2] {
				case "bool":
					for _, v := range rec[3:5] {
						if v != "true" && v != "false" {
							t.Errorf("compare: %s %q, want true or false", rec[1], v)
						}
					}
				case "fraction":
					if !slices.Equal(rec[3:5], mfus) {
						t.Errorf("compare: MFU %q, want sweep's %q", rec[3:5], mfus)
					}
				}
			}
		}
	}
	sw := files["sweep"]
	m := slices.Index(sw[0], "mfu")
	if got := []string{sw[1][m], sw[2][m]}; !slices.Equal(got, mfus) {
		t.Errorf("sweep: MFU %q, want %q", got, mfus)
	}
	pl := files["plan"]
	b := slices.Index(pl[0], "bucket_size_bytes")
	if b < 0 {
		t.Fatalf("plan.csv header %q: no bucket_size_bytes", pl[0])
	}
	buckets := map[string]bool{}
	for _, rec := range pl[1:] {
		buckets[rec[b]] = true
	}
	// plan's default bucket sizes at stage 1 beside the file's: 25MiB
	// (PyTorch DDP's bucket_cap_mb=25, binary) and 200MB (decimal), each
	// written in bytes.
	if !buckets["26214400"] || !buckets["200000000"] {
		t.Errorf("plan.csv bucket sizes %v, want 26214400 and 200000000", buckets)
	}
	// plan.json's rows give the same sizes in bytes (they were "200MB").
	raw, err := os.ReadFile(filepath.Join(dir, "plan.json"))
	if err != nil {
		t.Fatal(err)
	}
	var pj struct {
		Rows []map[string]any `json:"rows"`
	}
	if err := json.Unmarshal(raw, &pj); err != nil {
		t.Fatal(err)
	}
	jb := map[float64]bool{}
	for _, r := range pj.Rows {
		if v, ok := r["bucket_size_bytes"].(float64); ok {
			jb[v] = true
		}
	}
	if !jb[26214400] || !jb[200e6] || len(pj.Rows) == 0 {
		t.Errorf("plan.json bucket_size_bytes %v over %d rows, want 26214400 and 200000000", jb, len(pj.Rows))
	}
}
