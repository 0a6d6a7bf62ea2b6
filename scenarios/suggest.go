package scenarios

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"gopkg.in/yaml.v3"
)

// unknownValue is the parenthesis after `NAME "v" is unknown`: the names
// that v is a near miss of, as unknownKeyMsg suggests a key ("did you mean
// H100-80GB?"), else every allowed name ("use a, b or c"). tail is added
// after the list ("or give gpu_memory, …").
func unknownValue(v string, names []string, tail string) string {
	if near := nearNames(v, names); len(near) > 0 {
		return "(did you mean " + ListOr(near) + "?)"
	}
	if tail != "" {
		return "(use " + ListOr(names) + ", " + tail + ")"
	}
	return "(use " + ListOr(names) + ")"
}

// nearNames are the names v is a near miss of, in their order: the same
// but for case and the separators - _ . and space ("h100-80gb",
// "llama-2-7b", "per-gpu", "ndr"), else the few (at most three) that
// start with it, when it has three characters or more ("H100" for
// H100-80GB, "A100" for A100-40GB or A100-80GB). Spelling mistakes are not
// guessed at: A200 is not H200.
func nearNames(v string, names []string) []string {
	nv := normName(v)
	if nv == "" {
		return nil
	}
	var same, prefix []string
	for _, n := range names {
		nn := normName(n)
		switch {
		case nn == nv:
			same = append(same, n)
		case len(nv) >= 3 && strings.HasPrefix(nn, nv):
			prefix = append(prefix, n)
		}
	}
	if len(same) > 0 {
		return same
	}
	if len(prefix) <= 3 {
		return prefix
	}
	return nil
}

// unknownGPUValue is unknownValue for cluster.gpu, with nearGPUs's
// suggestions.
func unknownGPUValue(v string) string {
	if near := nearGPUs(v); len(near) > 0 {
		return "(did you mean " + ListOr(near) + "?)"
	}
	return "(use " + ListOr(gpuNames()) + ", or give gpu_memory, peak_bf16 and hbm_bandwidth)"
}

// nearGPUs are the GPU presets v is a near miss of: nearNames, but a
// prefix only where it ends at a separator of the preset's name ("H100"
// for H100-80GB, "a100" for A100-40GB or A100-80GB), never inside its
// model number: "H20" is a GPU of its own, not a slip for H200, and
// accepting the hint would time its step at another GPU's peak (QA30 LOW-6).
//
// Past those, a name of the same GPU is still suggested when exactly one
// preset is of its model: the part before the first separator is the
// preset's ("H100-80G", "H100 SXM": H100-80GB), or is it without the
// preset's trailing letters ("MI355": MI355X), one nearest by edit
// distance where a model has several presets ("A100-80G": A100-80GB).
// A model number is never changed (H20 stays unsuggested, nor "RTX409"
// RTX4090: an added digit is another GPU), and a PCIe or NVL card of the
// model (H100 PCIe, H100 NVL: other clocks and links) is not its SXM
// preset.
func nearGPUs(v string) []string {
	nv := normName(v)
	// A card form (PCIe, NVL) is suggested only for a name that says it,
	// and only that form for such a name: "h100" is the SXM part, "H100
	// PCIe" the PCIe card (H100-PCIe), "H100 NVL" neither.
	form := func(s string) string {
		for _, f := range []string{"pcie", "nvl"} {
			if strings.Contains(normName(s), f) {
				return f
			}
		}
		return ""
	}
	names := slices.DeleteFunc(gpuNames(), func(n string) bool { return form(n) != form(v) })
	var near []string
	for _, n := range nearNames(v, names) {
		if normName(n) == nv || prefixAtSeparator(n, len(nv)) {
			near = append(near, n)
		}
	}
	if len(near) > 0 || form(v) != "" {
		return near
	}
	model := gpuModel(v)
	if len(model) < 2 {
		return nil
	}
	var same []string
	for _, n := range names {
		if s, sn := gpuMemSize(v), gpuMemSize(n); s != "" && sn != "" && s != sn {
			continue // another memory size is another part (GH200 144GB is not GH200-96GB)
		}
		if m := gpuModel(n); m == model || strings.HasPrefix(m, model) && strings.Trim(m[len(model):], "abcdefghijklmnopqrstuvwxyz") == "" {
			same = append(same, n)
		}
	}
	if len(same) > 1 {
		best, ties := 1<<30, []string(nil)
		for _, n := range same {
			switch d := editDistance(nv, normName(n)); {
			case d < best:
				best, ties = d, []string{n}
			case d == best:
				ties = append(ties, n)
			}
		}
		same = ties
	}
	if len(same) != 1 {
		return nil
	}
	return same
}

// gpuMemSize is the memory size a GPU name states ("80" of H100-80GB and
// of "H100 80G"), "" when it states none.
func gpuMemSize(name string) string {
	m := gpuMemRe.FindStringSubmatch(strings.ToLower(name))
	if m == nil {
		return ""
	}
	return m[1]
}

var gpuMemRe = regexp.MustCompile(`[-_.\s\p{Pd}\x{2212}]([0-9]+)\s?gb?$`)

// gpuModel is a GPU name's model, lower case: its part before the first
// separator ("h100" of H100-80GB, "mi355x" of MI355X).
func gpuModel(name string) string {
	name = strings.ToLower(strings.TrimSpace(name))
	if i := strings.IndexFunc(name, isSep); i >= 0 {
		name = name[:i]
	}
	return name
}

// prefixAtSeparator reports whether name's first k characters other than
// separators are followed by a separator (isSep).
func prefixAtSeparator(name string, k int) bool {
	for _, r := range name {
		if k == 0 {
			return isSep(r)
		}
		if !isSep(r) {
			k--
		}
	}
	return false
}

