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
