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

// nearMin is the fewest letters a model part needs to be near another
// by prefix or by one edit: three-letter names are too short for either
// (MPT is one edit from OPT, Optimus begins with OPT, and neither has
// OPT's decoder).
const nearMin = 4

// nearestName is the candidate whose key (its model part) is nearest
// target, "" when none is near or several are equally near. Near is, in
// this order: the same key; the longest key, nearMin letters or more,
// that target begins with; one edit away, both nearMin letters or more.
// Within a rule, bonus (0 to 3; nil for none) breaks ties.
func nearestName(cands []string, key func(string) string, bonus func(string) int, target string) string {
	pick := func(match func(k string) int) string {
		best, bestScore, tie := "", 0, false
		for _, c := range cands {
			s := match(key(c))
			if s <= 0 {
				continue
			}
			s *= 4
			if bonus != nil {
				s += bonus(c)
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
	if c := pick(func(k string) int { return boolInt(k == target) }); c != "" {
		return c
	}
	if c := pick(func(k string) int {
		if len(k) >= nearMin && strings.HasPrefix(target, k) {
			return len(k)
		}
		return 0
	}); c != "" {
		return c
	}
	return pick(func(k string) int {
		return boolInt(len(k) >= nearMin && len(target) >= nearMin && editDistance1(k, target))
	})
}

// nearestHFClass is the supported class whose name is nearest arch's by
// nearestName's rules on the model part, ignoring case: LLaMAForCausalLM
// (the class LLaMA's first configs name) → LlamaForCausalLM, DeepseekV32
// → DeepseekV3 and Qwen2_5_VL → Qwen2 by prefix, Glm4vMoe → Glm4Moe by
// one edit, Mpt and Optimus → none. Among classes sharing a model part,
// the one with arch's suffix, else the ForCausalLM one. A suggestion by
// name, which the error says.
func nearestHFClass(arch string) string {
	_, suffix, _ := strings.Cut(arch, "For")
	return nearestName(hfArchitectureNames(), hfBase, func(c string) int {
		switch _, cs, _ := strings.Cut(c, "For"); {
		case cs == suffix:
			return 2
		case cs == "CausalLM":
			return 1
		}
		return 0
	}, hfBase(arch))
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

// useLayerList is the fix for a model no supported class is near.
const useLayerList = "describe the model with model.layer_list (docs/scenario-format.md, which lists the supported classes)"

// unsupportedHF is the fix an unsupported class's error names: the
// nearest supported class by name, if one is near, to try when the
// model's decoder is that class's, and otherwise model.layer_list.
func unsupportedHF(arch string) string {
	c := nearestHFClass(arch)
	if c == "" {
		return useLayerList
	}
	return fmt.Sprintf("the nearest supported class by name is %s: if the model's decoder is that class's, set architectures to [%q] and model_type to %q in a copy of config.json (what that class does not build, such as a vision tower, is then left out); otherwise %s",
		c, c, hfModelTypes[c], useLayerList)
}

// nearestHFModelType is the supported model_type nearest mt by
// nearestName's rules (deepseek_v32 → deepseek_v3, qwen2_5_vl → qwen2,
// mpt → none), "" when none is near or several are equally near.
func nearestHFModelType(mt string) string {
	return nearestName(hfModelTypeNames(), func(t string) string { return t }, nil, strings.ToLower(mt))
}

// unsupportedHFType is unsupportedHF for a config.json that names only a
// model_type.
func unsupportedHFType(mt string) string {
	t := nearestHFModelType(mt)
	if t == "" {
		return useLayerList
	}
	return fmt.Sprintf("the nearest supported model_type by name is %q: if the model's decoder is that type's, set model_type to it in a copy of config.json (what it does not build, such as a vision tower, is then left out); otherwise %s", t, useLayerList)
}
