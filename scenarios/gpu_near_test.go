package scenarios

import (
	"slices"
	"testing"
)

// TestNearGPUs: a GPU name is suggested only for a slip of
// case or separators, or a prefix that ends at a separator of the preset
// (the memory size left out), never for another model number: H20 (148
// TFLOPS bf16, NVIDIA's H20 datasheet) is not H200 (989), nor B20 B200;
// past those, the one preset of the typed model (H100 SXM: H100-80GB;
// MI355: MI355X), where the near-miss list gave every preset. A card
// form is its own preset: "H100 PCIe" is H100-PCIe, never the SXM's, and
// "h100" never the PCIe card.
func TestNearGPUs(t *testing.T) {
	for _, c := range []struct {
		v    string
		want []string
	}{
		{"h100", []string{"H100-80GB"}},
		{"H100 80GB", []string{"H100-80GB"}},
		{"a100", []string{"A100-40GB", "A100-80GB"}},
		{"gb300", []string{"GB300"}},
		{"A800", []string{"A800-80GB"}},
		{"H20", nil},
		{"B20", nil},
		{"GB3", nil},
		{"H800", nil},
		{"GH200", []string{"GH200-96GB"}},
		{"GH200 144GB", nil}, // another memory size: another part
		{"GH200 96G", []string{"GH200-96GB"}},
		// The same model past a separator, or without the preset's
		// trailing letters: one preset of that model.
		{"H100-80G", []string{"H100-80GB"}},
		{"H100 SXM", []string{"H100-80GB"}},
		{"MI355", []string{"MI355X"}},
		{"mi300", []string{"MI300X"}},
		{"A100-80G", []string{"A100-80GB"}},
		{"A100 SXM", nil}, // two presets of the model, neither nearer
		// Another card of the model, or another model number.
		{"H100 PCIe", []string{"H100-PCIe"}},
		{"h100-pcie", []string{"H100-PCIe"}},
		{"H100 PCIe 80GB", nil}, // a size the preset does not name is not a slip
		{"A100 PCIe", nil},
		{"H100-NVL", nil},
		{"RTX409", nil},
		{"MI35", nil},
		{"H20-96GB", nil},
	} {
		if got := nearGPUs(c.v); !slices.Equal(got, c.want) {
			t.Errorf("%q: %q, want %q", c.v, got, c.want)
		}
	}
	if got, want := UnknownGPU("--gpu", "H20"), `--gpu "H20" is not a GPU preset (use one of `; len(got) < len(want) || got[:len(want)] != want {
		t.Errorf("UnknownGPU H20: %s", got)
	}
}
