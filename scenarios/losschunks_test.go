package scenarios

import "testing"

// TestLossChunkTokens checks the chunk size of torchtitan's chunked loss:
// the tokens split into equal chunks (loss.py lines 602-611 at b5bcd76c6),
// a count that does not divide them refused.
func TestLossChunkTokens(t *testing.T) {
	for _, c := range []struct {
		tokens, chunks, want int64
		err                  bool
	}{
		{8192, 8, 1024, false}, // llama3_8b's default num_chunks
		{8192, 1, 8192, false},
		{8192, 0, 8192, false}, // unset: one pass
		{128, 128, 1, false},
		{8192, 3, 0, true},
		{2, 4, 0, true},
	} {
		got, err := LossChunkTokens(c.tokens, c.chunks)
		if got != c.want || (err != nil) != c.err {
			t.Errorf("LossChunkTokens(%d, %d) = %d, %v; want %d, error %v", c.tokens, c.chunks, got, err, c.want, c.err)
		}
	}
}
