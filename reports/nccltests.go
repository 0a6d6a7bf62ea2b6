package reports

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// ncclTestsName is the nccl-tests binary of an op (CollectiveReport.Op).
func ncclTestsName(op string) string {
	switch op {
	case "allgather":
		return "all_gather_perf"
	case "reducescatter":
		return "reduce_scatter_perf"
	case "alltoall":
		return "alltoall_perf"
	}
	return "all_reduce_perf"
}

// ncclFloat is nccl-tests' getFloatStr: the value in width characters with
// 2, 1 or 0 decimals, whichever fits first, else exponent notation
// (NVIDIA/nccl-tests src/util.cu, commit a0b82b2260cf5152b9f8c061bbf7eaf0ba096432).
func ncclFloat(v float64, width int) string {
	for _, prec := range []int{2, 1, 0} {
		if s := fmt.Sprintf("%*.*f", width, prec, v); len(s) <= width {
			return s
		}
	}
	prec := 0
	if width >= 7 {
		prec = 1
	}
	s := fmt.Sprintf("%*.*e", width, prec, v)
	if len(s) > width {
		s = s[:width]
	}
	return s
}

// ncclFuncNames are NCCL's names of the ops (src/collectives.cc
// ncclFuncToString at NVIDIA/nccl 5067397c2676d5aed50042fc39e5c8ee96eb0027).
var ncclFuncNames = map[string]string{"allreduce": "AllReduce", "allgather": "AllGather", "reducescatter": "ReduceScatter"}

// ncclAlgoNames are NCCL's ncclAlgoToString and ncclProtoToString
// spellings (src/collectives.cc at the same commit) of the algo column's.
var ncclAlgoNames = map[string]string{"tree": "TREE", "ring": "RING", "nvls": "NVLS", "nvlstree": "NVLS_TREE", "pat": "PAT",
	"LL": "LL", "LL128": "LL128", "Simple": "SIMPLE"}

// tuningLine is the line NCCL prints for the row's collective under
// NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING (src/enqueue.cc line 822 at
// the commit above: "%s: %ld Bytes -> Algo %s proto %s
// channel{Lo..Hi}={%d..%d}", the bytes being the count the call passed
// times the element size, the channels those the collective ran on), as
// a comment; without the channels where the model does not know them
// (RCCL's tuner), and "" when NCCL's tuner did not choose (an alpha–beta
// lowering, an all-to-all's sends, nothing run).
//
// Under RCCL the line is NCCL's without its channel{Lo..Hi}, which no RCCL
// prints: ROCm/rccl at 7383f10d9031167141137837c9f1b4dc7ea82e64 prints
// NCCL's line, channels included (src/enqueue.cc scheduleCollTasksToPlan,
// INFO(NCCL_TUNING, "%s: %ld Bytes -> Algo %s proto %s
// channel{Lo..Hi}={%d..%d}")), but its channel count is its own
// topoGetAlgoInfo's (rcclUpdateThreadThreshold, comm->maxThreads of the
// GPU, and on AllReduce the pivotA2ANumBiRings == 3 and treeDefined
// overrides of nMaxChannels and of the algorithm), which collectives does
// not model (Model.ChannelRange); and at 0cbce2a7571c907554199fad7e905f16ec0a565c,
// whose cost model collectives implements, rank 0 prints another line,
// "%ld Bytes -> Algo %d proto %d time %f" (src/enqueue.cc line 1625:
// the bytes ×nRanks for an all-gather or reduce-scatter, include/info.h
// line 85; algo and proto as numbers; the model's float time in µs),
// whose time zerosim's integer-picosecond cost would not reproduce to
// its last digits. Leaving the channels out keeps the newer line's words
// and claims nothing the model does not know.
func tuningLine(op string, row *CollectiveRow) string {
	algo, proto, ok := strings.Cut(row.Algorithm, "/")
	fn := ncclFuncNames[op]
	if !ok || fn == "" || ncclAlgoNames[algo] == "" || ncclAlgoNames[proto] == "" {
		return ""
	}
	line := fmt.Sprintf("# NCCL INFO %s: %d Bytes -> Algo %s proto %s", fn, row.Count*2, ncclAlgoNames[algo], ncclAlgoNames[proto])
	if len(row.Channels) == 2 {
		line += fmt.Sprintf(" channel{Lo..Hi}={%d..%d}", row.Channels[0], row.Channels[1])
	}
	return line
}