// normName lowers s and drops the separators - _ . and space.
//
// Unicode's dashes (U+2010 hyphen, U+2013 en dash, U+2212 minus sign …:
// category Pd and the minus) and spaces count as separators too: a name
// pasted from a datasheet or a word processor, "H100‐80GB", got the whole
// list instead of "did you mean H100-80GB?" (qauser s28 L13). It is
// suggested, not accepted: the file should hold the preset's name.
func normName(s string) string {
	return strings.Map(func(r rune) rune {
		if isSep(r) {
			return -1
		}
		return r
	}, strings.ToLower(strings.TrimSpace(s)))
}

// isSep reports a separator of a name: - _ . a space, or another of
// Unicode's dashes and spaces (normName).
func isSep(r rune) bool {
	return r == '-' || r == '_' || r == '.' || r == '\u2212' || unicode.Is(unicode.Pd, r) || unicode.IsSpace(r)
}

// NearExample is nearExample for the CLI (zerosim scenarios show NAME).
func NearExample(name string) string { return nearExample(name) }

// UnknownGPU is the message for a GPU preset name that is not one, as the
// importers' --gpu flags give it: `--gpu "H100" is not a GPU preset (did
// you mean H100-80GB?)`.
func UnknownGPU(flag, v string) string {
	names := gpuNames()
	if near := nearGPUs(v); len(near) > 0 {
		return fmt.Sprintf("%s %q is not a GPU preset (did you mean %s?)", flag, v, ListOr(near))
	}
	return fmt.Sprintf("%s %q is not a GPU preset (use one of %s)", flag, v, strings.Join(names, ", "))
}

// nearExample is the embedded example a missing file's name is a near
// miss of: the same but for case and separators, the up to three it is a
// prefix of ("seed002": seed002-7b or seed002-tiny), or, for a name of four
// characters or more, nearKey's one within two edits ("defualt"); "" when
// there is none. A name with a directory is a path, not a slip for an
// example.
func nearExample(arg string) string {
	if strings.ContainsAny(arg, `/\`) {
		return ""
	}
	name := strings.TrimSuffix(strings.TrimSuffix(arg, ".yaml"), ".yml")
	names := ExampleNames()
	if near := nearNames(name, names); len(near) > 0 {
		return ListOr(near)
	}
	if len(name) < 4 {
		return ""
	}
	return nearKey(name, names)
}

// hasKey reports whether the mapping m has key k at its top level
// (findKey; false when m is not a mapping).
func hasKey(m *yaml.Node, k string) bool {
	return m != nil && m.Kind == yaml.MappingNode && findKey(m, k) >= 0
}

// foreignConfig is the message for a file that is not a scenario but the
// config of a tool zerosim imports, "" when it is not one: the import
// command to run instead. root is the parsed mapping, nil when the file is
// not a YAML mapping (a TOML job config, a shell script). The keys are
// those each tool's config has and a scenario lacks.
func foreignConfig(file string, data []byte, root *yaml.Node) string {
	kind, cmd, why := "", "", ""
	for _, c := range []struct{ key, kind, cmd string }{
		{"architectures", "a Hugging Face config.json", "hf"},
		{"model_type", "a Hugging Face config.json", "hf"},
		{"zero_optimization", "a DeepSpeed config", "deepspeed"},
		{"train_micro_batch_size_per_gpu", "a DeepSpeed config", "deepspeed"},
		{"distributed_type", "an Accelerate config", "accelerate"},
		{"compute_environment", "an Accelerate config", "accelerate"},
		{"global_train_batch_size", "an llm-foundry training YAML", "llm-foundry"},
		{"device_train_microbatch_size", "an llm-foundry training YAML", "llm-foundry"},
	} {
		if hasKey(root, c.key) {
			kind, cmd, why = c.kind, c.cmd, fmt.Sprintf("it has %q", c.key)
			break
		}
	}
	if kind == "" && root == nil {
		switch {
		case bytes.Contains(data, []byte("\n[model]")) || bytes.HasPrefix(data, []byte("[model]")) || bytes.Contains(data, []byte("\n[job]")):
			kind, cmd, why = "a torchtitan job config", "torchtitan", "it has a [model] or [job] table"
		case bytes.Contains(data, []byte("pretrain_gpt.py")) || bytes.Contains(data, []byte("--num-layers")):
			kind, cmd, why = "a Megatron-LM launch script", "megatron", "it runs pretrain_gpt.py or passes --num-layers"
		}
	}
	if kind == "" {
		return ""
	}
	return fmt.Sprintf("%s, not a scenario (%s): run zerosim import %s %s", kind, why, cmd, ttName(file))
}

// nearKey is the one name of known within two edits of k (a misspelled
// config key: num_proceses, fsdp_backward_prefech), "" when none or
// several are.
func nearKey(k string, known []string) string {
	best, n := "", 0
	for _, c := range known {
		if c != k && editDistance(strings.ToLower(k), strings.ToLower(c)) <= 2 {
			best, n = c, n+1
		}
	}
	if n == 1 {
		return best
	}
	return ""
}

// didYouMean is " (did you mean NAME?)" for nearKey's answer, "" for none.
// unknownKeyFix is the fix for an unknown key k of a tool's config that
// refuses unknown keys: "did you mean NEAR?" for the nearest of known, else
// "remove it or fix its spelling;".
func unknownKeyFix(k string, known []string) string {
	if near := nearKey(k, known); near != "" {
		return "did you mean " + near + "?"
	}
	return "remove it or fix its spelling;"
}

func didYouMean(k string, known []string) string {
	if near := nearKey(k, known); near != "" {
		return " (did you mean " + near + "?)"
	}
	return ""
}
