package collectives

import "math"

// NCCL's thread counts and per-thread work thresholds, by which its
// enqueue takes fewer channels for a small collective (NVIDIA/nccl at
// 5067397c2676d5aed50042fc39e5c8ee96eb0027: src/include/device.h lines
// 93–114, NCCL_MAX_NTHREADS, NCCL_SIMPLE_MAX_NTHREADS,
// NCCL_LL_MAX_NTHREADS, NCCL_LL128_MAX_NTHREADS; src/include/comm.h lines
// 49–51, the NCCL_*_THREAD_THRESHOLDs; src/graph/topo.h line 25, PCI_BW),
// and the least traffic it gives a channel (src/enqueue.cc line 585,
// MinTrafficPerChannel).
const (
	ncclMaxNThreads       = 640
	ncclSimpleMaxNThreads = 512
	ncclLLMaxNThreads     = 512
	ncclLL128MaxNThreads  = 640
	ncclLLThreshold       = 8
	ncclLL128Threshold    = 8
	ncclSimpleThreshold   = 64
	ncclPCIBW             = 12.0
	minTrafficPerChannel  = 32 << 10
)

// ChannelRange is the channels NCCL runs one collective alone on, the
// channel{Lo..Hi} of its TUNING line (src/enqueue.cc line 822 at the
// commit above): op over a communicator of shape sh by algorithm and
// protocol c, count elements of elem bytes as the call passes them (an
// all-gather's or reduce-scatter's per-rank count); ok is false where
// the model does not know NCCL's count (RCCL's tuner on an AMD GPU, whose
// own channel count at ROCm/rccl 7383f10d9031167141137837c9f1b4dc7ea82e64
// comes from rcclUpdateThreadThreshold, the GPU's maxThreads and, for an
// all-reduce, the pivotA2ANumBiRings and treeDefined overrides in
// src/enqueue.cc topoGetAlgoInfo, none modelled here; one rank, no
// elements, or an algorithm NCCL's tuner does not choose).
//
// topoGetAlgoInfo (enqueue.cc lines 2070–2114) starts from the
// communicator's channels (BufferChannels: comm->nChannels), or for NVLS
// and NVLS-tree the NVLS channels (NVLSTune: comm->nvlsChannels), and for
// a ring, tree or PAT drops one at a time while the collective's bytes
// (the larger of its send and receive counts, enqueue.h
// ncclFuncMaxSendRecvCount) are under channels × threads × the protocol's
// per-thread threshold (tuning.cc lines 244–256 and 588–595: a ring or
// tree runs 512 threads with LL and Simple, the ring's Simple 256 where
// its graph's bandwidth × channels is at most PCI_BW, 640 with LL128;
// thresholds 8, 8 and 64 bytes, the ring's LL ×nRanks; PAT's thread
// count is not set, 0, so it keeps them all). scheduleCollTasksToPlan
// (lines 580–725) then splits the collective's traffic (its bytes ×2 for
// an all-reduce, ×nRanks for an all-gather or reduce-scatter, ×4 again
// under LL: ncclFuncTrafficPerByte, line 91, and line 461) into cells of
// 32 KiB of traffic over those channels, so a channel carries at least
// one cell: a small collective runs on fewer channels than it may.
// nccl-tests launches each collective alone, so its plan holds one task
// and starts at channel 0.
func (m *Model) ChannelRange(op Op, sh Shape, c Choice, count, elem int64) (lo, hi int, ok bool) {
	n := sh.Ranks
	if m.HW.GFX != "" || n < 2 || count <= 0 || elem <= 0 {
		return 0, 0, false
	}
	comm := BufferChannels(m.HW, sh)
	nvls := NVLSTune(m.HW, sh).Channels
	if op == AllGather {
		// collTaskAppend counts an all-gather in bytes (src/enqueue.cc
		// lines 2733–2737 at the commit above: count ×= elementSize,
		// datatype ncclInt8).
		count, elem = count*elem, 1
	}
	nBytes := count * elem
	traffic := int64(2) // ncclFuncTrafficPerByte
	switch op {
	case AllGather, ReduceScatter:
		nBytes *= int64(n)
		traffic = int64(n)
	case AllReduce:
	default:
		return 0, 0, false
	}
	if c.Proto == LL {
		traffic *= 4
	}
	nc, maxCh := comm, comm
	switch c.Algo {
	case NVLS, NVLSTree:
		// One node's NVLS or the NVLS tree (NVLS across nodes is CollNet,
		// not modelled): comm->nvlsChannels, in the NVLS kind's budget.
		nc, maxCh = nvls, nvls
	case Ring, Tree, PAT:
		nt, thr := m.ncclThreads(c, sh)
		for nc >= 2 && nBytes < int64(nc)*nt*thr {
			nc--
		}
	default:
		return 0, 0, false
	}
	nCh := int64(min(nc, maxCh))
	perChannel := divUp(max(minTrafficPerChannel, count*elem*traffic)/nCh, 16) * 16
	// Lines 657–706, channelId 0 and no traffic on it yet.
	cellSize := divUp(divUp(minTrafficPerChannel, traffic), 16) * 16
	perCell := cellSize / elem
	cells := divUp(count*elem, cellSize)
	trafficPerCell := cellSize * traffic
	cellsPerChannel := min(cells, divUp(perChannel, trafficPerCell))
	cellsLo := cells
	if maxCh != 1 {
		cellsLo = min(cells, divUp(perChannel, trafficPerCell))
	}
	mid := (cells - cellsLo) / cellsPerChannel
	cellsHi := (cells - cellsLo) % cellsPerChannel
	used := btoi64(cellsLo != 0) + mid + btoi64(cellsHi != 0)
	if int64(maxCh) < used {
		mid = int64(maxCh) - 2
		cellsPerChannel = (cells - cellsLo) / (mid + 1)
		cellsHi = cellsPerChannel + (cells-cellsLo)%(mid+1)
	}
	if cellsHi == 0 && mid != 0 {
		cellsHi, mid = cellsPerChannel, mid-1
	}
	// cellsLo is 0 only for no elements, turned away above.
	countLo := cellsLo * perCell
	if cellsHi == 0 {
		countLo -= cells*perCell - count
	}
	used = btoi64(countLo != 0) + mid + btoi64(cellsHi != 0)
	if used > math.MaxInt32 {
		return 0, 0, false
	}
	return 0, int(used) - 1, true
}

