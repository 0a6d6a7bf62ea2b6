package sim

import (
	"bytes"
	"flag"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/zerosim/zerosim/internal/golden"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

// textTracer writes one line per engine callback.
type textTracer struct{ b bytes.Buffer }

func (tt *textTracer) Event(t Time, seq uint64) { fmt.Fprintf(&tt.b, "%12d event seq=%d\n", t, seq) }
func (tt *textTracer) FlowStart(t Time, f *Flow) {
	fmt.Fprintf(&tt.b, "%12d start flow=%d bytes=%d\n", t, f.ID(), f.Bytes())
}
func (tt *textTracer) FlowRate(t Time, f *Flow, bw int64) {
	fmt.Fprintf(&tt.b, "%12d rate  flow=%d %d B/s\n", t, f.ID(), bw)
}
func (tt *textTracer) FlowDone(t Time, f *Flow) {
	fmt.Fprintf(&tt.b, "%12d done  flow=%d\n", t, f.ID())
}

// TestTraceGolden: a small run of timers, two flows sharing a link and a
// ring group, traced line by line (testdata/trace.golden; -update rewrites).
// Reading it: flow 1 joins flow 0 at 1 µs and both drop to 50 GB/s; the
// group (flow 2) crosses the same link and takes a third.
func TestTraceGolden(t *testing.T) {
	e := New()
	tr := &textTracer{}
	e.SetTracer(tr)
	link := NewResource("link", 100e9)
	other := NewResource("other", 100e9)
	e.StartFlow(1e6, []*Resource{link}, nil)
	e.At(1e6, func() { e.StartFlow(1e6, []*Resource{link, other}, nil) })
	e.At(2e6, func() { e.StartGroup(1e5, [][]*Resource{{link}, {other}}, nil) })
	e.After(5e6, func() {})
	e.Run()
	got := tr.b.Bytes()
	golden.Check(t, filepath.Join("testdata", "trace.golden"), got, *update)
}
