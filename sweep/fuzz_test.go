package sweep

import (
	"bytes"
	"io"
	"math"
	"slices"
	"strings"
	"testing"
)

// FuzzParseGrid: any flag value parses or fails with an error, never
// panics; values never hold line breaks or surrounding spaces.
func FuzzParseGrid(f *testing.F) {
	for _, s := range []string{"parallelism.k=1,4", "a=[x, y],{b: 1}", `n="a,b",'c'`, "=", "k=,", "k=[", "k=\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		g, err := ParseGrid(s)
		if err != nil {
			return
		}
		for _, v := range g.Values {
			if v == "" || strings.ContainsAny(v, "\r\n") || strings.TrimSpace(v) != v {
				t.Errorf("%q: value %q", s, v)
			}
		}
	})
}

// FuzzPartialAndMerge: any file content is scanned for --resume and merged
// without a panic; what merge writes is complete lines only.
func FuzzPartialAndMerge(f *testing.F) {
	sp, _ := NewSpace([]Grid{{"parallelism.k", []string{"1", "2", "4"}}})
	m := metaOf(Source{Data: []byte("version: 1\n")}, sp)
	h := Prelude(CSV, m, sp.Keys())
	f.Add([]byte(h + "0,1,5,0,0,0,0,0,0,0,true,true,\n1,2,6,0"))
	f.Add([]byte(m.Line(JSONL) + `{"index":2,"point":{"parallelism.k":"4"},"step_time_ps":1,"exposed_comm_ps":0,"network_bytes":0,"nvlink_bytes":0,"peak_memory_bytes":0,"device_peak_bytes":0,"tokens_per_s_per_gpu":0,"mfu":0,"fits":true,"device_fits":true}` + "\n{\"ind"))
	f.Add([]byte("index,\"x\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, fm := range []Format{CSV, JSONL} {
			if p, err := ScanPartial(bytes.NewReader(data), fm, m, sp, All); err == nil && (p.Keep < 0 || p.Keep > int64(len(data))) {
				t.Errorf("Keep %d of %d", p.Keep, len(data))
			}
		}
		var out bytes.Buffer
		if _, err := Merge(&out, []Input{{"a", bytes.NewReader(data)}, {"b", io.LimitReader(bytes.NewReader(data), int64(len(data)/2))}}, 3); err == nil {
			if out.Len() > 0 && out.Bytes()[out.Len()-1] != '\n' {
				t.Errorf("merge wrote a partial line: %q", out.String())
			}
		}
	})
}

// FuzzParseGlobalBatch: any --global-batch or --tokens value parses to a
// positive count or fails with an error; a token count is a whole number
// of sequences.
func FuzzParseGlobalBatch(f *testing.F) {
	for _, s := range []string{"512", "4Mtokens", "4194304 tok", "1T", "0", "-1", "1e30tokens", "tokens", "2.5K", "4Mitokens", "4 Mi tok", "1Ki"} {
		f.Add(s, int64(4096))
	}
	f.Add("9223372036854775807tokens", int64(3))
	f.Fuzz(func(t *testing.T, s string, seq int64) {
		n, err := ParseGlobalBatch(s, seq)
		// Over dp ranks a token count that parses is a whole number of
		// sequences per rank, and no suggestion is negative.
		for _, dp := range []int64{32, 1 << 40} {
			m, err := ParseGlobalBatchDP(s, seq, dp)
			if err == nil && (m < 1 || m%dp != 0 && (strings.HasSuffix(strings.TrimSpace(s), "tokens") || strings.HasSuffix(strings.TrimSpace(s), "tok")) && seq > 0 && seq <= math.MaxInt64/dp) {
				t.Errorf("%q (seq %d, dp %d): %d sequences", s, seq, dp, m)
			}
			if err != nil && (strings.Contains(err.Error(), "(use -") || strings.Contains(err.Error(), " or -")) {
				t.Errorf("%q (seq %d, dp %d): %v suggests a negative count", s, seq, dp, err)
			}
		}
		if err == nil && n < 1 {
			t.Errorf("%q (seq %d): %d sequences", s, seq, n)
		}
		if err != nil && strings.Contains(err.Error(), "(use -") || err != nil && strings.Contains(err.Error(), " or -") {
			t.Errorf("%q (seq %d): %v suggests a negative count", s, seq, err)
		}
		if n, err := ParseTokens(s); err == nil && n < 1 {
			t.Errorf("%q: %d tokens", s, n)
		}
	})
}

// FuzzParseShard: any --shard value parses to 0 ≤ i < n or fails with a
// one-line error; a parsed shard prints as it parses, and its points of a
// small space are exactly the indices ≡ i mod n, each once, ascending.
func FuzzParseShard(f *testing.F) {
	for _, s := range []string{"0/4", "3/4", " 1 / 2 ", "4/4", "-1/4", "0/0", "1", "a/b", "9223372036854775807/9223372036854775807", "0/9223372036854775807", "39/9223372036854775807"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sh, err := ParseShard(s)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("%q: error of more than one line: %q", s, err)
			}
			return
		}
		if sh.I < 0 || sh.I >= sh.N {
			t.Fatalf("%q: shard %d/%d", s, sh.I, sh.N)
		}
		if back, err := ParseShard(sh.String()); err != nil || back != sh {
			t.Fatalf("%q: prints as %q, which parses to %v, %v", s, sh, back, err)
		}
		const n = 40
		var want, got []int
		for i := range n {
			if i%sh.N == sh.I {
				want = append(want, i)
			}
		}
		for i := range sh.Indices(n, nil) {
			got = append(got, i)
		}
		if !slices.Equal(got, want) || sh.Count(n) != len(want) {
			t.Fatalf("%q: indices %v (count %d) of %d points, want %v", s, got, sh.Count(n), n, want)
		}
		for _, i := range want {
			if !sh.Has(i) {
				t.Fatalf("%q: Has(%d) is false", s, i)
			}
		}
	})
}
