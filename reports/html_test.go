package reports

import (
	"bytes"
	"strings"
	"testing"
)

// TestRunHTMLSelfContained checks report.html holds everything inline: no
// scripts, no external references, every plot as inline SVG.
func TestRunHTMLSelfContained(t *testing.T) {
	run := tinyRun(t)
	var b bytes.Buffer
	if err := writeRunHTML(&b, run, nil); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	if n := strings.Count(page, "<svg"); n != 4 {
		t.Errorf("%d inline SVGs, want 4", n)
	}
	for _, bad := range []string{"<script", "http://", "https://", "src=", "<link", "@import"} {
		if bad == "http://" {
			// The SVG namespace declarations are not fetched.
			page := strings.ReplaceAll(strings.ReplaceAll(page, "http://www.w3.org/2000/svg", ""), "http://www.w3.org/1999/xlink", "")
			if strings.Contains(page, bad) {
				t.Errorf("report.html contains %q", bad)
			}
			continue
		}
		if strings.Contains(page, bad) {
			t.Errorf("report.html contains %q", bad)
		}
	}
	for _, want := range []string{"zerosim run: tiny-zero3", "ZeRO-3 exposes 100.0 % of its all-gather time", "backward reduce-scatter", "logical/rank", "fp32 master params"} {
		if !strings.Contains(page, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
}
