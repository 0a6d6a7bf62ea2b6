package scenarios

import (
	"strings"

	"github.com/zerosim/zerosim/units"
)

// GPUPreset is one named GPU: memory, dense bf16 and fp8 peaks (0 when the
// GPU has no fp8 tensor cores), HBM bandwidth, and the link presets used when
// the scenario names none.
type GPUPreset struct {
	Name         string
	Memory       units.Bytes
	PeakBF16     units.FLOPS
	PeakFP8      units.FLOPS
	HBMBandwidth units.Bandwidth
	Intra, Inter string // default link presets
	Note         string // source of the figures
}

// LinkPreset is one named link class: bandwidth per direction (per GPU for
// intra-node links, per NIC for inter-node links) and a latency.
type LinkPreset struct {
	Name      string
	Bandwidth units.Bandwidth
	Latency   units.Duration
	// PluginLatency, when not zero, is the per-hop network latency the
	// network's NCCL plugin reports to NCCL's tuner in place of the link's
	// (collectives.Hardware.PluginLatency, which HardwareOf copies from
	// the inter preset): a tuning value NCCL ranks its algorithms and
	// protocols by, not the link's latency. aws-ofi-nccl reports 75 µs on
	// p4d, p4de, p5 and p5e, the EFA-p4d and EFA-p5 presets, and 35 µs on
	// p5en and p6 (aws/aws-ofi-nccl src/platform-aws.cpp at
	// 2daf7d303aa139a03140aa530957d10521e4478d, lines 80–160, and lines
	// 771–783: "NCCL's internal tuner choices work better with this
	// value"); zero on every other preset, whose NCCL network (InfiniBand
	// or sockets) reports none.
	PluginLatency units.Duration
	// Efficiency, when not zero, is the fraction of NCCL's nominal
	// network bandwidth (the channel search's, on this preset's line
	// rate) that published all_reduce_perf runs over the fabric reach at
	// 1 GiB: the inter-node efficiency an uncalibrated scenario on this
	// preset runs at (zero.ModelOn; a network calibration replaces it,
	// and so does an explicit cluster.inter.bandwidth). Zero (nominal) on
	// every preset but EFA-p4d: the InfiniBand and RoCE presets' logs
	// meet the nominal model (collectives' TestUncalibratedAccuracy and
	// TestPublishedAccuracy), and no published EFA-p5 run was found.
	//
	// EFA-p4d, 0.69: three published 1 GiB all-reduces over 8 × A100 per
	// node and 4 × 100 Gb/s EFA, each against zerosim's nominal model of
	// the same shape and algorithm (TestEFAP4dEfficiency): 32.71 GB/s
	// busbw, ring forced, 2 nodes, NCCL 2.8.3 (aws-samples/aws-efa-eks
	// README.md at 043dbe748fad5c4a6842cd2135c097fbaafe4a95, the log in
	// collectives/testdata/nccl-tests/a100_2node_allreduce_aws_p4d_efa_ring.log;
	// model 47.57: 0.688); 57.17 on 2 nodes and 31.77 on 3, NCCL 2.9.9
	// on p4dn.24xlarge (NVIDIA/nccl issue #527, taruntandon88, 2022-07-25;
	// model 81.14, tree, and 47.31, ring: 0.705 and 0.672). Their mean is
	// 0.688. The same post's 4-node 29.61 GB/s (0.629) is left out: NCCL's
	// maintainer (AddyLaddy, same thread) read its log's 6 channels as
	// only 3 of the 4 NICs in use. Older runs say the same of EFA at
	// scale: aws/aws-ofi-nccl issue #19 (2019, p3dn): "8 machines
	// throughput is 70% of on-prem infiniband, 16 machines is 60%".
	Efficiency float64
	Note       string
}

// ModelPreset is one named model; Build returns its resolved dimensions.
type ModelPreset struct {
	Name string
	Note string
	dims Model
}

// cudaCapacity is, per GPU preset, the memory CUDA exposes to a process
// (cudaMemGetInfo's total, torch.cuda.get_device_properties().total_memory),
// as PyTorch's caching allocator prints it in its out-of-memory message,
// "(GPU 0; X GiB total capacity; …)" (since torch 2.1 "GPU 0 has a total
// capacity of X GiB"), where a published message from that part was found
// whose text (nvidia-smi's name, the title or stated hardware) ties
// it to the part. It is less than the driver's total (GPUPreset.Memory) by
// what the driver keeps for itself, and it is what `fits` compares against
// (Usable). The figure moves a little with the driver and the host OS: the
// same 40 GB part has printed 39.39, 39.50 and 39.59 GiB; the lowest
// published one is taken, and where two sources differ the row says so.
//
//   - V100-16GB: 15.77 GiB, "GPU 3 has a total capacty of 15.77 GiB" on
//     "8 Tesla V100" (meta-llama/llama#918).
//   - V100-32GB: 31.74 GiB, "(GPU 0; 31.74 GiB total capacity; …)" on a
//     "V100 32GB" (liucongg/ChatGLM-Finetuning#73; the same figure on
//     "V100*8" in haotian-liu/LLaVA#812).
//   - A100-40GB: 39.39 GiB, "(GPU 0; 39.39 GiB total capacity; …)" on an
//     A100-40G (hiyouga/LlamaFactory#2908; the same figure in the
//     mpt13b29 account of the llm-foundry 40 GB run, and in many logs);
//     39.50 GiB in a torch 2.x message (TianheWu/CoSeR#10, "Do inference on
//     one A100").
//   - A100-80GB: 79.18 GiB, "79.18 GiB total capacity" on an A100 80GB
//     (tatsu-lab/stanford_alpaca#86).
//   - A800-80GB: 79.33 GiB, "GPU 0 has a total capacty of 79.33 GiB" on an
//     "A800-80G" (hahnyuan/PB-LLM#3). It is the A100 80GB's silicon; its
//     figure (79.18 above) is lower, but no A800 message that low was found.
//   - H100-80GB: 79.11 GiB, "GPU 0 has a total capacity of 79.11 GiB" in
//     an issue whose nvidia-smi shows "NVIDIA H100 80GB HBM3 … 0MiB /
//     81559MiB" (vllm-project/vllm#27508, driver 535.247.01). Lowest of
//     the figures seen: torchtitan prints "CUDA capacity: NVIDIA H100 80GB
//     HBM3 with 79.18GiB memory" on other drivers.
//   - H200: 139.81 GiB, "GPU 0: NVIDIA H200 (139.8 GB)" and "GPU 0 has a
//     total capacity of 139.81 GiB" in one log (sungwon-chae/arxiv_confi
//     etu_logging.md @ 3906c481ed03deeb5ce0b4db322c77bdc44416ad); a
//     message naming the H200 SXM with 139.80 GiB exists in code whose
//     source could not be cited.
//   - B200: 178.35 GiB, the totalGlobalMem a CUDA query prints on
//     "Device 0: NVIDIA B200" ("Total Global Memory: 178.35 GB", in GiB:
//     nvidia-smi's total is 179.06 GiB), pytorch/ao#4002; torch messages
//     from B200 nodes print 178.35 and 178.36 GiB.
//   - L40S: 44.53 GiB, "GPU 0 has a total capacity of 44.53 GiB" on
//     "GPU:L40S 48GB" (Wan-Video/Wan2.1#205).
//   - RTX4090: 23.52 GiB, "GPU 0 has a total capacity of 23.52 GiB" under
//     "4090 24G" (Soul-AILab/SoulX-FlashTalk#5, a comment): the lowest;
//     "NVIDIA GeForce RTX 4090 24G" prints 23.64 GiB (TMElyralab/MuseTalk#76)
//     and a 4090 23.68 GiB (zai-org/CogVideo#36).
//   - RTX5090: 31.36 GiB, "GPU 0 has a total capacity of 31.36 GiB" in
//     "Out of memory error on RTX 5090" (TrajectoryCrafter/
//     TrajectoryCrafter#20); 31.37 GiB on "a 5090" (Wan-Video/Wan2.1#465).
//
// The others keep the driver's total (Memory), which overstates what a
// process can allocate by the driver's reserve (0.5-1 GiB on the 80 GB
// parts):
//   - A10G: its message prints the driver's total, "(GPU 0; 22.49 GiB total
//     capacity; …)" on an A10G (AUTOMATIC1111/stable-diffusion-webui#1259),
//     23,028 MiB to two decimals, so Memory is kept.
//   - MI300X: HIP's total capacity is rocm-smi's total (191.69 GiB in
//     unattributed "HIP out of memory" messages; 191.98 GiB in others), so
//     Memory is kept.
//   - GB200: unattributed messages from GB200 nodes print 184.31 GiB (and
//     torchtitan "NVIDIA GB200 with 187.28GiB memory"), none in a source
//     that could be cited here.
//   - H100-PCIe, GH200-96GB, B300, GB300, MI325X, MI350X, MI355X, L4: no
//     message that names the part was found.
var cudaCapacity = map[string]units.Bytes{
	"V100-16GB": 1577 * units.GiB / 100,
	"V100-32GB": 3174 * units.GiB / 100,
	"A100-40GB": 3939 * units.GiB / 100,
	"A100-80GB": 7918 * units.GiB / 100,
	"A800-80GB": 7933 * units.GiB / 100,
	"H100-80GB": 7911 * units.GiB / 100,
	"H200":      13981 * units.GiB / 100,
	"B200":      17835 * units.GiB / 100,
	"L40S":      4453 * units.GiB / 100,
	"RTX4090":   2352 * units.GiB / 100,
	"RTX5090":   3136 * units.GiB / 100,
}

