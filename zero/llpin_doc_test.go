package zero

import (
	"fmt"
	"testing"

	"github.com/zerosim/zerosim/internal/golden"
)

// TestLLPinDoc holds docs/collectives.md's figure for the default example
// pinned to NCCL's LL protocol to the replays it names (final read: the
// sentence kept 786.68 and 418.15 ms after the final norm and embedding
// were charged).
func TestLLPinDoc(t *testing.T) {
	ms := func(sets ...string) float64 {
		res, err := Replay(loadDefault(t, sets...), Options{})
		if err != nil {
			t.Fatal(err)
		}
		return float64(res.StepTime) / 1e9
	}
	ll, plain := ms("communication.nccl_proto=LL"), ms()
	if ll <= plain {
		t.Fatalf("LL step %.2f ms not slower than the default %.2f ms", ll, plain)
	}
	golden.CheckQuotes(t, "../docs/collectives.md", "TestLLPinDoc (zerosim run --set communication.nccl_proto=LL, and without it)",
		fmt.Sprintf("makes the step %.2f ms instead of %.2f ms", ll, plain))
}
