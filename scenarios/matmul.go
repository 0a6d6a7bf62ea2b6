package scenarios

import "fmt"

// MatmulCeiling is a GPU preset's measured maximum achievable bf16 matmul
// throughput: the best of a shape sweep of torch.matmul on one GPU (Stas
// Bekman's mamf-finder, "Maximum Achievable Matmul FLOPS"), as
// stas00/ml-engineering compute/accelerator/README.md at
// 744d01e18b79512572f64a6bbd8b5f4a725203a7 tabulates it ("Maximum
// Achievable Matmul FLOPS comparison table", BF16, lines 346–362: a mean
// of 100 iterations after 50 warm-up ones per shape).
type MatmulCeiling struct {
	// Row is the table's accelerator row.
	Row string
	// TFLOPS is the row's MAMF column, measured bf16 TFLOPS.
	TFLOPS float64
	// Theory is the row's Theory column, the dense bf16 peak it divides
	// by (the row's Efficiency column is TFLOPS/Theory). It can differ
	// from the preset's peak (MI300X: 1,300 for the preset's 1,307.4;
	// MI355X: 2,300 for 2,516.6): the fraction is taken of the preset's
	// (Fraction), so that the GPU runs its GEMMs at the measured TFLOPS.
	Theory float64
	// Preset is the GPU preset the row measured; a preset that takes
	// another's row takes that preset's fraction.
	Preset string
	// Taken says why a preset without a row of its own takes this one
	// ("" for the row's own GPU).
	Taken string
}

// mamfRows are the table's BF16 rows zerosim's presets use.
var (
	mamfA100   = MatmulCeiling{Row: "NVIDIA A100 SXM", TFLOPS: 271.2, Theory: 312, Preset: "A100-80GB"}
	mamfH100   = MatmulCeiling{Row: "NVIDIA H100 SXM", TFLOPS: 794.5, Theory: 989, Preset: "H100-80GB"}
	mamfGH200  = MatmulCeiling{Row: "NVIDIA GH200 SXM", TFLOPS: 828.6, Theory: 989, Preset: "GH200-96GB"}
	mamfB200   = MatmulCeiling{Row: "NVIDIA B200 SXM", TFLOPS: 1745.0, Theory: 2250, Preset: "B200"}
	mamfB300   = MatmulCeiling{Row: "NVIDIA B300 SXM", TFLOPS: 1769.0, Theory: 2250, Preset: "B300"}
	mamfGB200  = MatmulCeiling{Row: "NVIDIA GB200 SXM", TFLOPS: 1822.0, Theory: 2500, Preset: "GB200"}
	mamfMI300X = MatmulCeiling{Row: "AMD MI300X", TFLOPS: 668.4, Theory: 1300, Preset: "MI300X"}
	mamfMI325X = MatmulCeiling{Row: "AMD MI325X", TFLOPS: 784.9, Theory: 1300, Preset: "MI325X"}
	mamfMI355X = MatmulCeiling{Row: "AMD MI355X", TFLOPS: 1565.0, Theory: 2300, Preset: "MI355X"}
)

// matmulCeilings maps each GPU preset that has a row (its own, or one of
// the same silicon at the same peak, Taken saying why) to it. The presets
// absent here (V100-16GB, V100-32GB, H100-PCIe, L40S, A10G, L4, RTX4090,
// RTX5090) have no row in the table: they keep DefaultComputeEfficiency.
var matmulCeilings = map[string]MatmulCeiling{
	"A100-40GB": withTaken(mamfA100, "the row names no memory size, and the 40GB and 80GB SXM4 parts run the same GA100 at 312 TFLOPS"),
	"A100-80GB": mamfA100,
	"A800-80GB": withTaken(mamfA100, "the A800 being the A100 80GB SXM4 with its NVLink cut, of the same computational performance"),
	"H100-80GB": mamfH100,
	"H200":      withTaken(mamfH100, "its note says \"H200 is the same\""),
	// The table's GH200 was the 900 W 141GiB HBM3e part; the preset's
	// 96GB HBM3 one has the same Hopper GPU at the same peaks, as
	// DefaultFP8GEMMRatio takes it.
	"GH200-96GB": withTaken(mamfGH200, "measured on the 900W 141GiB HBM3e part, the same Hopper GPU at the same peaks"),
	"B200":       mamfB200,
	"B300":       mamfB300,
	// GB300 has no row: taken as its die's, the B300's, as
	// DefaultFP8GEMMRatio takes it.
	"GB300":  withTaken(mamfB300, "the table having no GB300 row: its Blackwell Ultra die's, as cluster.fp8_gemm_ratio's default takes it"),
	"GB200":  mamfGB200,
	"MI300X": mamfMI300X,
	"MI325X": mamfMI325X,
	"MI355X": mamfMI355X,
	// MI350X: ml-engineering's note 22, "the same silicon at 2200MHz and
	// 1000W, with everything scaled by the clock ratio": the MI355X's
	// measured fraction of its peak.
	"MI350X": withTaken(mamfMI355X, "ml-engineering's note 22 giving the MI350X as \"the same silicon at 2200MHz and 1000W, with everything scaled by the clock ratio\""),
}

