package zero

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/memory"
	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/units"
)

// TestLimitsSuggestWhatIsMet: a step over MaxTasks or MaxTaskInstances is
// refused before it is built, and the bucket size or layer count the error
// suggests passes the limits (memory's smallest suggested bucket size too:
// 12,854 B on Llama 2 7B ran over 600 s before MaxBuckets became 2^18).
func TestLimitsSuggestWhatIsMet(t *testing.T) {
	const params = 1 << 28
	atLeast := regexp.MustCompile(`bucket_size of at least (\d+) B`)
	atMost := regexp.MustCompile(`use at most (\d+) layers`)
	wide := unitsScenario(3, 1, 1024, 5000, 1<<16, 40e6)
	for name, s := range map[string]func() *scenarios.Scenario{
		"107,375 buckets on 64 ranks, ZeRO-2": func() *scenarios.Scenario {
			return unitsScenario(2, 1, 64, 16, params/16, 5000)
		},
		"30k units on 64 ranks, ZeRO-3": func() *scenarios.Scenario { return unitsFile(t, 30_000, 64) },
		"1,024 ranks × 25k tasks":       func() *scenarios.Scenario { return wide },
	} {
		if testing.Short() && name != "1,024 ranks × 25k tasks" {
			continue // builds schedules of over 100k tasks: seconds
		}
		sc := s()
		err := Check(sc)
		if err == nil || !strings.Contains(err.Error(), "a replay handles in 10 s and 2 GB") {
			t.Errorf("%s: %v, want the limit's error", name, err)
			continue
		}
		if m := atLeast.FindStringSubmatch(err.Error()); m != nil {
			n, _ := strconv.ParseInt(m[1], 10, 64)
			sc.Communication.BucketSize = units.Bytes(n)
			if err := scenarios.Resolve(sc); err != nil {
				t.Fatal(err)
			}
		} else if m := atMost.FindStringSubmatch(err.Error()); m != nil {
			n, _ := strconv.Atoi(m[1])
			sc = unitsFile(t, n, sc.Cluster.GPUsPerNode)
		} else {
			t.Errorf("%s: %v suggests nothing", name, err)
			continue
		}
		if err := Check(sc); err != nil {
			t.Errorf("%s: the suggestion fails: %v", name, err)
		}
	}
	// A bucket size over memory.MaxBuckets (GPT-3 175B at ZeRO-1 with K = 2
	// on 16 GPUs: three collectives per bucket) is refused with a size that
	// the task limits meet too, not memory's bare minimum.
	s := gpt3(2)
	s.Parallelism.Stage, s.Parallelism.K = 1, 2
	s.Communication.BucketSize = 1
	_, merr := memory.Analyze(s, memory.Options{})
	err := Check(s)
	m := regexp.MustCompile(`bucket_size of at least (\d+) B`).FindStringSubmatch(err.Error())
	if m == nil || merr == nil || merr.Error() == err.Error() {
		t.Fatalf("memory: %v; zero: %v", merr, err)
	}
	n, _ := strconv.ParseInt(m[1], 10, 64)
	s.Communication.BucketSize = units.Bytes(n)
	if err := scenarios.Resolve(s); err != nil {
		t.Fatal(err)
	}
	if err := Check(s); err != nil {
		t.Errorf("the suggested bucket size %d B: %v", n, err)
	}
}

// TestReplayProgress: Options.Progress hears the finished task instances
// every ProgressEvery and once at the end, never decreasing, ending at the
// total (tasks × simulated ranks: every rank with Full, node 0's without).
func TestReplayProgress(t *testing.T) {
	s := gpt3(64) // 512 ranks: several ProgressEvery of task instances
	for _, full := range []bool{true, false} {
		var calls []int64
		var total int64
		res, err := Replay(s, Options{Full: full, Progress: func(d, n int64) { calls = append(calls, d); total = n }})
		if err != nil {
			t.Fatal(err)
		}
		reps := int64(s.N())
		if !full {
			reps = int64(s.Cluster.GPUsPerNode)
		}
		if want := int64(len(res.Schedule.Tasks)) * reps; total != want {
			t.Errorf("full %v: total %d, want %d tasks × %d ranks = %d", full, total, len(res.Schedule.Tasks), reps, want)
		}
		if len(calls) == 0 || calls[len(calls)-1] != total || !slices.IsSorted(calls) {
			t.Errorf("full %v: progress %v, want non-decreasing, ending at %d", full, calls, total)
		}
		if full && (total < 2*ProgressEvery || len(calls) < int(total/ProgressEvery)) {
			t.Errorf("full %v: %d calls for %d task instances, want one every %d", full, len(calls), total, ProgressEvery)
		}
	}
}

// TestAdviseBucketIsOneRule: memory's bare least for the default scenario
// at stage 0 (51412 B) is refused by run at the scenario's stage (two
// collectives a bucket: 524346 tasks per rank), so the advice is the size
// every stage and K run and fit try replay, the one run gives (qa19 M5).
func TestAdviseBucketIsOneRule(t *testing.T) {
	data, _ := scenarios.Example("default")
	s, err := scenarios.Load("default.yaml", data, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Communication.BucketSize = 1
	c := *s
	c.Parallelism.Stage = 0
	_, merr := memory.Analyze(&c, memory.Options{})
	re := regexp.MustCompile(`bucket_size of at least (\d+) B`)
	mem, run := re.FindStringSubmatch(AdviseBucket(&c, merr).Error()), re.FindStringSubmatch(Check(s).Error())
	if mem == nil || run == nil || mem[1] != run[1] || mem[1] != "102824" {
		t.Fatalf("memory at stage 0 advises %v, run %v; want 102824 B from both", mem, run)
	}
	for st := 0; st <= 3; st++ {
		for _, k := range []int{1, 2} {
			c := *s
			c.Parallelism.Stage, c.Parallelism.K, c.Communication.BucketSize = st, k, 102824
			if err := scenarios.Resolve(&c); err != nil {
				t.Fatal(err)
			}
			if err := Check(&c); err != nil {
				t.Errorf("stage %d, K=%d at the advised 102824 B: %v", st, k, err)
			}
		}
	}
}
