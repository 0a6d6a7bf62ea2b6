package zero

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// TestAdvisedBucketReplaysEverywhere: the bucket size a refusal advises
// replays at every stage 0–3, at K = 1 and at N's least K > 1, for every
// embedded example (the contract suggestBucket states), and under ZeRO++,
// whose model the memory model refuses below stage 3, the advice stays a
// size run accepts instead of growing without end.
func TestAdvisedBucketReplaysEverywhere(t *testing.T) {
	re := regexp.MustCompile(`bucket_size of at least (\d+) B`)
	type tc struct {
		name string
		sets []string
	}
	var cases []tc
	for _, n := range scenarios.ExampleNames() {
		cases = append(cases, tc{n, nil})
	}
	cases = append(cases, tc{"default", []string{"parallelism.zero_stage=3", "communication.zero_quantized_weights=true", "communication.zero_quantized_gradients=true"}})
	advised := 0
	for _, c := range cases {
		data, _ := scenarios.Example(c.name)
		s, err := scenarios.Load(c.name+".yaml", data, append([]string{"communication.bucket_size=1B"}, c.sets...))
		if err != nil {
			t.Fatalf("%s %v: %v", c.name, c.sets, err)
		}
		cerr := Check(s)
		if cerr == nil {
			continue
		}
		m := re.FindStringSubmatch(cerr.Error())
		if m == nil {
			t.Errorf("%s %v at 1 B: %v, which advises no bucket size", c.name, c.sets, cerr)
			continue
		}
		advised++
		b, _ := strconv.ParseInt(m[1], 10, 64)
		if b >= 1<<40 {
			t.Errorf("%s %v: advised %d B", c.name, c.sets, b)
			continue
		}
		kmin := 1
		for k := 2; k <= s.N(); k++ {
			if s.N()%k == 0 {
				kmin = k
				break
			}
		}
		for st := 0; st <= 3; st++ {
			for _, k := range []int{1, kmin} {
				x, err := scenarios.Load(c.name+".yaml", data, append(append([]string{}, c.sets...), "communication.bucket_size="+m[1]+"B",
					"parallelism.zero_stage="+strconv.Itoa(st), "parallelism.k="+strconv.Itoa(k)))
				if err != nil {
					continue // a layout the scenario does not load
				}
				if err := Check(x); err != nil {
					t.Errorf("%s %v stage %d K=%d at the advised %d B: %v", c.name, c.sets, st, k, b, err)
				}
			}
		}
	}
	if advised < 2 {
		t.Errorf("%d scenarios refused at 1 B with advice", advised)
	}
}

// TestAdviceLeavesOutStage3: a stage-2 scenario whose stage 3 no bucket
// size brings within the task limits (1,000 one-bucket units, memory's
// PerUnit layout, × 128 micro-steps × 5 tasks + 8 = 640,008 > 2^19) is
// advised the least size its own stage needs, not 2^50 B and more
// (2,204,520,813,690,880 B before). By hand: 525,568,000 parameters of
// bf16 gradients; memory's least for 2^18 buckets is 2,005 elements, 4,010
// B; stage 2 needs 128·(2·1,000 + 2·buckets) + 8 ≤ 2^19, at most 1,048
// buckets, 501,496 elements, 1,002,992 B; the doubling from 4,010 B gives
// 4,010·2^8 = 1,026,560 B (1,024 buckets), from 2·513,280 B the same.
func TestAdviceLeavesOutStage3(t *testing.T) {
	yaml := []byte("version: 1\nname: t\ncluster:\n  nodes: 1\n  gpus_per_node: 1\n  gpu: A100-80GB\n  intra:\n    preset: NVLink3\n" +
		"model:\n  kind: mlp\n  hidden: 256\n  layers: 1000\nparallelism:\n  dp: 1\n  zero_stage: 2\ntraining:\n  grad_accum: 128\n")
	for _, tc := range []struct {
		bucket, want string
	}{
		{"1KB", `communication.bucket_size 1000 B cuts group "dense" (525568000 parameters) into more than 262144 buckets (use a bucket_size of at least 1026560 B)`},
		{"513280B", "the step has 780296 tasks per rank, more than the 524288 a replay handles in 10 s and 2 GB (use a communication.bucket_size of at least 1026560 B, or use fewer accumulation steps (training.grad_accum) with a larger micro_batch)"},
		{"1026560B", ""},
	} {
		s, err := scenarios.Load("t.yaml", yaml, []string{"communication.bucket_size=" + tc.bucket})
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		if err := Check(s); err != nil {
			got = strings.TrimPrefix(err.Error(), "zero: ")
		}
		if got != tc.want {
			t.Errorf("bucket %s: %q; want %q", tc.bucket, got, tc.want)
		}
	}
}