// Usable is the memory a process can allocate on g: the capacity CUDA
// exposes where a published figure exists (cudaCapacity), the driver's
// total (Memory) elsewhere.
func (g GPUPreset) Usable() units.Bytes {
	if b, ok := cudaCapacity[g.Name]; ok {
		return b
	}
	return g.Memory
}

// gpuPresets lists the GPUs in documentation order.
//
// Memory is what the driver reports as the device's total: nvidia-smi's
// memory.total (the "MiB / NNNNNMiB" of its table, "FB Memory Usage:
// Total" of nvidia-smi -q) on NVIDIA parts, rocm-smi's "VRAM Total Memory
// (B)" on AMD ones, copied from a printout cited at each row. It is not
// the marketed figure: ECC and the firmware take part of the memory, so an
// "80GB" H100 shows 81,559 MiB (79.65 GiB) and a "48GB" GDDR6 L40S 46,068
// MiB (44.99 GiB); only some parts (A100, V100) show an exact binary size.
// Where no printout of a part was found the row keeps the datasheet's GB
// as GiB and says so. memory.total still counts the few
// hundred MiB the driver reserves for itself (nvidia-smi -q "Reserved":
// 479 MiB on the L40S and 700 MiB on the H200 printouts cited below),
// which no process can allocate, and CUDA's totalGlobalMem
// (torch.cuda.get_device_properties().total_memory) leaves out: where
// PyTorch's out-of-memory message of the part is published, a scenario on
// the preset compares against that usable capacity instead (cudaCapacity);
// elsewhere a plan within that margin of the total fits here and runs out
// of memory on the device.
//
// The datasheets the rows' sources name (for their peak FLOPS and HBM
// bandwidth) are published at the addresses below. The vendors' pages
// were not read here: the figures were checked against the tables of stas00/
// ml-engineering compute/accelerator/README.md at
// 744d01e18b79512572f64a6bbd8b5f4a725203a7 ("TFLOPS comparison table",
// dense, and the memory table), which link these pages as their sources:
//
//   - A100: https://www.nvidia.com/en-us/data-center/a100/ (bf16 312,
//     2.0 TB/s for the 80GB SXM);
//   - H100: https://www.nvidia.com/en-us/data-center/h100/ (bf16 989, fp8
//     1,979, 3.35 TB/s);
//   - H200: https://www.nvidia.com/en-us/data-center/h200/ (141GB, 4.8 TB/s);
//   - B200: https://resources.nvidia.com/en-us-dgx-systems/dgx-b200-datasheet
//     (bf16 2,250, fp8 4,500);
//   - B300: https://resources.nvidia.com/en-us-dgx-systems/dgx-b300-datasheet
//     (bf16 2,250, fp8 4,500; 288GB, 8 TB/s);
//   - GB200: https://www.nvidia.com/en-us/data-center/gb200-nvl72/ (per
//     GPU bf16 2,500, fp8 5,000);
//   - GB300: https://www.nvidia.com/en-us/data-center/gb300-nvl72/ (the
//     same per GPU);
//   - L40S: https://www.nvidia.com/en-us/data-center/l40s/ (bf16 362, fp8
//     733, 0.86 TB/s);
//   - MI300X: https://www.amd.com/en/products/accelerators/instinct/mi300/mi300x.html
//     (192GB HBM3, 5.3 TB/s; bf16 1,307.4 = 304 CUs × 2.1 GHz × 2,048,
//     which the table rounds to 1,300);
//   - MI325X: https://www.amd.com/en/products/accelerators/instinct/mi300/mi325x.html
//     (256GB HBM3E, 6 TB/s, MI300X's compute);
//   - MI355X: https://www.amd.com/en/products/accelerators/instinct/mi350/mi355x.html
//     (288GB HBM3E, 8 TB/s; dense bf16 2.5 and OCP-FP8 5 PFLOPS, with
//     structured sparsity twice that; ml-engineering's note 22 and its
//     "For AMD @ BF16" table: 2,400 MHz × 512 FMAs × 2 × 1,024 Matrix
//     Cores = 2,516.6 TFLOPS);
//   - MI350X: https://www.amd.com/en/products/accelerators/instinct/mi350/mi350x.html
//     (288GB HBM3E, 8 TB/s; ml-engineering's note 22: "the same silicon at
//     2200MHz and 1000W, with everything scaled by the clock ratio", so
//     2,516.6 × 2.2/2.4 = 2,306.9 TFLOPS dense bf16; the 2.2 GHz is AMD's
//     Hot Chips 2025 figure, as wccftech.com's report of the talk gives
//     it);
//   - MI350X and MI355X compute units and VRAM: AMD's ROCm "AMD GPU
//     specifications" table, https://rocm.docs.amd.com/en/latest/reference/gpu-specs.html
//     (instinct-arch-spec-table: gfx950, 288 GiB, 256 CUs, 32 per XCD).
//
// No page was found for the V100 SXM2, A10G, L4, RTX 4090 or RTX 5090
// figures (the rows name the document they come from).
var gpuPresets = []GPUPreset{
	// V100-16GB: 16,384 MiB, nvidia-smi "Tesla V100-SXM2-16GB … 1MiB /
	// 16384MiB" (thamada/gls gls/V100_x8_smi.py @ 5b0ef6cbf13815ba81660ecae60f8b29ca38a86d).
	{"V100-16GB", 16 * units.GiB, 125e12, 0, 900e9, "NVLink2", "EDR", "V100 SXM2 datasheet; no bf16: the fp16 tensor-core peak"},
	// V100-32GB: 32,768 MiB, nvidia-smi "Tesla V100-SXM2-32GB … 0MiB /
	// 32768MiB" in TU Delft DAIC's "Basics of Slurm jobs" page
	// (DAIC-tud/docs content/en/docs/manual/job-submission/slurm-basics.md
	// @ 387fa2c8df63bcbd6a89838cf8b5d971f3a81e8b, published at doc.daic.tudelft.nl).
	{"V100-32GB", 32 * units.GiB, 125e12, 0, 900e9, "NVLink2", "EDR", "V100 SXM2 datasheet; no bf16: the fp16 tensor-core peak"},
	// A100-40GB: 40,960 MiB, nvidia-smi --query-gpu "NVIDIA
	// A100-SXM4-40GB, 40960 MiB, 580.95.05" in the "GPU type strings
	// (probe)" table of Modal's GPU types (wdwd720/BrainIR
	// research/phase4/GPU_BENCHMARK.md @ b02b93feb5055136f54afe79732e19c58bc07f4e;
	// B300's row below comes from the same table).
	{"A100-40GB", 40 * units.GiB, 312e12, 0, 1555e9, "NVLink3", "HDR", "A100 SXM4 datasheet, dense bf16"},
	// A100-80GB: 81,920 MiB, nvidia-smi "NVIDIA A100-SXM4-80GB … 1MiB /
	// 81920MiB" (thamada/nvidia-smi gls/A100SXMx4_smi.py @ b09ef139265ffc7e3c78006346981de8e4d70499).
	{"A100-80GB", 80 * units.GiB, 312e12, 0, 2039e9, "NVLink3", "HDR", "A100 SXM4 80GB datasheet, dense bf16"},
	// A800-80GB: no nvidia-smi printout of an A800 was found; the A100
	// 80GB's 81,920 MiB, which it is.
	{"A800-80GB", 80 * units.GiB, 312e12, 0, 2039e9, "NVLink3-A800", "HDR", "A800 SXM4 80GB: the A100 80GB SXM4 with NVLink cut from 600 to 400 GB/s bidirectional (Reuters, Nov 2022, from a Chinese distributor's spec sheet; NVIDIA: a separate product of the A100 for Chinese customers, same computational performance, narrower interconnect); no NVIDIA A800 datasheet found, so 80GB, dense bf16 312 (FlagPerf config_A100x1x8.py theoryflops for its A800 rows) and 2,039 GB/s are the A100 80GB SXM4's"},
	// H100-80GB: 81,559 MiB, nvidia-smi "NVIDIA H100 80GB HBM3 … 1MiB /
	// 81559MiB" (modal-labs/gpu-glossary gpu-glossary/host-software/nvidia-smi.md
	// @ 1ec01b8cd823902e8000837e8bb4b07b10d983d9; also huggingface/diffusers
	// tests/quantization/torchao/README.md @ 01b6b66267ac746e63c22fa28bde214a3e721aec).
	{"H100-80GB", 81559 * units.MiB, 989e12, 1979e12, 3350e9, "NVLink4", "NDR", "H100 SXM5 datasheet, dense bf16 (989.4 rounded to 989) and fp8 (1,978.9 rounded to 1,979)"},
	// H100-PCIe: no nvidia-smi printout of it with a source to cite was
	// found, so the datasheet's 80GB is kept as 80 GiB (81,920 MiB); the
	// SXM5 part's printout is 81,559 MiB, and OpenXLA's H100 PCIe target
	// spec gives CUDA's total as device_memory_size 84,942,979,072 B
	// (81,007 MiB, xla/backends/gpu/target_config/specs/h100_pcie.txtpb at
	// 4336d12e0706168f6a382ddb231f3a83853b0657), so expect this row high by
	// about 360 MiB. Peaks: NVIDIA's H100 page, PCIe column, as tabulated in
	// stas00/ml-engineering compute/accelerator/README.md at
	// 744d01e18b79512572f64a6bbd8b5f4a725203a7 (row "NVIDIA H100 PCIe":
	// bf16 756, fp8 1,513 dense; its HBM table: 80GB at 2.00 TB/s), which
	// XLA's spec reproduces: 114 SMs × 4 tensor cores × 1,024 bf16 FLOPs a
	// clock at 1.62 GHz = 757 TFLOPS (karpathy/llm.c llmc/mfu.h at
	// 0e69e3ae466694915e9f7e5742b3c55edacc20fd: "NVIDIA H100 PCIe", 456
	// tensor cores at 1,620 MHz). Intra is the card's PCIe 5.0 x16: an
	// NVLink bridge joins pairs of cards only (the H100 page's NVLink
	// 600 GB/s for the PCIe card), so a node's collectives cross PCIe;
	// for two bridged cards set intra: {preset: NVLink4, bandwidth:
	// 300GB/s}.
	{"H100-PCIe", 80 * units.GiB, 756e12, 1513e12, 2000e9, "PCIe5", "NDR", "H100 PCIe: NVIDIA's H100 page (PCIe column) as stas00/ml-engineering tabulates it: 80GB HBM2e at 2 TB/s, dense bf16 756 and fp8 1,513 TFLOPS (1,513 and 3,026 with sparsity); 114 SMs; memory: the datasheet's 80GB as GiB (no nvidia-smi printout cited); intra: the card's PCIe 5.0 x16 (an NVLink bridge joins two cards: set intra for it)"},
	// H200: 143,771 MiB, nvidia-smi "NVIDIA H200 … 1MiB / 143771MiB" and -q
	// "Total : 143771 MiB, Reserved : 700 MiB" (thamada/gls gls/H200_smi.py
	// @ c0bed08d0e20bb1abccfee5aeedb80bc63b493a6).
	{"H200", 143771 * units.MiB, 989e12, 1979e12, 4800e9, "NVLink4", "NDR", "H200 SXM datasheet: 141GB HBM3e, 4.8 TB/s; dense bf16 989 and fp8 1,979 TFLOPS (the datasheet's sparse 1,979 and 3,958 halved)"},
	// GH200-96GB: the GH200 Grace Hopper superchip's Hopper GPU with 96GB
	// HBM3 at 4 TB/s and dense bf16 989 and fp8 1,979 TFLOPS, NVIDIA's
	// GH200 page as tabulated in stas00/ml-engineering
	// compute/accelerator/README.md at
	// 744d01e18b79512572f64a6bbd8b5f4a725203a7 (row "NVIDIA GH200 SXM":
	// 989, 1,979 dense; its HBM table's "NVIDIA GH200 SXM (1)": 96GB HBM3,
	// 4.00 TB/s; the HBM3e variant, 141 or 144GB, is another part); NVLink
	// 4 as the H100's (network/README.md's NVLink table lists GH200 under
	// NVLink 4, 450 GB/s per direction). No nvidia-smi printout with a
	// source to cite was found: the datasheet's 96GB is kept as 96 GiB
	// (98,304 MiB; OpenCL on a "NVIDIA GH200 480GB" reports 97,280 MB of
	// VRAM, mredenti/PowerCapping configuration/OpenCL_benchmark.md at
	// f57c11cb406bf98084e6f92e7a0e1193d55462e3, so expect it about 1 GiB
	// high). The Grace beside it is the host (hosts: graceHopper).
	{"GH200-96GB", 96 * units.GiB, 989e12, 1979e12, 4000e9, "NVLink4", "NDR", "GH200 Grace Hopper superchip, 96GB HBM3 variant: NVIDIA's GH200 page as stas00/ml-engineering tabulates it: 96GB HBM3 at 4 TB/s, dense bf16 989 and fp8 1,979 TFLOPS (the H100 SXM's peaks); NVLink 4; memory: the datasheet's 96GB as GiB (no nvidia-smi printout cited); host: its Grace (NVLink-C2C)"},
	// B200: 183,359 MiB, nvidia-smi "NVIDIA B200 … 0MiB / 183359MiB"
	// (modal-labs/gpu-glossary gpu-glossary/host-software/nvidia-smi.md @ e05d085c31d37fb3704719784709ed792108c445).
	{"B200", 183359 * units.MiB, 2250e12, 4500e12, 8000e9, "NVLink5", "NDR", "DGX B200 datasheet: 1,440GB HBM3e and 64 TB/s for 8 GPUs; HGX B200 per GPU 4.5 PFLOPS bf16 and 9 PFLOPS fp8 sparse, halved for dense"},
	// GB200: 189,471 MiB, nvidia-smi "NVIDIA GB200 … 0MiB / 189471MiB" on
	// four GPUs in Slinky's slurm-operator installation guide, "With GPUs"
	// (SlinkyProject/slurm-operator docs/installation.md @
	// f2ed3fc5325271cef6311c1f92c6c75efe122bb1, added in 155a8c616106227a748a42ba2f8230fba5803863);
	// also "2MiB / 189471MiB" in an NVIDIA-licensed test of nvidia-smi parsing
	// (abegnoche/ai-cloud-validation isvtest/tests/test_nvidia.py @
	// 96ab5a71e767c177a674f4f43d81e77e98d47bc5).
	{"GB200", 189471 * units.MiB, 2500e12, 5000e12, 8000e9, "NVLink5", "NDR", "GB200 NVL72 datasheet: 13.4TB HBM3e and 576 TB/s for 72 GPUs; 360 PFLOPS bf16 and 720 PFLOPS fp8 sparse for 72 GPUs, halved for dense"},
	// B300: 275,040 MiB, nvidia-smi --query-gpu "NVIDIA B300 SXM6 AC, 275040
	// MiB, 580.95.05" in the probe table of Modal's GPU types
	// (wdwd720/BrainIR research/phase4/GPU_BENCHMARK.md @
	// b02b93feb5055136f54afe79732e19c58bc07f4e). 268.59 GiB: NVIDIA's
	// BioNeMo benchmark table lists 269 GiB, not the datasheet's 288GB.
	{"B300", 275040 * units.MiB, 2250e12, 4500e12, 8000e9, "NVLink5", "XDR", "NVIDIA DGX B300 datasheet as tabulated in stas00/ml-engineering compute/accelerator/README.md (NVIDIA's page itself not found): 288GB HBM3e (2.3TB for 8 GPUs; NVIDIA's 'Inside NVIDIA Blackwell Ultra' blog: 288GB, 8 TB/s), dense bf16 2,250 and fp8 4,500 TFLOPS (HGX B300: 36 and 72 PFLOPS with sparsity for 8 GPUs, halved); ConnectX-8 800 Gb/s per GPU. Memory: nvidia-smi's 275,040 MiB, not the datasheet's 288GB (Verda's B300 table lists 270GB, as B200's 192 shows 180)"},
	// GB300: 284,208 MiB, nvidia-smi "NVIDIA GB300 … 1MiB / 284208MiB" on
	// driver 580.105.08 in Oracle's OCI GB300 quick start
	// (oracle-quickstart/oci-gpu-quickstarts nvidia/GB300/README-GB300.md
	// @ 6a0abdc78b574b28eb10926387615c8414ed8c1d). 277.55 GiB: the
	// BioNeMo table's 278 GiB.
	{"GB300", 284208 * units.MiB, 2500e12, 5000e12, 8000e9, "NVLink5", "XDR", "NVIDIA GB300 NVL72 datasheet as Verda's GB300 NVL72 post and stas00/ml-engineering give it (NVIDIA's page itself not found): up to 20TB HBM3e and 576 TB/s for 72 GPUs (279GB each in Verda's per-GPU table, 279 × 72 = 20.1TB; the blog's 288GB is the physical size, as GB200's 186 is of 192); 360 PFLOPS bf16 and 720 PFLOPS fp8 with sparsity for 72 GPUs, halved for dense; ConnectX-8 800 Gb/s per GPU"},
	// MI300X: 205,822,885,888 B (196,288 MiB, 191.69 GiB), rocm-smi
	// --showmeminfo vram "VRAM Total Memory (B): 205822885888"
	// (xiting-it/vllmonline BLOG.md @ f7767a8c0309a94a0bc0e4de747d9fdfdfe4c476),
	// and the totalGlobalMem HIP reports in MT4G's MI300X VF benchmark report
	// (caps-tum/mt4g "sample_results/AMD Instinct MI300X VF/README.md" @
	// 4cc55662a9541a40e91909c61d543c524ae04fcb).
	{"MI300X", 196288 * units.MiB, 1307_400e9, 2614_900e9, 5300e9, "xGMI", "RoCE400", "AMD Instinct MI300X datasheet: 192GB HBM3, 5.3 TB/s, dense bf16 1,307.4 and fp8 2,614.9 TFLOPS"},
	// MI325X, MI350X, MI355X: no rocm-smi printout of their VRAM total was
	// found, so the datasheets' GB are kept as GiB; MI300X's
	// printout is 320 MiB (0.16 %) below its 192 GiB: expect these to be
	// high by as much.
	{"MI325X", 256 * units.GiB, 1307_400e9, 2614_900e9, 6000e9, "xGMI", "RoCE400", "AMD Instinct MI325X datasheet: 256GB HBM3E, 6 TB/s, dense bf16 1,307.4 and fp8 2,614.9 TFLOPS"},
	{"MI350X", 288 * units.GiB, 2306_900e9, 4613_700e9, 8000e9, XGMICDNA4, "RoCE400", "AMD ROCm GPU specifications (reference/gpu-specs): 288 GiB, 256 CUs; 288GB HBM3E at 8 TB/s; the MI355X's silicon at 2.2 GHz (AMD at Hot Chips 2025): 256 × 2.2 GHz × 4,096 and 8,192 FLOPs per CU per clock = dense bf16 2,306.9 and fp8 4,613.7 TFLOPS (AMD rounds to 2.3 and 4.6 PFLOPS); intra is the MI350 series' xGMI (the xGMI-CDNA4 link preset: 7 links × 76.8 GB/s per direction)"},
	{"MI355X", 288 * units.GiB, 2516_600e9, 5033_200e9, 8000e9, XGMICDNA4, "RoCE400", "AMD ROCm GPU specifications (reference/gpu-specs): 288 GiB, 256 CUs; AMD Instinct MI355X page as tabulated in stas00/ml-engineering: 288GB HBM3E, 8 TB/s, dense FP16/BF16 2.5 and OCP-FP8 5 PFLOPS (10.1 with sparsity), exactly 256 × 2.4 GHz × 4,096 and 8,192 FLOPs per CU per clock (CDNA 4 doubles CDNA 3's; MI300X's 1,307.4 is 304 × 2.1 GHz × 2,048) = 2,516.6 and 5,033.2 TFLOPS; intra is the MI350 series' xGMI (the xGMI-CDNA4 link preset: 7 links × 76.8 GB/s per direction)"},
	// L40S: 46,068 MiB, nvidia-smi "NVIDIA L40S … 1MiB / 46068MiB" and -q
	// "Total : 46068 MiB, Reserved : 479 MiB", ECC on (thamada/nvidia-smi
	// nvsim/L40S_smi.py @ c768aedc1e0bf705fc91b08e8d9403bf53760365).
	{"L40S", 46068 * units.MiB, 362_050e9, 733e12, 864e9, "PCIe4", "RoCE100", "L40S datasheet: 48GB GDDR6, 864 GB/s, bf16 362.05 and fp8 733 TFLOPS dense (733 and 1,466 with sparsity)"},
	// A10G: 23,028 MiB, nvidia-smi "NVIDIA A10G … 0MiB / 23028MiB"
	// (pytorch/FBGEMM fbgemm_gpu/docs/src/fbgemm_gpu/development/InstallationInstructions.rst
	// @ 0579557400506fa9935345515c71429511f9e267).
	{"A10G", 23028 * units.MiB, 70e12, 0, 600e9, "PCIe4", "Eth100", "AWS G5 A10G (AWS's variant of the A10, no NVIDIA datasheet): 24GB GDDR6, 600 GB/s, 70 TFLOPS bf16 tensor as AWS lists it (the A10 datasheet's 125 is a different part)"},
	// L4: 23,034 MiB, nvidia-smi "NVIDIA L4 … 1MiB / 23034MiB" and -q
	// "Total : 23034 MiB, Reserved : 556 MiB" (thamada/nvidia-smi
	// gls/L4_smi.py @ b09ef139265ffc7e3c78006346981de8e4d70499).
	{"L4", 23034 * units.MiB, 121e12, 242_500e9, 300e9, "PCIe4", "Eth100", "L4 datasheet: 24GB GDDR6, 300 GB/s, bf16 242 and fp8 485 TFLOPS with sparsity, halved for dense"},
	// RTX4090: 24,564 MiB, nvidia-smi "NVIDIA GeForce RTX 4090 … 2MiB /
	// 24564MiB", ECC off (thamada/nvidia-smi package/RTX4090_smi.py @
	// 6f38a71568acd6fffb59b0181339a8dbb8e84434).
	{"RTX4090", 24564 * units.MiB, 165_200e9, 330_300e9, 1008e9, "PCIe4", "Eth100", "GeForce RTX 4090 (Ada whitepaper): dense bf16 and fp8 with fp32 accumulate"},
	// RTX5090: 32,607 MiB, nvidia-smi "NVIDIA GeForce RTX 5090 … 2MiB /
	// 32607MiB" (thamada/gls gls/RTX5090_smi.py @ 5d64b880942758ed4de2b107422a3f31bb609fac).
	{"RTX5090", 32607 * units.MiB, 209_500e9, 419e12, 1792e9, "PCIe5", "Eth100", "GeForce RTX 5090 (Blackwell RTX whitepaper): 32GB GDDR7, 1,792 GB/s; dense bf16 and fp8 with fp32 accumulate"},
}

