package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/reports"
	"github.com/zerosim/zerosim/scenarios"
)

func runCollectiveCLI(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Main(append([]string{"collective"}, args...), strings.NewReader(""), &out, &errOut)
	return out.String(), errOut.String(), code
}

// TestCollectiveReference: the alpha–beta references through the CLI, 64
// MiB (S) all-reduced with 500 ns (α) per step. The ring of n = 8 ranks on
// 300e9 B/s links takes 2(n−1) steps of α + S/(n·B) (Thakur, Rabenseifner
// and Gropp 2005, "Optimization of Collective Communication Operations in
// MPICH", §4.5's ring: 2(p−1)α + 2((p−1)/p)nβ): 14 × 500 ns + 14 ×
// 8,388,608 B / 300e9 B/s = 398.468 µs, rounded up to the picosecond. The
// hierarchical one on 4 nodes × 8 GPUs reduce-scatters in the node (7 steps
// of S/8 at 300e9), all-reduces the node's eighth across the 4 nodes (6
// steps of S/32 at 25e9) and all-gathers in the node (7 steps of S/8): 20α
// + 14·S/(8·300e9) + 6·S/(32·25e9) = 904.785 µs.
func TestCollectiveReference(t *testing.T) {
	const S, alpha = 64 << 20, 500_000 // B, ps
	ps := func(steps int64, wire float64) int64 { return steps*alpha + int64(math.Ceil(wire*1e12)) }
	for _, c := range []struct {
		name string
		args []string
		ps   int64
		algo string
	}{
		{"ring", []string{"--nodes", "1", "--gpus-per-node", "8", "--intra-bw", "300GB/s", "--latency", "500ns", "--algo", "alphabeta-ring"},
			ps(14, 14*S/(8*300e9)), "ring"},
		{"hier", []string{"--nodes", "4", "--gpus-per-node", "8", "--intra-bw", "300GB/s", "--inter-bw", "25GB/s", "--latency", "500ns", "--algo", "hierarchical"},
			ps(20, 14*S/(8*300e9)+6*S/(32*25e9)), "hierarchical"},
	} {
		out, errOut, code := runCollectiveCLI(t, append(c.args, "--size", "64MiB", "--format", "json")...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", c.name, code, errOut)
		}
		var rep reports.CollectiveReport
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("%s: %v\n%s", c.name, err, out)
		}
		if len(rep.Rows) != 1 || rep.Rows[0].TimePS != c.ps || rep.Rows[0].ClosedFormPS != c.ps || rep.Rows[0].Algorithm != c.algo {
			t.Errorf("%s: rows %+v, want time %d ps by %s", c.name, rep.Rows, c.ps, c.algo)
		}
		// busbw of an all-reduce is algbw·2(n−1)/n.
		n := float64(len(rep.Group))
		if r := rep.Rows[0]; r.BusBW != r.AlgBW*2*(n-1)/n {
			t.Errorf("%s: busbw %v, algbw %v", c.name, r.BusBW, r.AlgBW)
		}
	}
	out, _, code := runCollectiveCLI(t, "--nodes", "1", "--gpus-per-node", "8", "--intra-bw", "300GB/s", "--latency", "500ns", "--algo", "alphabeta-ring", "--size", "64MiB")
	if code != 0 || !strings.Contains(out, fmt.Sprintf(" %.2f ", float64(ps(14, 14*S/(8*300e9)))/1e6)) { // 398.47 µs
		t.Errorf("table: exit %d\n%s", code, out)
	}
}

