package scenarios

import (
	"fmt"
	"strings"
)

// hfBase is a class name's model part, compared case-insensitively: the
// part before "For" (Qwen2_5_VLForConditionalGeneration → qwen2_5_vl),
// else without a trailing "LMHeadModel" or "Model" (MistralModel →
// mistral).
func hfBase(name string) string {
	if i := strings.Index(name, "For"); i > 0 {
		name = name[:i]
	} else {
		for _, suf := range []string{"LMHeadModel", "Model"} {
			if b, ok := strings.CutSuffix(name, suf); ok && b != "" {
				name = b
				break
			}
		}
	}
	return strings.ToLower(name)
}

// nearestHFClass is the supported class whose name is nearest arch's, ""
// when none is near or several are equally near. Near is, in this order:
// the same model part ignoring case (LLaMAForCausalLM, the class LLaMA's
// first configs name → LlamaForCausalLM); the longest supported model
// part, four letters or more, that arch's begins with (DeepseekV32 →
// DeepseekV3, Qwen2_5_VL → Qwen2); one edit away (Glm4vMoe → Glm4Moe).
// Among classes sharing a model part, the one with arch's suffix, else
// the ForCausalLM one. A suggestion by name, which the error says.
func nearestHFClass(arch string) string {
	base := hfBase(arch)
	_, suffix, _ := strings.Cut(arch, "For")
	pick := func(match func(b string) int) string {
		best, bestScore, tie := "", 0, false
		for _, c := range hfArchitectureNames() {
			s := match(hfBase(c))
			if s <= 0 {
				continue
			}
			// Prefer the class with arch's suffix, then ForCausalLM.
			s *= 4
			_, cs, _ := strings.Cut(c, "For")
			switch {
			case cs == suffix:
				s += 2
			case cs == "CausalLM":
				s++
			}
			switch {
			case s > bestScore:
				best, bestScore, tie = c, s, false
			case s == bestScore:
				tie = true
			}
		}
		if tie {
			return ""
		}
		return best
	}
	if c := pick(func(b string) int { return boolInt(b == base) }); c != "" {
		return c
	}
	if c := pick(func(b string) int {
		if len(b) >= 4 && strings.HasPrefix(base, b) {
			return len(b)
		}
		return 0
	}); c != "" {
		return c
	}
	return pick(func(b string) int { return boolInt(editDistance1(b, base)) })
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// editDistance1 reports whether a and b differ by exactly one inserted,
// deleted or replaced byte.
func editDistance1(a, b string) bool {
	if len(a) > len(b) {
		a, b = b, a
	}
	if len(b)-len(a) > 1 || a == b {
		return false
	}
	i := 0
	for i < len(a) && a[i] == b[i] {
		i++
	}
	if len(a) == len(b) {
		return a[i+1:] == b[i+1:]
	}
	return a[i:] == b[i+1:]
}

// unsupportedHF is the fix an unsupported class's error names: the
// nearest supported class by name, if one is near, to try when the
// model's decoder is that class's, and otherwise model.layer_list.
func unsupportedHF(arch string) string {
	const other = "describe the model with model.layer_list (docs/scenario-format.md, which lists the supported classes)"
	c := nearestHFClass(arch)
	if c == "" {
		return other
	}
	return fmt.Sprintf("the nearest supported class by name is %s: if the model's decoder is that class's, set architectures to [%q] and model_type to %q in a copy of config.json (what that class does not build, such as a vision tower, is then left out); otherwise %s",
		c, c, hfModelTypes[c], other)
}

// nearestHFModelType is the supported model_type nearest mt by the same
// rules as nearestHFClass (deepseek_v32 → deepseek_v3, qwen2_5_vl →
// qwen2), "" when none is near or several are equally near.
func nearestHFModelType(mt string) string {
	mt = strings.ToLower(mt)
	pick := func(match func(t string) int) string {
		best, bestScore, tie := "", 0, false
		for _, t := range hfModelTypeNames() {
			switch s := match(t); {
			case s <= 0:
			case s > bestScore:
				best, bestScore, tie = t, s, false
			case s == bestScore:
				tie = true
			}
		}
		if tie {
			return ""
		}
		return best
	}
	if t := pick(func(t string) int {
		if len(t) >= 4 && strings.HasPrefix(mt, t) {
			return len(t)
		}
		return 0
	}); t != "" {
		return t
	}
	return pick(func(t string) int { return boolInt(editDistance1(t, mt)) })
}

// unsupportedHFType is unsupportedHF for a config.json that names only a
// model_type.
func unsupportedHFType(mt string) string {
	const other = "describe the model with model.layer_list (docs/scenario-format.md, which lists the supported classes)"
	t := nearestHFModelType(mt)
	if t == "" {
		return other
	}
	return fmt.Sprintf("the nearest supported model_type by name is %q: if the model's decoder is that type's, set model_type to it in a copy of config.json (what it does not build, such as a vision tower, is then left out); otherwise %s", t, other)
}
