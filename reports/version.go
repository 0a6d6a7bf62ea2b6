package reports

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"runtime/debug"
	"strings"
	"sync"

	"github.com/zerosim/zerosim/sweep"
)

// version is set at build time with
// -ldflags "-X github.com/zerosim/zerosim/reports.version=v1.2.3"; otherwise
// the module version from the build info is used, else "devel".
var version = ""

// Build identifies the zerosim binary that wrote a report, so a result can
// be traced to the code that produced it.
type Build struct {
	Version  string `json:"version"`            // module version or "devel"
	Revision string `json:"revision,omitempty"` // VCS revision (git commit) the binary was built from
	Time     string `json:"time,omitempty"`     // commit time of Revision (RFC 3339)
	Modified bool   `json:"modified,omitempty"` // the work tree had uncommitted changes
	// Binary is the hex SHA-256 of the zerosim executable when version and
	// revision do not say which code it is (sweep.Build.Identified: a
	// development build without VCS information, or a modified work
	// tree), sweep.BinaryUnknown when it could not be read, else empty:
	// every JSON output and the sweep meta line name a build alike.
	Binary string `json:"binary_sha256,omitempty"`
}

// ReadBuild reads the binary's build information (runtime/debug): the VCS
// settings "go build" stamps into a binary built inside a git checkout.
// Test binaries and "go build -buildvcs=false" carry no revision.
func ReadBuild() Build {
	b := ReadStamp()
	if !b.Sweep().Identified() {
		b.Binary = executableSHA256()
	}
	return b
}

// Sweep is b as a sweep's meta line records it (sweep.Build: no commit
// time), the one conversion between the two types: reports imports sweep,
// so sweep's type cannot be this one.
func (b Build) Sweep() *sweep.Build {
	return &sweep.Build{Version: b.Version, Revision: b.Revision, Modified: b.Modified, Binary: b.Binary}
}

// ReadStamp is ReadBuild without the executable's digest: the version and
// the VCS settings "go build" stamped, what the version line prints
// (Build.String shows no digest), read without hashing the binary on
// every start (--help, shell completion).
func ReadStamp() Build {
	b := Build{Version: "devel"}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		b.Version = v
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Revision = s.Value
		case "vcs.time":
			b.Time = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		}
	}
	if version != "" {
		b.Version = version
	}
	return b
}

// executableSHA256 is the hex SHA-256 of the running executable, read
// once per process (a 30 MB binary: tens of milliseconds), or
// sweep.BinaryUnknown when it cannot be read. A variable so that the
// goldens' tests can fix it (their test binary changes with every build).
var executableSHA256 = sync.OnceValue(hashExecutable)

// hashExecutable hashes the file os.Executable names.
func hashExecutable() string {
	path, err := os.Executable()
	if err != nil {
		return sweep.BinaryUnknown
	}
	f, err := os.Open(path)
	if err != nil {
		return sweep.BinaryUnknown
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return sweep.BinaryUnknown
	}
	return hex.EncodeToString(h.Sum(nil))
}

// String is the one-line form: "devel (git 1a2b3c4d5e6f, 2026-11-23T15:00:00Z, modified)".
func (b Build) String() string {
	var extra []string
	if b.Revision != "" {
		r := b.Revision
		if len(r) > 12 {
			r = r[:12]
		}
		extra = append(extra, "git "+r)
	}
	if b.Time != "" {
		extra = append(extra, b.Time)
	}
	if b.Modified {
		extra = append(extra, "modified")
	}
	if len(extra) == 0 {
		return b.Version
	}
	return b.Version + " (" + strings.Join(extra, ", ") + ")"
}
