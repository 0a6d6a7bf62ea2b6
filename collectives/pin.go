package collectives

import (
	"errors"
	"strings"

	"github.com/zerosim/zerosim/scenarios"
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
// 5067397c2676d5aed50042fc39e5c8ee96eb0027 (scenarios.ParseNCCLList,
// whose names ncclAlgoNames and ncclProtoNames are); a protocol named in NCCL_PROTO is enabled even where NCCL leaves LL128
// off by default (pEnable 1, not 2: tuning.cc lines 443–447 and 518–536).

// ncclProtoNames are NCCL's names of the protocols (ncclProtoStr,
// src/init.cc line 55 at the commit nccl.go models), in Proto's order:
// scenarios', which parses NCCL_PROTO lists.
var ncclProtoNames = scenarios.NCCLProtoNames

// ErrNoAlgorithm is NCCL's refusal when NCCL_ALGO and NCCL_PROTO leave a
// collective no algorithm and protocol (topoGetAlgoInfo's "No
// algorithm/protocol available for function ...", src/enqueue.cc line
// 2063 at NVIDIA/nccl 5067397c2676d5aed50042fc39e5c8ee96eb0027).
var ErrNoAlgorithm = errors.New("no algorithm/protocol available")

// ErrTimeOverflow is a collective whose time passes the int64 picoseconds:
// an alpha–beta phase that does not fit, or NCCL's cost model's time at
// SaturatedTime or more.
var ErrTimeOverflow = errors.New("time does not fit in int64 picoseconds")

// ErrCannotRun is Choose's refusal of an algorithm asked for by name (nvls,
// nvlstree) where it cannot run the operation.
var ErrCannotRun = errors.New("cannot run")

// ParseNCCLAlgos reads an NCCL_ALGO list ("Ring", "ring,tree", "^NVLS")
// as a mask of Hardware.Algos. CollNetDirect and CollNetChain are NCCL's
// but need SHARP switches, which zerosim does not model; a per-function
// list ("allreduce:tree") is not taken.
func ParseNCCLAlgos(s string) (uint8, error) {
	set, err := scenarios.ParseNCCLList(s, scenarios.NCCLAlgoNames, "NCCL_ALGO")
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
	set, err := scenarios.ParseNCCLList(s, scenarios.NCCLProtoNames, "NCCL_PROTO")
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
