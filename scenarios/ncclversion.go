package scenarios

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// NCCLReleases are the NCCL versions whose tuner zerosim has, oldest
// first, as communication.nccl_version (and zerosim collective's
// --nccl-version) names them: one per release whose src/graph/tuning.cc
// the model reads, and one per patch level where that file's constants
// changed within a release (2.28.3, 2.28.7 and 2.28.9; 2.29.2 and 2.29.7).
// The tables are collectives' (ncclversion.go), each cited by the
// NVIDIA/nccl tags that hold it. 2.30 is the model's default, NCCL's tuner
// at commit 5067397c2676d5aed50042fc39e5c8ee96eb0027 (v2.30.7-1's
// tuning.cc).
var NCCLReleases = []string{"2.19", "2.20", "2.21", "2.22", "2.23", "2.24", "2.25", "2.26", "2.27",
	"2.28.3", "2.28.7", "2.28.9", "2.29.2", "2.29.7", "2.30"}

// DefaultNCCLRelease is the release the model times when no version is
// given.
const DefaultNCCLRelease = "2.30"

// ncclBanner is the start of the line NCCL logs its version on
// (NCCL_DEBUG=INFO: "NCCL version 2.26.2+cuda12.8").
const ncclBanner = "NCCL version "

var ncclVersionRE = regexp.MustCompile(`^v?2\.(\d+)(?:\.(\d+))?(?:-\d+)?$`)

// ParseNCCLVersion reads an NCCL version as NCCL prints it ("2.26.2", or
// its whole banner line, "NCCL version 2.26.2+cuda12.8", which gives
// 2.26.2), as a tag ("v2.26.2-1") or as a release ("2.26"), and returns the
// NCCLReleases entry whose tuner that version runs: a release's for any of
// its patch levels, the patch-level entry at or before the patch where the
// release changed its tuner within itself.
func ParseNCCLVersion(s string) (string, error) {
	v := strings.TrimSpace(s)
	if len(v) > len(ncclBanner) && strings.EqualFold(v[:len(ncclBanner)], ncclBanner) {
		v = strings.TrimSpace(v[len(ncclBanner):]) // NCCL_DEBUG=INFO's "NCCL version 2.26.2+cuda12.8"
	}
	if i := strings.IndexByte(v, '+'); i > 0 {
		v = v[:i] // "2.26.2+cuda12.8", as NCCL's banner prints it
	}
	m := ncclVersionRE.FindStringSubmatch(v)
	if m == nil {
		return "", fmt.Errorf("NCCL version %q: give MAJOR.MINOR[.PATCH] as NCCL prints it, e.g. 2.26 or 2.26.2 (zerosim has the tuner of %s to %s)", s, NCCLReleases[0], NCCLReleases[len(NCCLReleases)-1])
	}
	minor := "2." + m[1]
	var patches []string // the release's patch-level entries, oldest first
	for _, r := range NCCLReleases {
		if r == minor {
			return r, nil
		}
		if strings.HasPrefix(r, minor+".") {
			patches = append(patches, r)
		}
	}
	if len(patches) == 0 {
		return "", fmt.Errorf("NCCL version %q: zerosim has the tuner of NCCL %s to %s (NVIDIA/nccl src/graph/tuning.cc); give one of those, or leave the version out for %s", s, NCCLReleases[0], NCCLReleases[len(NCCLReleases)-1], DefaultNCCLRelease)
	}
	if m[2] == "" {
		return "", fmt.Errorf("NCCL version %q: NCCL %s changed its tuner between patch releases (%s): give the patch level, e.g. %s", s, minor, strings.Join(patches, ", "), patches[len(patches)-1])
	}
	p, err := strconv.Atoi(m[2])
	if err != nil {
		// The pattern has only digits there: the number is out of int's range.
		return "", fmt.Errorf("NCCL version %q: patch level %s is too large for an NCCL release: give the patch NCCL prints, e.g. %s", s, m[2], patches[len(patches)-1])
	}
	got := ""
	for _, r := range patches {
		if q, _ := strconv.Atoi(r[len(minor)+1:]); q <= p {
			got = r
		}
	}
	if got == "" {
		return "", fmt.Errorf("NCCL version %q: the first release of NCCL %s is %s", s, minor, patches[0])
	}
	return got, nil
}

// NCCLVersionOnAMD is why an NCCL release is refused on an AMD GPU
// (target gfx): the GPU runs RCCL, whose tuning.cc has its own constants
// per ROCm release, and zerosim models one RCCL (collectives/rccl.go),
// not RCCL releases. Picking NCCL's tables for it would change the
// timing of RCCL's picks across nodes by an NCCL release's latencies
// (2 × MI300X nodes, all-reduce 4 MiB: 677 µs under 2.21's 28 µs tree
// hop against 321 µs), a release the cluster does not run.
func NCCLVersionOnAMD(gfx, key string) string {
	return fmt.Sprintf("nccl_version sets NCCL's tuner, but this %s cluster runs RCCL, whose releases zerosim does not model (one RCCL cost model): drop %s", gfx, key)
}
