package reports

import (
	"bytes"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/zero"
)

// TestLogicalLegendAllReduce (QA s28 L9): the phase table's logical bytes
// count an all-reduce of S as 2S (zero.Logical, the seeds' count), the
// others S; the legend says so where the step has an all-reduce (K = 2: the
// inter-group all-reduce), and the inter phase's logical bytes are twice
// its buffers.
func TestLogicalLegendAllReduce(t *testing.T) {
	const note = "(an all-reduce's twice: a reduce-scatter and an all-gather of it, as the seeds count)"
	for _, c := range []struct {
		k    string
		want bool
	}{{"1", false}, {"2", true}} {
		run := exampleRun(t, "default", "parallelism.k="+c.k)
		var out bytes.Buffer
		if err := WriteRunTable(&out, run); err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(out.String(), "\nlogical: the buffers the rank's collectives reduce or gather "+note+"; sent:"); got != c.want {
			t.Errorf("K=%s: legend names the all-reduce: %t, want %t", c.k, got, c.want)
		}
		inter := 0
		for _, p := range run.Result.Phases {
			if p.Phase != zero.PhaseInterAR {
				continue
			}
			inter++
			var buffers int64
			for _, tk := range run.Result.Schedule.Tasks {
				if tk.Phase == zero.PhaseInterAR && tk.Kind.IsComm() {
					buffers += tk.Bytes
				}
			}
			if buffers == 0 || p.Logical != 2*buffers {
				t.Errorf("K=%s: inter-group all-reduce logical %d B, buffers %d B: want twice", c.k, p.Logical, buffers)
			}
		}
		// K = 2 runs the inter-group all-reduce, K = 1 none.
		if want := map[bool]int{false: 0, true: 1}[c.want]; inter != want {
			t.Errorf("K=%s: %d inter-group all-reduce phases, want %d", c.k, inter, want)
		}
	}
}
