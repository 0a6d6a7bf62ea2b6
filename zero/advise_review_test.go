package zero

import (
	"regexp"
	"strconv"
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
