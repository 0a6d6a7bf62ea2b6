package zerosim_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/internal/jsonschema"
	"github.com/zerosim/zerosim/reports"
	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/sweep"
	"github.com/zerosim/zerosim/zero"
)

// loadSchema reads a docs/*.schema.json file (jsonschema.Load).
func loadSchema(t *testing.T, path string) *jsonschema.Schema {
	t.Helper()
	s, err := jsonschema.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func decode(t *testing.T, b []byte) any {
	t.Helper()
	v, err := jsonschema.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// resultJSON replays an example and returns its result.json.
func resultJSON(t *testing.T, name string, allRanks bool, sets ...string) []byte {
	t.Helper()
	src, err := scenarios.ReadInput(name, nil) // an embedded example or a file
	if err != nil {
		t.Fatal(err)
	}
	s, err := src.Load(sets)
	if err != nil {
		t.Fatal(err)
	}
	res, err := zero.Replay(s, zero.Options{KeepSpans: true, SpanRanks: reports.TraceMaxRanks})
	if err != nil {
		t.Fatal(err)
	}
	run, err := reports.NewRun(s, res, nil)
	if err != nil {
		t.Fatal(err)
	}
	run.AllRanks = allRanks
	// As zerosim run: at zerosim's default efficiency on a GPU with
	// published runs, the step at their fits (at_published_fits).
	if run.AtFits, err = sweep.AtPublishedFits(s, res); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := reports.WriteRunJSON(&b, run); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// docs/result.schema.json holds every key and type of real result.json
// files: small and large, symmetric and not, with a straggler and without,
// and the validator rejects a file that strays from it.
func TestResultJSONSchema(t *testing.T) {
	sch := loadSchema(t, "docs/result.schema.json")
	cases := []struct {
		name     string
		allRanks bool
		sets     []string
	}{
		{"seed002-tiny", false, nil},
		{"default", false, nil},
		{"default", true, []string{"parallelism.zero_stage=0"}},
		// FSDP2 at stage 3: the simulated allocator's series (memory's
		// reserved, outside_allocator_bytes).
		{"default", false, []string{"parallelism.zero_stage=3", "communication.boundary=fsdp2"}},
		{"seed000-k4", false, []string{"cluster.gpu_overrides=[{rank: 3, speed: 0.8}]"}},
		{"docs/examples/mixtral-8x7b.yaml", false, nil}, // a mixture of experts: active_params
		// The deepep dispatcher across 2 nodes of 4: phases' dispatcher,
		// groups ep-rail and ep-node.
		{"docs/examples/mixtral-8x7b.yaml", false, []string{"cluster.nodes=16", "cluster.gpus_per_node=4", "communication.moe_dispatcher=deepep"}},
		// DeepSpeed at stage 3: memory_model.gather_pool (QA19 M3).
		{"default", false, []string{"stack=deepspeed", "parallelism.zero_stage=3"}},
		// Optimizer offload: the top-level host and memory_model.host
		// (QA19 M3).
		{"default", false, []string{"offload.optimizer=cpu", "parallelism.zero_stage=3"}},
	}
	// A calibration file with a memory part: result.json's calibration.
	cal := filepath.Join(t.TempDir(), "cal.yaml")
	if err := os.WriteFile(cal, []byte("version: 1\nmemory:\n  allocator_overhead: 0.05\n  method: reserved\n  measured_bytes: 1000000000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases = append(cases, struct {
		name     string
		allRanks bool
		sets     []string
	}{"default", false, []string{"communication.calibration=" + cal}})
	for _, c := range cases {
		doc := decode(t, resultJSON(t, c.name, c.allRanks, c.sets...))
		if slices.Contains(c.sets, "communication.calibration="+cal) {
			if got := fmt.Sprint(doc.(map[string]any)["calibration"]); got != "map[file:"+cal+" parts:[memory]]" {
				t.Errorf("result.json's calibration: %s, want the file and its memory part", got)
			}
		}
		if errs := sch.Check(doc, c.name); len(errs) > 0 {
			t.Errorf("%s %v: result.json does not follow docs/result.schema.json:\n%s", c.name, c.sets, strings.Join(errs, "\n"))
		}
	}
	doc := decode(t, resultJSON(t, "seed002-tiny", false)).(map[string]any)
	doc["surprise"] = 1
	doc["stage"] = "3"
	doc["collectives"].([]any)[0].(map[string]any)["group"] = ""
	if errs := sch.Check(doc, "mutated"); len(errs) != 3 {
		t.Errorf("the validator let a stray key, a wrong type or a group outside the enum through: %q", errs)
	}
}

// Every line of a sweep's JSON Lines output, the meta line (with and
// without the files the scenario read) and every row, valid point or not,
// follows docs/sweep-row.schema.json (QA23 L3: the meta line did
// not), and the validator rejects a meta line that strays from it.
func TestSweepRowSchema(t *testing.T) {
	sch := loadSchema(t, "docs/sweep-row.schema.json")
	data, _ := scenarios.Example("seed000-k4")
	var grids []sweep.Grid
	for _, g := range []string{"parallelism.k=1,3,4", "communication.algorithm=ring,hierarchical"} {
		gr, err := sweep.ParseGrid(g)
		if err != nil {
			t.Fatal(err)
		}
		grids = append(grids, gr)
	}
	sp, err := sweep.NewSpace(grids)
	if err != nil {
		t.Fatal(err)
	}
	src := sweep.Source{File: "seed000-k4.yaml", Data: data}
	ev := &sweep.Evaluator{Src: src, Space: sp}
	var b bytes.Buffer
	enc := sweep.NewEncoder(&b, sweep.JSONL, sp.Keys())
	meta := sweep.NewMeta(src, sp, sweep.Resolve(src, sp))
	// The build zerosim sweep records (QA25 M6), every field given.
	meta.Zerosim = &sweep.Build{Version: "v0.9.0", Revision: "0123456789abcdef0123456789abcdef01234567", Modified: true, Binary: strings.Repeat("ab", 32)}
	if err := enc.WriteHeader(meta); err != nil {
		t.Fatal(err)
	}
	for i := range sp.Len() {
		if err := enc.Write(ev.Eval(i)); err != nil {
			t.Fatal(err)
		}
	}
	rows, invalid, metas := 0, 0, 0
	sc := bufio.NewScanner(&b)
	for sc.Scan() {
		doc := decode(t, sc.Bytes())
		if m, ok := doc.(map[string]any); ok && len(m) == 1 && m["zerosim_sweep"] != nil {
			metas++ // the meta line (sweep.Meta)
			if errs := sch.Check(doc, "meta"); len(errs) > 0 {
				t.Errorf("the meta line does not follow docs/sweep-row.schema.json:\n%s", strings.Join(errs, "\n"))
			}
			continue
		}
		rows++
		if m, ok := doc.(map[string]any); ok && m["error"] != nil {
			invalid++
		}
		if errs := sch.Check(doc, fmt.Sprintf("row %d", rows-1)); len(errs) > 0 {
			t.Errorf("sweep row does not follow docs/sweep-row.schema.json:\n%s", strings.Join(errs, "\n"))
		}
	}
	if rows != 6 || invalid != 2 || metas != 1 {
		t.Errorf("%d rows, %d invalid, %d meta lines; want 6 rows of which 2 invalid (K=3 does not divide N=8) and one meta line", rows, invalid, metas)
	}
	// A scenario that reads a file lists it; a stray key, a row's key or
	// a file without its hash is refused.
	meta.Files = []scenarios.ReadFile{{Key: "model.hf_config", Path: "config.json", SHA256: "00ff"}}
	line := func(m sweep.Meta) any {
		j, err := json.Marshal(map[string]any{"zerosim_sweep": m})
		if err != nil {
			t.Fatal(err)
		}
		return decode(t, j)
	}
	if errs := sch.Check(line(meta), "meta with files"); len(errs) > 0 {
		t.Errorf("a meta line with files does not follow the schema:\n%s", strings.Join(errs, "\n"))
	}
	bad := line(meta).(map[string]any)
	bad["index"] = 0
	noHash := line(meta).(map[string]any)
	delete(noHash["zerosim_sweep"].(map[string]any)["files"].([]any)[0].(map[string]any), "sha256")
	for _, doc := range []any{bad, noHash} {
		if errs := sch.Check(doc, "mutated meta"); len(errs) == 0 {
			t.Errorf("the schema let a mutated meta line through: %v", doc)
		}
	}
}

// TestMemoryModelUnits: result.json's memory_model keeps the memory
// table's names without a _bytes suffix (the same object as zerosim
// memory --format json), so every integer in it says its unit in its
// schema description: "bytes", "count", "elements" or "index" (QA23
// L2: units[].activation and the others said nothing).
func TestMemoryModelUnits(t *testing.T) {
	sch := loadSchema(t, "docs/result.schema.json")
	mm := sch.Properties["memory_model"]
	if mm == nil {
		t.Fatal("no memory_model in docs/result.schema.json")
	}
	var walk func(s *jsonschema.Schema, path string)
	n := 0
	walk = func(s *jsonschema.Schema, path string) {
		for k, p := range s.Properties {
			walk(p, path+"."+k)
		}
		if s.Items != nil {
			walk(s.Items, path+"[]")
		}
		typ, _ := s.Type.(string)
		if ts, ok := s.Type.([]any); ok && slices.Contains(ts, any("integer")) {
			typ = "integer" // an integer or null
		}
		if typ != "integer" {
			return
		}
		n++
		unit, _, _ := strings.Cut(s.Description, ":")
		if !slices.Contains([]string{"bytes", "count", "elements", "index"}, unit) {
			t.Errorf("%s: description %q does not start with its unit (bytes, count, elements or index)", path, s.Description)
		}
	}
	walk(mm, "memory_model")
	if n < 30 {
		t.Errorf("%d integers under memory_model; the walk missed some", n)
	}
}
