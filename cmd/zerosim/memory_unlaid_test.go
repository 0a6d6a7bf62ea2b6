package main

import (
	"encoding/csv"
	"encoding/json"
	"strings"
	"testing"
)

// TestMemoryUnlaidStages: the default example at ZeRO-3 with a 30 kB
// bucket is a scenario validate and run accept (stage 3 gives every unit
// its own buckets), but at stages 0–2 its one group of 6,738,415,616
// parameters would be cut into more than memory.MaxBuckets buckets. memory
// prints stage 3 and, for stages 0–2, a note naming communication.bucket_size
// and the size run advises at that stage (run refuses the same file at
// stage 1 with it): in the table and the summary, as null figures in
// JSON, as an empty total row with the reason in CSV; exit 0. Asking for
// such a stage alone (--stage 1), or the scenario at stage 1 itself, is
// still refused with exit 2.
func TestMemoryUnlaidStages(t *testing.T) {
	const advice = "communication.bucket_size 30000 B cuts group \"dense\" (6738415616 parameters) into more than 262144 buckets (use a bucket_size of at least 102824 B)"
	sets := []string{"--set", "communication.bucket_size=30KB", "--set", "parallelism.zero_stage=3"}
	mem := func(args ...string) (int, string, string) {
		return runMain(t, "", append(append([]string{"memory"}, sets...), args...)...)
	}
	code, _, errOut := runMain(t, "", "run", "--set", "communication.bucket_size=30KB")
	if code != 2 || !strings.Contains(errOut, advice) {
		t.Fatalf("run at stage 1: exit %d, %q; want 2 and %q", code, errOut, advice)
	}
	if code, _, errOut := runMain(t, "", append([]string{"validate", "default"}, sets...)...); code != 0 {
		t.Fatalf("validate at stage 3: exit %d: %s", code, errOut)
	}
	note := func(stage string) string {
		return "n/a: stage " + stage + " cannot be laid out at this bucket size: " + advice + "; stage 3, the scenario's, can\n"
	}
	code, out, errOut := mem()
	if code != 0 {
		t.Fatalf("memory: exit %d: %s", code, errOut)
	}
	for _, want := range []string{note("0"), note("1"), note("2"), "# default: ZeRO stage 3, N=16 K=1 (sharded over 16), rank 0\n┌", "│     1 │ zerosim   │      n/a │       n/a │ -          │ -    │"} {
		if !strings.Contains(out, want) {
			t.Errorf("table: no %q in\n%s", want, out)
		}
	}
	// The summary alone (--estimator all) says it under the table.
	if code, out, _ := mem("--estimator", "all"); code != 0 || !strings.Contains(out, "\n"+note("2")+"(12 tables") {
		t.Errorf("summary: exit %d, no %q in\n%s", code, note("2"), out)
	}
	code, out, errOut = mem("--format", "json")
	var doc struct {
		Reports []map[string]any `json:"reports"`
	}
	err := json.Unmarshal([]byte(out), &doc)
	rs := doc.Reports
	if code != 0 || err != nil || len(rs) != 4 {
		t.Fatalf("json: exit %d, %v, %d reports: %s", code, err, len(rs), errOut)
	}
	for st, r := range rs {
		na, _ := r["not_applicable"].(string)
		if laid := st == 3; laid != (r["peak"] != nil) || laid != (r["at_rest"] != nil) || laid != (r["fits"] != nil) || laid != (na == "") {
			t.Errorf("json stage %d: peak %v, at_rest %v, fits %v, not_applicable %q", st, r["peak"], r["at_rest"], r["fits"], na)
		}
		if st < 3 && na+"\n" != strings.TrimPrefix(note(string(rune('0'+st))), "n/a: ") {
			t.Errorf("json stage %d: not_applicable %q", st, na)
		}
	}
	code, out, _ = mem("--format", "csv")
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if code != 0 || err != nil || recs[0][len(recs[0])-1] != "not_applicable" {
		t.Fatalf("csv: exit %d, %v, header %v", code, err, recs)
	}
	rows := map[string]int{}
	for _, r := range recs[1:] {
		rows[r[1]]++
		if r[1] == "3" {
			if r[13] != "" || r[5] == "" {
				t.Errorf("csv stage 3 row %v", r)
			}
			continue
		}
		if r[4] != "total" || strings.Join(r[5:13], "") != "" || !strings.Contains(r[13], advice) {
			t.Errorf("csv stage %s row %v", r[1], r)
		}
	}
	if rows["0"] != 1 || rows["1"] != 1 || rows["2"] != 1 || rows["3"] < 10 {
		t.Errorf("csv rows per stage %v", rows)
	}
	for _, args := range [][]string{{"memory", "--stage", "1", "--set", "communication.bucket_size=30KB", "--set", "parallelism.zero_stage=3"}, {"memory", "--set", "communication.bucket_size=30KB"}} {
		if code, out, errOut := runMain(t, "", args...); code != 2 || out != "" || !strings.Contains(errOut, advice) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 2 and the advice", args, code, out, errOut)
		}
	}
}
