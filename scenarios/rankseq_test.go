package scenarios

import "testing"

// TestRankSeqLen checks the tokens per sequence a rank holds under context
// parallelism: torchtitan's head-tail load balancer gives each of cp ranks
// 2 of 2·cp equal chunks, seq_len/cp tokens.
func TestRankSeqLen(t *testing.T) {
	for _, c := range []struct {
		seq  int64
		cp   int
		want int64
	}{
		{4096, 1, 4096},
		{4096, 0, 4096}, // cp unset is cp = 1
		{8192, 4, 2048},
		{131072, 16, 8192},
		{0, 4, 0}, // no sequence (mlp, generic)
		{10, 4, 3},
	} {
		var s Scenario
		s.Model.SeqLen, s.Parallelism.CP = c.seq, c.cp
		if got := s.RankSeqLen(); got != c.want {
			t.Errorf("seq_len %d, cp %d: RankSeqLen = %d, want %d", c.seq, c.cp, got, c.want)
		}
	}
}
