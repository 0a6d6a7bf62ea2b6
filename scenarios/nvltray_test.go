package scenarios

import (
	"strings"
	"testing"
)

// TestNVLTrayWarning (QA13 F1): a GB200/GB300 cluster described a compute
// tray (4 GPUs) per node draws a warning at cluster.gpus_per_node that
// names NCCL's MNNVL and the rack description (NCCL fuses the NVLink
// clique into one node: src/graph/topo.cc:1887–1891, src/init.cc:878 at
// 5067397c); a rack per node, one tray alone, and HGX B200 nodes of 4 do
// not. The fix counts the racks: 36 trays of 4 are 144 GPUs, 2 racks of
// 72; 2 trays are 8 GPUs of one rack.
func TestNVLTrayWarning(t *testing.T) {
	const doc = "version: 1\nname: trays\ncluster:\n  nodes: 36\n  gpus_per_node: 4\n  gpu: GB200\nmodel: {preset: llama2-7b, seq_len: 4096}\nparallelism: {dp: auto, zero_stage: 3}\n"
	for _, c := range []struct {
		sets []string
		want string
	}{
		{nil, "trays.yaml:5:3: gpus_per_node=4 is a GB200 compute tray or less, but NCCL's MNNVL counts the NVL72 rack as one node: describe it as gpus_per_node: 72 (here nodes: 2, gpus_per_node: 72;"},
		{[]string{"cluster.nodes=2", "cluster.gpu=GB300"}, "GB300 compute tray or less, but NCCL's MNNVL counts the NVL72 rack as one node: describe it as gpus_per_node: 72 (here nodes: 1, gpus_per_node: 8 for trays of one rack;"},
		{[]string{"cluster.nodes=50", "cluster.gpus_per_node=2"}, "(100 GPUs are not whole racks: one node per NVLink domain;"},
		{[]string{"cluster.nodes=2", "cluster.gpus_per_node=72"}, ""},
		{[]string{"cluster.nodes=1"}, ""},
		{[]string{"cluster.gpus_per_node=5"}, ""},
		{[]string{"cluster.gpu=B200"}, ""},
	} {
		s, err := Load("trays.yaml", []byte(doc), c.sets)
		if err != nil {
			t.Fatal(err)
		}
		var got string
		for _, w := range s.Warnings {
			if strings.Contains(w, "MNNVL") {
				got = w
			}
		}
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%q: warning %q, want one with %q", c.sets, got, c.want)
		}
	}
}
