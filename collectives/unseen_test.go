package collectives

import (
	"fmt"
	"math"
	"math/bits"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/internal/golden"
	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/units"
)

// unseenLog is a published nccl-tests log that came to the project after
// the model was written (testdata/nccl-tests; each file's "##" lines give
// its source, hardware, NCCL version and how the cluster is described):
// nothing is tuned to it. The cluster is described as a user would, with
// the default example and the --set equivalents of `zerosim collective`'s
// flags (sets), at the NCCL release the log states (unseenRelease: the
// --nccl-version equivalent), so the figures are those the CLI prints; held
// is the signed error of each row, in %, as the model reaches it: a row
// may get better, never worse (by more than 0.5 points).
type unseenLog struct {
	file  string
	class fabricClass
	// what the scenario cannot say about the cluster (the stand-ins used).
	gap   string
	sets  []string
	algo  Algo // NCCL_ALGO of the run; Auto when none
	gpt   int  // nccl-tests -g of the run
	held  []float64
	label string // GPUs, fabric and NCCL version, for the table
	// excerpt: the file keeps the rows a post quoted, not its whole run
	// (no "# Avg bus bandwidth" line: Log.Unfinished).
	excerpt bool
}

// isUnseen reports whether file is one of unseenLogs.
func isUnseen(file string) bool {
	return slices.ContainsFunc(unseenLogs, func(u unseenLog) bool { return u.file == file })
}

// isExcerpt reports whether file is an unseen log cut from a post.
func isExcerpt(file string) bool {
	return slices.ContainsFunc(unseenLogs, func(u unseenLog) bool { return u.file == file && u.excerpt })
}

// fabricClass sorts the unseen logs by how well a scenario can describe
// the cluster they ran on.
type fabricClass int

const (
	// ibGDR: InfiniBand or RoCE through NCCL's own IB transport, with
	// GPUDirect RDMA, and a GPU preset of the same NVLink (or no network).
	ibGDR fabricClass = iota
	// undescribed: a network behind a plugin or a GPU system no preset or
	// link describes (Slingshot through aws-ofi-nccl, GCP gIB, DGX Spark,
	// a PCIe pair on an NVLink bridge).
	undescribed
)

func (c fabricClass) String() string {
	return [...]string{"IB/RoCE with GPUDirect RDMA, or one NVSwitch node", "a fabric or system the scenario cannot describe"}[c]
}

