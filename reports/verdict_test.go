package reports

import (
	"bytes"
	"strings"
	"testing"
)

// The fit verdict is the largest replay peak against the GPU's memory; a
// step that does not fit says so in the page's banner, at the top.
func TestFitVerdictBanner(t *testing.T) {
	cases := []struct {
		stage  string
		fits   bool
		peak   int64
		banner string
	}{
		// Llama 2 7B on 16 H100-80GB: ZeRO-0 keeps every state whole
		// (125.51 GiB at the optimizer step), ZeRO-1 shards the optimizer.
		{"0", false, 134768312320, "Does not fit in GPU memory: NO: peak 125.51 GiB on rank 0 exceeds the GPU&#39;s 80.00 GiB by 45.51 GiB"},
		{"1", true, 58143247360, ""},
	}
	for _, c := range cases {
		run := exampleRun(t, "default", "parallelism.zero_stage="+c.stage)
		v := run.Fit()
		if !v.Known || v.Fits != c.fits || v.Peak != c.peak || v.Capacity != 80<<30 {
			t.Errorf("stage %s: verdict %+v", c.stage, v)
		}
		var b bytes.Buffer
		if err := writeRunHTML(&b, run, nil); err != nil {
			t.Fatal(err)
		}
		page := b.String()
		has := strings.Contains(page, `id="not-fit"`)
		if has != !c.fits || (c.banner != "" && !strings.Contains(page, c.banner)) {
			t.Errorf("stage %s: banner %v, want %v with %q", c.stage, has, !c.fits, c.banner)
		}
		// The memory section is an HTML table like the others, not a
		// <pre> block of box drawing.
		if !strings.Contains(page, `<div id="memory-table">`) || !strings.Contains(page, `<td class="l">fp32 master params</td>`) ||
			strings.Contains(page, "┌") || !strings.Contains(page, "<td>13,476,831,232</td>") {
			t.Errorf("stage %s: the memory section is not an HTML table with exact bytes", c.stage)
		}
		if c.banner != "" && strings.Index(page, `id="not-fit"`) > strings.Index(page, `class="headline"`) {
			t.Errorf("stage %s: the banner comes after the headline", c.stage)
		}
	}
}

// TestCalibrationParamsSigned: calibrating on zerosim's own nccl-tests
// prediction (zerosim collective --format nccl-tests | zerosim calibrate)
// fits latencies a hair below zero, printed "-0.00 µs".
func TestCalibrationParamsSigned(t *testing.T) {
	p := CalibrationParams{IntraEff: 1, InterEff: 1, IntraHopUS: 1e-9, InterHopUS: -1e-9, FixedUS: -2.114}
	want := "intra efficiency 1.000, inter efficiency 1.000, intra hop +0.00 µs, inter hop +0.00 µs, fixed -2.11 µs"
	if got := p.String(); got != want {
		t.Errorf("%q, want %q", got, want)
	}
}
