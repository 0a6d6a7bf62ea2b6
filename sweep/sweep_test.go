package sweep

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// acceptanceGrids is the ≥ 1,000-point sweep of the acceptance test: seed
// 002's tiny transformer on 2 nodes × 2 GPUs (dp 4) over stage, K,
// algorithm, bucket size, prefetch depth, in-flight gathers and overlap.
// Points with K=3 (not dividing dp 4) are invalid rows.
var acceptanceGrids = []string{
	"parallelism.zero_stage=0,1,2,3",
	"parallelism.k=1,2,3,4",
	"communication.algorithm=ring,hierarchical,auto",
	"communication.bucket_size=64B,256B,1KiB",
	"communication.prefetch_depth=0,1,2",
	"communication.max_inflight_allgathers=1,2",
	"communication.overlap=true,false",
}

func tinySource(t testing.TB) Source {
	data, ok := scenarios.Example("seed002-tiny")
	if !ok {
		t.Fatal("no seed002-tiny example")
	}
	return Source{File: "seed002-tiny.yaml", Data: data, Sets: []string{"cluster.nodes=2", "parallelism.dp=4"}}
}

func space(t testing.TB, flags ...string) *Space {
	var gs []Grid
	for _, f := range flags {
		g, err := ParseGrid(f)
		if err != nil {
			t.Fatal(err)
		}
		gs = append(gs, g)
	}
	sp, err := NewSpace(gs)
	if err != nil {
		t.Fatal(err)
	}
	return sp
}

// memo holds, per space, the row of every point evaluated so far: the tests
// sweep one space many times (whole, -j 1, shards, both formats, resumed)
// to check the order, sharding, encoding and merging of the rows, and each
// point is replayed once (TestSweepAcceptance's 1,728 points run once).
var memo sync.Map // *Space → *sync.Map of index → Row

// memoEval is Evaluator.Eval for sp through memo.
func memoEval(src Source, sp *Space) func(int) Row {
	v, _ := memo.LoadOrStore(sp, &sync.Map{})
	rows := v.(*sync.Map)
	ev := &Evaluator{Src: src, Space: sp}
	return func(i int) Row {
		if r, ok := rows.Load(i); ok {
			return r.(Row)
		}
		r := ev.Eval(i)
		rows.Store(i, r)
		return r
	}
}