var unseenLogs = []unseenLog{
	{file: "a100_2node_allreduce_oci_bmgpu48_10gib.log",
		held: []float64{8.8}, class: ibGDR, label: "2 × 8 A100-40GB, OCI RoCE 16 × 100 Gb/s, NCCL 2.21.5",
		sets: []string{"cluster.nodes=2", "cluster.gpus_per_node=8", "cluster.gpu=A100-40GB", "cluster.intra.preset=NVLink3", "cluster.inter.preset=RoCE200", "cluster.host.cpu=amd"},
		gap:  "none (two 100 Gb/s ports merge into one 200 Gb/s NIC per GPU)"},
	{file: "h100_2node_1gpu_allreduce_roce_tree.log", excerpt: true,
		held: []float64{2.8, 17.2, 16.0, 30.8, 30.3}, class: ibGDR, label: "2 × 1 H100, RoCE 400 Gb/s, NCCL_ALGO=Tree",
		sets: []string{"cluster.nodes=2", "cluster.gpus_per_node=1", "cluster.inter.preset=RoCE400"}, algo: Tree,
		gap: "none"},
	{file: "h20_2node_allreduce_nvlstree_small.log", excerpt: true,
		held: []float64{11.5, 11.3, 14.6, 14.3, 14.5, 11.0, 13.6, 13.8}, class: ibGDR, label: "2 × 8 H20, IB NDR, NCCL 2.21.5, NCCL_ALGO=NVLSTree",
		sets: []string{"cluster.nodes=2", "cluster.gpus_per_node=8"}, algo: NVLSTree,
		gap: "no H20 preset: H100-80GB (same NVLink4/NVSwitch)"},
	{file: "h100_16node_allreduce_small.log", excerpt: true,
		held: []float64{-23.3, -11.2, -11.2, -11.5, -11.5, -24.5, -18.0, -25.0, -27.8, -27.2}, class: ibGDR, label: "16 × 8 H100, NCCL 2.20.5",
		sets: []string{"cluster.nodes=16", "cluster.gpus_per_node=8"},
		gap:  "GPUs per node and NIC not stated: 8 and NDR assumed"},
	{file: "h20_1node_allreduce_small.log", excerpt: true,
		held: []float64{20.1, 20.1, 19.8, -39.1, 3.5, -3.2, -4.4, -7.7, -8.3, -8.9, -9.8}, class: ibGDR, label: "1 × 8 H20, NVSwitch",
		sets: []string{"cluster.nodes=1", "cluster.gpus_per_node=8"},
		gap:  "no H20 preset: H100-80GB (same NVLink4/NVSwitch)"},
	{file: "h100_2node_allreduce_oci_bmgpuh1008_roce.log",
		held: []float64{-8.5, -9.8, -10.4, -10.8, -11.1}, class: ibGDR, label: "2 × 8 H100, OCI RoCE 16 × 200 Gb/s, NCCL 2.21.5",
		sets: []string{"cluster.nodes=2", "cluster.gpus_per_node=8", "cluster.inter.preset=RoCE400"},
		gap:  "none (two 200 Gb/s ports merge into one 400 Gb/s NIC per GPU)"},
	{file: "h200_2node_allreduce_oci_bmgpuh2008_roce.log",
		held: []float64{-6.1, -6.8, -6.7, -6.9, -6.9}, class: ibGDR, label: "2 × 8 H200, OCI RoCE 8 × 400 Gb/s, NCCL 2.27.5",
		sets: []string{"cluster.nodes=2", "cluster.gpus_per_node=8", "cluster.gpu=H200", "cluster.inter.preset=RoCE400"},
		gap:  "none"},
	{file: "h200_2node_allreduce_nebius_ib.log",
		held: []float64{-8.5, -8.3, -8.4, -9.2, -8.5}, class: ibGDR, label: "2 × 8 H200, Nebius InfiniBand, NCCL 2.23.4 (image tag)",
		sets: []string{"cluster.nodes=2", "cluster.gpus_per_node=8", "cluster.gpu=H200"},
		gap:  "NIC speed not stated: NDR assumed"},
	{file: "b300_2node_allreduce_oci_roce.log",
		held: []float64{-12.2, -13.0}, class: ibGDR, label: "2 × 8 B300, OCI RoCE 16 × 400 Gb/s, NCCL 2.28.9",
		sets: []string{"cluster.nodes=2", "cluster.gpus_per_node=8", "cluster.gpu=B300", "cluster.intra.preset=NVLink5", "cluster.inter.preset=RoCE400", "cluster.inter.bandwidth=800Gbps"},
		gap:  "none (two 400 Gb/s ports merge into one 800 Gb/s NIC per GPU)"},
	{file: "b300_1node_allreduce_oci.log",
		held: []float64{1.2}, class: ibGDR, label: "1 × 8 B300, NVSwitch, NCCL 2.28.9, -g 8",
		sets: []string{"cluster.nodes=1", "cluster.gpus_per_node=8", "cluster.gpu=B300", "cluster.intra.preset=NVLink5"}, gpt: 8,
		gap: "none"},
	{file: "a100_1node_allreduce_oci_ubuntu_10gib.log",
		held: []float64{-3.2}, class: ibGDR, label: "1 × 8 A100-40GB, NVSwitch, NCCL 2.26.5",
		sets: []string{"cluster.nodes=1", "cluster.gpus_per_node=8", "cluster.gpu=A100-40GB", "cluster.intra.preset=NVLink3", "cluster.host.cpu=amd"},
		gap:  "none"},
	{file: "gh200_2node_allreduce_alps_slingshot.log",
		held: []float64{-76.9, -64.6, -53.6, -28.1, -10.8, -5.8, -4.5, -3.9}, class: undescribed, label: "2 × 1 GH200, Slingshot-11 200 Gb/s (aws-ofi-nccl), NCCL 2.30.7",
		sets: []string{"cluster.nodes=2", "cluster.gpus_per_node=1", "cluster.gpu=GH200-96GB", "cluster.inter.bandwidth=200Gbps"},
		gap:  "no preset of its 120GB variant, no Slingshot link: GH200-96GB (Hopper, Grace host), 200 Gb/s at NDR's latency"},
	{file: "gb300_2node_allgather_gcp_a4xmax.log",
		held: []float64{-46.0, -44.9, -45.1, -47.5, -49.6, -49.6, -45.0, -82.2, -48.7, -44.7, -37.0, -29.8, -57.3, -52.8, -21.9, -11.6, -8.8, -10.9, -10.6, -8.5, -7.1, -6.6, -6.9}, class: undescribed, label: "2 × 4 GB300 across NVLink domains, GCP gIB, NCCL 2.28.9",
		sets: []string{"cluster.nodes=2", "cluster.gpus_per_node=4", "cluster.gpu=GB300", "cluster.intra.preset=NVLink5", "cluster.inter.preset=XDR"},
		gap:  "no gIB link, NIC speed not stated: XDR assumed"},
	{file: "gb10_2node_allreduce_dgxspark_roce.log", excerpt: true,
		held: []float64{-45.1, -37.0, -46.1, -64.6}, class: undescribed, label: "2 × 1 GB10 (DGX Spark), RoCE 200 Gb/s, NCCL 2.31.2",
		sets: []string{"cluster.nodes=2", "cluster.gpus_per_node=1", "cluster.gpu=B200", "cluster.intra.preset=NVLink5", "cluster.inter.preset=RoCE200"},
		gap:  "no GB10 preset: B200"},
	{file: "h100pcie_1node_2gpu_allreduce_nvlbridge.log", excerpt: true,
		held: []float64{-53.2, -53.0, -52.9}, class: undescribed, label: "1 × 2 H100 PCIe, NVLink bridge, -g 2",
		sets: []string{"cluster.nodes=1", "cluster.gpus_per_node=2", "cluster.gpu=H100-PCIe", "cluster.intra.preset=NVLink4", "cluster.intra.bandwidth=300GB/s"}, gpt: 2,
		gap: "no bridge preset: H100-PCIe over NVLink4 at 300 GB/s"},
	// One H100 cluster (xxrjun/nccl-tests-cluster, qanccl s28), 10 nodes
	// at 8, 4, 2 and 1 GPUs a node, then one node alone: held as measured,
	// nothing changed to fit them. With at most 4 GPUs a node the rows
	// from 64 MiB are within the few % of the logs before them. With 8,
	// two misses the model does not describe:
	//   - From 1 GiB the ring all-gather and reduce-scatter run at busbw
	//     ~324 GB/s, 12 % under the model's (NCCL's tuner: nChannels × the
	//     ring graph's bandwidth × nRanks/nsteps, src/graph/tuning.cc line
	//     348 at NVIDIA/nccl v2.29.2-1 ebd1e929, bounded by the NICs). The
	//     same cluster reaches 98 % of its NICs with 4 GPUs a node, and
	//     one node alone is within 10 %: the loss comes when a channel's
	//     ring chains 7 NVLink hops and a NIC hop a node, one flow-
	//     controlled pipeline of NCCL_STEPS (8, src/include/device.h line
	//     24 at v2.29.2-1) slots a connection with the network steps
	//     driven by the proxy (sendProxyProgress and recvProxyProgress,
	//     src/transport/net.cc lines 1094 and 1249 at v2.26.6-1 8171af65).
	//   - At 32–512 MiB (ZeRO's bucket sizes) the runs take a near-constant
	//     ~270–400 µs more than the model at 80 ranks: a per-step cost
	//     NCCL's ring latency, (nsteps−nInterSteps)·intraLat +
	//     nInterSteps·interLat (tuning.cc lines 377–379 at v2.29.2-1),
	//     does not charge; 4 GPUs a node shows it at 32 MiB only.
	// The NIC is not stated: one NDR NIC per GPU, which the 1-GPU-a-node
	// all-reduce's busbw (48.9 GB/s, 98 % of one) supports.
	{file: "h100_10node_8gpu_allreduce_cluster01.log",
		held: []float64{-55.7, -37.5, -20.8, 21.0, 16.0, -0.9, -7.2, -15.4, -15.6, -15.0}, class: ibGDR, label: "10 × 8 H100, all_reduce_perf, NCCL 2.29.2",
		sets: []string{"cluster.nodes=10", "cluster.gpus_per_node=8"},
		gap:  "network not stated: one NDR NIC per GPU assumed"},
	{file: "h100_10node_8gpu_allgather_cluster01.log",
		held: []float64{-56.6, -44.5, -24.5, -38.5, -25.7, -19.2, -12.7, -12.8, -13.0, -11.8}, class: ibGDR, label: "10 × 8 H100, all_gather_perf, NCCL 2.29.2",
		sets: []string{"cluster.nodes=10", "cluster.gpus_per_node=8"},
		gap:  "network not stated: one NDR NIC per GPU assumed"},
	{file: "h100_10node_8gpu_reducescatter_cluster01.log",
		held: []float64{-57.1, -53.9, -40.1, -40.4, -27.1, -14.7, -10.3, -12.5, -13.5, -12.1}, class: ibGDR, label: "10 × 8 H100, reduce_scatter_perf, NCCL 2.29.2",
		sets: []string{"cluster.nodes=10", "cluster.gpus_per_node=8"},
		gap:  "network not stated: one NDR NIC per GPU assumed"},
	{file: "h100_10node_4gpu_allreduce_cluster01.log",
		held: []float64{-28.7, -11.6, -4.0, -1.0, 2.6, 7.7, 5.0, 2.5, 3.1, 2.6}, class: ibGDR, label: "10 × 4 H100 (of 8 a node), all_reduce_perf, NCCL 2.29.2",
		sets: []string{"cluster.nodes=10", "cluster.gpus_per_node=4"},
		gap:  "network not stated: one NDR NIC per GPU assumed"},
	{file: "h100_10node_4gpu_allgather_cluster01.log",
		held: []float64{-19.4, -3.5, 6.8, 2.4, 7.6, 4.9, 3.7, 2.9, 1.8, 1.5}, class: ibGDR, label: "10 × 4 H100 (of 8 a node), all_gather_perf, NCCL 2.29.2",
		sets: []string{"cluster.nodes=10", "cluster.gpus_per_node=4"},
		gap:  "network not stated: one NDR NIC per GPU assumed"},
	{file: "h100_10node_4gpu_reducescatter_cluster01.log",
		held: []float64{-26.5, -2.9, 6.5, 7.4, 7.7, 5.0, 3.7, 2.8, 2.7, 2.0}, class: ibGDR, label: "10 × 4 H100 (of 8 a node), reduce_scatter_perf, NCCL 2.29.2",
		sets: []string{"cluster.nodes=10", "cluster.gpus_per_node=4"},
		gap:  "network not stated: one NDR NIC per GPU assumed"},
	{file: "h100_10node_2gpu_allreduce_cluster01.log",
		held: []float64{7.4, 8.0, 6.3, 9.5, 6.0, 4.0, 3.3, 2.9, 2.4, 2.1}, class: ibGDR, label: "10 × 2 H100 (of 8 a node), all_reduce_perf, NCCL 2.29.2",
		sets: []string{"cluster.nodes=10", "cluster.gpus_per_node=2"},
		gap:  "network not stated: one NDR NIC per GPU assumed"},
	{file: "h100_10node_2gpu_allgather_cluster01.log",
		held: []float64{3.0, 5.1, 8.5, 4.9, 3.6, 2.8, 2.7, 2.7, 2.1, 1.5}, class: ibGDR, label: "10 × 2 H100 (of 8 a node), all_gather_perf, NCCL 2.29.2",
		sets: []string{"cluster.nodes=10", "cluster.gpus_per_node=2"},
		gap:  "network not stated: one NDR NIC per GPU assumed"},
	{file: "h100_10node_2gpu_reducescatter_cluster01.log",
		held: []float64{1.8, 5.0, 8.1, -1.8, 3.9, 2.3, 2.8, 2.4, 2.5, 2.0}, class: ibGDR, label: "10 × 2 H100 (of 8 a node), reduce_scatter_perf, NCCL 2.29.2",
		sets: []string{"cluster.nodes=10", "cluster.gpus_per_node=2"},
		gap:  "network not stated: one NDR NIC per GPU assumed"},
	{file: "h100_10node_1gpu_allreduce_cluster01.log",
		held: []float64{9.2, 13.3, 7.3, 3.7, 2.8, 2.2, 2.0, 1.7, 1.8, 1.9}, class: ibGDR, label: "10 × 1 H100 (of 8 a node), all_reduce_perf, NCCL 2.29.2",
		sets: []string{"cluster.nodes=10", "cluster.gpus_per_node=1"},
		gap:  "network not stated: one NDR NIC per GPU assumed"},
	{file: "h100_10node_1gpu_allgather_cluster01.log",
		held: []float64{5.8, 4.8, 1.7, -1.0, -1.1, -1.7, -1.4, -1.1, -0.3, 0.4}, class: ibGDR, label: "10 × 1 H100 (of 8 a node), all_gather_perf, NCCL 2.29.2",
		sets: []string{"cluster.nodes=10", "cluster.gpus_per_node=1"},
		gap:  "network not stated: one NDR NIC per GPU assumed"},
	{file: "h100_10node_1gpu_reducescatter_cluster01.log",
		held: []float64{7.4, 5.5, 2.5, 0.3, 0.2, 0.4, 1.0, 0.6, 0.3, 1.8}, class: ibGDR, label: "10 × 1 H100 (of 8 a node), reduce_scatter_perf, NCCL 2.29.2",
		sets: []string{"cluster.nodes=10", "cluster.gpus_per_node=1"},
		gap:  "network not stated: one NDR NIC per GPU assumed"},
	{file: "h100_1node_8gpu_allreduce_cluster01.log",
		held: []float64{-4.5, 3.4, -0.1, -3.5, -5.4, -0.6, -1.0, -1.2, -1.3, -1.4}, class: ibGDR, label: "1 × 8 H100, NVSwitch, all_reduce_perf, NCCL 2.29.2 (same cluster)",
		sets: []string{"cluster.nodes=1", "cluster.gpus_per_node=8"},
		gap:  "none"},
	{file: "h100_1node_8gpu_allgather_cluster01.log",
		held: []float64{-9.8, -7.1, -8.7, -7.7, -6.5, -5.6, -4.8, -3.7, -3.0, -2.3}, class: ibGDR, label: "1 × 8 H100, NVSwitch, all_gather_perf, NCCL 2.29.2 (same cluster)",
		sets: []string{"cluster.nodes=1", "cluster.gpus_per_node=8"},
		gap:  "none"},
	{file: "h100_1node_8gpu_reducescatter_cluster01.log",
		held: []float64{-0.4, -3.4, -8.3, -7.5, -7.2, -6.4, -5.2, -3.7, -2.4, -1.6}, class: ibGDR, label: "1 × 8 H100, NVSwitch, reduce_scatter_perf, NCCL 2.29.2 (same cluster)",
		sets: []string{"cluster.nodes=1", "cluster.gpus_per_node=8"},
		gap:  "none"},
	// Voltage Park, 4 × 8 H100 over 8 × NDR a node, NCCL 2.24.3 (qanccl
	// s28): the 8-GPU-a-node ring's large-size shortfall above (busbw
	// 323.5 GB/s), and from 4 MiB to 256 MiB rings in LL128 across the
	// network far below the 0.92 × Simple NCCL's tuner rates them at
	// (tuning.cc line 251 at NVIDIA/nccl v2.24.3-1 6aae3792, line 305 at
	// v2.29.2-1), which the model inherits. Held as measured.
	{file: "h100_4node_allgather_voltagepark.log",
		held: []float64{-14.0, -19.3, -20.6, -21.2, -21.9, -22.0, -18.1, -23.0, -24.7, -26.0, -7.9, -24.5, -22.2, -51.8, -48.4, -42.3, -38.5, -23.1, -33.8, -23.4, -14.8, -9.1, -10.8, -11.6, -12.2}, class: ibGDR, label: "4 × 8 H100, Voltage Park InfiniBand 8 × 400 Gb/s, all_gather_perf, NCCL 2.24.3",
		sets: []string{"cluster.nodes=4", "cluster.gpus_per_node=8"},
		gap:  "none"},
	{file: "h100_4node_allreduce_voltagepark.log",
		held: []float64{-8.3, -5.2, -5.3, -5.9, -10.2, -10.9, -8.2, -11.2, -13.8, -20.5, -31.7, -33.5, -30.7, -23.6, 2.8, 14.1, 3.8, -5.0, -36.1, -28.1, -33.0, -21.9, -11.8, -3.0, 1.6, -19.7, -12.3, -7.4, -9.1, -10.1, -10.4}, class: ibGDR, label: "4 × 8 H100, Voltage Park InfiniBand 8 × 400 Gb/s, all_reduce_perf, NCCL 2.24.3",
		sets: []string{"cluster.nodes=4", "cluster.gpus_per_node=8"},
		gap:  "none"},
	// Lambda 2 × 8 B200, NCCL 2.26.2 (qanccl s28): from 256 MiB NCCL's
	// NVLS tree, within 2 %; below, NCCL's tables and the run part.
	{file: "b200_2node_allreduce_lambda_ib.log",
		held: []float64{-31.0, -29.1, -29.0, -29.7, -32.5, -32.5, -50.6, -44.3, -34.5, -36.4, -38.8, -39.5, -39.2, -30.9, -18.5, -21.1, -76.9, -49.4, -44.0, -39.3, -36.4, -35.8, -29.7, -11.2, -12.7, -0.8, 0.0, 1.7, 0.6}, class: ibGDR, label: "2 × 8 B200, Lambda InfiniBand, NCCL 2.26.2",
		sets: []string{"cluster.nodes=2", "cluster.gpus_per_node=8", "cluster.gpu=B200", "cluster.intra.preset=NVLink5"},
		gap:  "NIC speed not stated: NDR assumed"},
	// NREL Kestrel, 16 × 4 H100 on Slingshot-11 through aws-ofi-nccl,
	// and two GCP all-gathers behind Google's plugins (TCPXO, gIB), qanccl
	// s28: the plugin's fixed cost below a few MiB (Kestrel's all-gather
	// takes ~560 µs at 1 KiB); from 128 MiB Kestrel and TCPXO are within
	// 8.1 %, while the H200 gIB run, an 8-GPU-a-node Hopper ring, stays
	// 10–11 % under from 1 GiB, as the cluster above.
	{file: "h100_16node_allreduce_kestrel_slingshot.log", excerpt: true,
		held: []float64{-15.8, 3.9, 2.5, -12.3, -10.9, -13.3, -17.1, -25.8, -33.3, -49.4, -43.2, -49.7, -66.4, -62.7, -80.2, -54.1, -80.5, -85.6, -90.3, -83.1, -74.2, -51.7, -39.0, 4.9, 1.0, -2.9, -1.2, -8.1, -3.7, -4.2}, class: undescribed, label: "16 × 4 H100, Slingshot-11 2 × 200 Gb/s a node (aws-ofi-nccl), all_reduce_perf, NCCL 2.21.5",
		sets: []string{"cluster.nodes=16", "cluster.gpus_per_node=4", "cluster.nics=per_node", "cluster.nics_per_node=2", "cluster.inter.bandwidth=200Gbps"},
		gap:  "no Slingshot link: two 200 Gb/s NICs a node at NDR's latency"},
	{file: "h100_16node_allgather_kestrel_slingshot.log", excerpt: true,
		held: []float64{-83.1, -83.2, -83.1, -83.2, -82.6, -85.7, -82.9, -85.7, -76.9, -85.6, -80.2, -85.7, -77.0, -72.0, -45.0, -16.4, 4.2, -0.6, -0.4, -2.4, -3.7, -4.2, -4.5}, class: undescribed, label: "16 × 4 H100, Slingshot-11 2 × 200 Gb/s a node (aws-ofi-nccl), all_gather_perf, NCCL 2.21.5",
		sets: []string{"cluster.nodes=16", "cluster.gpus_per_node=4", "cluster.nics=per_node", "cluster.nics_per_node=2", "cluster.inter.bandwidth=200Gbps"},
		gap:  "no Slingshot link: two 200 Gb/s NICs a node at NDR's latency"},
	{file: "h100_2node_allgather_gcp_a3mega_tcpxo_ct.log",
		held: []float64{-1.1, 0.4, 0.9, 1.8, 0.5, 2.1, 2.0, -7.3, -11.0, -11.9, -32.7, -29.7, -31.9, -29.4, -28.3, -23.6, -15.1, -14.0, -20.1, -8.1, -7.6, -6.0, -3.7, -2.3, -1.7, -1.5}, class: undescribed, label: "2 × 8 H100, GCP A3 Mega TCPXO (plugin v1.0.15), all_gather_perf, NCCL 2.28.7",
		sets: []string{"cluster.nodes=2", "cluster.gpus_per_node=8", "cluster.inter.preset=TCPXO"},
		gap:  "none beyond the plugin: the TCPXO link preset (Google's NCCL configuration)"},
	{file: "h200_2node_allgather_gcp_a3ultra_gib.log",
		held: []float64{-55.0, -56.1, -56.1, -56.3, -56.7, -56.4, -56.3, -53.9, -52.1, -43.1, -38.6, -33.3, -29.1, -23.3, -19.3, -17.1, -18.0, -17.0, -14.5, -10.1, -10.3, -10.7, -11.2, -11.0}, class: undescribed, label: "2 × 8 H200, GCP A3 Ultra gIB 8 × 400 Gb/s RoCE, all_gather_perf",
		sets: []string{"cluster.nodes=2", "cluster.gpus_per_node=8", "cluster.gpu=H200", "cluster.inter.preset=RoCE400"},
		gap:  "no gIB link: RoCE400 as through NCCL's IB transport"},
}

