package reports

import (
	"fmt"
	"math"
	"strings"

	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/zero"
)

// variantAttention is the attention a compare variant was timed with: its
// GPU, kernel and the fraction of the dense peak it runs at, attention's
// share of the variant's compute (picoseconds, zero.ComputeClasses), and
// whether the kernel is stack torchtitan's preset fa2 where a later
// torchtitan's SDPA runs cuDNN (torchtitanPresetFA2), with cuDNN's rate
// there.
type variantAttention struct {
	gpu                    string
	kernel                 scenarios.AttentionKernel
	eff                    float64
	attentionPS, computePS int64
	preset                 bool
	cudnn                  float64
}

// attentionOf is s's variantAttention; ok is false when attention has no
// rate of its own (eager attention, a model without attention dimensions,
// the FLOP count).
func attentionOf(s *scenarios.Scenario) (variantAttention, bool) {
	t := &s.Training
	if s.Model.SeqLen == 0 || s.Model.Heads == 0 || t.AttentionKernel == "" || t.AttentionKernel == scenarios.KernelEager {
		return variantAttention{}, false
	}
	cls, err := zero.ComputeClasses(s)
	if err != nil || !cls.Separate || cls.Total() <= 0 {
		return variantAttention{}, false
	}
	a := variantAttention{gpu: s.Cluster.GPU, kernel: t.AttentionKernel, eff: zero.AttentionEfficiencyOf(s),
		attentionPS: int64(math.Round(cls.Attention * 1e12)), computePS: int64(math.Round(cls.Total() * 1e12)), preset: torchtitanPresetFA2(s)}
	if a.preset {
		a.cudnn = zero.AttentionEfficiencyAt(s.Cluster.GPU, scenarios.KernelCuDNN, t.ComputeEfficiency, zero.ModelHeadDim(s))
	}
	return a, true
}

// compareAttention is the note under compare's verdict when the variants
// run on different GPUs, attention is a tenth or more of some variant's
// compute and its rates differ by a quarter or more: the GPU comparison then
// rests on which kernel each variant was timed with (qauser29 F2: B200
// over H200 was 1.64× under stack torchtitan's 2024 fa2 and 2.07× under
// cudnn, and the verdict did not say so). Under stack torchtitan's preset
// fa2 it names the torchtitan that is and cuDNN's rates; "" otherwise.
func compareAttention(vs []compareVariant) string {
	var at []*compareVariant
	gpus := map[string]bool{}
	lo, hi := math.Inf(1), 0.0
	large, preset := false, false
	for i := range vs {
		v := &vs[i]
		if !v.attn.ok {
			continue
		}
		at = append(at, v)
		gpus[v.attn.gpu] = true
		lo, hi = min(lo, v.attn.eff), max(hi, v.attn.eff)
		large = large || v.attn.attentionPS*10 >= v.attn.computePS
		preset = preset || v.attn.preset
	}
	// Rates within a quarter of each other (cuDNN's 0.5732 on an H200
	// and 0.5573 on a B200) move the ratio little; the finding's
	// threshold (attentionFinding).
	if len(at) < 2 || len(gpus) < 2 || hi < 1.25*lo || !large {
		return ""
	}
	var shares, kernels, cudnn []string
	all := true
	for _, v := range at {
		a := &v.attn
		who := EscapeControl(v.Label)
		shares = append(shares, fmt.Sprintf("%s %% on %s", percent(a.attentionPS, a.computePS), who))
		kernels = append(kernels, fmt.Sprintf("%s at %s on %s", a.kernel, fmtEff(a.eff), who))
		if a.preset {
			cudnn = append(cudnn, fmt.Sprintf("%s on %s", fmtEff(a.cudnn), who))
		}
		all = all && a.preset
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Attention is %s of the compute, so the GPU comparison rests on the kernel it is timed with: %s of the dense peak (zerosim run's attention line gives each rate's source).",
		scenarios.ListAnd(shares), scenarios.ListAnd(kernels))
	switch {
	case preset:
		how := "--set training.attention_kernel=cudnn"
		if !all {
			// cudnn is refused on an AMD GPU (scenarios.cuDNNOnAMD).
			how = "training.attention_kernel: cudnn on those variants only"
		}
		fmt.Fprintf(&b, " fa2 is stack torchtitan's, torchtitan 9dec370 (Dec 2024); a torchtitan from 6a3a9da (on Blackwell from 3b85aa3) to 1695457 runs SDPA with cuDNN's attention first, at %s (%s; docs/stacks.md).",
			scenarios.ListAnd(cudnn), how)
	default:
		b.WriteString(" Set training.attention_kernel to the kernel your stack runs on each GPU.")
	}
	return b.String()
}
