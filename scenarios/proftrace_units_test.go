package scenarios

import (
	"strings"
	"testing"
)

// TestTraceDurationsInNanoseconds (qa20 L4): kernels of one stream whose
// durations were written in ns (1000× too long) overlap each other, which a
// CUDA stream cannot run: refused at the first overlapping kernel, naming
// the likely cause (they were fitted at efficiency 0.0003). Kernels that
// touch or overlap by a rounding are one stream's, as before; a ts in ns
// names the bound and the unit.
func TestTraceDurationsInNanoseconds(t *testing.T) {
	kernel := func(ts, dur string) string {
		return `{"ph": "X", "cat": "kernel", "name": "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn", "pid": 0, "tid": 7, "ts": ` + ts + `, "dur": ` + dur + `}`
	}
	trace := func(ks ...string) []byte {
		return []byte("{\"traceEvents\": [\n" + strings.Join(ks, ",\n") + "\n]}\n")
	}
	if _, err := ParseProfilerTrace("ok.json", trace(kernel("100", "50"), kernel("150", "50"), kernel("199.5", "50"))); err != nil {
		t.Errorf("serial kernels: %v", err)
	}
	_, err := ParseProfilerTrace("ns.json", trace(kernel("100", "50000"), kernel("150", "50000"), kernel("200", "50000")))
	want := "ns.json:3:1: kernel \"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn\" starts at ts 150 µs, before the kernel before it on stream 7 ends: a CUDA stream runs its kernels one at a time, yet its kernels' durations add up to 150ms within 50.1ms; the durations are likely not in microseconds"
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("durations in ns: %v, want %q…", err, want)
	}
	_, err = ParseProfilerTrace("tsns.json", trace(kernel("1750000000100000.0", "5")))
	want = "tsns.json:2:1: traceEvents[0] (kernel \"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn\"): ts 1750000000100000.0 is out of range (microseconds, at most 2.306e+12, 26 days: a value past it is likely in nanoseconds"
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("ts in ns: %v, want %q…", err, want)
	}
}
