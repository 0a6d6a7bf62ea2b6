package zero

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/collectives"
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
		// NCCL's all-reduce algorithms alone (QA18 M5; refused here, not by
		// the loader, so that collective and calibrate take them).
		{"Tree,NVLSTree", nil, `s.yaml:6:3: nccl_algo "Tree,NVLSTree" leaves only NCCL's all-reduce algorithms (Tree, NVLSTree), and ZeRO stage 1 reduce-scatters and all-gathers, which NCCL then refuses (no algorithm/protocol available): add Ring (nccl_algo: Ring,Tree,NVLSTree) or drop nccl_algo`},
		{"Tree", []string{"parallelism.zero_stage=3"}, `s.yaml:6:3: nccl_algo "Tree" leaves only NCCL's all-reduce algorithms (Tree, NVLSTree), and ZeRO stage 3 reduce-scatters and all-gathers, which NCCL then refuses (no algorithm/protocol available): add Ring (nccl_algo: Ring,Tree) or drop nccl_algo`},
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

// TestRingSimpleLeftNeedsNoCheck holds CheckPins's shortcut to its full
// check: wherever the pins leave the ring and Simple on, the full check
// finds an algorithm for every collective of the step too, on the
// embedded examples (NVIDIA GPUs over NVLink, PCIe and Ethernet, 2 to
// 16,384 ranks, stages 0–3, K 1–4), with cp 2, with the MI300X under RCCL,
// and with the mixture of experts of the docs; and where they leave one
// off, the shortcut is not taken.
func TestRingSimpleLeftNeedsNoCheck(t *testing.T) {
	type src struct {
		name string
		data []byte
		sets []string
	}
	var srcs []src
	for _, n := range scenarios.ExampleNames() {
		b, _ := scenarios.Example(n)
		srcs = append(srcs, src{n, b, nil})
		if n == "default" {
			srcs = append(srcs, src{n + " cp 2", b, []string{"parallelism.cp=2", "parallelism.dp=8"}},
				src{n + " MI300X", b, []string{"cluster.gpu=MI300X", "cluster.intra.preset=xGMI"}},
				src{n + " stage 3 K 2", b, []string{"parallelism.zero_stage=3", "parallelism.k=2"}})
		}
	}
	const mixtral = "../docs/examples/mixtral-8x7b" // its hf_config is read beside it
	b, err := os.ReadFile(mixtral + ".yaml")
	if err != nil {
		t.Fatal(err)
	}
	srcs = append(srcs, src{mixtral, b, nil})
	pins := []struct {
		algo, proto string
		left        bool
	}{
		{"Ring", "", true}, {"Ring,Tree", "", true}, {"^Tree,NVLS", "", true}, {"", "Simple", true},
		{"Ring", "LL,Simple", true}, {"^PAT", "^LL", true},
		{"Tree,NVLS", "", false}, {"^Ring", "", false}, {"", "LL,LL128", false}, {"Ring", "^Simple", false},
	}
	checked := 0
	for _, sc := range srcs {
		for _, p := range pins {
			sets := slices.Clone(sc.sets)
			if p.algo != "" {
				sets = append(sets, "communication.nccl_algo="+p.algo)
			}
			if p.proto != "" {
				sets = append(sets, "communication.nccl_proto="+p.proto)
			}
			s, err := scenarios.Load(sc.name+".yaml", sc.data, sets)
			if err != nil {
				t.Fatalf("%s %v: %v", sc.name, sets, err)
			}
			if got := ringSimpleLeft(&s.Communication); got != p.left {
				t.Errorf("%s %q %q: ringSimpleLeft %v, want %v", sc.name, p.algo, p.proto, got, p.left)
			}
			if !p.left || !s.Communication.Algorithm.NCCLModel() || algoOf[s.Communication.Algorithm] != collectives.Auto {
				continue
			}
			checked++
			if err := checkPins(s, collectives.Auto); err != nil {
				t.Errorf("%s %q %q: the shortcut passes what the full check refuses: %v", sc.name, p.algo, p.proto, err)
			}
		}
	}
	if checked < 40 {
		t.Errorf("the full check ran on %d scenarios, want the 6 pin sets on most of the %d", checked, len(srcs))
	}
}

// TestReplayNamesThePinKey (final read R1 F4): a replay refused for a pin
// (here one the loader's own checks let through, and the caller did not
// check) comes back as CheckPins words it, at the key; a replay error of
// another kind is left as it is.
func TestReplayNamesThePinKey(t *testing.T) {
	s := example(t, "default", "communication.nccl_algo=PAT")
	_, err := Replay(s, Options{})
	var e *scenarios.Error
	if !errors.As(err, &e) || e.Path != "communication.nccl_algo" || !strings.Contains(e.Msg, "add Ring (nccl_algo: Ring,PAT)") {
		t.Errorf("PAT on 2 × 8: %v, want CheckPins's refusal at communication.nccl_algo", err)
	}
	s = example(t, "default", "communication.nccl_algo=Tree,NVLS", "parallelism.zero_stage=0", "communication.bucket_size=8B")
	if _, err := Replay(s, Options{}); err == nil || errors.As(err, &e) {
		t.Errorf("a bucket too small under pins: %v, want the replay's own error", err)
	}
}
