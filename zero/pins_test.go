package zero

import (
	"fmt"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// TestCheckPins (final read R2 F1): NCCL pins that leave a collective of
// the step no algorithm, which validate passed and the replay refused with
// no position, are refused at the key with the fix, as collectives'
// Choose refuses them: on 2 × 8 H100 at stage 1 the reduce-scatters need
// Ring (NVLS runs on one node, PAT over one GPU per node, Tree only
// all-reduces); at stage 0 PAT leaves the all-reduce nothing; with cp 2
// the ring's all-gathers need an algorithm besides Tree; an explicit nvls
// across nodes is refused at communication.algorithm, and RCCL's LL128
// (which RCCL does not run) at nccl_proto. What runs passes: ^Ring at
// stage 0 (Tree all-reduces), PAT over one GPU per node at stage 1,
// nvlstree on one node at stage 1 (no all-reduce), and K = 2's inter
// all-reduce under Ring. The replay refuses exactly the scenarios the
// check refuses.
func TestCheckPins(t *testing.T) {
	const head = "the step's reduce-scatters: no algorithm/protocol available for reducescatter over 16 ranks on 2 nodes on this hardware: NCCL_ALGO was set to "
	for _, c := range []struct {
		algo string
		sets []string
		want string
	}{
		{"^Ring", nil, `s.yaml:6:3: communication.nccl_algo: ` + head + `Tree,NVLS,NVLSTree,PAT: drop nccl_algo ("^Ring" switches off Ring, which runs them)`},
		{"NVLS", nil, `s.yaml:6:3: communication.nccl_algo: ` + head + `NVLS. (NVLS needs Hopper or later GPUs on an NVSwitch, two or more GPUs per node, and one node: across nodes NCCL needs SHARP switches; NVLS-tree or NCCL's own choice runs across nodes): add Ring (nccl_algo: Ring,NVLS), or drop nccl_algo`},
		{"PAT", nil, `s.yaml:6:3: communication.nccl_algo: ` + head + `PAT. (PAT runs all-gather and reduce-scatter over one GPU per node, Simple only): add Ring (nccl_algo: Ring,PAT), or drop nccl_algo`},
		{"PAT", []string{"parallelism.zero_stage=0"}, `s.yaml:6:3: communication.nccl_algo: the step's all-reduces: no algorithm/protocol available for allreduce over 16 ranks on 2 nodes on this hardware: NCCL_ALGO was set to PAT. (PAT runs all-gather and reduce-scatter over one GPU per node, Simple only): add Tree (nccl_algo: Tree,PAT), or drop nccl_algo`},
		{"Tree", []string{"parallelism.zero_stage=0", "parallelism.cp=2", "parallelism.dp=8"}, `s.yaml:6:3: communication.nccl_algo: the step's all-gathers: no algorithm/protocol available for allgather over 2 ranks on 1 nodes on this hardware: NCCL_ALGO was set to Tree. (NCCL's tree runs all-reduce only): add Ring (nccl_algo: Tree,Ring), or drop nccl_algo`},
		{"^PAT", []string{"communication.algorithm=nvls"}, `s.yaml: --set communication.algorithm=nvls: communication.algorithm: the step's reduce-scatters: nvls cannot run reducescatter over 16 ranks on 2 nodes on this hardware (NVLS needs Hopper or later GPUs on an NVSwitch, two or more GPUs per node, and one node: across nodes NCCL needs SHARP switches; NVLS-tree or NCCL's own choice runs across nodes): set algorithm: auto (NCCL's own choice)`},
		{"Ring,Tree", []string{"communication.nccl_proto=LL128", "cluster.gpu=MI300X", "cluster.intra.preset=xGMI"}, `s.yaml: --set communication.nccl_proto=LL128: communication.nccl_proto: the step's reduce-scatters: no algorithm/protocol available for reducescatter over 16 ranks on 2 nodes on this hardware: NCCL_ALGO was set to Tree,Ring. NCCL_PROTO was set to LL128: add LL (nccl_proto: LL,LL128), or drop nccl_proto`},
		{"^Ring", []string{"parallelism.zero_stage=0"}, ""},
		{"Tree", []string{"parallelism.zero_stage=0"}, ""},
		{"PAT", []string{"cluster.gpus_per_node=1", "cluster.nodes=16"}, ""},
		{"^PAT", []string{"communication.algorithm=nvlstree", "cluster.nodes=1", "parallelism.dp=8"}, ""},
		{"Ring", []string{"parallelism.k=2", "parallelism.zero_stage=2"}, ""},
	} {
		file := []byte(fmt.Sprintf(`version: 1
cluster: {nodes: 2, gpus_per_node: 8, gpu: H100-80GB}
model: {preset: llama2-7b, seq_len: 2048}
parallelism: {dp: 16, zero_stage: 1}
communication:
  nccl_algo: %q
`, c.algo))
		s, err := scenarios.Load("s.yaml", file, c.sets)
		if err != nil {
			t.Fatalf("%s %v: %v", c.algo, c.sets, err)
		}
		err = scenarios.Place("s.yaml", file, c.sets, CheckPins(s))
		if got := fmt.Sprint(err); c.want == "" && err != nil || c.want != "" && got != c.want {
			t.Errorf("%s %v:\n got %s\nwant %s", c.algo, c.sets, got, c.want)
		}
		// The replay agrees: it refuses what the check refuses.
		if _, err := Replay(s, Options{}); (err == nil) != (c.want == "") {
			t.Errorf("%s %v: the replay says %v", c.algo, c.sets, err)
		}
	}
}
