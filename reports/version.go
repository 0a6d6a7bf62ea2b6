package reports

import (
	"runtime/debug"
	"strings"
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
}

// ReadBuild reads the binary's build information (runtime/debug): the VCS
// settings "go build" stamps into a binary built inside a git checkout.
// Test binaries and "go build -buildvcs=false" carry no revision.
func ReadBuild() Build {
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