// TestCollectiveSeed000: seed 000's K=4 inter group (dp 4 across nodes) on
// the seed's example: an all-reduce of S/2 = 32 MiB sends 0.75·64 MiB per
// rank over the network.
func TestCollectiveSeed000(t *testing.T) {
	out, errOut, code := runCollectiveCLI(t, "--scenario", "../../scenarios/examples/seed000-k4.yaml", "--group", "inter", "--size", "32MiB", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rep reports.CollectiveReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if got := rep.Group; len(got) != 4 || got[1] != 2 {
		t.Fatalf("inter group %v, want [0 2 4 6]", got)
	}
	net := rep.Rows[0].Bytes[1]
	if net.Class != "network" || net.MaxPerRank != 3*(64<<20)/4 || net.Total != 4*3*(64<<20)/4 {
		t.Errorf("network bytes %+v, want 0.75·64 MiB per rank", net)
	}
}

func TestCollectiveRange(t *testing.T) {
	out, errOut, code := runCollectiveCLI(t, "--size", "1MiB:8MiB", "--format", "csv", "--op", "reducescatter")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	// count: nccl-tests' paramcount, each of the 16 ranks' 1/16 of 512 Ki
	// bf16 elements (collectives.BenchCount).
	if len(lines) != 5 || !strings.HasPrefix(lines[1], "reducescatter,1048576,32768,") || !strings.HasPrefix(lines[4], "reducescatter,8388608,") {
		t.Errorf("csv:\n%s", out)
	}
}

func TestCollectiveInputErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--op", "broadcast"}, "--op"},
		{[]string{"--algo", "butterfly"}, "--algo"},
		{[]string{"--size", "12 apples"}, "--size"},
		{[]string{"--size", "8MiB:1MiB"}, "--size"},
		{[]string{"--group", "0,x"}, "--group"},
		{[]string{"--group", "0,0"}, "twice"},
		{[]string{"--group", "0,99"}, "rank 99"},
		{[]string{"--group", "intra", "--k", "3"}, "k = 3"},
		{[]string{"--inter-bw", "fast"}, "--inter-bw"},
		{[]string{"--latency", "-1ns"}, "--latency"},
		{[]string{"--nodes", "0"}, "--nodes"},
		{[]string{"--op", "allgather", "--algo", "tree"}, "tree"},
		{[]string{"--scenario", "does-not-exist.yaml"}, "does-not-exist.yaml"},
	} {
		_, errOut, code := runCollectiveCLI(t, c.args...)
		if code != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 mentioning %q", c.args, code, errOut, c.want)
		}
	}
}

// TestCollectiveCalibrationErrors: --calibration refuses a missing file, a
// file over the 16 MiB a scenario accepts (read no further than that) and
// a calibration with only a compute part.
func TestCollectiveCalibrationErrors(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, scenarios.MaxCalibrationBytes+1); err != nil {
		t.Fatal(err)
	}
	compute := filepath.Join(dir, "compute.yaml")
	if err := os.WriteFile(compute, []byte("version: 1\ncompute:\n  compute_efficiency: 0.5\n  method: step-time\n  measured_ms: 100\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ file, want string }{
		{filepath.Join(dir, "missing.yaml"), "--calibration " + filepath.Join(dir, "missing.yaml") + ": cannot read the file: no such file or directory (check the path)"},
		{big, "larger than 16 MiB"},
		{compute, "no network part"},
	} {
		_, errOut, code := runCollectiveCLI(t, "--calibration", c.file)
		if code != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("%s: exit %d, stderr %q; want exit 2 mentioning %q", c.file, code, errOut, c.want)
		}
	}
}

// TestCollectiveConcurrent: seed 000's two inter groups (K = 4) at once.
// With a NIC per GPU they use separate rails and each takes its closed
// form; with one NIC per node the two rings share it and the bandwidth part
// takes twice as long.
func TestCollectiveConcurrent(t *testing.T) {
	for _, c := range []struct {
		name   string
		extra  []string
		slower bool
	}{{"per_gpu", nil, false}, {"per_node", []string{"--nics", "per_node", "--nics-per-node", "1"}, true}} {
		args := append([]string{"--scenario", "../../scenarios/examples/seed000-k4.yaml", "--group", "inter", "--concurrent", "--size", "32MiB", "--format", "json"}, c.extra...)
		out, errOut, code := runCollectiveCLI(t, args...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", c.name, code, errOut)
		}
		var rep reports.CollectiveReport
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatal(err)
		}
		r := rep.Rows[0]
		if rep.Groups != 2 || r.Bytes[1].Total != 8*3*(64<<20)/4 {
			t.Errorf("%s: %d groups, network bytes %d; want 2 and 6·S", c.name, rep.Groups, r.Bytes[1].Total)
		}
		if got := r.TimePS > r.ClosedFormPS; got != c.slower || r.TimePS < r.ClosedFormPS {
			t.Errorf("%s: time %d, closed form %d", c.name, r.TimePS, r.ClosedFormPS)
		}
	}
	if _, errOut, code := runCollectiveCLI(t, "--concurrent"); code != 2 || !strings.Contains(errOut, "--concurrent") {
		t.Errorf("--concurrent with --group all: exit %d %q", code, errOut)
	}
}

