package scenarios

import (
	"strings"
	"testing"
)

// TestParseNCCLVersion: a version as NCCL prints it, a tag or a release
// reads as the release whose tuner it runs; a release whose tuner changed
// within it needs the patch level; versions outside the tables are refused
// with the range.
func TestParseNCCLVersion(t *testing.T) {
	for _, c := range []struct{ in, want, err string }{
		{in: "2.26", want: "2.26"},
		{in: "2.26.2", want: "2.26"},
		{in: " v2.21.5-1 ", want: "2.21"},
		{in: "2.26.2+cuda12.8", want: "2.26"},
		{in: "NCCL version 2.26.2+cuda12.8", want: "2.26"},
		{in: "nccl version 2.28.9", want: "2.28.9"},
		{in: "NCCL version ", err: "give MAJOR.MINOR[.PATCH]"},
		{in: "NCCL 2.26.2", err: "give MAJOR.MINOR[.PATCH]"},
		{in: "2.29.99999999999999999999", err: `patch level 99999999999999999999 is too large for an NCCL release: give the patch NCCL prints, e.g. 2.29.7`},
		{in: "2.28.3", want: "2.28.3"},
		{in: "2.28.8", want: "2.28.7"},
		{in: "2.28.9", want: "2.28.9"},
		{in: "2.29.3", want: "2.29.2"},
		{in: "2.30.7", want: "2.30"},
		{in: "2.28", err: "changed its tuner between patch releases (2.28.3, 2.28.7, 2.28.9)"},
		{in: "2.28.1", err: "the first release of NCCL 2.28 is 2.28.3"},
		{in: "2.18.6", err: "zerosim has the tuner of NCCL 2.19 to 2.30"},
		{in: "2.31.2", err: "zerosim has the tuner of NCCL 2.19 to 2.30"},
		{in: "latest", err: "give MAJOR.MINOR[.PATCH]"},
		{in: "", err: "give MAJOR.MINOR[.PATCH]"},
	} {
		got, err := ParseNCCLVersion(c.in)
		switch {
		case c.err == "" && (err != nil || got != c.want):
			t.Errorf("ParseNCCLVersion(%q) = %q, %v; want %q", c.in, got, err, c.want)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("ParseNCCLVersion(%q) = %q, %v; want an error saying %q", c.in, got, err, c.err)
		}
	}
}

// TestNCCLVersionKey: communication.nccl_version loads as given and is
// refused at the key, with the fix, where no tuner of it exists or where
// algorithm names zerosim's alpha–beta lowering, which reads no tuner.
func TestNCCLVersionKey(t *testing.T) {
	file := func(v, algo string) []byte {
		return []byte(`version: 1
cluster: {nodes: 2, gpus_per_node: 8, gpu: H100-80GB}
model: {preset: llama2-7b, seq_len: 2048}
parallelism: {dp: 16, zero_stage: 1}
communication:
  algorithm: ` + algo + `
  nccl_version: "` + v + `"
`)
	}
	s, err := Load("s.yaml", file("2.26.2", "auto"), nil)
	if err != nil || s.Communication.NCCLVersion != "2.26.2" {
		t.Fatalf("2.26.2: %v", err)
	}
	for _, c := range []struct{ v, algo, want string }{
		{"2.18", "auto", `s.yaml:7:3: nccl_version: NCCL version "2.18": zerosim has the tuner of NCCL 2.19 to 2.30`},
		{"2.26", "hierarchical", `s.yaml:7:3: nccl_version sets NCCL's tuner, which algorithm hierarchical (zerosim's alpha–beta lowering) does not use`},
	} {
		if _, err := Load("s.yaml", file(c.v, c.algo), nil); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s under %s: %v; want %q", c.v, c.algo, err, c.want)
		}
	}
}

// TestNCCLVersionOnAMD: an AMD GPU runs RCCL, whose releases zerosim does
// not model, so nccl_version there is refused at the key with the fix
// (it used to swap NCCL 2.21's tree latencies into RCCL's cross-node
// timing without a word: 677 µs against 321 µs for a 4 MiB all-reduce
// on 2 × 8 MI300X); cluster.gfx names an AMD GPU the same way.
func TestNCCLVersionOnAMD(t *testing.T) {
	for _, cluster := range []string{
		"{nodes: 2, gpus_per_node: 8, gpu: MI300X, intra: {preset: xGMI}}",
		"{nodes: 2, gpus_per_node: 8, gpu: MI355X}",
	} {
		data := []byte(`version: 1
cluster: ` + cluster + `
model: {preset: llama2-7b, seq_len: 2048}
parallelism: {dp: 16, zero_stage: 1}
communication:
  nccl_version: "2.21"
`)
		_, err := Load("s.yaml", data, nil)
		want := "s.yaml:6:3: nccl_version sets NCCL's tuner, but this gfx9"
		if err == nil || !strings.HasPrefix(err.Error(), want) || !strings.HasSuffix(err.Error(), "runs RCCL, whose releases zerosim does not model (one RCCL cost model): drop nccl_version") {
			t.Errorf("%s: %v; want %q... drop nccl_version", cluster, err, want)
		}
		// Without the key the same cluster loads.
		if _, err := Load("s.yaml", []byte(strings.Replace(string(data), `  nccl_version: "2.21"`, "  algorithm: auto", 1)), nil); err != nil {
			t.Errorf("%s without nccl_version: %v", cluster, err)
		}
	}
}
