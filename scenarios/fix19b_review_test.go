package scenarios

import (
	"fmt"
	"strings"
	"testing"
)

// TestHardwareAndOffloadWarnAtTheirKey: a warning of the file names the
// line and column of the key that causes it: the NIC bandwidth written in
// cluster.inter, and offload.optimizer or offload.params under a stack that
// does not run DeepSpeed's offload. Columns are counted in the text below.
func TestHardwareAndOffloadWarnAtTheirKey(t *testing.T) {
	at := func(text, line, key string) string {
		for i, l := range strings.Split(text, "\n") {
			if l == line {
				return fmt.Sprintf("s.yaml:%d:%d: ", i+1, strings.Index(l, key)+1)
			}
		}
		t.Fatalf("no line %q", line)
		return ""
	}
	base := "version: 1\nmodel: {preset: llama2-7b}\nparallelism: {dp: 16, zero_stage: 3}\n"
	nic := "cluster: {nodes: 2, gpus_per_node: 8, gpu: H100-80GB, inter: {preset: NDR, bandwidth: 3200Gbps}}"
	opt, par := "offload: {optimizer: cpu}", "offload: {params: cpu}"
	h100 := "cluster: {nodes: 2, gpus_per_node: 8, gpu: H100-80GB}\n"
	for _, c := range []struct {
		text, want string
	}{
		{base + nic + "\n", at(base+nic, nic, "bandwidth") + "inter bandwidth 400.00 GB/s per NIC is more than the fastest NIC with a published line rate"},
		// Beside torchtitan's FSDP2 the offload is refused at its key
		// (FSDPOffloadNotModelled), no longer modelled with a warning.
		{base + h100 + "stack: torchtitan\n" + opt + "\n", "error: " + at(base+h100+"stack: torchtitan\n"+opt, opt, "optimizer") + "offload.optimizer cpu beside communication.boundary fsdp2"},
		{base + h100 + "stack: torchtitan\n" + par + "\n", "error: " + at(base+h100+"stack: torchtitan\n"+par, par, "params") + "offload.params cpu beside communication.boundary fsdp2"},
	} {
		s, err := Load("s.yaml", []byte(c.text), nil)
		if w, ok := strings.CutPrefix(c.want, "error: "); ok {
			if err == nil || !strings.HasPrefix(err.Error(), w) {
				t.Errorf("%q: error %v, want one starting %q", c.text, err, w)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%q: %v", c.text, err)
		}
		found := false
		for _, w := range s.Warnings {
			found = found || strings.HasPrefix(w, c.want)
		}
		if !found {
			t.Errorf("%q: warnings %q, want one starting %q", c.text, s.Warnings, c.want)
		}
	}
}

// TestParamsFewerThanLayersBoundaries (qa19 L3): the two edges of the
// params rule. params = layers with a largest_layer: the old largest_layer
// message would advise largest_layer ≤ params − layers = 0, which is out
// of range, so the fix is at params (≥ 32 + 5) or layers (≤ 32 − 5).
// params = largest_layer: no parameter is left, so fewer layers cannot
// help (layers ≤ 0 is no fix).
func TestParamsFewerThanLayersBoundaries(t *testing.T) {
	for _, c := range []struct{ set, want string }{
		{"params: 32\n  largest_layer: 5", "s.yaml:7:3: params=32 is too few for 32 layers beside largest_layer=5 (each layer needs a parameter: use params ≥ 37, or model.layers ≤ 27)"},
		{"params: 20\n  largest_layer: 20", "s.yaml:7:3: params=20 leaves no parameter for the 32 layers beside largest_layer=20 (each layer needs one: use params ≥ 52)"},
	} {
		_, err := Load("s.yaml", []byte(rep("preset: gpt3-125m", c.set)), nil)
		if err == nil || err.Error() != c.want {
			t.Errorf("%q:\n got %v\nwant %q", c.set, err, c.want)
		}
	}
}
