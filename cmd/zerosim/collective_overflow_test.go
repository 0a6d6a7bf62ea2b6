package main

import "testing"

// TestCollectiveTimeOverflow: a collective whose time passes the int64
// picoseconds printed NCCL's cost-model time clamped at
// 4,611,686,018,427,387,903 ps with exit 0, and the alpha–beta path
// (--algo hierarchical) said the bytes did not fit in 64 bits, blaming
// --size for a 1 MiB collective (qa21 M4). Each is refused as a time that
// does not fit, naming the bandwidth and latency flags.
func TestCollectiveTimeOverflow(t *testing.T) {
	const want = "zerosim: --size 1048576B: this collective takes longer than 9223372.037s, the range of int64 picoseconds, at these bandwidths and latencies (check --intra-bw, --inter-bw and --latency)\n"
	for _, args := range [][]string{
		{"collective", "--size", "1MiB", "--latency", "1000000s"},
		{"collective", "--size", "1MiB", "--latency", "1000000s", "--format", "json"},
		{"collective", "--size", "1MiB", "--latency", "1000000s", "--algo", "hierarchical"},
		{"collective", "--size", "1MiB", "--latency", "1000000s", "--algo", "ring"},
		{"collective", "--size", "1MiB", "--inter-bw", "80Kbps", "--latency", "1000000s", "--format", "json"},
	} {
		code, out, errOut := runMain(t, "", args...)
		oneLine(t, args, code, out, errOut)
		if errOut != want {
			t.Errorf("%q: stderr %q, want %q", args, errOut, want)
		}
	}
	const big = "zerosim: --size 1099511627776B: this collective takes longer than 9223372.037s, the range of int64 picoseconds, at these bandwidths and latencies (check --intra-bw, --inter-bw and --latency)\n"
	args := []string{"collective", "--size", "1TiB", "--inter-bw", "80Kbps", "--format", "json"}
	code, out, errOut := runMain(t, "", args...)
	oneLine(t, args, code, out, errOut)
	if errOut != big {
		t.Errorf("%q: stderr %q, want %q", args, errOut, big)
	}
}