// statedNCCL is the NCCL version an unseen log's "## software:" line
// states ("NCCL 2.21.5", "nccl-library=22809 (NCCL 2.28.9)"), "" when it
// states none.
func statedNCCL(t *testing.T, file string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "nccl-tests", file))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(data), "\n") {
		if m := statedNCCLRe.FindStringSubmatch(l); m != nil && strings.HasPrefix(l, "## software:") {
			return m[1]
		}
	}
	return ""
}

var statedNCCLRe = regexp.MustCompile(`NCCL (\d+\.\d+\.\d+)`)

// unseenRelease is the NCCL release an unseen log is timed at: the one its
// "##" lines state where the tuner has it (scenarios.NCCLReleases),
// the default otherwise; why says which, for the table.
func unseenRelease(t *testing.T, file string) (release, why string) {
	v := statedNCCL(t, file)
	if v == "" {
		return DefaultNCCL, DefaultNCCL + ", the default (the log states no version)"
	}
	r, err := scenarios.ParseNCCLVersion(v)
	if err != nil {
		return DefaultNCCL, fmt.Sprintf("%s, the default (the log's %s is outside %s–%s)", DefaultNCCL, v, scenarios.NCCLReleases[0], scenarios.NCCLReleases[len(scenarios.NCCLReleases)-1])
	}
	return r, fmt.Sprintf("%s (the log's %s)", r, v)
}