// XGMICDNA4 is the MI350 series' xGMI link preset.
const XGMICDNA4 = "xGMI-CDNA4"

// pcieHopLatency is the PCIe presets' latency, NCCL's 1.0 µs per PCIe hop
// (linkPresets' latency section), also a host link's whose latency is not
// published (graceBlackwell's NVLink-C2C).
const pcieHopLatency = units.Microsecond

// linkPresets lists the link classes in documentation order.
//
// The PCIe presets' Bandwidth is the line rate, GT/s × 16 lanes / 8, the
// figure NCCL's PCI_BW (12 GB/s for a PCIe 3.0 x16 link, topo.h; 24 and 48
// for 4.0 and 5.0) is 3/4 of, which collectives' NCCL model takes it
// against (pciFraction 12/16). The payload a link carries is 128/130 of it:
// PCIe 3.0 and later encode 128 bits in 130 (PCI Express base
// specification 3.0; One Stop Systems' ExpressBox 2200 manual, appendix B
// 9.6, "PCIe 3.0 use more efficient encoding scheme called 128b/130b ...
// a single PCIe 3.0 lane, at 8GT/s, can send 985MB/s",
// https://manualshive.com/en/manual/oss/expressbox-2200/1656655?page=75, a
// vendor's manual on a third-party site). PayloadBandwidth gives that
// rate (TLP and DLLP headers and flow control, which take more, are not
// counted), which the offload host link (cluster.host.pcie) takes.
//
// Latency is one small message's one-way fixed cost per hop: the α of the
// alpha–beta lowerings (collectives/plan.go), and, beyond the NVLink4,
// PCIe4 and NDR presets' (whose hardware NCCL's tuning tables describe),
// the per-hop latency collectives' NCCL model adds (HardwareOf). Sources,
// per class:
//
//   - NVLink, NVSwitch, xGMI, 500 ns: no measured GPU-to-GPU one-way
//     small-message latency over NVLink was found (CUDA's
//     p2pBandwidthLatencyTest prints 2–3 µs per write on A100/H100 nodes,
//     the GPU's own launch and timing included, and the sample says it is
//     not meant for measurements). NCCL's own figure is 0.6 µs per NVLink
//     hop for LL (hwLat[NCCL_HW_NVLINK], NVIDIA/nccl src/graph/tuning.cc
//     at 5067397c2676d5aed50042fc39e5c8ee96eb0027, the commit
//     collectives/nccl.go models); 500 ns is kept
//     just under it. xGMI takes the NVLink figure; RCCL's own per-hop
//     latency for it (its NVLINK row, LL) is 0.8 µs in every tuning model
//     (ROCm/rccl src/graph/tuning.cc at
//     0cbce2a7571c907554199fad7e905f16ec0a565c, the commit
//     collectives/rccl.go models). 800 ns is not taken: the RCCL model adds
//     the latency beyond NVLink4's on top of that table, which already
//     holds 0.8 µs.
//   - PCIe, 1 µs: NCCL's per-hop PCIe latency for LL, 1.0 µs
//     (hwLat[NCCL_HW_PCI], same file and commit).
//   - InfiniBand, 2 µs: host-to-host ib_send_lat (one way, median) on
//     ConnectX-4 100 Gb/s back to back is 0.82 µs for 32 B, 1.52–1.61 µs
//     for 1 KiB and 2.25 µs for 4 KiB (D. Potter, master's thesis, RWTH
//     Aachen 2018, tables/mtu_performance.tex and
//     tables/benchmark_testsystem.tex,
//     https://git.dennispotter.eu/Dennis/masters-thesis at
//     1995c04f8af7a026550961b343ddaaf4cba4f893); 2 µs is within that
//     range and leaves room for the switch hop a cluster adds. No
//     ConnectX-6/7 HDR/NDR figure was found; the same 2 µs for EDR to
//     XDR. Changing NDR's moves every other inter preset's latency in the
//     NCCL model (it adds the latency beyond NDR's).
//   - RoCE, 3 µs: between the measured ends found. ConnectX-5 raw
//     Ethernet through one Mellanox SX6030 switch: 2,170 ns round trip,
//     1.1 µs one way (IBM/tulips docs/topics/Test-and-Performance.md at
//     8a8c360d4350fb851057245f50125ccab0c5acb5); ib_send_lat over RoCEv2
//     between two GCP H200 VMs (ConnectX-7): 2 B, typical 14.2 µs, min
//     12.1 µs (modal-labs/multinode-training-guide
//     health-checks/README.md at 0aa238db2489537efe07df035875448543b9eddf,
//     RoCE v2 on GCP per its README at
//     7ab44754cd8a9b791e3ea18acdf196eddfbd2051). A cloud fabric can be far
//     above 3 µs: calibrate.
//   - EFA, 18 µs: fi_pingpong -p efa between two AWS 8 × H100 instances:
//     17.05–20.80 µs per transfer (one way) for 256 B–4 KiB over two runs,
//     median 18.4 µs; the 64 B rows (25–39 µs) are each 10-iteration
//     run's first size (modal-labs/multinode-training-guide
//     health-checks/README.md at 0aa238db2489537efe07df035875448543b9eddf
//     and 3094ccfb0363d266df81d8781d4c8e11cca3aaf7; host memory, no GPU).
//     Not aws-ofi-nccl's 75 µs, which is a tuning value NCCL ranks with
//     (the PluginLatency column, LinkPreset cites it).
//   - TCPXO, 10 µs: no published one-way latency found. With it the NCCL
//     model gives 124 µs for a small all-reduce on 2 × 8 H100 A3 Mega,
//     where the A3 Mega log measures 122–124 µs (docs/calibration.md;
//     a consistency check against a collective, not a link measurement).
//   - Ethernet (kernel TCP), 10 µs: not sourced. The one host-to-host
//     figure found is higher: sockperf TCP ping-pong, 1,000 B, between two
//     Dell R640 on the Linux i40e driver (Intel 700 series, 10–40 GbE),
//     busy polling on: median 26.7 µs, min 12.2 µs one way (I. Vecera,
//     "[PATCH net v2] i40e: Enforce software interrupt during busy-poll
//     exit", intel-wired-lan, 14 Mar 2024). 10 µs is below it: calibrate.
var linkPresets = []LinkPreset{
	{"NVLink2", 150e9, 500 * units.Nanosecond, 0, 0, "V100 SXM2: 6 links × 25 GB/s per direction; latency just under NCCL's 0.6 µs per NVLink hop (see above)"},
	{"NVSwitch", 150e9, 500 * units.Nanosecond, 0, 0, "DGX-2 V100: 6 NVLink2 links per GPU into NVSwitch; latency as NVLink2"},
	{"NVLink3", 300e9, 500 * units.Nanosecond, 0, 0, "A100: 12 links × 25 GB/s per direction; latency as NVLink2"},
	{"NVLink3-A800", 200e9, 500 * units.Nanosecond, 0, 0, "A800 SXM4: NVLink cut to 400 GB/s bidirectional from the A100's 600 (Reuters, Nov 2022), 200 GB/s per direction; latency as NVLink2"},
	{"NVLink4", 450e9, 500 * units.Nanosecond, 0, 0, "H100 SXM: 18 links × 25 GB/s per direction; latency as NVLink2"},
	{"NVLink5", 900e9, 500 * units.Nanosecond, 0, 0, "B200/GB200: 18 links × 50 GB/s per direction (1.8 TB/s bidirectional, Blackwell datasheets); latency as NVLink2"},
	{"xGMI", 448e9, 500 * units.Nanosecond, 0, 0, "AMD Infinity Fabric (xGMI) on MI300X/MI325X platforms: 7 links × 64 GB/s per direction to the 7 peers (128 GB/s bidirectional each, MI300X datasheet); latency as NVLink2, below RCCL's 0.8 µs per xGMI hop (see above)"},
	// xGMI-CDNA4, the MI350X's and MI355X's: AMD's product pages list a
	// "Peak Infinity Fabric Link Bandwidth" of 153.6 GB/s for the MI350X
	// and MI355X against 128 GB/s for the MI300X and MI325X, 7 links to
	// peers (https://www.amd.com/en/products/accelerators/instinct/mi350/mi355x.html
	// and .../mi350/mi350x.html, as quoted in stas00/ml-engineering
	// network/README.md "Infinity Fabric / xGMI" at
	// 744d01e18b79512572f64a6bbd8b5f4a725203a7, whose footnote reads AMD's
	// figure as bidirectional and rounds it to 153 (76.5 GB/s a direction,
	// 535.5 for 7); TechPowerUp's Hot Chips 2025 write-up, as copied at
	// techaiapp.com "AMD Instinct MI350X series AI GPU silicon detailed":
	// "a point-to-point network of 153.6 GB/s links connecting each package
	// with every other package on the node"). Per direction 153.6 / 2 =
	// 76.8 GB/s a link, 7 × 76.8 = 537.6 GB/s, read as the MI300X's 128 is
	// (64 a direction). amd.com itself could not be read here. Two AMD
	// sources say otherwise and are not link rates: RCCL's tuner gives
	// gfx95x gfx942's link width, GFX95X_XGMI_WIDTH 48.0 (ROCm/rccl
	// src/graph/topo.h at 08814b0a9e0245c64cdc7317a4981681295643f8), which
	// collectives keeps for RCCL's ranking; and the amdgpu driver's
	// amdgpu_xgmi_early_init puts GC 9.5.0 with 9.4.3 at max_speed 32 GT/s
	// × 16 lanes (64 GB/s; ROCm/amdgpu drivers/gpu/drm/amd/amdgpu/amdgpu_xgmi.c
	// at 011c9aff8ada0c246554644738117e5213af7bfd), a ceiling it reports,
	// not AMD's published rate. Set intra.bandwidth for a measured figure.
	{XGMICDNA4, 537_600e6, 500 * units.Nanosecond, 0, 0, "AMD Infinity Fabric (xGMI) on MI350X/MI355X platforms: 7 links × 76.8 GB/s per direction (153.6 GB/s a link as AMD's MI350X/MI355X pages list it, read as bidirectional); latency as xGMI"},
	{"PCIe3", 16e9, pcieHopLatency, 0, 0, "PCIe 3.0 x16: 8 GT/s × 16 lanes = 16 GB/s line rate per direction, 15.75 GB/s after 128b/130b encoding (packet headers and flow control not counted); latency NCCL's 1.0 µs per PCIe hop"},
	{"PCIe4", 32e9, pcieHopLatency, 0, 0, "PCIe 4.0 x16: 16 GT/s × 16 lanes = 32 GB/s line rate per direction, 31.5 GB/s after 128b/130b encoding (packet headers and flow control not counted); latency NCCL's 1.0 µs per PCIe hop"},
	{"PCIe5", 64e9, pcieHopLatency, 0, 0, "PCIe 5.0 x16: 32 GT/s × 16 lanes = 64 GB/s line rate per direction, 63 GB/s after 128b/130b encoding (packet headers and flow control not counted); latency NCCL's 1.0 µs per PCIe hop"},
	{"EDR", 100e9 / 8, 2 * units.Microsecond, 0, 0, "InfiniBand EDR, 100 Gb/s; latency within ib_send_lat's 0.8–2.3 µs (32 B–4 KiB, ConnectX-4 100 Gb/s)"},
	{"HDR", 200e9 / 8, 2 * units.Microsecond, 0, 0, "InfiniBand HDR, 200 Gb/s; latency as EDR"},
	{"NDR", 400e9 / 8, 2 * units.Microsecond, 0, 0, "InfiniBand NDR, 400 Gb/s; latency as EDR"},
	{"XDR", 800e9 / 8, 2 * units.Microsecond, 0, 0, "InfiniBand XDR, 800 Gb/s (ConnectX-8 SuperNIC datasheet); latency as EDR"},
	{"RoCE400", 400e9 / 8, 3 * units.Microsecond, 0, 0, "RoCEv2, 400 Gb/s Ethernet (ConnectX-7 / Pollara-class NIC); latency between 1.1 µs (switched ConnectX-5) and 14.2 µs (ib_send_lat on GCP ConnectX-7) measured"},
	{"RoCE200", 200e9 / 8, 3 * units.Microsecond, 0, 0, "RoCEv2, 200 Gb/s Ethernet; latency as RoCE400"},
	{"RoCE100", 100e9 / 8, 3 * units.Microsecond, 0, 0, "RoCEv2, 100 Gb/s Ethernet; latency as RoCE400"},
	{"EFA-p4d", 100e9 / 8, 18 * units.Microsecond, 75 * units.Microsecond, 0.69, "AWS EFA on p4d.24xlarge: 4 × 100 Gb/s per instance of 8 GPUs (use nics: per_node, nics_per_node: 4); latency as EFA-p5 (no p4d figure found); runs at 0.69 of NCCL's nominal network bandwidth, the mean of three published 1 GiB all-reduces (nccl-tests over EFA, NCCL 2.8.3 and 2.9.9)"},
	{"EFA-p5", 400e9 / 8, 18 * units.Microsecond, 75 * units.Microsecond, 0, "AWS EFA on p5.48xlarge: 32 × 100 Gb/s per instance, 400 Gb/s per GPU; latency fi_pingpong's median 18.4 µs one way, 256 B–4 KiB, between AWS 8 × H100 instances"},
	{"TCPXO", 200e9 / 8, 10 * units.Microsecond, 0, 0, "GCP A3 Mega GPUDirect-TCPXO: 8 × 200 Gb/s NICs per VM, one per GPU (1,600 Gb/s); latency not sourced (consistent with the A3 Mega log's small all-reduce)"},
	{"Eth40", 40e9 / 8, 10 * units.Microsecond, 0, 0, "40 Gb/s Ethernet; latency not sourced (kernel TCP measured 12–27 µs, see above)"},
	{"Eth100", 100e9 / 8, 10 * units.Microsecond, 0, 0, "100 Gb/s Ethernet; latency not sourced, as Eth40"},
}

