package sweep

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// resumeSweep continues a partial output the way `zerosim sweep --resume`
// does: scan, truncate the partial last line, write the header if missing,
// append the points not done.
func resumeSweep(t *testing.T, partial []byte, src Source, sp *Space, sh Shard, f Format) []byte {
	t.Helper()
	p, err := ScanPartial(bytes.NewReader(partial), f, metaOf(src, sp), sp, sh)
	if err != nil {
		t.Fatal(err)
	}
	out := bytes.NewBuffer(append([]byte(nil), partial[:p.Keep]...))
	enc := NewEncoder(out, f, sp.Keys())
	if !p.HasHeader {
		if err := enc.WriteHeader(metaOf(src, sp)); err != nil {
			t.Fatal(err)
		}
	}
	if err := Run(context.Background(), RunConfig{Indices: sh.Indices(sp.Len(), p.IsDone), Jobs: 2, Eval: memoEval(src, sp), Emit: enc.Write}); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// TestResume: a sweep killed after some rows (a prefix of its output with a
// truncated last line) and resumed gives the same file as an uninterrupted
// run, for every cut point class: empty file, half a header, header only,
// some rows with a partial line, complete rows; CSV and JSONL; a shard.
func TestResume(t *testing.T) {
	src := tinySource(t)
	sp := space(t, "parallelism.zero_stage=0,1,2,3", "parallelism.k=1,2,3,4", "communication.bucket_size=64B,1KiB")
	for _, f := range []Format{CSV, JSONL} {
		for _, sh := range []Shard{All, {1, 3}} {
			full := sweepTo(t, src, sp, sh, 2, f)
			nl := bytes.IndexByte(full, '\n')
			third := bytes.Index(full[nl+1:], []byte("\n")) + nl + 1
			for _, cut := range []int{0, nl / 2, nl + 1, len(full) / 2, len(full) - 3, third + 1, len(full)} {
				got := resumeSweep(t, full[:cut], src, sp, sh, f)
				if !bytes.Equal(got, full) {
					t.Errorf("%s shard %s cut at %d of %d: resumed output differs:\n%s\nwant:\n%s", f, sh, cut, len(full), got, full)
				}
			}
		}
	}
}

func TestResumeErrors(t *testing.T) {
	sp := space(t, "parallelism.k=1,2")
	src := Source{File: "s.yaml", Data: []byte("version: 1\n"), Sets: []string{"cluster.nodes=2"}}
	m := metaOf(src, sp)
	pre := Prelude(CSV, m, sp.Keys())
	other := metaOf(Source{File: "s.yaml", Data: []byte("version: 1 # other\n"), Sets: src.Sets}, sp)
	otherSets := metaOf(Source{File: "s.yaml", Data: src.Data}, sp)
	for _, tc := range []struct {
		name, data string
		f          Format
		sh         Shard
		want       string
	}{
		{"not a sweep output", `{"config": 1}`, CSV, All, "not a zerosim sweep output"},
		{"a JSON without a newline", `{"config": 1}`, JSONL, All, "not a zerosim sweep output"},
		{"a file without the meta line", Header(CSV, sp.Keys()) + "0,1,0,0,0,0,0,0,0,0,false,false,,,\n", CSV, All, "not a zerosim sweep output"},
		{"another scenario", other.Line(CSV) + Header(CSV, sp.Keys()), CSV, All, "another sweep (scenario sha256"},
		// Only the scenario changed: the same flags again cannot resume
		// it (QA14 finding 10).
		{"another scenario's fix", other.Line(CSV) + Header(CSV, sp.Keys()), CSV, All, "differ); restore the scenario file (or the zerosim version) the output was written with, or write to a new --out file"},
		{"other --sets", otherSets.Line(CSV) + Header(CSV, sp.Keys()), CSV, All, "another sweep (--set []"},
		{"other --sets' fix", otherSets.Line(CSV) + Header(CSV, sp.Keys()), CSV, All, "); resume with the same scenario, --set and --grid flags"},
		{"other grids", metaOf(src, space(t, "parallelism.k=1,2,4")).Line(CSV), CSV, All, "another sweep (--grid"},
		{"other format", m.Line(JSONL), CSV, All, "is jsonl"},
		// Rows before device_peak_bytes, mfu and device_fits: the same
		// sweep, fewer columns.
		{"an older version's output", m.Line(CSV) + "index,parallelism.k,step_time_ps,exposed_comm_ps,network_bytes,nvlink_bytes,peak_memory_bytes,tokens_per_s_per_gpu,fits,error\n0,1,0,0,0,0,0,0,true,\n",
			CSV, All, "its measure columns differ (an output of another zerosim version"},
		{"point of another shard", pre + "1,2,0,0,0,0,0,0,0,0,false,false,,,\n", CSV, Shard{0, 2}, "not in this sweep's shard"},
		{"point out of range", pre + "7,2,0,0,0,0,0,0,0,0,false,false,,,\n", CSV, All, "not a point of this sweep of 2 points"},
		{"index 2^63-1", pre + "9223372036854775807,2,0,0,0,0,0,0,0,0,false,false,,,\n", CSV, All, "not a point of this sweep"},
		{"garbage row", pre + "x,2\n", CSV, All, "2 columns, want 15"},
		{"columns missing", pre + "0,1,0,0,0,false,\n", CSV, All, "7 columns, want 15"},
		{"values of another point", pre + "0,2,0,0,0,0,0,0,0,0,false,false,,,\n", CSV, All, "holds values"},
		// The columns rows gained are read like the others: the MFU as
		// a rate, device_fits as a verdict.
		{"mfu not a rate", pre + "0,1,0,0,0,0,0,0,0,x,true,true,,,\n", CSV, All, `mfu "x" is not a rate`},
		{"device_fits not a verdict", pre + "0,1,0,0,0,0,0,0,0,0,true,maybe,,,\n", CSV, All, `device_fits "maybe" is not true or false`},
		{"allocator_retries not a count", pre + "0,1,0,0,0,0,0,0,0,0,true,true,simulated-default,x,\n", CSV, All, `allocator_retries "x" is not a count`},
		{"json allocator_retries not a count", m.Line(JSONL) + `{"index":0,"point":{"parallelism.k":"1"},"step_time_ps":1,"exposed_comm_ps":0,"network_bytes":0,"nvlink_bytes":0,"peak_memory_bytes":0,"device_peak_bytes":0,"tokens_per_s_per_gpu":0,"mfu":0,"fits":true,"device_fits":true,"allocator_retries":-1}` + "\n", JSONL, All, `allocator_retries "-1" is not a count`},
		{"a row of 2 MiB", pre + strings.Repeat("1", 2<<20) + "\n", CSV, All, "longer than 1048576 bytes"},
		{"twice", pre + "0,1,0,0,0,0,0,0,0,0,false,false,,,\n0,1,0,0,0,0,0,0,0,0,false,false,,,\n", CSV, All, "twice"},
		{"json without index", m.Line(JSONL) + `{"point":{}}` + "\n", JSONL, All, "index"},
		{"json without fits", m.Line(JSONL) + `{"index":0,"point":{"parallelism.k":"1"},"step_time_ps":1,"exposed_comm_ps":0,"network_bytes":0,"nvlink_bytes":0,"peak_memory_bytes":0}` + "\n", JSONL, All, "missing"},
	} {
		_, err := ScanPartial(strings.NewReader(tc.data), tc.f, m, sp, tc.sh)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}

// TestMergeReport: duplicates are kept once, conflicting rows and missing
// points (gaps and the tail) are reported, partial last lines ignored and
// named; inputs of another sweep or with rows that do not belong are refused.
func TestMergeReport(t *testing.T) {
	sp := space(t, "k=1,2,3,4,5,6")
	m := metaOf(Source{File: "s.yaml", Data: []byte("version: 1\n")}, sp)
	h := Prelude(CSV, m, sp.Keys())
	a := h + "0,1,10,0,0,0,0,0,0,0,true,true,,,\n3,4,40,0,0,0,0,0,0,0,true,true,,,\n"
	b := h + "1,2,20,0,0,0,0,0,0,0,true,true,,,\n3,4,40,0,0,0,0,0,0,0,true,true,,,\n4,5,50,0,0,0,0,0,tr"
	c := h + "0,1,11,0,0,0,0,0,0,0,true,true,,,\n"
	var out bytes.Buffer
	rep, err := Merge(&out, []Input{{"a", strings.NewReader(a)}, {"b", strings.NewReader(b)}, {"c", strings.NewReader(c)}}, 6)
	if err != nil {
		t.Fatal(err)
	}
	want := h + "0,1,10,0,0,0,0,0,0,0,true,true,,,\n1,2,20,0,0,0,0,0,0,0,true,true,,,\n3,4,40,0,0,0,0,0,0,0,true,true,,,\n"
	if out.String() != want {
		t.Errorf("merged:\n%s\nwant:\n%s", out.String(), want)
	}
	if Ranges(rep.Duplicates) != "3" || Ranges(rep.Conflicts) != "0" || RangesOf(rep.Missing) != "2, 4-5" || rep.MissingPoints != 3 ||
		len(rep.Partial) != 1 || rep.Partial[0] != "b" || rep.Rows != 3 || rep.OK() {
		t.Errorf("report %+v", rep)
	}
	// Without --points the tail is found from the meta line's grids.
	if rep, err := Merge(&bytes.Buffer{}, []Input{{"a", strings.NewReader(a)}}, 0); err != nil || RangesOf(rep.Missing) != "1-2, 4-5" {
		t.Errorf("merge of a alone: %+v, %v", rep, err)
	}
	other := metaOf(Source{File: "s.yaml", Data: []byte("version: 1 # other\n")}, sp)
	for _, tc := range []struct{ name, x, y, want string }{
		{"another scenario", h, other.Line(CSV) + Header(CSV, sp.Keys()), "another sweep than x (scenario sha256"},
		{"formats differ", h + "0,1,0,0,0,0,0,0,0,0,true,true,,,\n", m.Line(JSONL) + `{"index":1}` + "\n", "is jsonl"},
		{"not a sweep", "a,b\n", "", "not a zerosim sweep output"},
		{"index 2^63-1", h + "9223372036854775807,1,0,0,0,0,0,0,0,0,true,true,,,\n", "", "not a point of this sweep of 6 points"},
		{"3e9", h + "3000000000,1,0,0,0,0,0,0,0,0,true,true,,,\n", "", "not a point of this sweep of 6 points"},
		{"3 columns missing", h + "0,1,0,0,0,0\n", "", "6 columns, want 15"},
		{"header differs", m.Line(CSV) + "index,j,step_time_ps\n", "", "column header"},
	} {
		_, err := Merge(&bytes.Buffer{}, []Input{{"x", strings.NewReader(tc.x)}, {"y", strings.NewReader(tc.y)}}, 0)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
	if _, err := Merge(&bytes.Buffer{}, []Input{{"a", strings.NewReader(a)}}, 2147483647); err == nil || !strings.Contains(err.Error(), "6 points, not 2147483647") {
		t.Errorf("--points 2147483647: %v", err)
	}
}

// TestMergeHugeSweep: a sweep of 65,535 × 32,768 = 2,147,450,880 points
// with one row merges without a slice of every index (it took 3-4 GB): the
// missing points are two runs. Running it lazily: the first rows of the
// whole sweep come out and a cancel stops it.
func TestMergeHugeSweep(t *testing.T) {
	count := func(n int) string { // "0,1,…,n-1": a grid's values are distinct
		vs := make([]string, n)
		for i := range vs {
			vs[i] = strconv.Itoa(i)
		}
		return strings.Join(vs, ",")
	}
	sp := space(t, "a="+count(65535), "b="+count(32768))
	n := sp.Len()
	if n != 65535*32768 {
		t.Fatalf("%d points", n)
	}
	m := metaOf(Source{Data: []byte("version: 1\n")}, sp)
	row := func(i int) string {
		p := sp.Point(i)
		return fmt.Sprintf("%d,%s,%s,0,0,0,0,0,0,0,0,true,true,,,\n", i, p.Values[0], p.Values[1])
	}
	in := Prelude(CSV, m, sp.Keys()) + row(n-1) + row(1000)
	rep, err := Merge(&bytes.Buffer{}, []Input{{"a", strings.NewReader(in)}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := RangesOf(rep.Missing), fmt.Sprintf("0-999, 1001-%d", n-2); got != want || rep.MissingPoints != n-2 {
		t.Errorf("missing %q (%d points), want %q", got, rep.MissingPoints, want)
	}
	ctx, cancel := context.WithCancel(context.Background())
	rows := 0
	err = Run(ctx, RunConfig{Indices: All.Indices(n, nil), Jobs: 2, Eval: func(i int) Row { return Row{Index: i} }, Emit: func(r Row) error {
		if rows++; rows == 100 {
			cancel()
		}
		return nil
	}})
	if !errors.Is(err, context.Canceled) || rows < 100 {
		t.Errorf("huge sweep: %v after %d rows", err, rows)
	}
}