// unseenRow is one row of an unseen log against the model.
type unseenRow struct {
	size         units.Bytes
	measured, us float64 // µs
	err          float64 // predicted/measured − 1
	algo         string  // algorithm/protocol the model ran
}

// unseenRows times every row of ul's log as `zerosim collective` would,
// at the NCCL release the log states (unseenRelease, as --nccl-version).
func unseenRows(t *testing.T, ul unseenLog) []unseenRow {
	t.Helper()
	r, _ := unseenRelease(t, ul.file)
	return unseenRowsAt(t, ul, r)
}

// unseenRowsAt is unseenRows under NCCL release r.
func unseenRowsAt(t *testing.T, ul unseenLog, r string) []unseenRow {
	t.Helper()
	def, ok := scenarios.Example("default")
	if !ok {
		t.Fatal("no default example")
	}
	// dp fills the cluster, as `collective --nodes --gpus-per-node` sets it.
	sets := append([]string{"parallelism.dp=auto", "communication.nccl_version=" + r}, ul.sets...)
	s, err := scenarios.Load("default.yaml", def, sets)
	if err != nil {
		t.Fatalf("%s: %v", ul.file, err)
	}
	c := &s.Cluster
	lg := readShared(t, sharedLog{file: ul.file})
	m := NewModel(HardwareOf(s))
	m.GPUsPerThread = max(ul.gpt, 1)
	sh := Shape{Ranks: c.Nodes * c.GPUsPerNode, Nodes: c.Nodes}
	var rows []unseenRow
	for _, r := range lg.Rows {
		ch, err := m.Time(lg.Op, sh, ul.algo, r.Size)
		if err != nil {
			t.Fatalf("%s %d B: %v", ul.file, r.Size, err)
		}
		us := float64(ch.Time) / 1e6
		rows = append(rows, unseenRow{r.Size, r.Time, us, us/r.Time - 1, ch.Algo.String() + "/" + ch.Proto.String()})
	}
	return rows
}

