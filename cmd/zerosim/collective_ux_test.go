package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// TestNICPortsMerged (QA30 LOW-7): OCI BM.GPU4.8 has 16 × 100 Gb/s RoCE
// ports for 8 A100 (two per GPU); NCCL merges the ports of one NIC into
// one device (NCCL_IB_MERGE_NICS, src/transport/net_ib.cc; the OCI log of
// collectives' accuracy test is described as 8 NICs of 200 Gb/s), so the
// refusal of 16 NICs on 8 GPUs says so and gives the bandwidth that
// describes the node; ports that do not divide among the GPUs get the
// refusal alone. One line, exit 2.
func TestNICPortsMerged(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--nics-per-node", "16", "--inter-bw", "100Gbps"}, "--nics-per-node 16: more NICs than the node's 8 GPUs (use at most 8: one NIC per GPU): if they are the ports of 2-port NICs, NCCL merges the ports of one NIC into one device (NCCL_IB_MERGE_NICS, src/transport/net_ib.cc), so give one NIC per GPU at 2× a port's speed: drop --nics and --nics-per-node and give --inter-bw 200Gbps (2 × 100Gbps)\n"},
		{[]string{"--nics-per-node", "32", "--set", "cluster.inter.preset=RoCE200"}, "give --inter-bw 800Gbps (4 × 200Gbps)\n"},
		{[]string{"--nics-per-node", "9"}, "--nics-per-node 9: more NICs than the node's 8 GPUs (use at most 8: one NIC per GPU)\n"},
	} {
		args := append([]string{"collective", "--nics", "per_node", "--size", "1GiB"}, c.args...)
		out, errOut, code := runCLI(args...)
		if code != 2 || out != "" || strings.Count(errOut, "\n") != 1 || !strings.HasSuffix(errOut, c.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want it to end %q", c.args, code, out, errOut, c.want)
		}
	}
}

// TestTrayWarningOfFlags (QA30 LOW-5): on a GB300 cluster the MNNVL
// warning speaks of the shape --nodes and --gpus-per-node make, in their
// words (3 × 4 = 12 GPUs: one rack's node of 12), not of the scenario
// file's 2 × 8 at its line; a shape that is one NVLink domain draws none;
// without the flags the file's warning stays, at its key.
func TestTrayWarningOfFlags(t *testing.T) {
	gb300 := []string{"collective", "--op", "allgather", "--set", "cluster.gpu=GB300", "--set", "cluster.intra.preset=NVLink5", "--size", "1GiB"}
	for _, c := range []struct {
		flags      []string
		want, not  string
		shouldWarn bool
	}{
		{[]string{"--nodes", "3", "--gpus-per-node", "4"}, "zerosim: warning: --gpus-per-node 4 is a GB300 compute tray or less, but NCCL's MNNVL counts the NVL72 rack as one node, and the traffic between its trays would be modelled over the NICs instead of NVLink: describe the trays of one rack as one node: --nodes 1 --gpus-per-node 12 (docs/scenario-format.md, cluster)\n", "gpus_per_node", true},
		{[]string{"--nodes", "1", "--gpus-per-node", "12"}, "", "", false},
		{nil, "zerosim: warning: default.yaml:11:3 (built-in example: zerosim scenarios show default): gpus_per_node=8 is not a whole GB300 NVLink domain", "--gpus-per-node", true},
	} {
		_, errOut, code := runCLI(append(gb300, c.flags...)...)
		if code != 0 || c.shouldWarn != strings.Contains(errOut, "MNNVL") || !strings.Contains(errOut, c.want) || c.not != "" && strings.Contains(errOut, c.not) {
			t.Errorf("%v: exit %d, stderr:\n%s\nwant %q", c.flags, code, errOut, c.want)
		}
	}
}

// TestCollectiveNoGPUPreset (QA30 LOW-6): a cluster whose GPU is given by
// its figures (an H20: 96 GiB, 148 TFLOPS bf16, 4 TB/s, no preset) has no
// NCCL model (zero.Model: its tables are per GPU generation), so auto runs
// the alpha–beta lowerings; the header says so and why, as run says "auto
// (alpha–beta)", where it said "(auto)" alone. With a preset it names
// NCCL's model.
func TestCollectiveNoGPUPreset(t *testing.T) {
	def, _ := scenarios.Example("default")
	h20 := strings.Replace(string(def), "gpu: H100-80GB", "gpu_memory: 96GiB\n  peak_bf16: 148TFLOPS\n  hbm_bandwidth: 4000GB/s", 1)
	file := filepath.Join(t.TempDir(), "h20.yaml")
	if h20 == string(def) || os.WriteFile(file, []byte(h20), 0o644) != nil {
		t.Fatal("cannot write the H20 scenario")
	}
	out, errOut, code := runCLI("collective", "--size", "1GiB", "--scenario", file)
	if code != 0 || !strings.HasPrefix(out, "# allreduce (auto: alpha–beta; NCCL's cost model is not used: its tables are per GPU generation and the cluster names no GPU preset (--set cluster.gpu=H100-80GB, or the preset of the GPU's generation, runs it)) over 16 ranks") {
		t.Errorf("no GPU preset: exit %d\n%s%s", code, out, errOut)
	}
	out, _, _ = runCLI("collective", "--size", "1GiB")
	if strings.Contains(out, "alpha–beta") || !strings.HasPrefix(out, "# allreduce (auto: NCCL") {
		t.Errorf("H100-80GB:\n%s", out)
	}
}
