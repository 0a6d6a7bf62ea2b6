package reports

import (
	"bytes"
	"strings"
	"testing"
)

// TestRunTotalNamesReplayPeak (QA s28 L7): Llama-2-13B at ZeRO-3,
// micro-batch 1, on 2 × 8 H100: the headline's peak is the replay's, the
// memory table's total the walk's, 175.20 MiB above it. The total row says
// how the two stand: the replay's lower by their difference.
func TestRunTotalNamesReplayPeak(t *testing.T) {
	run := exampleRun(t, "default", "model.preset=llama2-13b", "parallelism.zero_stage=3", "training.micro_batch=1",
		"training.recompute=selective", "communication.bucket_size=200MB")
	walked, replayed := run.Result.MemoryModel.Peak, run.Result.Memory.Peak
	if walked <= replayed {
		t.Fatalf("walked %d B, replayed %d B: the case needs the walk above", walked, replayed)
	}
	var out bytes.Buffer
	if err := WriteRunTable(&out, run); err != nil {
		t.Fatal(err)
	}
	want := "│ replay peak (headline): " + run.Style.Units.format(walked-replayed) + " lower │"
	for _, l := range strings.Split(out.String(), "\n") {
		if strings.HasPrefix(l, "│ total ") && strings.Contains(l, "│ backward ") {
			if !strings.HasSuffix(l, want) {
				t.Errorf("total row %q, want it to end %q", l, want)
			}
			return
		}
	}
	t.Errorf("no memory total row in\n%s", out.String())
}