// TestUnseenAccuracy holds every row of the unseen logs at the error the
// model reached on it when the log was added (held): the table of
// docs/calibration.md shows them all, worst case included, and a change
// that makes any row worse fails here.
func TestUnseenAccuracy(t *testing.T) {
	for _, ul := range unseenLogs {
		rows := unseenRows(t, ul)
		var got []string
		for _, r := range rows {
			got = append(got, fmt.Sprintf("%.1f", 100*r.err))
		}
		t.Logf("%s: %s", ul.file, strings.Join(got, ", "))
		if len(rows) != len(ul.held) {
			t.Errorf("%s: %d rows, %d held", ul.file, len(rows), len(ul.held))
			continue
		}
		for i, r := range rows {
			if math.Abs(100*r.err) > math.Abs(ul.held[i])+0.5 {
				t.Errorf("%s %v: error %+.1f %%, held at %+.1f %% (measured %.2f µs, modelled %.2f, %s)", ul.file, r.size, 100*r.err, ul.held[i], r.measured, r.us, r.algo)
			}
		}
	}
}

// nominal is the size a row was asked for: nccl-tests gives each rank of
// an all-gather or reduce-scatter a whole number of 16-byte blocks of the
// size, rounded down, so a "-b 32M" row of 80 ranks of doubles prints
// 33553920 B, 512 B under 32 MiB (AllGatherGetCollByteCount in
// src/all_gather.cu at NVIDIA/nccl-tests
// a0b82b2260cf5152b9f8c061bbf7eaf0ba096432: base = (count/nranks) &
// ~(16/eltSize - 1)); a size within 1/1024 under a power of two is that
// power, so the 64 MiB row of such a run counts from 64 MiB.
func nominal(size units.Bytes) units.Bytes {
	if size <= 0 {
		return size
	}
	p := units.Bytes(1) << bits.Len64(uint64(size-1)) // the power of two ≥ size
	if p-size <= p/1024 {
		return p
	}
	return size
}

