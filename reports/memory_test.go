package reports

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/memory"
	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/units"
)

// tinyScenario is seed 002's 260-parameter transformer on 2 GPUs of 80 GiB.
func tinyScenario() *scenarios.Scenario {
	return resolved(&scenarios.Scenario{
		Version: 1, Name: "seed002-tiny",
		Cluster:     scenarios.Cluster{Nodes: 1, GPUsPerNode: 2, GPUMemory: 80 * units.GiB},
		Parallelism: scenarios.Parallelism{DP: 2},
		Model: scenarios.Model{Kind: "tiny-transformer", LayerList: []scenarios.Layer{
			{Name: "ln1", Params: 8}, {Name: "attn", Params: 64}, {Name: "ln2", Params: 8},
			{Name: "ffn", Params: 148}, {Name: "out", Params: 32},
		}},
		// One bucket for the whole buffer, as the goldens were made.
		Communication: scenarios.Communication{BucketSize: 1 << 50},
	})
}

// sevenB is seed 002's 7B on 8 × 24 GiB GPUs, largest layer 131,072,000.
func sevenB() *scenarios.Scenario {
	return resolved(&scenarios.Scenario{
		Version: 1, Name: "seed002-7b",
		Cluster:     scenarios.Cluster{Nodes: 1, GPUsPerNode: 8, GPUMemory: 24 * units.GiB},
		Parallelism: scenarios.Parallelism{DP: 8},
		Model: scenarios.Model{Kind: "generic", LargestLayer: 131_072_000, LayerList: []scenarios.Layer{
			{Name: "embedding", Params: 131_072_000}, {Name: "blocks", Params: 7e9 - 131_072_000},
		}},
		// One bucket for the whole buffer, as the goldens were made.
		Communication: scenarios.Communication{BucketSize: 1 << 50},
	})
}

func memoryGolden(t *testing.T, name string, s *scenarios.Scenario, rs []*memory.Report, u MemoryUnits) {
	t.Helper()
	var tab, js, cs bytes.Buffer
	if err := WriteMemoryTable(&tab, rs, u); err != nil {
		t.Fatal(err)
	}
	if err := WriteMemoryJSON(&js, s, rs); err != nil {
		t.Fatal(err)
	}
	if err := WriteMemoryCSV(&cs, rs); err != nil {
		t.Fatal(err)
	}
	golden(t, name+".table.golden", tab.Bytes())
	golden(t, name+".json.golden", js.Bytes())
	golden(t, name+".csv.golden", cs.Bytes())
}

// TestMemoryGoldenTiny: the four stages of seed 002's tiny model with the
// seed-002 convention (4,160 / 2,600 / 2,340 / 2,080 B at rest).
func TestMemoryGoldenTiny(t *testing.T) {
	s := tinyScenario()
	rs, err := memory.Stages(s, memory.Options{Convention: memory.ConventionSeed002})
	if err != nil {
		t.Fatal(err)
	}
	memoryGolden(t, "memory_tiny_seed002", s, rs, MemoryGiB)
}

// TestMemoryGoldenEstimators: seed 002's 7B at stages 2 and 3 with every
// estimator side by side, in GB (DeepSpeed 29,750,000,000 and
// 16,274,288,000 B; Megatron n/a at stages 2–3).
func TestMemoryGoldenEstimators(t *testing.T) {
	var rs []*memory.Report
	for _, st := range []int{2, 3} {
		s := sevenB()
		s.Parallelism.Stage = st
		for _, est := range memory.Estimators {
			r, err := memory.Estimate(s, est, memory.Options{})
			if err != nil {
				t.Fatal(err)
			}
			rs = append(rs, r)
		}
	}
	memoryGolden(t, "memory_7b_estimators", sevenB(), rs, MemoryGB)
}

