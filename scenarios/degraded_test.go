package scenarios

import (
	"slices"
	"testing"
)

// TestDegradedLinks: an override is degraded when its bandwidth is below
// its class's or its latency above it; a faster or equal entry is not
// (the default example's NICs are 50 GB/s at 2 µs, its NVLink 450 GB/s).
func TestDegradedLinks(t *testing.T) {
	data, _ := Example("default")
	for _, c := range []struct {
		overrides string
		want      []string // Where, class and Change of each degraded link
	}{
		{"[{node: 1, class: inter, bandwidth: 1GB/s}]", []string{"node 1 inter 1.00 GB/s instead of 50.00 GB/s"}},
		{"[{node: 0, gpu: 3, class: intra, latency: 500us}]", []string{"node 0 gpu 3 intra latency 500µs instead of 500ns"}},
		{"[{node: 1, class: inter, bandwidth: 100GB/s}, {node: 0, class: inter, latency: 1us}]", nil},
		{"[{node: 0, class: inter, bandwidth: 25GB/s, latency: 4us}, {node: 1, class: inter, bandwidth: 50GB/s}]",
			[]string{"node 0 inter 25.00 GB/s instead of 50.00 GB/s, latency 4µs instead of 2µs"}},
	} {
		s, err := Load("default.yaml", data, []string{"cluster.link_overrides=" + c.overrides})
		if err != nil {
			t.Fatalf("%s: %v", c.overrides, err)
		}
		var got []string
		for _, d := range s.Cluster.DegradedLinks() {
			got = append(got, d.Where()+" "+string(d.Class)+" "+d.Change())
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: %q, want %q", c.overrides, got, c.want)
		}
	}
}