// PayloadBandwidth is what a link of preset lp carries per direction:
// the PCIe presets' line rate times 128/130 (the encoding, see
// linkPresets), every other preset's bandwidth as it is (their figures are
// already data rates).
func PayloadBandwidth(lp LinkPreset) units.Bandwidth {
	if strings.HasPrefix(lp.Name, "PCIe") {
		return lp.Bandwidth * 128 / 130
	}
	return lp.Bandwidth
}

// GPUPresets returns the GPU presets in documentation order.
func GPUPresets() []GPUPreset { return append([]GPUPreset(nil), gpuPresets...) }

// LinkPresets returns the link presets in documentation order.
func LinkPresets() []LinkPreset { return append([]LinkPreset(nil), linkPresets...) }

// ModelPresets returns the model presets in documentation order.
func ModelPresets() []ModelPreset { return append([]ModelPreset(nil), modelPresets...) }

func gpt3(name string, h, layers, heads int64, note string) ModelPreset {
	return ModelPreset{name, note, Model{Kind: KindTransformer, Arch: ArchGPT, Hidden: h, Layers: layers, Heads: heads, KVHeads: heads,
		FFN: 4 * h, Vocab: 50257, SeqLen: 2048}}
}

func llama(name string, h, layers, heads, kv, ffn int64, note string) ModelPreset {
	return ModelPreset{name, note, Model{Kind: KindTransformer, Arch: ArchLlama, Hidden: h, Layers: layers, Heads: heads, KVHeads: kv,
		FFN: ffn, Vocab: 32000, SeqLen: 4096}}
}

