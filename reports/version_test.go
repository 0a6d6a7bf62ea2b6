package reports

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/sweep"
)

// goldenBinary stands for the test binary's SHA-256 in the goldens: the
// binary changes with every build, and a development build's zerosim
// block names it (Build.Binary).
var goldenBinary = strings.Repeat("0", 64)

// TestMain fixes the executable's digest for the goldens; TestReadBuild
// checks the real one.
func TestMain(m *testing.M) {
	executableSHA256 = func() string { return goldenBinary }
	os.Exit(m.Run())
}

// TestReadBuild: a test binary carries no VCS information, a development
// build, so its zerosim block names the executable by its SHA-256 (before,
// result.json's block was {"version":"devel"} while the sweep meta
// carried the digest), which hashExecutable reads from the file itself.
func TestReadBuild(t *testing.T) {
	b := ReadBuild()
	if b.Version != "devel" || b.Revision != "" || b.Binary != goldenBinary {
		t.Errorf("ReadBuild() = %+v, want version devel, no revision, the executable's digest", b)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(bin)
	if got, want := hashExecutable(), hex.EncodeToString(sum[:]); got != want {
		t.Errorf("hashExecutable() = %s, want %s", got, want)
	}
}

// TestBuildSweep: the sweep meta line's build is the JSON outputs' less
// the commit time, every other field carried (a meta line that dropped
// the digest made two development builds' shards merge).
func TestBuildSweep(t *testing.T) {
	b := Build{Version: "v0.9.0", Revision: "0123456789abcdef", Time: "2026-11-23T15:03:15Z", Modified: true, Binary: strings.Repeat("ab", 32)}
	want := sweep.Build{Version: b.Version, Revision: b.Revision, Modified: true, Binary: b.Binary}
	if got := b.Sweep(); *got != want {
		t.Errorf("Sweep() = %+v, want %+v", *got, want)
	}
}
