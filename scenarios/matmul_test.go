package scenarios

import (
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/internal/golden"
)

// mamfTable is the BF16 rows of stas00/ml-engineering
// compute/accelerator/README.md at 744d01e18b79512572f64a6bbd8b5f4a725203a7
// ("Maximum Achievable Matmul FLOPS comparison table", lines 350–361),
// copied by hand: accelerator, MAMF, Theory and Efficiency (%).
var mamfTable = []struct {
	row                string
	mamf, theory, effi float64
}{
	{"Intel Gaudi 2", 418.7, 432, 96.9},
	{"NVIDIA A100 SXM", 271.2, 312, 86.9},
	{"NVIDIA GH200 SXM", 828.6, 989, 83.8},
	{"NVIDIA A100 PCIe", 252.9, 312, 81.1},
	{"NVIDIA H100 SXM", 794.5, 989, 80.3},
	{"NVIDIA B300 SXM", 1769.0, 2250, 78.6},
	{"NVIDIA B200 SXM", 1745.0, 2250, 77.6},
	{"Intel Gaudi 3", 1243.0, 1677, 74.1},
	{"NVIDIA GB200 SXM", 1822.0, 2500, 72.9},
	{"AMD MI355X", 1565.0, 2300, 68.0},
	{"AMD MI325X", 784.9, 1300, 60.4},
	{"AMD MI300X", 668.4, 1300, 51.4},
}

// Every preset's matmul ceiling is a row of the table as published, and
// the presets the table has no row for are the ones listed (they keep
// the H100's 0.8).
func TestMatmulCeilingsAreTheTablesRows(t *testing.T) {
	rows := map[string]int{}
	for i, r := range mamfTable {
		rows[r.row] = i
		if got := math.Round(1000*r.mamf/r.theory) / 10; got != r.effi {
			t.Errorf("%s: %g of %g is %.1f %%, the table says %.1f %% (copied wrong?)", r.row, r.mamf, r.theory, got, r.effi)
		}
	}
	for _, c := range []struct{ gpu, row string }{
		{"A100-40GB", "NVIDIA A100 SXM"}, {"A100-80GB", "NVIDIA A100 SXM"}, {"A800-80GB", "NVIDIA A100 SXM"},
		{"H100-80GB", "NVIDIA H100 SXM"}, {"H200", "NVIDIA H100 SXM"}, {"GH200-96GB", "NVIDIA GH200 SXM"},
		{"B200", "NVIDIA B200 SXM"}, {"B300", "NVIDIA B300 SXM"}, {"GB300", "NVIDIA B300 SXM"}, {"GB200", "NVIDIA GB200 SXM"},
		{"MI300X", "AMD MI300X"}, {"MI325X", "AMD MI325X"}, {"MI350X", "AMD MI355X"}, {"MI355X", "AMD MI355X"},
		{"V100-16GB", ""}, {"V100-32GB", ""}, {"H100-PCIe", ""}, {"L40S", ""}, {"A10G", ""}, {"L4", ""}, {"RTX4090", ""}, {"RTX5090", ""},
	} {
		g, ok := findGPU(c.gpu)
		if !ok {
			t.Fatalf("no preset %s", c.gpu)
		}
		got, has := g.MatmulCeiling()
		if c.row == "" {
			if has {
				t.Errorf("%s: row %q, but the table has none for it", c.gpu, got.Row)
			}
			continue
		}
		i, known := rows[c.row]
		if !has || !known || got.Row != c.row {
			t.Errorf("%s: row %q (%v), want %q", c.gpu, got.Row, has, c.row)
			continue
		}
		if r := mamfTable[i]; got.TFLOPS != r.mamf || got.Theory != r.theory {
			t.Errorf("%s: %g of %g TFLOPS, the table's %s row says %g of %g", c.gpu, got.TFLOPS, got.Theory, r.row, r.mamf, r.theory)
		}
	}
	for _, g := range gpuPresets {
		if c, ok := g.MatmulCeiling(); ok {
			if _, own := findGPU(c.Preset); !own {
				t.Errorf("%s: row %s names preset %q, which does not exist", g.Name, c.Row, c.Preset)
			}
		}
	}
}

