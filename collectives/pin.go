package collectives

import (
	"fmt"
	"strings"
)

// NCCL_ALGO and NCCL_PROTO as a user sets them (Hardware.Algos and
// Hardware.Protos): NVIDIA/nccl src/graph/tuning.cc ncclTopoTuneModel
// (lines 440–461) parses each with parseList (lines 36–136) into an
// enable flag per (function, algorithm) and (function, protocol), and
// zeroes the bandwidth of every disabled combination (lines 537–538), so
// the tuner's table (src/enqueue.cc updateCollCostTable, topoGetAlgoInfo,
// lines 1988–2066) picks the combination of least time among those left,
// and fails ("No algorithm/protocol available for function … NCCL_ALGO
// was set to …", ncclInvalidUsage) when none is, all at commit
// 5067397c2676d5aed50042fc39e5c8ee96eb0027. The list is comma-separated
// names, case-insensitive (strcasecmp), or "^" and the names to disable;
// a protocol named in NCCL_PROTO is enabled even where NCCL leaves LL128
// off by default (pEnable 1, not 2: tuning.cc lines 443–447 and 518–536).

// ncclProtoNames are NCCL's names of the protocols (init.cc ncclProtoStr).
var ncclProtoNames = [numProtos]string{"LL", "LL128", "Simple"}

// ParseNCCLAlgos reads an NCCL_ALGO list ("Ring", "ring,tree", "^NVLS")
// as a mask of Hardware.Algos. CollNetDirect and CollNetChain are NCCL's
// but need SHARP switches, which zerosim does not model; a per-function
// list ("allreduce:tree") is not taken.
func ParseNCCLAlgos(s string) (uint8, error) {
	names := ncclAlgoNames[:]
	set, err := parseNCCLList(s, names, "NCCL_ALGO", func(e string) string {
		if strings.EqualFold(e, "CollNetDirect") || strings.EqualFold(e, "CollNetChain") {
			return fmt.Sprintf("%s needs SHARP switches, which zerosim does not model", e)
		}
		return ""
	})
	if err != nil {
		return 0, err
	}
	var mask uint8
	for i, on := range set {
		if on {
			mask |= 1 << ncclAlgos[i]
		}
	}
	return mask, nil
}

// ParseNCCLProtos reads an NCCL_PROTO list ("Simple", "LL,LL128",
// "^LL128") as a mask of Hardware.Protos.
func ParseNCCLProtos(s string) (uint8, error) {
	set, err := parseNCCLList(s, ncclProtoNames[:], "NCCL_PROTO", func(string) string { return "" })
	if err != nil {
		return 0, err
	}
	var mask uint8
	for p, on := range set {
		if on {
			mask |= 1 << p
		}
	}
	return mask, nil
}

// parseNCCLList is parseList's one list for every function: the names
// enabled. unknown explains a name that is NCCL's but not modelled ("" if
// none).
func parseNCCLList(s string, names []string, env string, unknown func(string) string) ([]bool, error) {
	list := strings.TrimSpace(s)
	if strings.ContainsAny(list, ";:") {
		return nil, fmt.Errorf("%s %q: a per-function list (allreduce:…) is not taken; give one list, for the operation you run", env, s)
	}
	on := true
	if strings.HasPrefix(list, "^") {
		on, list = false, list[1:]
	}
	set := make([]bool, len(names))
	for i := range set {
		set[i] = !on
	}
	for _, e := range strings.Split(list, ",") {
		e = strings.TrimSpace(e)
		i := -1
		for j, n := range names {
			if strings.EqualFold(e, n) {
				i = j
			}
		}
		if i < 0 {
			if why := unknown(e); why != "" {
				return nil, fmt.Errorf("%s %q: %s (use %s)", env, s, why, strings.Join(names, ", "))
			}
			return nil, fmt.Errorf("%s %q: %q is not one of NCCL's (use %s, or a list of them; ^ first disables those listed)", env, s, e, strings.Join(names, ", "))
		}
		set[i] = on
	}
	any := false
	for _, v := range set {
		any = any || v
	}
	if !any {
		return nil, fmt.Errorf("%s %q: disables every one (use %s)", env, s, strings.Join(names, ", "))
	}
	return set, nil
}

// pinText is NCCL_ALGO and NCCL_PROTO of hw as NCCL's names, for an
// error: " NCCL_ALGO was set to Ring." as NCCL's own warning says it.
func (hw Hardware) pinText() string {
	s := ""
	if hw.Algos != 0 {
		s += " NCCL_ALGO was set to " + strings.Join(algoNames(hw.Algos), ",") + "."
	}
	if hw.Protos != 0 {
		s += " NCCL_PROTO was set to " + strings.Join(ProtoNames(hw.Protos), ",") + "."
	}
	return s
}

// AlgoNames lists the algorithms of an NCCL_ALGO mask by NCCL's names, in
// NCCL's order.
func AlgoNames(mask uint8) []string { return algoNames(mask) }

// ProtoNames lists the protocols of an NCCL_PROTO mask by NCCL's names.
func ProtoNames(mask uint8) []string {
	var names []string
	for p := LL; p < numProtos; p++ {
		if mask&(1<<p) != 0 {
			names = append(names, ncclProtoNames[p])
		}
	}
	return names
}
