package zerosim_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestComputePackagesTrustTheScenario: scenarios.Resolve validates and
// defaults a scenario once; the compute packages never re-derive a scenario
// value (no max(K, 1) guards, no MFU default, no enum re-parsed with
// ToLower). The only ToLower left parses the collective command's own
// --op/--algo flags, which are not scenario values.
func TestComputePackagesTrustTheScenario(t *testing.T) {
	bad := regexp.MustCompile(`max\([^()]*\.K, 1\)|ToLower|\.MFU == 0|mfu == 0|Parse(Padding|Algo)\([^)]*\.(Communication|Padding|Algorithm)`)
	allowed := map[string]int{"collectives/plan.go": 2} // ParseOp, ParseAlgo: CLI flags
	for _, dir := range []string{"memory", "topology", "zero", "collectives", "sweep", "numerics", "sim", "units"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for i, line := range strings.Split(string(b), "\n") {
				if bad.MatchString(line) {
					if n++; n > allowed[filepath.ToSlash(f)] {
						t.Errorf("%s:%d re-derives a scenario value (scenarios.Resolve did it): %s", f, i+1, strings.TrimSpace(line))
					}
				}
			}
		}
	}
}
