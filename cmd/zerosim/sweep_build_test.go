package main

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSweepMetaNamesBuild: the meta line names the zerosim build that
// wrote the rows, and --resume and merge refuse rows another build wrote,
// naming both (QA25 M6: a Slurm task requeued after an upgrade appended
// rows of another model version, and merge joined shards of two). The
// test binary has no VCS information, a development build: its meta line
// carries its executable's SHA-256 (computed here from the file), so
// another development build is refused too (before, every development
// build wrote {"version":"devel"} and they all matched).
func TestSweepMetaNamesBuild(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(bin)
	self := `"zerosim":{"version":"devel","binary_sha256":"` + hex.EncodeToString(sum[:]) + `"}`
	selfName := "zerosim devel (binary " + hex.EncodeToString(sum[:6]) + ")"
	// Two binaries told apart by digest may be one commit built in two
	// checkouts (the paths go build embeds differ; -trimpath drops them):
	// the refusals say so; for the others the fix is one zerosim.
	const oneZerosim, trimpath = "with one zerosim", "go build -trimpath"
	for _, tc := range []struct {
		name, other, otherName, mergeFix, resumeFix string
	}{
		{"a release", `"zerosim":{"version":"v0.9.0","revision":"0123456789abcdef0123"}`, "zerosim v0.9.0 (git 0123456789ab)", oneZerosim, "resume with that zerosim"},
		{"another development build", `"zerosim":{"version":"devel","binary_sha256":"` + strings.Repeat("5a", 32) + `"}`, "zerosim devel (binary 5a5a5a5a5a5a)", trimpath, trimpath},
		{"a development build before its binary was recorded", `"zerosim":{"version":"devel"}`, "zerosim devel", oneZerosim, "resume with that zerosim"},
		{"one whose executable was unreadable", `"zerosim":{"version":"devel","binary_sha256":"unknown"}`, "zerosim devel (its executable unreadable)", oneZerosim, "resume with that zerosim"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			p := func(n string) string { return filepath.Join(dir, n) }
			grid := []string{"sweep", "seed002-tiny", "--grid", "parallelism.k=1,2,4,8"}
			for i, sh := range []string{"0/2", "1/2"} {
				args := append(grid[:len(grid):len(grid)], "--shard", sh, "--out", p([]string{"s0.csv", "s1.csv"}[i]))
				if code, _, errOut := runMain(t, "", args...); code != 0 {
					t.Fatalf("%q: exit %d: %s", args, code, errOut)
				}
			}
			data, _ := os.ReadFile(p("s0.csv"))
			if here := "# zerosim sweep {" + self + `,"scenario_sha256":`; !strings.HasPrefix(string(data), here) {
				t.Fatalf("meta line %q does not start with the build %s", strings.SplitN(string(data), "\n", 2)[0], here)
			}
			// The same binary resumes its own output.
			if code, _, errOut := runMain(t, "", append(grid[:len(grid):len(grid)], "--shard", "0/2", "--out", p("s0.csv"), "--resume")...); code != 0 {
				t.Fatalf("resume by the same binary: exit %d: %s", code, errOut)
			}
			// s1.csv as the other build wrote it.
			other, _ := os.ReadFile(p("s1.csv"))
			other = []byte(strings.Replace(string(other), self, tc.other, 1))
			if err := os.WriteFile(p("s1.csv"), other, 0o644); err != nil {
				t.Fatal(err)
			}
			args := []string{"merge", p("s0.csv"), p("s1.csv")}
			code, out, errOut := runMain(t, "", args...)
			oneLine(t, args, code, out, errOut, p("s1.csv")+" was written by "+tc.otherName+", "+p("s0.csv")+" by "+selfName, tc.mergeFix)
			args = append(grid[:len(grid):len(grid)], "--shard", "1/2", "--out", p("s1.csv"), "--resume")
			code, out, errOut = runMain(t, "", args...)
			oneLine(t, args, code, out, errOut, "the existing output was written by "+tc.otherName+", this is "+selfName, tc.resumeFix)
			if after, _ := os.ReadFile(p("s1.csv")); string(after) != string(other) {
				t.Error("--resume changed the output of another build")
			}
		})
	}
}

// TestSweepSetUnderGrid: a --set of a key a --grid sets at every point is
// dead (the grid wins) yet changes the meta line, so the rows cannot be
// merged with the same sweep run without it (QA25 L13): refused.
func TestSweepSetUnderGrid(t *testing.T) {
	for _, tc := range []struct{ set, grid string }{
		{"parallelism.k=4", "parallelism.k=1,2"},
		{"cluster.intra.bandwidth=100GB/s", "cluster.intra={preset: NVLink4}"},
	} {
		args := []string{"sweep", "seed002-tiny", "--set", tc.set, "--grid", tc.grid}
		code, out, errOut := runMain(t, "", args...)
		oneLine(t, args, code, out, errOut, "--set "+tc.set+": --grid "+tc.grid+" sets that key at every point")
	}
	// A --set beside a grid's key, or holding it among others, stays.
	if code, _, errOut := runMain(t, "", "sweep", "seed002-tiny", "--set", "parallelism.dp=auto", "--grid", "parallelism.k=1,2"); code != 0 {
		t.Errorf("--set parallelism.dp=auto --grid parallelism.k=1,2: exit %d: %s", code, errOut)
	}
}