// mamfOf is mamfTable's MAMF TFLOPS of the row named row.
func mamfOf(t *testing.T, row string) float64 {
	t.Helper()
	for _, r := range mamfTable {
		if r.row == row {
			return r.mamf
		}
	}
	t.Fatalf("mamfTable has no row %q", row)
	return 0
}

// The default GEMM efficiency of a GPU is 0.8 × its measured maximum
// matmul fraction over the H100's (794.5 of 989), the fraction of the
// preset's own peak, so that two GPUs' GEMMs stand to each other as their
// measured TFLOPS do, and at most 0.8; a GPU without a row keeps 0.8 and
// says why.
func TestDefaultComputeEfficiencyOf(t *testing.T) {
	h100 := mamfOf(t, "NVIDIA H100 SXM") / 989
	for _, c := range []struct {
		gpu      string
		row      string  // mamfTable's row, whose TFLOPS the GPU measures
		peak     float64 // the dense bf16 peak it is a fraction of, TFLOPS
		want     float64 // 0 to compute 0.8 × mamf/peak / h100
		fromHas  string
		fromNone bool
	}{
		{"H100-80GB", "NVIDIA H100 SXM", 989, 0.8, "794.5 of 989 TFLOPS (0.8033)", false},
		{"H200", "NVIDIA H100 SXM", 989, 0.8, `"H200 is the same"`, false},
		// Above the H100's: not raised.
		{"A100-80GB", "NVIDIA A100 SXM", 312, 0.8, "not raised to its measured bf16 matmul maximum, 271.2 of 312 TFLOPS (0.8692)", false},
		{"A800-80GB", "NVIDIA A100 SXM", 312, 0.8, "NVIDIA A100 SXM", false},
		{"GH200-96GB", "NVIDIA GH200 SXM", 989, 0.8, "900W 141GiB HBM3e", false},
		{"B200", "NVIDIA B200 SXM", 2250, 0, "1745 of 2250 TFLOPS (0.7756)", false},
		{"GB200", "NVIDIA GB200 SXM", 2500, 0, "1822 of 2500 TFLOPS (0.7288)", false},
		{"B300", "NVIDIA B300 SXM", 2250, 0, "1769 of 2250 TFLOPS (0.7862)", false},
		{"GB300", "NVIDIA B300 SXM", 2250, 0, "no GB300 row", false},
		// AMD: the fraction of the preset's 1,307.4 and 2,516.6, so that
		// the GEMMs run at the measured TFLOPS (the table divides by 1,300
		// and 2,300).
		{"MI300X", "AMD MI300X", 1307.4, 0, "668.4 of 1307.4 TFLOPS (0.5112)", false},
		{"MI325X", "AMD MI325X", 1307.4, 0, "784.9 of 1307.4 TFLOPS (0.6004)", false},
		{"MI355X", "AMD MI355X", 2516.6, 0, "1565 of 2516.6 TFLOPS (0.6219)", false},
		{"MI350X", "AMD MI355X", 2516.6, 0, "note 22", false},
		{"L40S", "", 0, 0.8, "", true},
		{"H100-PCIe", "", 0, 0.8, "", true},
		{"", "", 0, 0.8, "", true},
	} {
		want := c.want
		if want == 0 {
			want = 0.8 * (mamfOf(t, c.row) / c.peak) / h100
		}
		got, from, ok := DefaultComputeEfficiencyOf(c.gpu)
		if math.Abs(got-want) > 1e-12 {
			t.Errorf("%s: default efficiency %.6f, want %.6f", c.gpu, got, want)
		}
		if ok == c.fromNone || !strings.Contains(from, c.fromHas) || ok && !strings.Contains(from, "744d01e") {
			t.Errorf("%s: from %q (%v), want it to cite %q and the table", c.gpu, from, ok, c.fromHas)
		}
	}
	if got := NoMatmulCeiling("L40S"); !strings.Contains(got, "0.8") || !strings.Contains(got, "no row for L40S") {
		t.Errorf("NoMatmulCeiling(L40S) = %q, want it to say 0.8 is kept for want of a row", got)
	}
	// The cross-GPU ratio is the measured one: MI300X's GEMMs at its
	// default run 668.4/794.5 of H200's (QA s29 finding 1: one 0.8 for
	// both made MI300X's 1.32× the H200's).
	mi, _, _ := DefaultComputeEfficiencyOf("MI300X")
	h, _, _ := DefaultComputeEfficiencyOf("H200")
	measured := mamfOf(t, "AMD MI300X") / mamfOf(t, "NVIDIA H100 SXM")
	if r := mi * 1307.4 / (h * 989); math.Abs(r-measured) > 1e-9 {
		t.Errorf("MI300X over H200 GEMM rate %.6f, want the measured %.6f", r, measured)
	}
}

