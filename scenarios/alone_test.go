package scenarios

import "testing"

// TestAloneError: a sweep refuses a --grid value before any point when the
// loader marks it wrong by itself (Error.Alone: out of the key's own range
// or names); a value wrong only against other keys (bounds that another
// key gives, a divisor, the cluster's size) is not marked, so it stays the
// error row of the points it does not fit.
func TestAloneError(t *testing.T) {
	data, _ := Example("default")
	for _, c := range []struct {
		set   string
		alone string // the message, "" when not alone
	}{
		{"parallelism.zero_stage=7", "zero_stage=7 is out of range (use 0, 1, 2 or 3)"},
		{"training.micro_batch=0", "micro_batch=0 is out of range (use 1 to 1048576)"},
		{"cluster.nodes=0", "nodes=0 is out of range (use 1 to 65536)"},
		{"communication.algorithm=foo", `algorithm "foo" is unknown (use ring, hierarchical, tree, nvls, nvlstree or auto)`},
		{"training.mfu=2", "mfu=2 is out of range (use a fraction in [0.0001, 1] such as 0.4)"},
		{"training.lr=0", "lr=0 is out of range (use a learning rate > 0 such as 1e-3)"},
		{"communication.bucket_size=0MB", "bucket_size=0 is out of range (use a size > 0 such as 40MB)"},
		{"cluster.gpu_overrides=[{rank: 0, speed: 0}]", "speed=0 is out of range (use a factor from 0.000001 to 1000, e.g. 0.8 for 20% slower)"},
		{"cluster.gpu_overrides=[{rank: 0, speed: 1e-7}]", "speed=1e-07 is out of range (use a factor from 0.000001 to 1000, e.g. 0.8 for 20% slower)"},
		{"parallelism.k=3", ""},
		{"parallelism.dp=8", ""},
		{"model.kv_heads=64", ""},
		{"cluster.nics_per_node=16", ""},
		{"cluster.gpu_overrides=[{rank: 99, speed: 1}]", ""},
	} {
		_, err := Load("default.yaml", data, []string{c.set})
		if err == nil {
			t.Errorf("%s: loaded, want an error", c.set)
			continue
		}
		msg, ok := AloneError(err, c.set)
		if ok != (c.alone != "") || msg != c.alone {
			t.Errorf("%s: %v: AloneError %q, %v; want %q", c.set, err, msg, ok, c.alone)
		}
		// Only an error about the key set is the value's own.
		if _, ok := AloneError(err, "training.steps=1"); ok {
			t.Errorf("%s: AloneError names another key", c.set)
		}
	}
}
