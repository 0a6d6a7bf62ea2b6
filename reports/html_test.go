package reports

import (
	"bytes"
	"html"
	"regexp"
	"slices"
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

// TestRunHTMLPeakLines: each line of the text report's peak note is its own
// paragraph in report.html (QA3 s16 finding 11e: "…67.7 % of 80.00 GiB
// busiest rank as a profiler sees it: …" ran the two together).
func TestRunHTMLPeakLines(t *testing.T) {
	for _, tc := range []struct {
		name  string
		run   *Run
		paras int // notes from peakText
	}{
		{"default", exampleRun(t, "default"), 2},
		{"tiny", tinyRun(t), 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := writeRunHTML(&b, tc.run, nil); err != nil {
				t.Fatal(err)
			}
			var paras []string
			for _, m := range regexp.MustCompile(`<p class="note">([^<]*)</p>`).FindAllStringSubmatch(b.String(), -1) {
				paras = append(paras, html.UnescapeString(m[1]))
			}
			lines := strings.Split(tc.run.peakText(), "\n")
			if len(lines) != tc.paras {
				t.Fatalf("peak text has %d lines, want %d", len(lines), tc.paras)
			}
			for _, l := range lines {
				if !slices.Contains(paras, l) {
					t.Errorf("no paragraph %q among %q", l, paras)
				}
			}
		})
	}
}