// unseenSummary is the |error| median and max of rows within [lo, hi]
// (by their nominal size).
func unseenSummary(rows []unseenRow, lo, hi units.Bytes) (n int, median, worst float64, at unseenRow) {
	var errs []float64
	for _, r := range rows {
		if s := nominal(r.size); s < lo || s > hi {
			continue
		}
		errs = append(errs, r.err)
		if math.Abs(r.err) >= math.Abs(at.err) {
			at = r
		}
	}
	median, worst = Summary(errs)
	return len(errs), median, worst, at
}

// unseenRanges are the size ranges the table summarizes: NCCL's latency
// regime, the range the shared logs' figures cover (1 MiB–1 GiB), the
// messages above it, and the large messages of a ZeRO step's shards and
// buckets (from 64 MiB, overlapping the two before it).
var unseenRanges = []struct {
	name   string
	lo, hi units.Bytes
}{
	{"below 1 MiB", 0, units.MiB - 1},
	{"1 MiB–1 GiB", units.MiB, units.GiB},
	{"above 1 GiB", units.GiB + 1, math.MaxInt64},
	{"from 64 MiB", 64 * units.MiB, math.MaxInt64},
}

// unseenTable is docs/calibration.md's table of the unseen logs: one line
// per log, then the summary per class and size range.
func unseenTable(t *testing.T) string {
	var b strings.Builder
	b.WriteString("| log | cluster | described as | NCCL timed | model ran |")
	for _, r := range unseenRanges {
		b.WriteString(" " + r.name + ": rows, median, max |")
	}
	b.WriteString(" worst row |\n|---|---|---|---|---|---|---|---|---|---|\n")
	all := map[fabricClass][]unseenRow{}
	logs := map[fabricClass]int{}
	for _, ul := range unseenLogs {
		rows := unseenRows(t, ul)
		all[ul.class] = append(all[ul.class], rows...)
		logs[ul.class]++
		var algos []string
		for _, r := range rows {
			if !slices.Contains(algos, r.algo) {
				algos = append(algos, r.algo)
			}
		}
		_, why := unseenRelease(t, ul.file)
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |", ul.file, ul.label, ul.gap, why, strings.Join(algos, ", "))
		for _, rg := range unseenRanges {
			if n, md, mx, _ := unseenSummary(rows, rg.lo, rg.hi); n > 0 {
				fmt.Fprintf(&b, " %d, %.1f %%, %.1f %% |", n, 100*md, 100*mx)
			} else {
				b.WriteString(" – |")
			}
		}
		_, _, _, w := unseenSummary(rows, 0, math.MaxInt64)
		fmt.Fprintf(&b, " %v: %.2f µs measured, %.2f modelled (%+.1f %%) |\n", w.size, w.measured, w.us, 100*w.err)
	}
	b.WriteString("\n")
	every := append(slices.Clone(all[ibGDR]), all[undescribed]...)
	for _, c := range []struct {
		name string
		logs int
		rows []unseenRow
	}{
		{strings.ToUpper(ibGDR.String()[:1]) + ibGDR.String()[1:], logs[ibGDR], all[ibGDR]},
		{strings.ToUpper(undescribed.String()[:1]) + undescribed.String()[1:], logs[undescribed], all[undescribed]},
		{"All", len(unseenLogs), every},
	} {
		fmt.Fprintf(&b, "- %s (%d logs):", c.name, c.logs)
		for i, rg := range unseenRanges {
			if i > 0 {
				b.WriteString(";")
			}
			n, md, mx, w := unseenSummary(c.rows, rg.lo, rg.hi)
			if n == 0 {
				fmt.Fprintf(&b, " %s no rows", rg.name)
				continue
			}
			fmt.Fprintf(&b, " %s %s, median %.1f %%, max %.1f %% (%v, %+.1f %%)", rg.name, rowCount(n), 100*md, 100*mx, w.size, 100*w.err)
		}
		b.WriteString(".\n")
	}
	return b.String()
}