func withTaken(c MatmulCeiling, why string) MatmulCeiling {
	c.Taken = why
	return c
}

// MatmulCeiling is the preset's row of the maximum achievable matmul
// table, ok false when the table has none for it.
func (g GPUPreset) MatmulCeiling() (MatmulCeiling, bool) {
	c, ok := matmulCeilings[g.Name]
	return c, ok
}

// Fraction is the measured fraction of the dense bf16 peak of the preset
// the row measured: TFLOPS over that preset's peak, the fraction every
// preset taking the row takes.
func (c MatmulCeiling) Fraction() float64 {
	g, ok := findGPU(c.Preset)
	if !ok || g.PeakBF16 <= 0 {
		return c.TFLOPS / c.Theory
	}
	return c.TFLOPS * 1e12 / float64(g.PeakBF16)
}

// mamfSource is the table's citation, as run and compare quote it.
const mamfSource = "stas00/ml-engineering compute/accelerator/README.md at 744d01e, MAMF table"

// DefaultComputeEfficiencyOf is training.compute_efficiency's default on
// a GPU preset: DefaultComputeEfficiency × the GPU's measured maximum
// matmul fraction over the H100's (794.5 of 989 TFLOPS, 0.8033), at most
// DefaultComputeEfficiency. H100 and H200 keep exactly 0.8, and every GPU
// whose matmuls measure below the H100's stands to it as they measured
// (MI300X 668.4 TFLOPS of 1,307.4: 0.5112 measured, 0.5091 here). The
// ratio, not the row's fraction as is: DefaultComputeEfficiency is what
// cuBLAS's GEMMs of training sizes reach standalone on H100, a little
// under the best shape of a sweep, and the same method's ratio between
// two GPUs is what a cross-GPU comparison rests on. At most 0.8: a part
// whose best shape beats the H100's (A100 0.8692, GH200 0.8378) keeps
// 0.8, since a best shape's maximum is no evidence that its
// training-size GEMMs beat the H100's 0.8 (and every A100 scenario would
// move on it). from says where the value comes from, for run's
// compute-efficiency line; ok is false for a GPU the table has no row for
// (also no preset: cluster.gfx or figures alone), which keeps
// DefaultComputeEfficiency.
func DefaultComputeEfficiencyOf(gpu string) (eff float64, from string, ok bool) {
	g, found := findGPU(gpu)
	if !found {
		return DefaultComputeEfficiency, "", false
	}
	c, has := g.MatmulCeiling()
	if !has {
		return DefaultComputeEfficiency, "", false
	}
	frac := c.Fraction()
	eff = DefaultComputeEfficiency * min(frac/mamfH100.Fraction(), 1)
	p, _ := findGPU(c.Preset)
	measured := fmt.Sprintf("%s of %s TFLOPS (%.4f)", fmtFloat(c.TFLOPS), fmtFloat(float64(p.PeakBF16)/1e12), frac)
	const ref = "794.5 of 989 (0.8033)"
	switch {
	case gpu == c.Preset && c.Row == mamfH100.Row:
		from = "its measured bf16 matmul maximum, " + measured + ", as the 0.8 cuBLAS's GEMMs of training sizes reach"
	case c.Row == mamfH100.Row:
		from = "the H100 SXM row's 0.8: " + c.Taken
	case frac >= mamfH100.Fraction():
		from = fmt.Sprintf("the H100's 0.8, not raised to its measured bf16 matmul maximum, %s, above the H100's 0.8033: a best shape's, not training-size GEMMs'", measured)
		if c.Taken != "" {
			from = fmt.Sprintf("the H100's 0.8, not raised to the %s's measured bf16 matmul maximum, %s, above the H100's 0.8033: a best shape's, not training-size GEMMs' (taken, %s)", c.Row, measured, c.Taken)
		}
	case c.Taken != "":
		from = fmt.Sprintf("0.8 × the %s's measured bf16 matmul maximum over the H100's: %s against %s, taken, %s", c.Row, measured, ref, c.Taken)
	default:
		from = fmt.Sprintf("0.8 × its measured bf16 matmul maximum over the H100's: %s against %s", measured, ref)
	}
	from += "; " + mamfSource
	return eff, from, true
}