// TestRunJSONCollectiveAlgorithm: run names the algorithm each collective
// ran, per collective and per phase in its JSON and per phase in its
// table. On the default scenario (2 × 8 H100, auto) NCCL runs every
// reduce-scatter and all-gather over the 16 ranks of both nodes as a ring
// (its only algorithm for them there: NVLS needs one node, PAT one rank a
// node); asked for hierarchical collectives, they are hierarchical;
// Mixtral's expert all-to-alls are NCCL's grouped point-to-point sends.
// gpt3-175b-16k at ZeRO-1 with K = 4 all-reduces 40 MB buckets' 1/4,096
// shards (about 9.8 kB) over 4 ranks on 4 nodes: NCCL's tree with LL
// (`zerosim collective --scenario gpt3-175b-16k --group inter --k 4 --size
// 9765B` says tree/LL), and its 26,193 instances are past what the JSON
// lists, so only the phases name it. At cp 4 the context-parallel ring of
// Llama 2 7B's 32 blocks all-gathers k and v 3 times a block (forward,
// backward, the full recompute's forward) and sends dk/dv cp = 4 times a
// block, point to point: 96 all-gathers and 128 sends.
func TestRunJSONCollectiveAlgorithm(t *testing.T) {
	for _, c := range []struct {
		args []string
		want map[string]map[string]int // phase → algorithm → collectives
	}{
		{[]string{"default"}, map[string]map[string]int{"backward reduce-scatter": {"ring": 337}, "post-optimizer all-gather": {"ring": 337}}},
		{[]string{"default", "--set", "communication.algorithm=hierarchical"}, map[string]map[string]int{
			"backward reduce-scatter": {"hierarchical": 337}, "post-optimizer all-gather": {"hierarchical": 337}}},
		{[]string{filepath.Join("..", "..", "docs", "examples", "mixtral-8x7b.yaml")}, map[string]map[string]int{
			// 32 MoE layers: dispatch and combine in forward, their gradients and, under
			// the example's recompute: full, the rerun forward's in backward.
			"forward all-to-all": {"point-to-point": 64}, "backward all-to-all": {"point-to-point": 128}}},
		{[]string{"gpt3-175b-16k", "--set", "parallelism.zero_stage=1", "--set", "parallelism.k=4"}, map[string]map[string]int{
			"backward reduce-scatter": {"ring": 8731}, "inter-group all-reduce": {"tree": 8731}}},
		{[]string{"default", "--set", "parallelism.cp=4", "--set", "parallelism.dp=4", "--set", "model.seq_len=32768"}, map[string]map[string]int{
			"context-parallel ring": {"ring": 96, "point-to-point": 128}}},
	} {
		var out, errOut bytes.Buffer
		if code := Main(append(append([]string{"run"}, c.args...), "--format", "json"), strings.NewReader(""), &out, &errOut); code != 0 {
			t.Fatalf("run %v: exit %d: %s", c.args, code, errOut.String())
		}
		var r struct {
			Count       int64 `json:"collective_count"`
			Collectives []struct {
				Phase     string `json:"phase"`
				Algorithm string `json:"algorithm"`
			} `json:"collectives"`
			Phases []struct {
				Phase       string         `json:"phase"`
				Collectives int            `json:"collectives"`
				Algorithms  map[string]int `json:"algorithms"`
			} `json:"phases"`
		}
		if err := json.Unmarshal(out.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		for _, ph := range r.Phases {
			sum := 0
			for _, n := range ph.Algorithms {
				sum += n
			}
			if sum != ph.Collectives {
				t.Errorf("run %v: %s: algorithms %v count %d of its %d collectives", c.args, ph.Phase, ph.Algorithms, sum, ph.Collectives)
			}
			if want, ok := c.want[ph.Phase]; ok && !maps.Equal(ph.Algorithms, want) {
				t.Errorf("run %v: %s ran %v, want %v", c.args, ph.Phase, ph.Algorithms, want)
			}
		}
		seen := map[string]map[string]int{}
		for _, x := range r.Collectives {
			if seen[x.Phase] == nil {
				seen[x.Phase] = map[string]int{}
			}
			seen[x.Phase][x.Algorithm]++
		}
		if r.Count > reports.MaxListedCollectives {
			if len(r.Collectives) != 0 {
				t.Errorf("run %v: %d collectives listed of %d, past the limit", c.args, len(r.Collectives), r.Count)
			}
			continue
		}
		for ph, want := range c.want {
			if ph == "context-parallel ring" {
				continue // inside the blocks' compute: no collective records
			}
			// Every group instance is listed: a phase's algorithms in
			// the list are its own, times the instances per task.
			for a := range seen[ph] {
				if want[a] == 0 {
					t.Errorf("run %v: a %s ran %q, want only %v", c.args, ph, a, want)
				}
			}
			if len(seen[ph]) == 0 {
				t.Errorf("run %v: no %s in the JSON", c.args, ph)
			}
		}
	}
}

// TestCollectiveKeepsOverrides: --nodes rebuilds the cluster but keeps a
// --set link override (it was dropped in silence, so a degraded NIC
// measured the nominal one: 4,138.94 µs either way for 1 GiB on 2 nodes),
// and one outside the new cluster is refused.
func TestCollectiveKeepsOverrides(t *testing.T) {
	timeOf := func(extra ...string) int64 {
		out, errOut, code := runCollectiveCLI(t, append([]string{"--op", "allreduce", "--size", "1GiB", "--format", "json"}, extra...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", extra, code, errOut)
		}
		var rep reports.CollectiveReport
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatal(err)
		}
		return rep.Rows[0].TimePS
	}
	nominal := timeOf("--nodes", "2")
	slow := timeOf("--nodes", "2", "--set", "cluster.link_overrides=[{node: 1, class: inter, bandwidth: 1GB/s}]")
	// Node 1's eight NICs send their share of 2 GiB of network bytes at
	// 1 GB/s: at least 2^30/8 B / 1e9 B/s = 134 ms.
	if slow < (1<<30)/8*1000 || slow <= nominal {
		t.Errorf("node 1's NICs at 1 GB/s: %d ps, want at least 134 ms and more than nominal %d ps", slow, nominal)
	}
	// A node --nodes adds can be degraded (QA s16 pass 4 F9: it was
	// checked against the file's two nodes first). Any all-reduce of 1 GiB
	// over 4 nodes sends at least 2·(4−1)/4 GiB out of each node: 192 MiB
	// per NIC of node 3, at least 201 ms at 1 GB/s.
	nominal4 := timeOf("--nodes", "4")
	slow4 := timeOf("--nodes", "4", "--set", "cluster.link_overrides=[{node: 3, class: inter, bandwidth: 1GB/s}]")
	if slow4 < (192<<20)*1000 || nominal4 >= slow4 {
		t.Errorf("--nodes 4, node 3's NICs at 1 GB/s: %d ps, want at least 201 ms (nominal %d ps)", slow4, nominal4)
	}
	// The same override from a file (review s16 B F12: refused against
	// the file's two nodes).
	data, _ := scenarios.Example("default")
	file := filepath.Join(t.TempDir(), "lo.yaml")
	if err := os.WriteFile(file, []byte(strings.Replace(string(data), "cluster:\n", "cluster:\n  link_overrides: [{node: 3, class: inter, bandwidth: 1GB/s}]\n", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if fromFile := timeOf("--scenario", file, "--nodes", "4"); fromFile != slow4 {
		t.Errorf("--nodes 4 with the file's override of node 3: %d ps, want the --set's %d", fromFile, slow4)
	}
	_, errOut, code := runCollectiveCLI(t, "--nodes", "1", "--set", "cluster.link_overrides=[{node: 1, class: inter, bandwidth: 1GB/s}]")
	if code != 2 || !strings.Contains(errOut, "node=1 is out of range (the cluster has nodes 0 to 0)") || strings.Count(errOut, "\n") != 1 {
		t.Errorf("override outside the cluster: exit %d, %q", code, errOut)
	}
}
