package zerosim_test

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// fusedOp matches the fused multiply-add instructions of arm64's assembly
// listing (FMADDD, FMSUBD, FNMADDD, FNMSUBD and their single-precision S
// forms, and the vector VFMLA/VFMLS), each with the source position the
// compiler gives it.
var fusedOp = regexp.MustCompile(`\((/[^)]+\.go):(\d+)\)\s+(?:F(?:N)?M(?:ADD|SUB)[DS]|VFML[AS])\b`)

// TestNoFusedMultiplyAdd holds "same input, same bytes out" across
// architectures. The Go specification lets a compiler fuse x*y + z into one
// instruction with a single rounding ("An implementation may combine
// multiple floating-point operations into a single fused operation ... An
// explicit floating-point type conversion rounds to the precision of the
// target type, preventing fusion", The Go Programming Language
// Specification, Arithmetic operators, Floating-point operators); the gc
// compiler does so on arm64 (and ppc64le, s390x, riscv64) but never on
// amd64, so an unconverted product could make a sweep sharded over x86 and
// Arm machines, or verify's bit-for-bit comparison, differ in the last bit.
// The test compiles the module for arm64 with the assembly listing and
// fails on any fused instruction outside an explicit math.FMA, which
// rounds once on every architecture by definition.
func TestNoFusedMultiplyAdd(t *testing.T) {
	cmd := exec.Command("go", "build", "-o", os.DevNull, "-gcflags="+module+"/...=-S", "./...")
	cmd.Env = append(os.Environ(), "GOARCH=arm64", "GOOS=linux", "CGO_ENABLED=0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go build for arm64: %v\n%.2000s", err, out)
	}
	// The module's own positions, by its directory: the standard
	// library's and the dependencies' (inlined into the module's code)
	// are under GOROOT and the module cache. A filter on "/go/src/"
	// dropped every position of a module checked out under ~/go/src.
	root, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}").Output()
	if err != nil || strings.TrimSpace(string(root)) == "" {
		t.Fatalf("go list -m: %v (%q)", err, root)
	}
	dir := filepath.Clean(strings.TrimSpace(string(root))) + string(filepath.Separator)
	seen := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		m := fusedOp.FindStringSubmatch(sc.Text())
		if m == nil || !strings.HasPrefix(filepath.Clean(m[1]), dir) {
			continue
		}
		at := m[1] + ":" + m[2]
		if seen[at] {
			continue
		}
		seen[at] = true
		if src := sourceLine(t, m[1], m[2]); !strings.Contains(src, "math.FMA(") {
			t.Errorf("%s: arm64 fuses a multiply-add here: %s\n\twrap the product (or the inlined function's result that holds it) in float64(...) or float32(...) so every architecture rounds it alike", at, strings.TrimSpace(src))
		}
	}
	if len(seen) == 0 {
		// numerics' fma32 is an explicit math.FMA: if the listing shows
		// no fused instruction at all, the pattern no longer matches the
		// assembler's output and the test checks nothing.
		t.Fatalf("no fused instruction found in the arm64 listing (%d bytes); expected numerics' math.FMA: has the listing's format changed?", len(out))
	}
}

func sourceLine(t *testing.T, file, line string) string {
	t.Helper()
	n, err := strconv.Atoi(line)
	if err != nil {
		t.Fatalf("line %q: %v", line, err)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("reading %s: %v", file, err)
	}
	lines := strings.Split(string(b), "\n")
	if n < 1 || n > len(lines) {
		t.Fatalf("%s has no line %d", file, n)
	}
	return lines[n-1]
}