// ComputeEfficiencyCarry is the factor a compute efficiency fitted on GPU
// from takes on GPU to: to's default over from's
// (DefaultComputeEfficiencyOf), 1 when either is unnamed or both are one.
//
// A fitted training.compute_efficiency is a fraction of the fitting GPU's
// dense peak with everything the model leaves out folded in. Taken as is
// on another GPU, it would run that GPU's GEMMs at the same fraction of
// its own peak, and lose the two GPUs' measured matmul ratio that their
// defaults hold (the GB200's 1,822 of 2,500 TFLOPS against the B200's
// 1,745 of 2,250: a fit of 0.4465 on GB200 would run the B200 6 % below
// its measured rate relative to the GB200's). Carried as a ratio to the
// fitting GPU's default, the fit keeps what it measured, the shortfall of
// the stack from zerosim's default, and the new GPU runs its GEMMs that
// much below its own default. The fp8 GEMMs follow: each GPU's
// cluster.fp8_gemm_ratio is applied to the carried efficiency as to any
// (DefaultFP8GEMMRatio), so the fp8 rate carries by the GPUs' default
// fp8 rates. docs/calibration.md, "Carrying a fit to another GPU".
func ComputeEfficiencyCarry(from, to string) float64 {
	if from == "" || to == "" || from == to {
		return 1
	}
	a, _, _ := DefaultComputeEfficiencyOf(from)
	b, _, _ := DefaultComputeEfficiencyOf(to)
	return b / a
}

// CarryComputeEfficiency is eff, fitted on GPU from, carried to GPU to
// (ComputeEfficiencyCarry), at most 1.
func CarryComputeEfficiency(eff float64, from, to string) float64 {
	return min(eff*ComputeEfficiencyCarry(from, to), 1)
}

// NoMatmulCeiling is what run says of a default efficiency on a GPU the
// table has no row for.
func NoMatmulCeiling(gpu string) string {
	if gpu == "" {
		gpu = "this GPU"
	}
	return "the H100's 0.8, kept: " + mamfSource + " has no row for " + gpu
}

// MatmulCeilingBrief is where a GPU's default efficiency comes from in a
// few words, for compare's caveat: "668.4 of 1307.4 TFLOPS measured", "the
// NVIDIA H100 SXM row's 794.5 of 989 TFLOPS", or "no row: the H100's 0.8".
func MatmulCeilingBrief(gpu string) string {
	g, found := findGPU(gpu)
	if !found {
		return "no row: the H100's 0.8"
	}
	c, ok := g.MatmulCeiling()
	if !ok {
		return "no row: the H100's 0.8"
	}
	p, _ := findGPU(c.Preset)
	measured := fmtFloat(c.TFLOPS) + " of " + fmtFloat(float64(p.PeakBF16)/1e12) + " TFLOPS"
	if c.Taken != "" {
		measured = "the " + c.Row + " row's " + measured
	} else {
		measured += " measured"
	}
	// A part whose best shape beats the H100's keeps 0.8
	// (DefaultComputeEfficiencyOf): QA s31 L5, compare said A100's 0.8 was
	// 0.8 × 0.8692/0.8033.
	if c.Row != mamfH100.Row && c.Fraction() >= mamfH100.Fraction() {
		measured += ", above the H100's: the H100's 0.8 kept, not raised"
	}
	return measured
}

// MatmulCeilingSource is the table DefaultComputeEfficiencyOf reads, as
// reports cite it.
const MatmulCeilingSource = mamfSource