// sweepTo runs shard sh of sp on src with jobs workers into a buffer, the way
// `zerosim sweep` does (each point evaluated once per space, see memo).
func sweepTo(t testing.TB, src Source, sp *Space, sh Shard, jobs int, f Format) []byte {
	var buf bytes.Buffer
	enc := NewEncoder(&buf, f, sp.Keys())
	if err := enc.WriteHeader(metaOf(src, sp)); err != nil {
		t.Fatal(err)
	}
	err := Run(context.Background(), RunConfig{Indices: sh.Indices(sp.Len(), nil), Jobs: jobs, Eval: memoEval(src, sp), Emit: enc.Write})
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func merge(t testing.TB, points int, parts ...[]byte) ([]byte, *MergeReport) {
	var in []Input
	for i, p := range parts {
		in = append(in, Input{Name: fmt.Sprintf("part%d", i), R: bytes.NewReader(p)})
	}
	var out bytes.Buffer
	rep, err := Merge(&out, in, points)
	if err != nil {
		t.Fatal(err)
	}
	return out.Bytes(), rep
}

// TestSweepAcceptance: a sweep of 1,728 points gives the same merged output
// whole (all cores), with one worker, and as three shards merged; in CSV and
// JSON Lines.
func TestSweepAcceptance(t *testing.T) {
	src := tinySource(t)
	sp := space(t, acceptanceGrids...)
	if sp.Len() != 1728 {
		t.Fatalf("%d points, want 4·4·3·3·3·2·2 = 1728", sp.Len())
	}
	for _, f := range []Format{CSV, JSONL} {
		whole := sweepTo(t, src, sp, All, 0, f)
		one := sweepTo(t, src, sp, All, 1, f)
		if !bytes.Equal(whole, one) {
			t.Fatalf("%s: -j NumCPU and -j 1 differ", f)
		}
		var shards [][]byte
		for i := 0; i < 3; i++ {
			shards = append(shards, sweepTo(t, src, sp, Shard{i, 3}, 2, f))
		}
		merged, rep := merge(t, sp.Len(), shards...)
		if !rep.OK() || len(rep.Duplicates) > 0 || rep.Rows != sp.Len() {
			t.Fatalf("%s: merge report %+v", f, rep)
		}
		if !bytes.Equal(merged, whole) {
			t.Fatalf("%s: merged shards differ from the whole sweep", f)
		}
		// Merging the whole output with itself is idempotent.
		if again, _ := merge(t, sp.Len(), whole); !bytes.Equal(again, whole) {
			t.Fatalf("%s: merging the whole output changes it", f)
		}
		if f == CSV {
			checkAcceptanceRows(t, whole, sp)
		}
	}
}

// checkAcceptanceRows checks the rows' content: one line per point in index
// order, mostly valid, invalid ones with their reason, and known values.
func checkAcceptanceRows(t *testing.T, out []byte, sp *Space) {
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	data, _ := scenarios.Example("seed002-tiny")
	// The meta names the resolved scenario (the file with its sets), as
	// run's "resolved: sha256" does.
	base, err := scenarios.Load("seed002-tiny", data, []string{"cluster.nodes=2", "parallelism.dp=4"})
	if err != nil {
		t.Fatal(err)
	}
	enc, err := scenarios.Encode(base)
	if err != nil {
		t.Fatal(err)
	}
	if want := `# zerosim sweep {"scenario_sha256":"` + fmt.Sprintf("%x", sha256.Sum256(enc)) + `","sets":["cluster.nodes=2","parallelism.dp=4"],"grids":["parallelism.zero_stage=0,1,2,3","parallelism.k=1,2,3,4","communication.algorithm=ring,hierarchical,auto","communication.bucket_size=64B,256B,1KiB","communication.prefetch_depth=0,1,2","communication.max_inflight_allgathers=1,2","communication.overlap=true,false"]}`; lines[0] != want {
		t.Errorf("meta line %q, want %q", lines[0], want)
	}
	lines = lines[1:]
	if lines[0] != "index,parallelism.zero_stage,parallelism.k,communication.algorithm,communication.bucket_size,communication.prefetch_depth,communication.max_inflight_allgathers,communication.overlap,step_time_ps,exposed_comm_ps,network_bytes,nvlink_bytes,peak_memory_bytes,device_peak_bytes,tokens_per_s_per_gpu,mfu,fits,device_fits,reserved_mode,allocator_retries,error" {
		t.Errorf("header %q", lines[0])
	}
	rows := lines[1:]
	if len(rows) != sp.Len() {
		t.Fatalf("%d rows, want %d", len(rows), sp.Len())
	}
	invalid := 0
	for i, r := range rows {
		if !strings.HasPrefix(r, fmt.Sprintf("%d,", i)) {
			t.Fatalf("row %d = %q", i, r)
		}
		if !strings.HasSuffix(r, ",") {
			invalid++
		}
	}
	// K must divide dp 4: k=3 is invalid (a quarter of the points); every
	// other point must run.
	if want := sp.Len() / 4; invalid != want {
		t.Errorf("%d invalid points, want %d", invalid, want)
	}
	// Point 0: stage 0, K=1, flat ring — seed 002's tiny model, 260 bf16
	// params (S = 520 B): the DDP all-reduce sends 2·(4−1)/4·520 = 780 B
	// per rank, 3,120 B over the wire; the ring 0→1→2→3→0 on 2 nodes × 2
	// GPUs crosses the network on 2 of its 4 hops: 1,560 B each way.
	f := strings.Split(rows[0], ",")
	if f[10] != "1560" || f[11] != "1560" || f[20] != "" {
		t.Errorf("point 0: network %s nvlink %s bytes, want 1560 and 1560 (%s)", f[10], f[11], rows[0])
	}
	// Stage 0 takes the reserve as memory.allocator_overhead's default
	// above the allocated peak: nothing simulated, no retries.
	if f[18] != "overhead 0.15 (default)" || f[19] != "" {
		t.Errorf("point 0: reserved_mode %q allocator_retries %q, want the default overhead and none", f[18], f[19])
	}
	// Its step trains micro_batch 1 × dp 4 sequences of seq_len 3: 12
	// tokens, over the step time and 4 GPUs.
	step, _ := strconv.ParseInt(f[8], 10, 64)
	if want := math.Round(12/(float64(step)/1e12)/4*1000) / 1000; f[14] != strconv.FormatFloat(want, 'f', -1, 64) {
		t.Errorf("point 0: tokens/s per GPU %s, want %v", f[14], want)
	}
}

// TestRunOrder: rows come out in Indices order whatever order the workers
// finish in, and an Emit error stops the run.
func TestRunOrder(t *testing.T) {
	idx := []int{5, 1, 9, 3, 7, 0, 2}
	var got []int
	eval := func(i int) Row {
		// Uneven work so later points often finish first.
		n := 0
		for k := 0; k < (10-i)*20000; k++ {
			n += k & 1
		}
		return Row{Index: i, StepTime: int64(n)}
	}
	err := Run(context.Background(), RunConfig{Indices: slices.Values(idx), Jobs: 4, Eval: eval, Emit: func(r Row) error {
		got = append(got, r.Index)
		return nil
	}})
	if err != nil || fmt.Sprint(got) != fmt.Sprint(idx) {
		t.Errorf("emitted %v (%v), want %v", got, err, idx)
	}
	stop := errors.New("disk full")
	count := 0
	many := make([]int, 500)
	for i := range many {
		many[i] = i
	}
	err = Run(context.Background(), RunConfig{Indices: slices.Values(many), Jobs: 3, Eval: func(i int) Row { return Row{Index: i} }, Emit: func(r Row) error {
		count++
		if r.Index == 10 {
			return stop
		}
		return nil
	}})
	if !errors.Is(err, stop) || count != 11 {
		t.Errorf("Emit error: got %v after %d rows, want %v after 11", err, count, stop)
	}
}

// TestEvalInvalidPoint: a point the loader rejects is a row with the
// loader's one-line message, naming the --grid the value came from (the
// loader says --set).
func TestEvalInvalidPoint(t *testing.T) {
	sp := space(t, "parallelism.k=1,3")
	ev := &Evaluator{Src: tinySource(t), Space: sp}
	r := ev.Eval(1)
	if r.Err == "" || !strings.Contains(r.Err, "--grid parallelism.k=3: k=3 does not divide") || strings.Contains(r.Err, "--set") || r.StepTime != 0 {
		t.Errorf("k=3 on dp=2: %+v", r)
	}
	if r := ev.Eval(0); r.Err != "" || r.StepTime <= 0 || r.PeakMemory <= 0 {
		t.Errorf("k=1: %+v", r)
	}
}

// TestRunCancel: cancelling the context stops the run; the rows emitted
// before are a prefix in order.
func TestRunCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	idx := make([]int, 1000)
	for i := range idx {
		idx[i] = i
	}
	var got []int
	err := Run(ctx, RunConfig{Indices: slices.Values(idx), Jobs: 2, Eval: func(i int) Row { return Row{Index: i} }, Emit: func(r Row) error {
		got = append(got, r.Index)
		if r.Index == 4 {
			cancel()
		}
		return nil
	}})
	if !errors.Is(err, context.Canceled) || len(got) < 5 || len(got) == len(idx) {
		t.Fatalf("cancelled run: %v after %d rows", err, len(got))
	}
	for i, x := range got {
		if x != i {
			t.Fatalf("row %d is point %d", i, x)
		}
	}
}
