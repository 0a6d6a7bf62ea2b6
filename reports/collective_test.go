package reports

import (
	"bytes"
	"flag"
	"path/filepath"
	"testing"

	goldenfile "github.com/zerosim/zerosim/internal/golden"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	goldenfile.Check(t, filepath.Join("testdata", name), got, *update)
}

// sampleCollective is the 8-rank ring all-reduce of 64 MiB on 300e9 B/s
// links with 500 ns per step: 398468374 ps (the alpha–beta reference).
func sampleCollective() *CollectiveReport {
	return &CollectiveReport{
		Zerosim: ReadBuild(), Op: "allreduce", Algorithm: "ring", Cluster: "1 node × 8 GPUs, nvlink 300.00 GB/s 500ns",
		Group: []int{0, 1, 2, 3, 4, 5, 6, 7}, Groups: 1, Classes: []string{"nvlink", "network"},
		Rows: []CollectiveRow{{
			Size: 64 << 20, Count: 32 << 20, Algorithm: "ring", TimePS: 398468374, ClosedFormPS: 398468374,
			AlgBW: 168.42, BusBW: 294.73,
			Bytes: []ClassBytes{{"nvlink", 14 * 8 << 20 * 8, 14 * 8 << 20}, {"network", 0, 0}},
		}},
	}
}

func TestCollectiveRender(t *testing.T) {
	for _, c := range []struct {
		name  string
		write func(*bytes.Buffer, *CollectiveReport) error
	}{
		{"collective.table.golden", func(b *bytes.Buffer, r *CollectiveReport) error { return WriteCollectiveTable(b, r) }},
		{"collective.json.golden", func(b *bytes.Buffer, r *CollectiveReport) error { return WriteCollectiveJSON(b, r) }},
		{"collective.csv.golden", func(b *bytes.Buffer, r *CollectiveReport) error { return WriteCollectiveCSV(b, r) }},
	} {
		var b bytes.Buffer
		if err := c.write(&b, sampleCollective()); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		golden(t, c.name, b.Bytes())
	}
}

func TestMicros(t *testing.T) {
	for ps, want := range map[int64]string{
		398468374: "398.47", 0: "0.00", 4999: "0.00", 5000: "0.01", 999995000: "1000.00", -1500000: "-1.50", 14326557654: "14326.56",
	} {
		if got := Micros(ps); got != want {
			t.Errorf("Micros(%d) = %q, want %q", ps, got, want)
		}
	}
}
