package scenarios

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzImportAccelerate feeds Accelerate config bytes, with the Trainer
// options a caller may give, to the Accelerate importer, seeded with the
// real configs of testdata/accelerate and small ones reaching each rule:
// it never panics, every error is one line naming the file, every setting
// has a value and a one-line source, notes are single lines, and the same
// input imports the same way twice (the output is deterministic).
func FuzzImportAccelerate(f *testing.F) {
	files, _ := filepath.Glob(accDir + "*.yaml")
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, uint16(0), uint8(0))
	}
	for _, s := range []string{"", "{}", "[]", "null", "~", "a: &x [1]\nb: *x\n",
		"distributed_type: FSDP\nnum_machines: 2\nnum_processes: 16\nfsdp_config:\n  fsdp_sharding_strategy: 4\n  fsdp_backward_prefetch: 2\n",
		"distributed_type: FSDP\nnum_processes: 8\nfsdp_config:\n  version: 2\n  reshard_after_forward: off\nparallelism_config:\n  parallelism_config_dp_replicate_size: 2\n  parallelism_config_cp_size: 2\n  parallelism_config_cp_comm_strategy: alltoall\n",
		"distributed_type: MULTI_GPU\nnum_processes: 9223372036854775807\nnum_machines: 0\n",
		"distributed_type: FSDP\nnum_processes: 8\nmixed_precision: fp8\ndynamo_config:\n  dynamo_backend: INDUCTOR\nx\n: 1\n",
		"distributed_type: DEEPSPEED\ndeepspeed_config: {deepspeed_config_file: [1]}\n",
		"distributed_type: FSDP\nnum_processes: 8\nmixed_precison: bf16\nfp16: true\ndynamo_backend: INDUCTOR\n",
	} {
		f.Add([]byte(s), uint16(3), uint8(7))
	}
	f.Fuzz(func(t *testing.T, data []byte, micro uint16, flags uint8) {
		o := AccelerateOptions{MicroBatch: int64(micro % 100), GradAccum: int64(flags % 5)}
		if flags&8 != 0 {
			o.Recompute = RecomputeFull
		}
		a, err := ImportAccelerate("c.yaml", data, o)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "c.yaml") || strings.ContainsAny(err.Error(), "\n\r") {
				t.Fatalf("error %q is not one line naming the file", err)
			}
			return
		}
		for _, s := range a.Settings {
			if s.Key == "" || s.Value == "" || s.From == "" || strings.ContainsAny(s.From+s.Value, "\n\r") {
				t.Fatalf("setting %+v", s)
			}
		}
		for _, n := range a.Notes {
			if n == "" || strings.ContainsAny(n, "\n\r") {
				t.Fatalf("note %q", n)
			}
		}
		if a.Nodes < 1 || a.GPUsPerNode < 1 {
			t.Fatalf("cluster %d × %d", a.Nodes, a.GPUsPerNode)
		}
		again, err := ImportAccelerate("c.yaml", data, o)
		if err != nil || len(again.Settings) != len(a.Settings) || len(again.Notes) != len(a.Notes) {
			t.Fatalf("a second import differs: %v", err)
		}
		for i := range a.Settings {
			if again.Settings[i] != a.Settings[i] {
				t.Fatalf("a second import differs: %+v, %+v", again.Settings[i], a.Settings[i])
			}
		}
		for i := range a.Notes {
			if again.Notes[i] != a.Notes[i] {
				t.Fatalf("a second import differs: %q, %q", again.Notes[i], a.Notes[i])
			}
		}
	})
}
