package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/internal/golden"
)

// TestSweepsDoc runs every ```console block of docs/sweeps.md ("$ zerosim
// …" then its stdout) and compares the output, so the page cannot drift
// from the code.
func TestSweepsDoc(t *testing.T) {
	data, err := os.ReadFile("../../docs/sweeps.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := strings.Split(string(data), "```console\n")[1:]
	if len(blocks) < 3 {
		t.Fatalf("%d console blocks, want the compare, sweep and fit examples", len(blocks))
	}
	for _, b := range blocks {
		b = b[:strings.Index(b, "```")]
		cmdLine, want, _ := strings.Cut(b, "\n")
		args := strings.Fields(strings.TrimPrefix(cmdLine, "$ zerosim "))
		out, errOut, code := sweepCLI(t, args...)
		if code != 0 {
			t.Errorf("%s: exit %d: %s", cmdLine, code, errOut)
			continue
		}
		if out != want {
			t.Errorf("%s: output differs from docs/sweeps.md:\n%s", cmdLine, out)
		}
	}
}

// TestFitDocFigures holds the figures docs/sweeps.md's fit section quotes
// in decimal GB, seed 002's unit, equal to what zerosim fit seed002-7b
// prints as exact bytes (--format json): ZeRO-3's at-rest bytes under
// --convention seed002 and its peak, and no ZeRO's at-rest bytes and peak.
func TestFitDocFigures(t *testing.T) {
	type row struct {
		Stage, K     int
		Peak, AtRest int64
		Fits         bool
	}
	rows := func(args ...string) map[int]row {
		out, errOut, code := sweepCLI(t, append([]string{"fit", "seed002-7b", "--format", "json"}, args...)...)
		if code != 0 {
			t.Fatalf("zerosim fit seed002-7b --format json %s: exit %d: %s", strings.Join(args, " "), code, errOut)
		}
		var rep struct {
			Rows []struct {
				Stage, K int
				Peak     int64 `json:"peak_bytes"`
				AtRest   int64 `json:"at_rest_bytes"`
				Fits     bool
			}
		}
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatal(err)
		}
		m := map[int]row{} // K=1 row of each stage
		for _, r := range rep.Rows {
			if r.K == 1 {
				m[r.Stage] = row{r.Stage, r.K, r.Peak, r.AtRest, r.Fits}
			}
		}
		return m
	}
	// gb is bytes in decimal GB to 0.1 GB, trailing zeros dropped, as the
	// page writes them.
	gb := func(b int64) string {
		return strconv.FormatFloat(math.Round(float64(b)/1e8)/10, 'f', -1, 64)
	}
	z, seed := rows(), rows("--convention", "seed002")
	if !z[3].Fits || z[0].Fits {
		t.Fatalf("fit seed002-7b: ZeRO-3 fits %v, no ZeRO fits %v; the page says yes and no", z[3].Fits, z[0].Fits)
	}
	want := fmt.Sprintf("ZeRO-3 fits (seed 002: %s GB at rest, `--convention seed002`; zerosim's peak with the gathered units and gradients in flight: %s GB), no ZeRO does not (%s GB at rest, %s GB peak)",
		gb(seed[3].AtRest), gb(z[3].Peak), gb(z[0].AtRest), gb(z[0].Peak))
	golden.CheckQuotes(t, "../../docs/sweeps.md", "zerosim fit seed002-7b --format json [--convention seed002], in decimal GB", want)
}