// A scenario without training.compute_efficiency runs at its GPU's
// default; with it, at the value given.
func TestLoadTakesTheGPUsDefaultEfficiency(t *testing.T) {
	for _, c := range []struct {
		sets []string
		want float64
	}{
		{[]string{"cluster.gpu=MI300X"}, 0.8 * (mamfOf(t, "AMD MI300X") / 1307.4) / (mamfOf(t, "NVIDIA H100 SXM") / 989)},
		{[]string{"cluster.gpu=A100-80GB"}, 0.8},
		{[]string{"cluster.gpu=H100-80GB"}, 0.8},
		{[]string{"cluster.gpu=L40S"}, 0.8},
		{[]string{"cluster.gpu=MI300X", "training.compute_efficiency=0.6"}, 0.6},
	} {
		s, err := Load("s.yaml", []byte(baseYAML), c.sets)
		if err != nil {
			t.Fatalf("%q: %v", c.sets, err)
		}
		if got := s.Training.ComputeEfficiency; math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%q: compute_efficiency %.6f, want %.6f", c.sets, got, c.want)
		}
		if def := len(c.sets) == 1; s.Training.ComputeEfficiencyDefault != def {
			t.Errorf("%q: ComputeEfficiencyDefault %v, want %v", c.sets, s.Training.ComputeEfficiencyDefault, def)
		}
	}
}

// docs/scenario-format.md's compute_efficiency default (and the README's
// reference, generated from it) quotes each GPU's default as
// DefaultComputeEfficiencyOf gives it, and every GPU it does not name
// takes 0.8.
func TestComputeEfficiencyDefaultsDoc(t *testing.T) {
	named := [][]string{{"B200"}, {"GB200"}, {"B300", "GB300"}, {"MI300X"}, {"MI325X"}, {"MI350X", "MI355X"}}
	var parts []string
	seen := map[string]bool{}
	for _, gs := range named {
		e, _, _ := DefaultComputeEfficiencyOf(gs[0])
		for _, g := range gs {
			if o, _, _ := DefaultComputeEfficiencyOf(g); o != e {
				t.Errorf("%s: %g, %s: %g, quoted as one", gs[0], e, g, o)
			}
			seen[g] = true
		}
		parts = append(parts, strconv.FormatFloat(math.Round(e*1e4)/1e4, 'f', -1, 64)+" on "+strings.Join(gs, " and "))
	}
	for _, g := range gpuPresets {
		if e, _, _ := DefaultComputeEfficiencyOf(g.Name); !seen[g.Name] && e != DefaultComputeEfficiency {
			t.Errorf("%s: default %g, which the document's \"0.8 elsewhere\" does not say", g.Name, e)
		}
	}
	golden.CheckQuotes(t, "../docs/scenario-format.md", "TestComputeEfficiencyDefaultsDoc (DefaultComputeEfficiencyOf)",
		strings.Join(parts, ", ")+", 0.8 elsewhere")
}