// TestMemoryJSONExact: memory --format json is one object, the build and
// the scenario's digest (as run's result.json carries them) and the
// reports with exact bytes (seed 002's tiny model: 4,160 / 2,600 / 2,340 /
// 2,080 B at rest, its table's figures).
func TestMemoryJSONExact(t *testing.T) {
	s := tinyScenario()
	rs, err := memory.Stages(s, memory.Options{Convention: memory.ConventionSeed002})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteMemoryJSON(&buf, s, rs); err != nil {
		t.Fatal(err)
	}
	var back struct {
		Zerosim        Build  `json:"zerosim"`
		ScenarioSHA256 string `json:"scenario_sha256"`
		Reports        []struct {
			Stage     int    `json:"stage"`
			AtRest    int64  `json:"at_rest"`
			PeakPhase string `json:"peak_phase"`
		} `json:"reports"`
	}
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	digest, err := scenarios.Digest(s)
	if err != nil {
		t.Fatal(err)
	}
	if back.Zerosim.Version == "" || back.ScenarioSHA256 != digest {
		t.Errorf("zerosim %+v, scenario_sha256 %q; want the build and scenarios.Digest %q", back.Zerosim, back.ScenarioSHA256, digest)
	}
	want := []int64{4160, 2600, 2340, 2080}
	if len(back.Reports) != len(want) {
		t.Fatalf("%d reports, want %d", len(back.Reports), len(want))
	}
	for i, b := range back.Reports {
		if b.Stage != i || b.AtRest != want[i] || b.PeakPhase == "" {
			t.Errorf("report %d: %+v, want stage %d at rest %d", i, b, i, want[i])
		}
	}
	if !strings.Contains(buf.String(), `"at_rest": 4160`) {
		t.Error("JSON does not hold exact integers")
	}
}

func TestParseMemoryUnits(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want MemoryUnits
		ok   bool
	}{{"", MemoryGiB, true}, {"GiB", MemoryGiB, true}, {"gb", MemoryGB, true}, {"tb", 0, false}} {
		got, err := ParseMemoryUnits(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseMemoryUnits(%q) = %v, %v", tc.in, got, err)
		}
	}
	if MemoryGiB.format(18_793_349_120) != "17.50 GiB" || MemoryGB.format(14e9) != "14.00 GB" {
		t.Errorf("format: %s, %s", MemoryGiB.format(18_793_349_120), MemoryGB.format(14e9))
	}
}

// TestMemoryNotesSimulatedReserve: the profiler line says when the reserved
// peak is the caching-allocator simulation's and in which segment mode, and
// says nothing more when it is memory.allocator_overhead's fraction.
func TestMemoryNotesSimulatedReserve(t *testing.T) {
	yes := true
	for _, c := range []struct {
		boundary   scenarios.Boundary
		expandable *bool
		want       string
	}{
		{scenarios.BoundaryFSDP2, nil, "(caching allocator; simulated, default segments)"},
		{scenarios.BoundaryFSDP1, &yes, "(caching allocator; simulated, expandable segments)"},
		{scenarios.BoundaryReshard, nil, "(caching allocator), device"},
	} {
		s := sevenB()
		s.Parallelism.Stage = 3
		s.Communication.Boundary = c.boundary
		s.Memory.ExpandableSegments = c.expandable
		s = resolved(s)
		r, err := memory.Analyze(s, memory.Options{})
		if err != nil {
			t.Fatal(err)
		}
		notes := strings.Join(memoryNotes(r, MemoryGiB, Vendor(0), true), "\n")
		if !strings.Contains(notes, c.want) {
			t.Errorf("%s: notes %q lack %q", c.boundary, notes, c.want)
		}
	}
}

// The peak line reads "at rest" for an estimator's static peak, not "in at
// rest" (qa21 LOW 9), and "in backward" for a phase.
func TestMemoryPeakLineWording(t *testing.T) {
	s := sevenB()
	s.Parallelism.Stage = 3
	var rs []*memory.Report
	for _, est := range []memory.Estimator{memory.EstimatorDeepSpeed, memory.EstimatorZerosim} {
		r, err := memory.Estimate(s, est, memory.Options{})
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, r)
	}
	var b strings.Builder
	if err := WriteMemoryReport(&b, rs, MemoryStyle{Units: MemoryGB}, true); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"peak 16.27 GB (16,274,288,000 B) at rest; fits", "peak 39.99 GB (39,987,856,000 B) in backward, unit 1"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("no %q in\n%s", want, b.String())
		}
	}
	if strings.Contains(b.String(), "in at rest") {
		t.Errorf("\"in at rest\" in\n%s", b.String())
	}
}

