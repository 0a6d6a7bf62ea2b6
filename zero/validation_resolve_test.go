package zero

import (
	"strings"
	"testing"
)

// TestValidationRowResolve holds the forms a validation row may publish
// in (validationRow.resolve): a throughput range becomes its midpoint, a
// percentage of the source's capacity GiB, and memory_bytes (Megatron-LM's
// mem-max-allocated-bytes) GiB of 2³⁰ bytes; two forms of one figure are
// refused. The byte count is the Megatron functional test's
// (testdata/validation/megatron-gpt3-functional-h100.json, row 1).
func TestValidationRowResolve(t *testing.T) {
	for _, c := range []struct {
		name      string
		row       validationRow
		capacity  float64
		tokens    float64
		memoryGiB float64
		err       string
	}{
		{"memory_bytes", validationRow{MemoryBytes: 2690743808}, 0, 0, 2690743808.0 / (1024 * 1024 * 1024), ""},
		{"memory_pct of capacity", validationRow{MemoryPct: 50}, 80, 0, 40, ""},
		{"tokens range", validationRow{TokensRange: []float64{100, 300}}, 0, 200, 0, ""},
		{"memory_gib and memory_bytes", validationRow{MemoryGiB: 2.5, MemoryBytes: 2690743808}, 0, 0, 0, "memory_gib and memory_bytes both set"},
		{"memory_gib and memory_pct", validationRow{MemoryGiB: 2.5, MemoryPct: 50}, 80, 0, 0, "memory_gib and memory_pct both set"},
		{"memory_pct without capacity", validationRow{MemoryPct: 50}, 0, 0, 0, "memory_pct without the source's capacity_gib"},
		{"tokens and range", validationRow{TokensPerGPU: 1, TokensRange: []float64{100, 300}}, 0, 0, 0, "both set"},
		{"memory_bytes negative", validationRow{MemoryBytes: -1}, 0, 0, 0, "want a byte count above 0"},
		{"range reversed", validationRow{TokensRange: []float64{300, 100}}, 0, 0, 0, "want [low, high]"},
	} {
		r := c.row
		err := r.resolve(c.capacity)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: %v, want an error with %q", c.name, err, c.err)
			}
			continue
		}
		if err != nil || r.MemoryGiB != c.memoryGiB || r.TokensPerGPU != c.tokens {
			t.Errorf("%s: %v, memory %g GiB, tokens %g; want %g GiB, %g", c.name, err, r.MemoryGiB, r.TokensPerGPU, c.memoryGiB, c.tokens)
		}
	}
}