// hf is a preset imported from the config.json in hfpresets/.
func hf(name, note string) ModelPreset {
	return ModelPreset{name, note, Model{Kind: KindTransformer, Arch: ArchHF}}
}

// Model kinds.
const (
	KindTransformer     = "transformer"
	KindMLP             = "mlp"
	KindTinyTransformer = "tiny-transformer"
	KindGeneric         = "generic"
)

// Transformer block layouts (Model.Arch).
const (
	ArchGPT   = "gpt"
	ArchLlama = "llama"
)

var modelKinds = []string{KindTransformer, KindMLP, KindTinyTransformer, KindGeneric}

// modelPresets are the model presets, in documentation order. Sources:
// the GPT-3 paper is Brown et al. 2020, "Language Models are Few-Shot
// Learners", arXiv 2005.14165, table 2.1 (n_layers, d_model, n_heads,
// d_head; n_ctx 2048); the Llama 2 paper is Touvron et al. 2023, arXiv
// 2307.09288, with its shapes as the meta-llama/Llama-2-{7b,13b,70b}-hf
// config.json files give them (intermediate_size, num_key_value_heads). The
// hf presets are the config.json files of the Hugging Face Hub repositories
// their notes name, copied into hfpresets/ from
// https://huggingface.co/<repository>/blob/main/config.json; the revision
// each was copied at was not recorded (a later revision of a config that
// changes a shape would show in its parameter count, which each note
// states and scenarios/hf_test.go holds).
var modelPresets = []ModelPreset{
	gpt3("gpt3-125m", 768, 12, 12, "GPT-3 paper, table 2.1"),
	gpt3("gpt3-350m", 1024, 24, 16, "GPT-3 paper, table 2.1"),
	gpt3("gpt3-760m", 1536, 24, 16, "GPT-3 paper, table 2.1"),
	gpt3("gpt3-1.3b", 2048, 24, 16, "GPT-3 paper, table 2.1 (it prints 24 heads of 128, which does not match d_model 2048; 16 heads of 128 used)"),
	gpt3("gpt3-2.7b", 2560, 32, 32, "GPT-3 paper, table 2.1"),
	gpt3("gpt3-6.7b", 4096, 32, 32, "GPT-3 paper, table 2.1"),
	gpt3("gpt3-13b", 5120, 40, 40, "GPT-3 paper, table 2.1 (d_model 5120 as in Megatron; the paper prints 5140)"),
	gpt3("gpt3-175b", 12288, 96, 96, "GPT-3 paper, table 2.1"),
	llama("llama2-7b", 4096, 32, 32, 32, 11008, "Llama 2 paper / HF config"),
	llama("llama2-13b", 5120, 40, 40, 40, 13824, "Llama 2 paper / HF config"),
	llama("llama2-70b", 8192, 80, 64, 8, 28672, "Llama 2 paper / HF config (GQA, 8 KV heads)"),
	hf("llama3.2-1b", "meta-llama/Llama-3.2-1B config.json (tied embeddings): 1,235,814,400"),
	hf("llama3.2-3b", "meta-llama/Llama-3.2-3B config.json (tied embeddings): 3,212,749,824"),
	hf("llama3.1-8b", "meta-llama/Llama-3.1-8B config.json: 8,030,261,248"),
	hf("llama3.1-70b", "meta-llama/Llama-3.1-70B config.json (Llama 3.3 70B has the same shapes): 70,553,706,496"),
	hf("llama3.1-405b", "meta-llama/Llama-3.1-405B config.json: 405,853,388,800"),
	hf("mistral-7b", "mistralai/Mistral-7B-v0.1 config.json: 7,241,732,096"),
	hf("mixtral-8x7b", "mistralai/Mixtral-8x7B-v0.1 config.json: 46,702,792,704 total, 12,879,925,248 active"),
	hf("mixtral-8x22b", "mistralai/Mixtral-8x22B-v0.1 config.json: 140,630,071,296 total, 39,161,468,928 active"),
	hf("qwen2.5-7b", "Qwen/Qwen2.5-7B config.json (q/k/v biases): 7,615,616,512"),
	hf("qwen2.5-72b", "Qwen/Qwen2.5-72B config.json (q/k/v biases): 72,706,203,648"),
	hf("gemma2-9b", "google/gemma-2-9b config.json (head_dim 256, tied): 9,241,705,984"),
	hf("gemma2-27b", "google/gemma-2-27b config.json (head_dim 128, tied): 27,227,128,320"),
	hf("gpt-neox-20b", "EleutherAI/gpt-neox-20b config.json: 20,554,567,680"),
	hf("qwen3-8b", "Qwen/Qwen3-8B config.json (q/k norms): 8,190,735,360"),
	hf("qwen3-30b-a3b", "Qwen/Qwen3-30B-A3B config.json (128 experts, top-8): 30,532,122,624 total, 3,353,032,704 active"),
	hf("deepseek-v2-lite", "deepseek-ai/DeepSeek-V2-Lite config.json (MLA, 2 shared + 64 routed experts, top-6, first layer dense): 15,706,484,224"),
	hf("phi3.5-mini", "microsoft/Phi-3.5-mini-instruct config.json (fused qkv and gate_up): 3,821,079,552"),
	hf("falcon-7b", "tiiuae/falcon-7b config.json (multi-query, parallel attention, tied): 6,921,720,704"),
	{"tiny-transformer", "seed 002: 260 parameters", Model{Kind: KindTinyTransformer, Hidden: 4, Layers: 1, Heads: 2, KVHeads: 2,
		FFN: 16, Vocab: 8, SeqLen: 3}},
	{"residual-mlp-4096", "seed 000: 10 residual MLP blocks, H=4096", Model{Kind: KindMLP, Hidden: 4096, Layers: 10, FFN: 4 * 4096}},
}

