package reports

import (
	"io"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/zero"
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

// BenchmarkFastPathJSON is `zerosim run gpt3-175b-16k --format json` minus
// the process: load, the symmetric fast-path replay of 16,384 ranks, and
// result.json, whose identical ranks are written once (stands_for) unless
// AllRanks. The whole-process goal (issue 19) is SimAI's analytical 0.043 s.
func BenchmarkFastPathJSON(b *testing.B) {
	for _, all := range []bool{false, true} {
		name := "ranks=distinct"
		if all {
			name = "ranks=all"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			var size int
			for b.Loop() {
				data, _ := scenarios.Example("gpt3-175b-16k")
				s, err := scenarios.Load("gpt3-175b-16k.yaml", data, nil)
				if err != nil {
					b.Fatal(err)
				}
				// The options of zerosim run.
				res, err := zero.Replay(s, zero.Options{KeepSpans: true, SpanRanks: TraceMaxRanks})
				if err != nil {
					b.Fatal(err)
				}
				run, err := NewRun(s, res, nil)
				if err != nil {
					b.Fatal(err)
				}
				run.AllRanks = all
				var cw countWriter
				if err := WriteRunJSON(&cw, run); err != nil {
					b.Fatal(err)
				}
				size = int(cw)
			}
			b.ReportMetric(float64(size), "json-bytes")
		})
	}
}

type countWriter int

func (c *countWriter) Write(p []byte) (int, error) { *c += countWriter(len(p)); return len(p), nil }
