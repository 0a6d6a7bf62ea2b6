package scenarios

import (
	"reflect"
	"strings"
	"testing"
)

// TestStackKeys: the training keys that name what a stack runs
// (rope_impl, optimizer_impl, grad_clip, reduce_dtype, flat_param_views) load to their
// value, round-trip through Encode, and stay out of the resolved scenario
// when unset, so files without them resolve and report as before.
func TestStackKeys(t *testing.T) {
	type value struct {
		set  string // "": unset
		want any
	}
	for _, k := range []struct {
		key    string
		get    func(*Training) any
		values []value
	}{
		{"rope_impl", func(t *Training) any { return t.RoPEImpl },
			[]value{{"", RoPEImpl("")}, {"complex", RoPEComplex}, {"rotation", RoPERotation}, {"fused", RoPEFused}}},
		{"optimizer_impl", func(t *Training) any { return t.OptimizerImpl },
			[]value{{"", OptimizerImpl("")}, {"seed", OptimizerSeed}, {"fused", OptimizerFused}, {"foreach", OptimizerForeach}, {"composer", OptimizerComposer}}},
		{"grad_clip", func(t *Training) any { return t.GradClip },
			[]value{{"", GradClip("")}, {"none", GradClipNone}, {"norm", GradClipNorm}}},
		{"reduce_dtype", func(t *Training) any { return t.ReduceDType },
			[]value{{"", ReduceDType("")}, {"param_dtype", ReduceParamDType}, {"fp32", ReduceFP32}}},
		{"flat_param_views", func(t *Training) any { return t.FlatParamViews },
			[]value{{"", false}, {"false", false}, {"true", true}}},
	} {
		for _, v := range k.values {
			var sets []string
			if v.set != "" {
				sets = []string{"training." + k.key + "=" + v.set}
			}
			s, err := Load("s.yaml", []byte(baseYAML), sets)
			if err != nil {
				t.Fatalf("%s=%q: %v", k.key, v.set, err)
			}
			if got := k.get(&s.Training); got != v.want {
				t.Errorf("%s=%q: loads to %v, want %v", k.key, v.set, got, v.want)
			}
			b, err := Encode(s)
			if err != nil {
				t.Fatal(err)
			}
			// Encoded when set, except a false bool (omitempty).
			line := k.key + ": " + v.set
			if want := v.set != "" && v.want != false; strings.Contains(string(b), k.key+":") != want || want && !strings.Contains(string(b), line) {
				t.Errorf("%s=%q: encoded scenario, want line %q %v:\n%s", k.key, v.set, line, want, b)
			}
			again, err := Load("again.yaml", b, nil)
			if err == nil {
				// The bytes give compute_efficiency (Encode).
				again.Training.ComputeEfficiencyDefault = s.Training.ComputeEfficiencyDefault
			}
			if err != nil {
				t.Errorf("%s=%q: encoded scenario does not load: %v", k.key, v.set, err)
			} else if !reflect.DeepEqual(again.Training, s.Training) {
				t.Errorf("%s=%q: reloaded training %+v, want %+v", k.key, v.set, again.Training, s.Training)
			}
		}
	}
}

// TestStackAdamL2Warning: a stack preset's weight_decay meeting an
// optimizer: adam the file or a --set gives warns that Adam adds it to
// the gradient (QA23 L5: default.yaml with stack megatron ran "weight
// decay 0.01 (L2, added to the gradient)", neither Megatron's AdamW nor
// torch.optim.Adam's default); a decay the user gives, or the stack's
// own adamw, does not.
func TestStackAdamL2Warning(t *testing.T) {
	for _, tc := range []struct {
		sets []string
		warn bool
	}{
		{[]string{"stack=megatron", "training.optimizer=adam"}, true},
		{[]string{"stack=torchtitan", "training.optimizer=adam"}, true},
		{[]string{"stack=megatron"}, false}, // the stack's adamw
		{[]string{"stack=megatron", "training.optimizer=adam", "training.weight_decay=0.05"}, false},
		{[]string{"training.optimizer=adam", "training.weight_decay=0.05"}, false},
	} {
		s, err := Load("s.yaml", []byte(baseYAML), tc.sets)
		if err != nil {
			t.Fatal(err)
		}
		got := false
		for _, w := range s.Warnings {
			if strings.Contains(w, "Adam adds the decay to the gradient (L2)") {
				got = true
			}
		}
		if got != tc.warn {
			t.Errorf("%v: warned %v, want %v (%q)", tc.sets, got, tc.warn, s.Warnings)
		}
	}
}