func findGPU(name string) (GPUPreset, bool) {
	for _, g := range gpuPresets {
		if g.Name == name {
			return g, true
		}
	}
	return GPUPreset{}, false
}

// FindLink is the link preset named name.
func FindLink(name string) (LinkPreset, bool) {
	for _, g := range linkPresets {
		if g.Name == name {
			return g, true
		}
	}
	return LinkPreset{}, false
}

func findModel(name string) (ModelPreset, bool) {
	for _, g := range modelPresets {
		if g.Name == name {
			return g, true
		}
	}
	return ModelPreset{}, false
}

func gpuNames() []string {
	var n []string
	for _, g := range gpuPresets {
		n = append(n, g.Name)
	}
	return n
}

func linkNames() []string {
	var n []string
	for _, g := range linkPresets {
		n = append(n, g.Name)
	}
	return n
}

func modelNames() []string {
	var n []string
	for _, g := range modelPresets {
		n = append(n, g.Name)
	}
	return n
}

// deviceGPUs maps the names CUDA and ROCm give a device
// (cudaDeviceProp.name, as nvidia-smi and nccl-tests' "# Using devices"
// block print it: "A100-SXM4-40GB", "NVIDIA H100 80GB HBM3", "Tesla
// V100-SXM2-32GB") to the GPU presets, first match wins: each entry's words
// must all appear in the upper-cased name. Parts zerosim has no preset for
// (H800, H20, H100 NVL, A100 PCIe) match nothing.
var deviceGPUs = []struct {
	words []string
	gpu   string
}{
	{[]string{"GB300"}, "GB300"},
	{[]string{"B300"}, "B300"},
	{[]string{"GB200"}, "GB200"},
	{[]string{"GH200", "480GB"}, "GH200-96GB"},
	{[]string{"GH200"}, ""}, // another GH200 memory variant: no preset (not the H200 its name contains)
	{[]string{"B200"}, "B200"},
	{[]string{"H200"}, "H200"},
	{[]string{"H100", "HBM3"}, "H100-80GB"},
	{[]string{"H100", "PCIE"}, "H100-PCIe"},
	{[]string{"A800", "SXM4", "80GB"}, "A800-80GB"},
	{[]string{"A100", "SXM4", "80GB"}, "A100-80GB"},
	{[]string{"A100", "SXM4", "40GB"}, "A100-40GB"},
	{[]string{"V100", "SXM2", "32GB"}, "V100-32GB"},
	{[]string{"V100", "SXM2", "16GB"}, "V100-16GB"},
	{[]string{"MI355X"}, "MI355X"},
	{[]string{"MI350X"}, "MI350X"},
	{[]string{"MI325X"}, "MI325X"},
	{[]string{"MI300X"}, "MI300X"},
	{[]string{"L40S"}, "L40S"},
	{[]string{"A10G"}, "A10G"},
	{[]string{"RTX 5090"}, "RTX5090"},
	{[]string{"RTX 4090"}, "RTX4090"},
}

