package scenarios

import "testing"

// TestAlphabetaRingReadsAsRing: compare and plan label the explicit ring
// alphabeta-ring (final read B M3: the label they print was refused as
// "unknown" when fed back to --set); it loads as ring.
func TestAlphabetaRingReadsAsRing(t *testing.T) {
	data, _ := Example("default")
	for _, v := range []string{"alphabeta-ring", "Alphabeta-Ring", "ring"} {
		s, err := Load("default.yaml", data, []string{"communication.algorithm=" + v})
		if err != nil {
			t.Fatalf("%s: %v", v, err)
		}
		if s.Communication.Algorithm != AlgoRing {
			t.Errorf("%s loads as %q, want ring", v, s.Communication.Algorithm)
		}
	}
}
