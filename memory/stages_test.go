package memory

import (
	"errors"
	"testing"
)

// TestUnlaidStageKeepsRefusal: when a stage's layout is refused for too
// many buckets and its setup then fails too (analyzeSetup refuses a nil
// scenario), the caller gets the bucket refusal, not the setup's error.
func TestUnlaidStageKeepsRefusal(t *testing.T) {
	refused := &TooManyBucketsError{}
	r, err := unlaidStage(nil, 1, Options{}, refused, func(int, error) string { return "not laid out" })
	if r != nil || !errors.Is(err, refused) {
		t.Errorf("unlaidStage after a failed setup = %v, %v; want nil and the bucket refusal", r, err)
	}
}