// TestMemoryNotesGatherPoolWhy: the profiler line names the pool (DeepSpeed's
// gather pool, FSDP1's without its rate limiter) and what sizes it: memory.host_lead, or one layer when packed flash
// attention syncs the host in every attention layer
// (scenarios.HostSyncEachLayer).
func TestMemoryNotesGatherPoolWhy(t *testing.T) {
	const yml = `version: 1
cluster: {nodes: 1, gpus_per_node: 8, gpu: A100-80GB}
model: {preset: llama2-7b, seq_len: 4096}
parallelism: {dp: 8, zero_stage: 3}
training: {param_dtype: bf16}
communication: {boundary: deepspeed}
`
	for _, c := range []struct {
		sets           []string
		want, unwanted string
	}{
		{nil, "DeepSpeed's gather pool, memory.host_lead", "one layer"},
		{[]string{"model.document_len=1024"}, "DeepSpeed's gather pool, one layer: the host syncs in every attention layer", "memory.host_lead"},
		{[]string{"model.document_len=1024", "memory.host_lead=1"}, "DeepSpeed's gather pool, memory.host_lead", "one layer"},
		// FSDP1 without its rate limiter holds the same kind of pool,
		// named as FSDP1's.
		{[]string{"communication.boundary=fsdp1", "communication.limit_all_gathers=false"}, "of it FSDP1's all-gather pool (limit_all_gathers false), memory.host_lead", "DeepSpeed"},
		{[]string{"communication.boundary=fsdp1", "communication.limit_all_gathers=false", "model.document_len=1024"}, "of it FSDP1's all-gather pool (limit_all_gathers false), one layer: the host syncs in every attention layer (packed flash attention)", "DeepSpeed"},
		// flash-attn's padding wrapper syncs the host in every block
		// (scenarios.HostSyncWhy): named as such, not as packing.
		{[]string{"communication.boundary=fsdp1", "communication.limit_all_gathers=false", "training.attention_unpad=true"}, "of it FSDP1's all-gather pool (limit_all_gathers false), one layer: the host syncs in every attention layer (flash-attn's unpad_input)", "packed"},
	} {
		s, err := scenarios.Load("ds.yaml", []byte(yml), c.sets)
		if err != nil {
			t.Fatal(err)
		}
		r, err := memory.Analyze(s, memory.Options{})
		if err != nil {
			t.Fatal(err)
		}
		notes := strings.Join(memoryNotes(r, MemoryGiB, Vendor(0), true), "\n")
		if !strings.Contains(notes, c.want) || strings.Contains(notes, c.unwanted) {
			t.Errorf("%v: notes %q: want %q, not %q", c.sets, notes, c.want, c.unwanted)
		}
	}
}

// TestMemoryCalibrationPoolName: calibrate's overhead line names the pool
// it adds as the scenario's (scenarios.GatherPoolName): it said DeepSpeed's
// for every pool.
func TestMemoryCalibrationPoolName(t *testing.T) {
	for _, name := range []string{"DeepSpeed's gather pool", "FSDP1's all-gather pool (limit_all_gathers false)"} {
		var b strings.Builder
		r := &MemoryCalibration{File: "c.yaml", Scenario: "s", Method: "reserved", Measured: 40 << 30, Allocated: 20 << 30, Pool: 8 << 30, PoolName: name,
			Before: MemoryPoint{Overhead: 0.15, Reserved: 31 << 30}, After: MemoryPoint{Overhead: 0.5, Reserved: 40 << 30}}
		if err := WriteMemoryCalibration(&b, r); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), " + "+name+" 8") {
			t.Errorf("%s: output\n%s\nlacks %q", name, b.String(), " + "+name+" 8")
		}
	}
}
