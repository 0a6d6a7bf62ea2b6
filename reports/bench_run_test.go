package reports

import (
	"io"
	"testing"
)

// BenchmarkRunReports renders every output of `zerosim run` for the default
// example (Llama 2 7B, N=16, ZeRO-1) from one replay.
func BenchmarkRunReports(b *testing.B) {
	run := exampleRun(b, "default")
	plots := run.plots()
	for _, bc := range []struct {
		name string
		fn   func() error
	}{
		{"out=table", func() error { return WriteRunTable(io.Discard, run) }},
		{"out=json", func() error { return WriteRunJSON(io.Discard, run) }},
		{"out=trace", func() error { return writeTrace(io.Discard, run.Result, 0) }},
		{"out=plots-data", func() error { run.plots(); return nil }},
		{"out=png", func() error {
			for _, im := range plots.images() {
				if err := im.writePNG(io.Discard); err != nil {
					return err
				}
			}
			return nil
		}},
		{"out=html", func() error { return writeRunHTML(io.Discard, run, &plots) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := bc.fn(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
