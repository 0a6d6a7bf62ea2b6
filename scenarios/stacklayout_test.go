package scenarios

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/units"
)

// TestStackLayouts: the stages and K each stack runs, as its code sets
// them (stacklayout.go cites each): torchtitan has no ZeRO-1, Composer's
// FSDP1 no ZeRO-1, fms-fsdp's hsdp one replica per node, DeepSpeed one copy
// of the state, Megatron DDP or its distributed optimizer.
func TestStackLayouts(t *testing.T) {
	for _, c := range []struct {
		stack  string
		stages []int
		runs   [][3]int // stage, k, nodes
		not    [][3]int
	}{
		{"torchtitan", []int{0, 2, 3}, [][3]int{{0, 1, 4}, {3, 4, 4}, {3, 32, 4}, {2, 2, 4}}, [][3]int{{1, 1, 4}, {0, 2, 4}}},
		{"llm-foundry", []int{0, 2, 3}, [][3]int{{2, 4, 4}, {3, 8, 4}}, [][3]int{{1, 1, 4}, {1, 4, 4}, {0, 4, 4}}},
		{"fms-fsdp", []int{0, 3}, [][3]int{{3, 1, 4}, {3, 4, 4}, {0, 1, 4}}, [][3]int{{3, 2, 4}, {3, 8, 4}, {2, 1, 4}}},
		{"deepspeed", []int{0, 1, 2, 3}, [][3]int{{1, 1, 4}, {3, 1, 4}}, [][3]int{{3, 2, 4}, {1, 4, 4}}},
		{"megatron", []int{0, 1}, [][3]int{{1, 4, 4}, {1, 32, 4}, {0, 1, 4}}, [][3]int{{2, 1, 4}, {3, 1, 4}, {0, 2, 4}}},
	} {
		l, ok := (&Scenario{Stack: c.stack}).StackLayout()
		if !ok {
			t.Fatalf("%s: no layout", c.stack)
		}
		if !slices.Equal(l.Stages(), c.stages) {
			t.Errorf("%s: stages %v, want %v", c.stack, l.Stages(), c.stages)
		}
		for _, r := range c.runs {
			if !l.RunsK(r[0], r[1], r[2]) {
				t.Errorf("%s: stage %d K %d on %d nodes: not run, want run", c.stack, r[0], r[1], r[2])
			}
		}
		for _, r := range c.not {
			if l.RunsK(r[0], r[1], r[2]) {
				t.Errorf("%s: stage %d K %d on %d nodes: run, want not", c.stack, r[0], r[1], r[2])
			}
		}
	}
	if len(stackLayouts) != len(StackNames()) {
		t.Errorf("%d layouts for %d stacks", len(stackLayouts), len(StackNames()))
	}
	if _, ok := (&Scenario{}).StackLayout(); ok {
		t.Error("a scenario without a stack has a layout")
	}
	// The importer's sharding strategies are llm-foundry's stages.
	var lf []int
	for _, st := range lfStrategy {
		lf = append(lf, int(st))
	}
	slices.Sort(lf)
	if l, _ := (&Scenario{Stack: "llm-foundry"}).StackLayout(); !slices.Equal(slices.Compact(lf), l.Stages()) {
		t.Errorf("llm-foundry importer's stages %v, layout's %v", slices.Compact(lf), l.Stages())
	}
}

// TestStackLayoutWarning: run (the loader) warns, at the key, when the
// stack does not run the scenario's stage or K, and not when it does.
func TestStackLayoutWarning(t *testing.T) {
	const base = "version: 1\ncluster: {nodes: 4, gpus_per_node: 8, gpu: H100-80GB}\nmodel: {preset: llama3.1-8b}\nparallelism: {dp: 32, zero_stage: 3}\n"
	for _, c := range []struct {
		sets []string
		want string // "" no warning
	}{
		{[]string{"stack=llm-foundry", "parallelism.zero_stage=1", "parallelism.k=4"}, "--set parallelism.zero_stage=1: stack llm-foundry does not run ZeRO stage 1: Composer v0.32.1's FSDP runs stage 0 at K = 1 (NO_SHARD)"},
		{[]string{"stack=llm-foundry", "parallelism.k=4"}, ""},
		{[]string{"stack=fms-fsdp", "parallelism.k=2"}, "--set parallelism.k=2: stack fms-fsdp does not run ZeRO stage 3 with k=2: fms-fsdp 078c29e runs stage 0 at K = 1 (ddp), stage 3 at K = 1 or 4, the nodes"},
		{[]string{"stack=fms-fsdp", "parallelism.k=4"}, ""},
		{[]string{"stack=deepspeed", "parallelism.k=2"}, "stack deepspeed does not run ZeRO stage 3 with k=2"},
		{[]string{"stack=megatron"}, "s.yaml:4:23: stack megatron does not run ZeRO stage 3"},
		{[]string{"stack=megatron", "parallelism.zero_stage=1", "parallelism.k=8"}, ""},
		{[]string{"stack=torchtitan", "parallelism.zero_stage=1"}, "stack torchtitan does not run ZeRO stage 1"},
		{nil, ""},
	} {
		s, err := Load("s.yaml", []byte(base), c.sets)
		if err != nil {
			t.Fatalf("%v: %v", c.sets, err)
		}
		switch {
		case c.want == "" && (s.LayoutWarning != "" || len(s.Warnings) != 0):
			t.Errorf("%v: warnings %q, want none", c.sets, s.Warnings)
		case c.want != "" && (len(s.Warnings) != 1 || s.Warnings[0] != s.LayoutWarning || !strings.Contains(s.LayoutWarning, c.want)):
			t.Errorf("%v: warnings %q, want one with %q", c.sets, s.Warnings, c.want)
		}
	}
}

