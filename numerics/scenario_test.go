package numerics

import (
	"slices"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

func loadExample(t *testing.T, name string, sets ...string) *scenarios.Scenario {
	t.Helper()
	in, err := scenarios.ReadInput(name, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := in.Load(sets)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestScenarioConfigs: verify's mapping of a scenario onto the toy runs.
func TestScenarioConfigs(t *testing.T) {
	s := loadExample(t, "seed002-tiny")
	base, cfgs, err := ScenarioConfigs(s, nil)
	if err != nil {
		t.Fatal(err)
	}
	if base.Model != TinyTransformer || base.N != s.N() || base.K != 1 {
		t.Errorf("base %+v", base)
	}
	if len(cfgs) != len(Matrix(base)) {
		t.Errorf("%d configurations, want the matrix's %d", len(cfgs), len(Matrix(base)))
	}
	c := &Corruption{Rank: 1, Index: 5, Step: 7}
	s.Parallelism.Stage, s.Parallelism.K = 2, 2
	_, one, err := ScenarioConfigs(s, c)
	if err != nil || len(one) != 1 || one[0].Stage != 2 || one[0].K != 2 || one[0].Steps != 7 || one[0].Corrupt != c {
		t.Errorf("corrupted run %+v, %v", one, err)
	}
	// training.grad_clip norm: max_grad_norm, default 1.0; none: 0.
	for _, tc := range []struct {
		sets []string
		clip float64
	}{
		{nil, 0},
		{[]string{"training.grad_clip=norm"}, 1},
		{[]string{"training.grad_clip=norm", "training.max_grad_norm=0.25"}, 0.25},
		{[]string{"stack=torchtitan"}, 1},
	} {
		c, err := FromScenario(loadExample(t, "default", tc.sets...))
		if err != nil || c.ClipNorm != tc.clip {
			t.Errorf("%v: clip norm %v, %v; want %v", tc.sets, c.ClipNorm, err, tc.clip)
		}
	}
	in, err := scenarios.ReadInput("default", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"0", "-1", "nan", "1e39"} {
		if _, err := in.Load([]string{"training.max_grad_norm=" + v}); err == nil || !strings.Contains(err.Error(), "max_grad_norm") {
			t.Errorf("max_grad_norm=%s: %v, want an error naming the key", v, err)
		}
	}
	// --corrupt-shard follows communication.bucket_size in bf16 elements
	// when it cuts the toy buffer (QA23 L9), one bucket otherwise.
	for _, tc := range []struct {
		bucket string
		elems  int64
	}{{"194B", 97}, {"40MB", 0}, {"520B", 0}, {"518B", 259}} {
		_, one, err := ScenarioConfigs(loadExample(t, "default", "communication.bucket_size="+tc.bucket), c)
		if err != nil || one[0].BucketElems != tc.elems {
			t.Errorf("bucket_size %s: %d elements, %v; want %d", tc.bucket, one[0].BucketElems, err, tc.elems)
		}
	}
	big := loadExample(t, "seed002-tiny", "parallelism.dp=4096", "cluster.nodes=2048")
	if _, err := FromScenario(big); err == nil || !strings.Contains(err.Error(), "N = dp·cp = 4096") {
		t.Errorf("N = 4096: %v", err)
	}
}

// TestNotFollowed: the settings verify reads past are named, each only
// when the scenario sets it away from what verify runs (QA3 s16 finding
// 10: grad_accum 4, micro_batch 8, reduce_dtype fp32 and shard_dtype fp32
// printed the header and JSON of a plain verify, and --corrupt-shard 3:5
// gave the same values to the last digit with and without grad_accum 4).
func TestNotFollowed(t *testing.T) {
	// Every key of the walked sections has a decision, and the whitelist
	// names no key the scenario lacks (a renamed key would fall to
	// Unknown silently).
	keys := ScenarioKeys()
	for _, k := range keys {
		if KeyClassOf(k) == Unknown {
			t.Errorf("%s: no decision in verifyKeys (followed, no value change, or a toy value)", k)
		}
	}
	for k := range verifyKeys {
		if !slices.Contains(keys, k) {
			t.Errorf("verifyKeys names %s, which no scenario section has", k)
		}
	}
	if len(keys) < 50 {
		t.Errorf("walked %d keys: the walk lost sections", len(keys))
	}
	for _, tc := range []struct {
		example         string
		sets            []string
		keys            []string
		rows, seqTokens int // the micro_batch entry's toy batch, when listed
	}{
		{"default", nil, nil, 0, 0},
		{"default", []string{"training.micro_batch=1", "training.grad_accum=1"}, nil, 0, 0},
		{"default", []string{"training.grad_accum=4"}, []string{"training.grad_accum"}, 0, 0},
		// The transformer's batch: 2 sequences of ttT+1 = 4 tokens (3 inputs, the targets shifted by one).
		{"default", []string{"training.micro_batch=8"}, []string{"training.micro_batch"}, 2, 4},
		{"seed000-k4", []string{"training.micro_batch=4"}, []string{"training.micro_batch"}, 2, 0}, // 2 input rows
		{"default", []string{"training.grad_accum=4", "training.reduce_dtype=fp32", "training.shard_dtype=fp32", "training.micro_batch=8"},
			[]string{"training.micro_batch", "training.grad_accum", "training.shard_dtype", "training.reduce_dtype"}, 2, 4},
		{"default", []string{"training.param_dtype=fp16"}, []string{"training.param_dtype"}, 0, 0},
		{"default", []string{"training.seed=7", "training.lr=0.1", "communication.padding=megatron"}, nil, 0, 0}, // followed
		// QA23 H1: each printed a clean PASS with nothing listed.
		{"default", []string{"training.fp8=te"}, []string{"training.fp8"}, 0, 0},
		{"default", []string{"training.fp8=none"}, nil, 0, 0},
		{"default", []string{"training.dropout=0.1"}, []string{"training.dropout"}, 0, 0},
		{"default", []string{"training.optimizer_impl=fused"}, []string{"training.optimizer_impl"}, 0, 0},
		{"default", []string{"training.optimizer_impl=foreach"}, []string{"training.optimizer_impl"}, 0, 0},
		{"default", []string{"training.optimizer_impl=composer"}, []string{"training.optimizer_impl"}, 0, 0},
		{"default", []string{"training.optimizer_impl=seed"}, nil, 0, 0},
		{"default", []string{"offload.optimizer=cpu"}, []string{"offload.optimizer"}, 0, 0},
		{"default", []string{"offload.params=cpu", "parallelism.zero_stage=3"}, nil, 0, 0},        // the same bf16 values, copied
		{"default", []string{"training.grad_clip=norm", "training.max_grad_norm=0.5"}, nil, 0, 0}, // followed: clip.go
		{"default", []string{"training.grad_clip=none"}, nil, 0, 0},
		{"default", []string{"training.master_dtype=fp32"}, nil, 0, 0},
		{"default", []string{"training.master_dtype=none"}, []string{"training.master_dtype"}, 0, 0},
		{"default", []string{"stack=deepspeed", "training.master_dtype=bf16"}, []string{"training.master_dtype", "training.optimizer_impl"}, 0, 0}, // the stack runs FusedAdam
		{"default", []string{"stack=deepspeed", "training.master_dtype=bf16", "training.optimizer_state_dtype=bf16"}, []string{"training.master_dtype", "training.optimizer_state_dtype", "training.optimizer_impl"}, 0, 0},
		// A 16-bit loss changes values; fp32 and flash-attn's fused loss
		// (fp32 inside) are the toy's float64 softmax.
		{"default", []string{"training.cross_entropy=bf16"}, []string{"training.cross_entropy"}, 0, 0},
		{"default", []string{"training.param_dtype=fp16", "training.cross_entropy=fp16"}, []string{"training.param_dtype", "training.cross_entropy"}, 0, 0},
		{"default", []string{"training.cross_entropy=fp32"}, nil, 0, 0},
		{"default", []string{"training.cross_entropy=fused"}, nil, 0, 0},
		{"default", []string{"stack=torchtitan"}, []string{"training.shard_dtype", "training.reduce_dtype", "training.optimizer_impl"}, 0, 0},
		{"default", []string{"stack=megatron"}, []string{"training.reduce_dtype"}, 0, 0},
		// Kernels that compute in fp32 inside are the toy's own; Liger's
		// bf16 grad_weight partial sums are not (verifyKeys' rule).
		{"default", []string{"training.liger=true"}, []string{"training.liger"}, 0, 0},
		{"default", []string{"training.norm_impl=fused"}, nil, 0, 0},
		{"default", []string{"stack=megatron", "training.transformer_impl=local"}, []string{"training.reduce_dtype"}, 0, 0},
		// Change no value: timing, placement, exact sums in any order.
		{"default", []string{"communication.bucket_size=1MiB", "communication.algorithm=ring", "training.recompute=full",
			"communication.overlap=false", "training.compute_efficiency=0.5", "communication.zero1_allreduce=true"}, nil, 0, 0},
	} {
		t.Run(tc.example+" "+strings.Join(tc.sets, " "), func(t *testing.T) {
			us := NotFollowed(loadExample(t, tc.example, tc.sets...))
			var keys []string
			for _, u := range us {
				keys = append(keys, u.Key)
				rows, seq := 0, 0
				if u.Key == "training.micro_batch" {
					rows, seq = tc.rows, tc.seqTokens
				}
				if u.Rows != rows || u.SeqTokens != seq {
					t.Errorf("%s: toy batch %d × %d tokens, want %d × %d", u.Key, u.Rows, u.SeqTokens, rows, seq)
				}
			}
			if !slices.Equal(keys, tc.keys) {
				t.Errorf("not followed %v, want %v", keys, tc.keys)
			}
		})
	}
}

// TestNotFollowedUnknown: a key with no decision is listed whenever it is
// set, so a new key is not followed until someone decides otherwise.
func TestNotFollowedUnknown(t *testing.T) {
	saved := verifyKeys["training.flat_param_views"]
	delete(verifyKeys, "training.flat_param_views")
	defer func() { verifyKeys["training.flat_param_views"] = saved }()
	if got := NotFollowed(loadExample(t, "default")); len(got) != 0 {
		t.Errorf("unset unknown key listed: %v", got)
	}
	got := NotFollowed(loadExample(t, "default", "training.flat_param_views=true"))
	if len(got) != 1 || got[0].Key != "training.flat_param_views" || got[0].Value != "true" {
		t.Errorf("unknown key set: %v, want training.flat_param_views true", got)
	}
}
