package main

import (
	"strings"
	"testing"
)

// TestCollectiveSizeRounding: a --size the op cannot run exactly runs as
// nccl-tests runs it, rounded down to whole elements (the row shows the
// size run), and now says so on stderr (QA22 L6: --size 3B printed a row
// of size 2 without a word). An all-reduce runs multiples of 2 B (bf16);
// an all-gather over 16 ranks multiples of 16·16 = 256 B (each rank's
// chunk rounded down to 16 B: nccl-tests' src/all_gather.cu). A size
// that runs exactly says nothing.
func TestCollectiveSizeRounding(t *testing.T) {
	for _, c := range []struct {
		args     []string
		row, err string
	}{
		{[]string{"--size", "3B"}, "│        2 │     1 │", "zerosim: warning: --size 3B: allreduce runs whole bf16 elements, multiples of 2 B, rounded down as nccl-tests does; 3 B runs as 2 B (the rows show the size run)\n"},
		{[]string{"--size", "1000B", "--op", "allgather"}, "│      768 │    24 │", "zerosim: warning: --size 1000B: allgather over 16 ranks runs multiples of 256 B (each rank's chunk whole bf16 elements, rounded down to 16 B), rounded down as nccl-tests does; 1000 B runs as 768 B (the rows show the size run)\n"},
		{[]string{"--size", "1024B", "--op", "allgather"}, "│     1024 │    32 │", ""},
		{[]string{"--size", "4B"}, "│        4 │     2 │", ""},
	} {
		out, errOut, code := runCLI(append([]string{"collective"}, c.args...)...)
		if code != 0 || errOut != c.err || !strings.Contains(out, c.row) {
			t.Errorf("collective %v: exit %d, stderr %q, row %q in the table %v; want stderr %q", c.args, code, errOut, c.row, strings.Contains(out, c.row), c.err)
		}
	}
}
