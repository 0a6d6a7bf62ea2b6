package main

import (
	"strings"
	"testing"
)

// TestCollectiveForeignIntraPreset: the default example names NVLink4;
// with --set cluster.gpu=MI300X the header named the class by the GPU and
// the figure by the preset, "xgmi 450.00 GB/s", NVLink4's 450 under
// xGMI's name (xGMI carries 448: scenarios/presets.go). It now names the
// preset when it is not the GPU's own link (qauser29 #4), and only then.
func TestCollectiveForeignIntraPreset(t *testing.T) {
	for _, c := range []struct {
		sets []string
		want string
	}{
		{[]string{"cluster.gpu=MI300X"}, ", xgmi link (NVLink4 preset) 450.00 GB/s 500ns"},
		{[]string{"cluster.gpu=A100-40GB"}, ", nvlink link (NVLink4 preset) 450.00 GB/s 500ns"},
		{[]string{"cluster.gpu=MI300X", "cluster.intra.preset=xGMI"}, ", xgmi 448.00 GB/s 500ns"},
		{[]string{"cluster.gpu=H100-80GB"}, ", nvlink 450.00 GB/s 500ns"},
		{[]string{"cluster.gpu=MI300X", "cluster.intra.bandwidth=300GB/s"}, ", xgmi 300.00 GB/s 500ns"},
	} {
		args := []string{"collective", "--nodes", "1", "--gpus-per-node", "8", "--op", "allreduce", "--size", "64MiB"}
		for _, s := range c.sets {
			args = append(args, "--set", s)
		}
		out, errOut, code := runCLI(args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", c.sets, code, errOut)
		}
		head, _, _ := strings.Cut(out, "\n")
		if !strings.HasSuffix(head, c.want) {
			t.Errorf("%v: header %q, want it to end %q", c.sets, head, c.want)
		}
	}
}
