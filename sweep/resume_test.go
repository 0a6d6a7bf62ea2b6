package sweep

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// resumeSweep continues a partial output the way `zerosim sweep --resume`
// does: scan, truncate the partial last line, write the header if missing,
// append the points not done.
func resumeSweep(t *testing.T, partial []byte, src Source, sp *Space, sh Shard, f Format) []byte {
	t.Helper()
	p, err := ScanPartial(bytes.NewReader(partial), f, sp, sh)
	if err != nil {
		t.Fatal(err)
	}
	out := bytes.NewBuffer(append([]byte(nil), partial[:p.Keep]...))
	enc := NewEncoder(out, f, sp.Keys())
	if !p.HasHeader {
		if err := enc.WriteHeader(); err != nil {
			t.Fatal(err)
		}
	}
	ev := &Evaluator{Src: src, Space: sp}
	if err := Run(context.Background(), RunConfig{Indices: sh.Indices(sp.Len(), p.IsDone), Jobs: 2, Eval: ev.Eval, Emit: enc.Write}); err != nil {
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
	hdr := Header(CSV, sp.Keys())
	for _, tc := range []struct {
		name, data string
		f          Format
		sh         Shard
		want       string
	}{
		{"other grids", "index,parallelism.dp,step_time_ps\n", CSV, All, "header"},
		{"other format", `{"index":0}` + "\n", CSV, All, "is jsonl"},
		{"point of another shard", hdr + "1,2,0,0,0,0,0,false,\n", CSV, Shard{0, 2}, "not in this sweep's shard"},
		{"point out of range", hdr + "7,2,0,0,0,0,0,false,\n", CSV, All, "not in this sweep's shard 0/1 of 2"},
		{"garbage row", hdr + "x,2\n", CSV, All, "not a point index"},
		{"twice", hdr + "0,1,0,0,0,0,0,false,\n0,1,0,0,0,0,0,false,\n", CSV, All, "twice"},
		{"json without index", `{"point":{}}` + "\n", JSONL, All, "index"},
	} {
		_, err := ScanPartial(strings.NewReader(tc.data), tc.f, sp, tc.sh)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}

// TestMergeReport: duplicates are kept once, conflicting rows and missing
// points (gaps and the tail, given the point count) are reported, partial
// last lines ignored and named.
func TestMergeReport(t *testing.T) {
	h := "index,k,step_time_ps,exposed_comm_ps,network_bytes,nvlink_bytes,peak_memory_bytes,fits,error\n"
	a := h + "0,1,10,0,0,0,0,true,\n3,4,40,0,0,0,0,true,\n"
	b := h + "1,2,20,0,0,0,0,true,\n3,4,40,0,0,0,0,true,\n4,5,50,0,0,0,0,tr"
	c := h + "0,1,11,0,0,0,0,true,\n"
	var out bytes.Buffer
	rep, err := Merge(&out, []Input{{"a", strings.NewReader(a)}, {"b", strings.NewReader(b)}, {"c", strings.NewReader(c)}}, 6)
	if err != nil {
		t.Fatal(err)
	}
	want := h + "0,1,10,0,0,0,0,true,\n1,2,20,0,0,0,0,true,\n3,4,40,0,0,0,0,true,\n"
	if out.String() != want {
		t.Errorf("merged:\n%s\nwant:\n%s", out.String(), want)
	}
	if Ranges(rep.Duplicates) != "3" || Ranges(rep.Conflicts) != "0" || Ranges(rep.Missing) != "2, 4-5" ||
		len(rep.Partial) != 1 || rep.Partial[0] != "b" || rep.Rows != 3 || rep.OK() {
		t.Errorf("report %+v", rep)
	}
	for _, tc := range []struct{ name, x, y, want string }{
		{"headers differ", h, "index,j,step_time_ps\n", "differs"},
		{"formats differ", h + "0,1,0,0,0,0,0,true,\n", `{"index":1}` + "\n", "is jsonl"},
		{"not a sweep", "a,b\n", "", "not a sweep CSV header"},
	} {
		_, err := Merge(&bytes.Buffer{}, []Input{{"x", strings.NewReader(tc.x)}, {"y", strings.NewReader(tc.y)}}, 0)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
}