// rowCount is "1 row" or "n rows".
func rowCount(n int) string {
	if n == 1 {
		return "1 row"
	}
	return fmt.Sprintf("%d rows", n)
}

// unseenQuote is what the README and docs/calibration.md say of the
// unseen logs, from the rows as TestUnseenAccuracy times them.
func unseenQuote(t *testing.T) string {
	var every []unseenRow
	for _, ul := range unseenLogs {
		every = append(every, unseenRows(t, ul)...)
	}
	fig := func(lo, hi units.Bytes) (float64, float64) {
		_, md, mx, _ := unseenSummary(every, lo, hi)
		return 100 * md, 100 * mx
	}
	mdMid, mxMid := fig(units.MiB, units.GiB)
	mdSmall, mxSmall := fig(0, units.MiB-1)
	mdBig, mxBig := fig(64*units.MiB, math.MaxInt64)
	return fmt.Sprintf("on %d published logs it was not built on, the rows from 1 MiB to 1 GiB are off by %.1f %% at the median and %.1f %% at worst, the rows below 1 MiB by %.1f %% and %.1f %%, and the rows from 64 MiB on by %.1f %% and %.1f %%",
		len(unseenLogs), mdMid, mxMid, mdSmall, mxSmall, mdBig, mxBig)
}

// unseenScopeQuote is what the README and docs/calibration.md say of the
// large messages on the fabrics a scenario describes (class ibGDR, from 64
// MiB): how many rows there are, so the claim names what it rests on.
func unseenScopeQuote(t *testing.T) string {
	var rows []unseenRow
	for _, ul := range unseenLogs {
		if ul.class == ibGDR {
			rows = append(rows, unseenRows(t, ul)...)
		}
	}
	n, md, mx, _ := unseenSummary(rows, 64*units.MiB, math.MaxInt64)
	off := fmt.Sprintf("off by %.1f %%", 100*mx)
	if n > 1 {
		off = fmt.Sprintf("off by %.1f %% at the median and %.1f %% at worst", 100*md, 100*mx)
	}
	return fmt.Sprintf("on InfiniBand or RoCE with GPUDirect RDMA the published logs it was not built on have %s from 64 MiB, %s", rowCount(n), off)
}

// nvlsTreeReleaseQuote is what docs/collectives.md says of the H20 NVLS
// tree log (NCCL 2.21.5) at its release and at the default: the least and
// largest error of its rows under each.
func nvlsTreeReleaseQuote(t *testing.T) string {
	i := slices.IndexFunc(unseenLogs, func(u unseenLog) bool { return u.file == "h20_2node_allreduce_nvlstree_small.log" })
	span := func(rows []unseenRow) (lo, hi float64) {
		lo, hi = math.Inf(1), math.Inf(-1)
		for _, r := range rows {
			lo, hi = math.Min(lo, 100*r.err), math.Max(hi, 100*r.err)
		}
		return lo, hi
	}
	lo, hi := span(unseenRows(t, unseenLogs[i]))
	dlo, dhi := span(unseenRowsAt(t, unseenLogs[i], DefaultNCCL))
	return fmt.Sprintf("is %.1f–%.1f %% above the 4–512 B rows, the default's (20.9 µs a hop, from 2.28.9) %.1f–%.1f %%", lo, hi, dlo, dhi)
}