// GPUOfDevice returns the GPU preset a device name (cudaDeviceProp.name)
// is, and false when no preset is that part.
func GPUOfDevice(name string) (string, bool) {
	u := strings.ToUpper(name)
	for _, d := range deviceGPUs {
		all := true
		for _, w := range d.words {
			all = all && strings.Contains(u, w)
		}
		if all {
			return d.gpu, d.gpu != ""
		}
	}
	return "", false
}

// The AMD LLVM targets RCCL's cost model knows (collectives/rccl.go):
// CDNA 3 and CDNA 4.
const (
	GFX942 = "gfx942"
	GFX950 = "gfx950"
)

// GPUTarget is the LLVM target of an AMD GPU preset ("" for any other
// GPU): gfx942 for the CDNA 3 MI300X and MI325X, gfx950 for the CDNA 4
// MI350X and MI355X (AMD GPU specifications, rocm.docs.amd.com
// reference/gpu-specs.html, the Instinct table's "LLVM target name"
// column).
func GPUTarget(gpu string) string {
	switch {
	case strings.HasPrefix(gpu, "MI300"), strings.HasPrefix(gpu, "MI325"):
		return GFX942
	case strings.HasPrefix(gpu, "MI350"), strings.HasPrefix(gpu, "MI355"):
		return GFX950
	}
	return ""
}

// Target is the cluster's AMD LLVM target: its AMD GPU preset's
// (GPUTarget), else cluster.gfx for a GPU described by its figures; ""
// for an NVIDIA GPU.
func (c *Cluster) Target() string {
	if t := GPUTarget(c.GPU); t != "" {
		return t
	}
	return c.GFX
}

// AMD reports whether the cluster's GPU is AMD's (Target is set): RCCL
// runs its collectives, HIP its runtime.
func (c *Cluster) AMD() bool { return c.Target() != "" }

// HostPreset is the GPU preset whose system gives the cluster's host
// defaults (DefaultHostSystem, DefaultHostCPU): cluster.gpu, or, for an
// AMD GPU described by its figures (cluster.gfx), the preset of its
// target's system: the MI300X for gfx942 (AMD's 8 × MI300X platform), the
// MI355X for gfx950 (AMD's 8 × MI355X system), the two AMD host tables
// found (hosts).
func (c *Cluster) HostPreset() string {
	switch {
	case c.GPU != "":
		return c.GPU
	case c.GFX == GFX950:
		return "MI355X"
	case c.GFX != "":
		return "MI300X"
	}
	return c.GPU
}