// TestKOneIsTheLoaders: where KOne says K = 1 alone for a reason of the
// loader's (ep > 1, ZeRO++), the loader refuses k=2; where it does not,
// the loader takes k=2. At stage 0 K changes nothing and loads either way.
func TestKOneIsTheLoaders(t *testing.T) {
	def, _ := Example("default")
	mixtral, err := os.ReadFile("../docs/examples/mixtral-8x7b.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		file   string
		data   []byte
		sets   []string
		stage  int
		ep     int
		zeroPP bool
	}{
		{"default.yaml", def, []string{"parallelism.zero_stage=1"}, 1, 1, false},
		{"default.yaml", def, []string{"parallelism.zero_stage=2"}, 2, 1, false},
		{"default.yaml", def, []string{"parallelism.zero_stage=3"}, 3, 1, false},
		{"default.yaml", def, []string{"parallelism.zero_stage=3", "communication.zero_hpz_partition_size=8"}, 3, 1, true},
		{"default.yaml", def, []string{"parallelism.zero_stage=3", "communication.zero_quantized_weights=true"}, 3, 1, true},
		{"../docs/examples/mixtral-8x7b.yaml", mixtral, []string{"parallelism.ep=8"}, 3, 8, false},
		{"../docs/examples/mixtral-8x7b.yaml", mixtral, []string{"parallelism.ep=1"}, 3, 1, false},
	} {
		s, err := Load(tc.file, tc.data, append(slices.Clone(tc.sets), "parallelism.k=2"))
		one := KOne(tc.stage, tc.ep, tc.zeroPP)
		if one != (err != nil) {
			t.Errorf("%v: KOne %v, loading k=2: %v", tc.sets, one, err)
		}
		if err == nil && s.Communication.ZeroPP() != tc.zeroPP {
			t.Errorf("%v: ZeroPP %v, want %v", tc.sets, s.Communication.ZeroPP(), tc.zeroPP)
		}
	}
	if !KOne(0, 1, false) {
		t.Error("stage 0: KOne false")
	}
}

// TestBucketNote: plan's run line names the bucket size replayed. At
// torchtitan's stage 0 its DDP's 100 MiB (replicate bucket_cap_mb=100,
// parallelize.py:372 at 238fa99) is the stack's own; a scenario that sets
// 40 MB replays 40 MB, and the note must say so rather than claim 100 MiB.
// FSDP's per-unit reductions are modelled in the scenario's buckets.
func TestBucketNote(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		stack  string
		stage  int
		bucket int64
		want   string
	}{
		{"torchtitan", 0, 100 * mib, "torchtitan's DDP buckets are 100 MiB (replicate bucket_cap_mb=100)"},
		{"torchtitan", 0, 40e6, "40 MB gradient buckets, the scenario's; torchtitan's DDP buckets are 100 MiB (replicate bucket_cap_mb=100)"},
		{"torchtitan", 2, 40e6, fsdp2NoBucket + " (modelled as 40 MB buckets)"},
		{"torchtitan", 3, 40e6, fsdp2NoBucket},
		{"llm-foundry", 0, 25e6, fsdp1NoBucket + " (modelled as 25 MB buckets)"},
		{"deepspeed", 1, 40e6, ""},
	} {
		l, _ := (&Scenario{Stack: c.stack}).StackLayout()
		if got := l.BucketNote(c.stage, units.Bytes(c.bucket)); got != c.want {
			t.Errorf("%s stage %d, %d B: %q, want %q", c.stack, c.stage, c.bucket, got, c.want)
		}
	}
}

// TestStackCPWarning: torchtitan turns FSDP on whenever cp > 1
// (parallel_dims.py:334–335 at 238fa99: fsdp_enabled = dp_shard_enabled
// or cp_enabled), so its DDP, stage 0, never runs with context
// parallelism; the loader warns at parallelism.cp there and nowhere else.
func TestStackCPWarning(t *testing.T) {
	const base = "version: 1\ncluster: {nodes: 4, gpus_per_node: 8, gpu: H100-80GB}\nmodel: {preset: llama3.1-8b}\nparallelism: {dp: 16, cp: 2, zero_stage: 0}\n"
	const want = "s.yaml:4:23: stack torchtitan does not run ZeRO stage 0 with cp=2"
	for _, c := range []struct {
		sets []string
		warn bool
	}{
		{[]string{"stack=torchtitan"}, true},
		{[]string{"stack=torchtitan", "parallelism.zero_stage=3"}, false},
		{[]string{"stack=torchtitan", "parallelism.cp=1", "parallelism.dp=32"}, false},
		{[]string{"stack=deepspeed"}, false},
	} {
		s, err := Load("s.yaml", []byte(base), c.sets)
		if err != nil {
			t.Fatalf("%v: %v", c.sets, err)
		}
		got := slices.ContainsFunc(s.Warnings, func(w string) bool { return strings.Contains(w, want) })
		if got != c.warn {
			t.Errorf("%v: warnings %q, want %q: %v", c.sets, s.Warnings, want, c.warn)
		}
		l, _ := s.StackLayout()
		if runs := l.RunsCP(s.Parallelism.Stage, s.Parallelism.CP); s.Stack == "torchtitan" && runs == c.warn {
			t.Errorf("%v: RunsCP %v", c.sets, runs)
		}
	}
}