// ncclThreads is the threads NCCL gives a ring, tree or PAT collective of
// choice c and the bytes of work per thread before it takes more channels
// (tuning.cc lines 244–256 and 588–595 at the commit above).
func (m *Model) ncclThreads(c Choice, sh Shape) (nt, thr int64) {
	switch c.Proto {
	case LL:
		nt, thr = ncclLLMaxNThreads, ncclLLThreshold
		if c.Algo == Ring {
			thr *= int64(sh.Ranks)
		}
	case LL128:
		nt, thr = ncclLL128MaxNThreads, ncclLL128Threshold
	default:
		nt, thr = ncclSimpleMaxNThreads, ncclSimpleThreshold
		if c.Algo == Ring && m.ringSearchBW(sh) <= ncclPCIBW {
			nt = 256
		}
	}
	if c.Algo == PAT {
		nt = 0 // comm->maxThreads[PAT][·] is never set
	}
	return nt, thr
}

// ringSearchBW is the ring graph's bandwidth × channels, GB/s: the
// model's ring bus bandwidth before its protocol (tuning.cc line 324,
// busBw = nChannels · bw), at NCCL's nominal speeds (a calibration's
// efficiencies are not in NCCL's graph).
func (m *Model) ringSearchBW(sh Shape) float64 {
	nominal := *m
	nominal.Params = Nominal
	bw := math.Inf(1)
	if sh.ppn() > 1 {
		bw = nominal.intraBW(sh.minPPN())
	}
	if sh.Nodes > 1 {
		bw = math.Min(bw, nominal.netBW(sh))
	}
	return bw
}

// divUp is a/b rounded up (NCCL's DIVUP), for a ≥ 0 and b > 0.
func divUp(a, b int64) int64 { return (a + b - 1) / b }

// btoi64 is 1 for true, 0 for false.
func btoi64(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
