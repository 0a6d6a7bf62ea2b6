package scenarios

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// TestConfigKeyNearMiss: a misspelled key in an Accelerate config or a
// torchtitan job config is named with the key meant. A required key that
// is missing because it is misspelled is an error at the misspelling
// (before: "c.yaml:1:1: no num_processes …"); a misspelled optional key,
// which the import leaves out and which changes the step (an
// fsdp_backward_prefech left out models no prefetch), says "did you mean"
// in its note (before: only "is not a key zerosim reads: left out").
func TestConfigKeyNearMiss(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"distributed_type: FSDP\nnum_proceses: 8\n", `c.yaml:2:1: "num_proceses" is not an Accelerate config key (did you mean num_processes? accelerate launch refuses unknown keys)`},
		{"distributed_typ: FSDP\nnum_processes: 8\n", `c.yaml:1:1: "distributed_typ" is not an Accelerate config key (did you mean distributed_type?`},
		// Nothing near: as before.
		{"distributed_type: FSDP\n", "c.yaml:1:1: no num_processes"},
	} {
		_, err := ImportAccelerate("c.yaml", []byte(c.in), AccelerateOptions{})
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.in, err, c.want)
		}
	}
	acc, err := ImportAccelerate("c.yaml", []byte("distributed_type: FSDP\nnum_processes: 8\nmixed_precison: bf16\nfsdp_config:\n  fsdp_backward_prefech: BACKWARD_PRE\n"), AccelerateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`fsdp_config: "fsdp_backward_prefech" is not a key zerosim reads: left out (did you mean fsdp_backward_prefetch?)`,
		`"mixed_precison" is not an Accelerate config key zerosim reads (accelerate launch refuses unknown keys): left out (did you mean mixed_precision?)`,
	} {
		if !slices.Contains(acc.Notes, want) {
			t.Errorf("accelerate notes %q lack %q", acc.Notes, want)
		}
	}
	data, err := os.ReadFile("testdata/torchtitan/llama3_8b-e7c0cae.toml")
	if err != nil {
		t.Fatal(err)
	}
	tt, err := ImportTorchtitan("j.toml", []byte(strings.Replace(string(data), "local_batch_size = 1", "local_batch_sze = 1", 1)), TorchtitanCluster{})
	if err != nil {
		t.Fatal(err)
	}
	want := "training.local_batch_sze is not a torchtitan 238fa99 job config key; ignored (did you mean training.local_batch_size?)"
	if !slices.Contains(tt.Notes, want) {
		t.Errorf("torchtitan notes %q lack %q", tt.Notes, want)
	}
}