// unseenRowsOf is the rows of the unseen logs whose file names match
// re, in unseenLogs' order.
func unseenRowsOf(t *testing.T, re string) []unseenRow {
	t.Helper()
	var rows []unseenRow
	for _, ul := range unseenLogs {
		if regexp.MustCompile(re).MatchString(ul.file) {
			rows = append(rows, unseenRows(t, ul)...)
		}
	}
	if len(rows) == 0 {
		t.Fatalf("no unseen log matches %s", re)
	}
	return rows
}

// fasterSpan is the least and largest |error| of the rows within [lo, hi],
// in %; every one must be the model's faster time (negative error), which
// the docs' words "faster in the model" say.
func fasterSpan(t *testing.T, rows []unseenRow, lo, hi units.Bytes) (least, most float64) {
	t.Helper()
	least, most = math.Inf(1), 0
	for _, r := range rows {
		if s := nominal(r.size); s < lo || s > hi {
			continue
		}
		if r.err >= 0 {
			t.Fatalf("%v: %+.1f %%: the model is not faster than measured", r.size, 100*r.err)
		}
		least, most = math.Min(least, -100*r.err), math.Max(most, -100*r.err)
	}
	return least, most
}

// clusterShapeQuote is what docs/calibration.md says of the 10-node H100
// cluster of xxrjun/nccl-tests-cluster (every GPUs-a-node count) and the
// Voltage Park 4-node one: close with at most 4 GPUs a node, and where
// the 8-GPU-a-node all-gather and reduce-scatter rings miss.
func clusterShapeQuote(t *testing.T) string {
	few := unseenRowsOf(t, `^h100_10node_[124]gpu_.*_cluster01\.log$`)
	nFew, mdFew, mxFew, _ := unseenSummary(few, 64*units.MiB, math.MaxInt64)
	_, _, mxOne, _ := unseenSummary(unseenRowsOf(t, `^h100_1node_8gpu_.*_cluster01\.log$`), 0, math.MaxInt64)
	rings := unseenRowsOf(t, `^h100_10node_8gpu_(allgather|reducescatter)_cluster01\.log$`)
	bigLo, bigHi := fasterSpan(t, rings, units.GiB+1, math.MaxInt64)
	midLo, midHi := fasterSpan(t, rings, 32*units.MiB, 512*units.MiB)
	vpLo, vpHi := fasterSpan(t, unseenRowsOf(t, `^h100_4node_allgather_voltagepark\.log$`), units.GiB+1, math.MaxInt64)
	// The 8-GPU all-gather's excess over the model at 32–128 MiB: near
	// constant, a cost per collective rather than per byte.
	exLo, exHi := math.Inf(1), 0.0
	for _, r := range unseenRowsOf(t, `^h100_10node_8gpu_allgather_cluster01\.log$`) {
		if s := nominal(r.size); s >= 32*units.MiB && s <= 128*units.MiB {
			exLo, exHi = math.Min(exLo, r.measured-r.us), math.Max(exHi, r.measured-r.us)
		}
	}
	return fmt.Sprintf("with 1, 2 or 4 GPUs a node its %d rows from 64 MiB are off by %.1f %% at the median and %.1f %% at worst, and one node of 8 GPUs by %.1f %% at worst. With 8 GPUs a node the all-gather and reduce-scatter rings are %.1f–%.1f %% faster in the model than measured above 1 GiB (%.1f–%.1f %% on the 4 nodes of Voltage Park), and %.1f–%.1f %% faster at 32–512 MiB, where the all-gather takes %.0f–%.0f µs more than the model at 32–128 MiB",
		nFew, 100*mdFew, 100*mxFew, 100*mxOne, bigLo, bigHi, vpLo, vpHi, midLo, midHi, exLo, exHi)
}

// b200TreeQuote is what docs/calibration.md says of the Lambda B200 pair:
// its rows the model times as NCCL's NVLS tree.
func b200TreeQuote(t *testing.T) string {
	var n int
	var worst float64
	for _, r := range unseenRowsOf(t, `^b200_2node_allreduce_lambda_ib\.log$`) {
		if strings.HasPrefix(r.algo, "nvlstree/") {
			n++
			worst = math.Max(worst, math.Abs(100*r.err))
		}
	}
	return fmt.Sprintf("its %s the model times as the NVLS tree are off by %.1f %% at worst", rowCount(n), worst)
}

// TestUnseenDocFigures keeps the figures the README and the docs quote of
// the unseen logs equal to the model's.
func TestUnseenDocFigures(t *testing.T) {
	q, scope := unseenQuote(t), unseenScopeQuote(t)
	for _, path := range []string{"../README.md", "../docs/calibration.md"} {
		golden.CheckQuotes(t, path, "go test ./collectives -run TestUnseenAccuracy -v", q, scope)
	}
	golden.CheckQuotes(t, "../docs/calibration.md", "go test ./collectives -run TestUnseenDocFigures -v", clusterShapeQuote(t), b200TreeQuote(t))
	golden.CheckQuotes(t, "../docs/collectives.md", "go test ./collectives -run TestUnseenAccuracy -v", nvlsTreeReleaseQuote(t))
	t.Logf("%s; %s", clusterShapeQuote(t), b200TreeQuote(t))
}