// WriteCollectiveNCCLTests prints the report exactly as nccl-tests prints
// its table (src/util.cu writeResultHeader, writeBenchmarkLine*,
// writeResultFooter at the commit above): bf16 elements, redop sum (none
// for all-gather), root −1, the simulated time as both the out-of-place and
// the in-place column, #wrong 0; sizes of 0 bytes are left out, said in a
// comment, and the average is over the rows printed. `zerosim calibrate`
// reads it back.
func WriteCollectiveNCCLTests(w io.Writer, r *CollectiveReport) error {
	name := ncclTestsName(r.Op)
	redop := "sum"
	if r.Op == "allgather" || r.Op == "alltoall" {
		redop = "none"
	}
	var b []byte
	p := func(format string, a ...any) { b = fmt.Appendf(b, format, a...) }
	p("# Collective test starting: %s\n", name)
	if r.GPUsPerThread > 1 && len(r.Rows) > 0 {
		// nccl-tests' run line ("# nThread %d nGpus %d ...", src/util.cu
		// line 625 at NVIDIA/nccl-tests
		// a0b82b2260cf5152b9f8c061bbf7eaf0ba096432): one thread driving
		// GPUsPerThread GPUs, which `zerosim calibrate` reads back.
		p("# nThread 1 nGpus %d minBytes %d maxBytes %d step: 2(factor) warmup iters: 0 iters: 1 agg iters: 1 validation: 0 graph: 0\n",
			r.GPUsPerThread, r.Rows[0].Size, r.Rows[len(r.Rows)-1].Size)
	}
	p("# zerosim %s (%s) over %d ranks on %s\n", r.Op, r.algorithmText(), len(r.Group), r.Cluster)
	if len(r.Nodes) == len(r.Group) && len(r.Local) == len(r.Group) {
		// nccl-tests' devices block (src/util.cu lines 667 and 687 at the
		// commit above), one line per rank of the group: the rank's node
		// names its host.
		p("#\n# Using devices\n")
		for i := range r.Group {
			p("#  Rank %2d Group %2d Pid %6d on %10s device %2d [%04x:%02x:%02x] %s\n", i, 0, 0, fmt.Sprintf("node%d", r.Nodes[i]), r.Local[i], 0, 0, 0, "zerosim")
		}
	}
	p("#\n")
	p("# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place          \n", "", "", "", "", "")
	p("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s %*s\n", "size", "count", "type", "redop", "root",
		"time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw", "#wrong", 0, "")
	p("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s %*s\n", "(B)", "(elements)", "", "", "",
		"(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "", 0, "")
	var sum float64
	printed, empty := 0, 0
	for _, row := range r.Rows {
		if row.Size == 0 {
			// Below one element per rank nothing runs: NCCL discards an
			// empty collective (src/enqueue.cc taskAppend, line 3023 at
			// NVIDIA/nccl 5067397c2676d5aed50042fc39e5c8ee96eb0027), and
			// the time nccl-tests prints for it is its host loop's
			// (src/common.cu lines 727–772 at NVIDIA/nccl-tests
			// a0b82b2260cf5152b9f8c061bbf7eaf0ba096432), which zerosim
			// does not model: the row is left out, said in a comment,
			// rather than printed at a time of 0.00 no real log has
			// (qauser33 M5).
			empty++
			continue
		}
		printed++
		if l := tuningLine(r.Op, &row); l != "" {
			p("%s\n", l)
		}
		p("%12d  %12d  %8s  %6s  %6s", row.Size, row.Count, "bfloat16", redop, strconv.Itoa(-1))
		us := float64(row.TimePS) / 1e6
		for range 2 {
			p("  %7s  %6s  %6s  %6g", ncclFloat(us, 7), ncclFloat(row.AlgBW, 6), ncclFloat(row.BusBW, 6), 0.0)
		}
		p("\n")
		sum += row.BusBW
	}
	if empty > 0 {
		p("# zerosim: %d size(s) below one element per rank left out: NCCL discards an empty collective, and nccl-tests' time for it is its host loop's, which zerosim does not model\n", empty)
	}
	avg := 0.0
	if printed > 0 {
		avg = sum / float64(printed)
	}
	p("# %-20s : %d %s\n", "Out of bounds values", 0, "OK")
	p("# %-20s : %s %s\n", "Avg bus bandwidth", strconv.FormatFloat(avg, 'g', 6, 64), "")
	p("#\n")
	p("# Collective test concluded: %s\n", name)
	_, err := w.Write(b)
	return err
}
