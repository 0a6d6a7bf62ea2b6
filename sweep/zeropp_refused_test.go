package sweep

import (
	"strings"
	"testing"
)

// TestZeroPPRefusedNamesTheFlag: compare --zeropp on a scenario that
// reduces in fp32 (stack torchtitan, megatron) names --zeropp and DeepSpeed,
// not the qgZ key the user never set (qa19 L12), and each --set it offers
// makes every variant load.
func TestZeroPPRefusedNamesTheFlag(t *testing.T) {
	for _, stack := range []string{"torchtitan", "megatron"} {
		src := exampleSource(t, "default", "stack="+stack)
		_, err := ZeroPPVariants(src)
		want := "--zeropp: default.yaml cannot run ZeRO++ (qwZ, hpZ, qgZ: DeepSpeed's ZeRO stage 3): qgZ reduces quantized gradients and stack " + stack +
			" reduces them in fp32 (training.reduce_dtype=fp32); add --set stack=deepspeed, or --set training.reduce_dtype=param_dtype"
		if err == nil || err.Error() != want {
			t.Errorf("stack %s: %v\nwant %s", stack, err, want)
			continue
		}
		for _, fix := range []string{"stack=deepspeed", "training.reduce_dtype=param_dtype"} {
			vs, err := ZeroPPVariants(exampleSource(t, "default", "stack="+stack, fix))
			if err != nil {
				t.Errorf("stack %s with --set %s: %v", stack, fix, err)
				continue
			}
			for _, v := range vs {
				if _, err := v.Src.Load(v.Sets...); err != nil && !strings.Contains(err.Error(), "warning") {
					t.Errorf("stack %s with --set %s: %s: %v", stack, fix, v.Label, err)
				}
			}
		}
	}
}

// compare --zeropp on an expert- or context-parallel scenario names what
// compare does (its ZeRO++ variant turns on qwZ, hpZ and qgZ) and the key
// of the user's file or --set that rules it out, at its position, not the
// hpZ --set compare made itself (qa21 M3: "--set
// communication.zero_hpz_partition_size=8: ... ep=8 must be 1").
func TestZeroPPRefusedNamesTheUsersKey(t *testing.T) {
	yaml := "version: 1\ncluster: {nodes: 2, gpus_per_node: 8, gpu: H100-80GB}\nmodel: {preset: mixtral-8x7b, layers: 2, seq_len: 1024}\n" +
		"parallelism:\n  dp: 16\n  zero_stage: 3\n  ep: 8\n"
	for _, c := range []struct {
		sets []string
		want string
	}{
		{nil, "--zeropp: m.yaml:7:3: compare's ZeRO++ variant turns on qwZ, hpZ and qgZ (DeepSpeed's ZeRO++), which zerosim models for dense data parallelism only; this scenario sets parallelism.ep=8 (add --set parallelism.ep=1)"},
		{[]string{"parallelism.ep=2"}, "--zeropp: m.yaml: --set parallelism.ep=2: compare's ZeRO++ variant turns on qwZ, hpZ and qgZ (DeepSpeed's ZeRO++), which zerosim models for dense data parallelism only; this scenario sets parallelism.ep=2 (add --set parallelism.ep=1)"},
	} {
		_, err := ZeroPPVariants(Source{File: "m.yaml", Data: []byte(yaml), Sets: c.sets})
		if err == nil || err.Error() != c.want {
			t.Errorf("sets %v: %v\nwant %s", c.sets, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "zero_hpz_partition_size") {
			t.Errorf("sets %v: blames compare's own hpZ --set: %v", c.sets, err)
		}
	}
}
