package scenarios

import (
	"fmt"
	"strings"
)

// NCCL_ALGO and NCCL_PROTO as communication.nccl_algo and nccl_proto
// give them (and zerosim collective's --algo and --proto): NVIDIA/nccl
// src/graph/tuning.cc parseList (lines 36–136 at commit
// 5067397c2676d5aed50042fc39e5c8ee96eb0027) reads a comma-separated list
// of names, case-insensitive (strcasecmp), or "^" and the names to
// disable; ncclTopoTuneModel (lines 440–538) turns off every algorithm
// (protocol) the list leaves out.

// NCCLAlgoNames are NCCL's algorithms zerosim models, in NCCL's order
// (ncclAlgoStr, src/init.cc line 53 at NVIDIA/nccl
// 5067397c2676d5aed50042fc39e5c8ee96eb0027; CollNetDirect and
// CollNetChain need SHARP switches, not modelled).
var NCCLAlgoNames = []string{"Tree", "Ring", "NVLS", "NVLSTree", "PAT"}

// NCCLProtoNames are NCCL's protocols (ncclProtoStr, src/init.cc line 55,
// same commit).
var NCCLProtoNames = []string{"LL", "LL128", "Simple"}

// ParseNCCLList is parseList's one list for every function: per name of
// names, whether it is enabled. env names the variable in errors.
func ParseNCCLList(s string, names []string, env string) ([]bool, error) {
	list := strings.TrimSpace(s)
	if strings.ContainsAny(list, ";:") {
		return nil, fmt.Errorf("%s %q: a per-function list (allreduce:…) is not taken; give one list, for the operation you run", env, s)
	}
	on := true
	if strings.HasPrefix(list, "^") {
		on, list = false, list[1:]
	}
	set := make([]bool, len(names))
	collNet := false
	for i := range set {
		set[i] = !on
	}
	for _, e := range strings.Split(list, ",") {
		e = strings.TrimSpace(e)
		if e == "" {
			// parseList splits with strtok_r, which skips empty
			// tokens: NCCL takes "Ring," as Ring (review R2 F12).
			continue
		}
		i := -1
		for j, n := range names {
			if strings.EqualFold(e, n) {
				i = j
			}
		}
		if i < 0 {
			if strings.EqualFold(e, "CollNetDirect") || strings.EqualFold(e, "CollNetChain") {
				// NCCL's names: CollNet needs SHARP switches, which
				// zerosim does not model, so it is off whatever the list
				// says (QA18 L2: "^CollNetDirect" was refused).
				collNet = true
				continue
			}
			return nil, fmt.Errorf("%s %q: %q is not one of NCCL's (use %s, or a list of them; ^ first disables those listed)", env, s, e, strings.Join(names, ", "))
		}
		set[i] = on
	}
	for _, v := range set {
		if v {
			return set, nil
		}
	}
	if collNet {
		return nil, fmt.Errorf("%s %q: leaves only CollNet, which needs SHARP switches that zerosim does not model (use %s)", env, s, strings.Join(names, ", "))
	}
	return nil, fmt.Errorf("%s %q: disables every one (use %s)", env, s, strings.Join(names, ", "))
}
