package scenarios

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/zerosim/zerosim/units"
)

// warn appends a warning about the key at path, with its position.
func (l *loader) warn(s *Scenario, path, msg string) {
	s.Warnings = append(s.Warnings, l.errPath(path, msg).Error())
}

// warnMemoryUnit warns when cluster.gpu_memory is written in GB with the
// number of a GPU's marketed size: "40GB" is 37.25 GiB, but an A100-40GB
// has 40 GiB (nvidia-smi shows 40960 MiB) and an H100 "80GB" 79.65 GiB
// (81559 MiB), so the fit verdict flips. A preset matches n GB when its
// memory (gpuPresets: what nvidia-smi or rocm-smi reports) is at most n
// GiB and within 1 % below it: the HBM parts with printouts show 0.16–0.52
// % less than their marketed GB taken as GiB (H100 81,559 of 81,920 MiB),
// the RTX 4090 0.05 %. GDDR parts with ECC show about 6 % less (the L40S's
// "48GB" is 44.99 GiB, closer to 48GB's 44.70 GiB) and draw no warning.
func (l *loader) warnMemoryUnit(s *Scenario) {
	e, ok := l.idx["cluster.gpu_memory"]
	if !ok || e.val == nil {
		return
	}
	raw := strings.TrimSpace(e.val.Value)
	if l.warnMemoryImplausible(s, raw) || l.warnMemoryAbovePreset(s, raw) {
		return
	}
	num, isGB := strings.CutSuffix(raw, "GB")
	if !isGB {
		return
	}
	n, err := strconv.ParseInt(strings.TrimSpace(num), 10, 64)
	if err != nil || n <= 0 || n > 1<<20 {
		return
	}
	gib, gb := units.Bytes(n)*units.GiB, units.Bytes(n)*units.GB
	var match []string
	var sizes []units.Bytes
	for _, g := range gpuPresets {
		if g.Memory <= gib && g.Memory >= gib-gib/100 && (s.Cluster.GPU == "" || g.Name == s.Cluster.GPU) {
			match = append(match, g.Name)
			sizes = append(sizes, g.Memory)
		}
	}
	switch len(match) {
	case 0:
		return
	case 1:
		g, _ := findGPU(match[0])
		l.warn(s, "cluster.gpu_memory", fmt.Sprintf("gpu_memory %s is %s, but %s has %s (%s, as its driver reports it: a GPU sold as %d GB of memory has about %d GiB)%s unless you mean decimal gigabytes",
			raw, gb.IEC(), match[0], sizes[0].IEC(), sizes[0].Exact(), n, n, memoryDefaultFix(g, s.Cluster.GPU != "")))
		return
	}
	for i := range match {
		match[i] += " (" + sizes[i].Exact() + ")"
	}
	l.warn(s, "cluster.gpu_memory", fmt.Sprintf("gpu_memory %s is %s, but %s have about %d GiB, as their drivers report it (a GPU sold as %d GB of memory has about %d GiB); use your GPU's figure unless you mean decimal gigabytes",
		raw, gb.IEC(), ListOr(match), n, n, n))
}

// memoryDefaultFix is the fix the memory warnings suggest for preset g: the
// figure zerosim takes when gpu_memory is left out (GPUPreset.Usable),
// naming what a process can allocate where it is less than the driver's
// total, so that following the advice never counts more than the default
// does (QA30 M3: "use 81559MiB" was 0.54 GiB above the H100's default
// 79.11 GiB). Without cluster.gpu (named false) the preset's figure is
// what to give as gpu_memory.
func memoryDefaultFix(g GPUPreset, named bool) string {
	usable := g.Usable()
	what := "the " + usable.IEC()
	if usable != g.Memory {
		what += " of it a process can allocate (PyTorch's total capacity)"
	}
	if !named {
		return fmt.Sprintf("; on a %s use %s, %s,", g.Name, usable.Exact(), what)
	}
	return fmt.Sprintf("; leave gpu_memory out and zerosim takes %s,", what)
}

// warnMemoryAbovePreset warns, and reports true, when cluster.gpu_memory
// (written raw) is more than the named preset's driver total
// (GPUPreset.Memory: nvidia-smi's memory.total, rocm-smi's VRAM total) by
// as little as the marketed size in GiB is: the preset's total within 1 %
// below it, warnMemoryUnit's match ("80GiB" on an H100, whose driver shows
// 81,559 MiB = 79.65 GiB; "141GiB" on an H200). The memory above the total
// does not exist on the card, yet it would count toward the fit verdict. A
// larger figure is another part on the preset's silicon (torchtitan's 96
// GB Grand Teton H100s, 95GiB: testdata/validation) and draws no warning.
func (l *loader) warnMemoryAbovePreset(s *Scenario, raw string) bool {
	if s.Cluster.GPU == "" {
		return false
	}
	g, ok := findGPU(s.Cluster.GPU)
	v := s.Cluster.GPUMemory
	if !ok || v <= g.Memory || g.Memory < v-v/100 {
		return false
	}
	l.warn(s, "cluster.gpu_memory", fmt.Sprintf("gpu_memory %s is %s, more than the %s has (%s, %s, as its driver reports it)%s unless your part has more",
		raw, s.Cluster.GPUMemory.IEC(), g.Name, g.Memory.IEC(), g.Memory.Exact(), memoryDefaultFix(g, true)))
	return true
}

// Bounds of a plausible cluster.gpu_memory on a GPU preset, as multiples
// of the preset's driver total: the parts sold on one preset's silicon
// span less than this (the H100's 80 GB and Grand Teton's 96 GB, 1.2×;
// the A100's 40 and 80 GB, 2× apart, are two presets), so a figure
// outside them is a unit or a digit wrong ("80TiB" for 80GiB) more likely
// than a part (qauser33 M3: 80TiB on an H100 turned a 290 GiB step into a
// fit, silently).
const (
	memoryPlausibleLow  = 0.5
	memoryPlausibleHigh = 1.5
)

// warnMemoryImplausible warns, and reports true, when cluster.gpu_memory
// on a GPU preset is above memoryPlausibleHigh or below memoryPlausibleLow
// times the preset's driver total (GPUPreset.Memory), as warnIntraLink
// warns of another GPU's links: the figure is kept (a custom part is
// legitimate) and the fit verdict follows it. The fix is the figure's
// number in GiB when that is plausible ("did you mean 80GiB?"), else
// leaving gpu_memory out.
func (l *loader) warnMemoryImplausible(s *Scenario, raw string) bool {
	if s.Cluster.GPU == "" {
		return false
	}
	g, ok := findGPU(s.Cluster.GPU)
	v := float64(s.Cluster.GPUMemory)
	if !ok || g.Memory <= 0 || v <= 0 {
		return false
	}
	r := v / float64(g.Memory)
	if r >= memoryPlausibleLow && r <= memoryPlausibleHigh {
		return false
	}
	times := fmt.Sprintf("%.2f×", r)
	if r < 0.01 {
		times = "under 1 % of"
	} else if r >= 10 {
		times = commas(int64(math.Round(r))) + "×"
	}
	fix := strings.TrimSuffix(memoryDefaultFix(g, true), ",")
	num := strings.TrimRight(raw, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ ")
	if n, err := strconv.ParseFloat(num, 64); err == nil && n > 0 && num+"GiB" != raw {
		if q := n * float64(units.GiB) / float64(g.Memory); q >= memoryPlausibleLow && q <= memoryPlausibleHigh {
			fix = "; did you mean " + num + "GiB? Or" + strings.TrimPrefix(fix, ";")
		}
	}
	l.warn(s, "cluster.gpu_memory", fmt.Sprintf("gpu_memory %s is %s, %s the %s's %s (as its driver reports it), and the fit verdict follows it%s (or use the preset of your part)",
		raw, s.Cluster.GPUMemory.IEC(), times, g.Name, g.Memory.IEC(), fix))
	return true
}

// warnWindows names what zerosim leaves out of blocks that attend over a
// sliding window or within attention chunks (BlockDims.Window,
// AttentionChunk; zero's blockMask counts their FLOPs per kernel): under
// context parallelism ring attention is counted over all keys, which
// overstates a window shorter than seq_len; under training.attention sdpa
// transformers materialises a mask once the window is no longer than
// seq_len, which makes SDPA run its memory-efficient kernel over every
// score: counted, with the mask's memory (the boolean mask and each
// block's 16-bit additive copy kept for backward, memory/sdpamask.go), so
// the warning names the cost flash avoids. Under flash, a Hugging Face
// config's (model.hf_config) attention chunks shorter than seq_len are
// counted as FlexAttention (torchtitan's llama4) runs them, while
// transformers' flash_attention_2 refuses them: create_chunked_causal_mask
// raises once kv_length exceeds attention_chunk_size
// (src/transformers/masking_utils.py @
// 2ccc6cae21faaf11631efa5fb9054687ae5dc931). Otherwise flash and eager
// leave nothing out.
func (l *loader) warnWindows(s *Scenario) {
	m := &s.Model
	cp := s.Parallelism.CP > 1
	hfChunks := !cp && s.Training.Attention == AttentionFlash && l.has("model.hf_config")
	if !cp && s.Training.Attention != AttentionSDPA && !hfChunks {
		return
	}
	type local struct {
		size    int64
		chunked bool
	}
	var order []local
	count := map[local]int{}
	for _, ly := range m.LayerList {
		x := ly.Dims
		if x == nil {
			continue
		}
		k := local{max(x.Window, x.AttentionChunk), x.AttentionChunk > 0}
		if hfChunks && (!k.chunked || k.size >= m.SeqLen) {
			continue
		}
		if k.size > 0 && (k.size < m.SeqLen || !cp && k.size == m.SeqLen) {
			if count[k] == 0 {
				order = append(order, k)
			}
			count[k]++
		}
	}
	if len(order) == 0 {
		return
	}
	at := "model.layer_list"
	for _, k := range []string{"model.hf_config", "model.preset"} {
		if l.has(k) {
			at = k
		}
	}
	var parts []string
	for _, k := range order {
		blocks, verb := fmt.Sprintf("%d blocks", count[k]), "attend"
		if count[k] == 1 {
			blocks, verb = "1 block", "attends"
		}
		if k.chunked {
			parts = append(parts, fmt.Sprintf("%s %s within chunks of %d tokens", blocks, verb, k.size))
		} else {
			parts = append(parts, fmt.Sprintf("%s %s over a sliding window of %d tokens", blocks, verb, k.size))
		}
	}
	what := strings.Join(parts, ", ")
	if cp {
		l.warn(s, at, what+", but ring attention under context parallelism is counted over all keys: their attention FLOPs are overstated")
		return
	}
	if hfChunks {
		l.warn(s, at, what+": transformers' flash_attention_2 refuses chunked attention longer than one chunk (create_chunked_causal_mask), so training.attention: flash counts them as FlexAttention runs them (torchtitan's llama4); with transformers use sdpa")
		return
	}
	l.warn(s, at, what+": under sdpa transformers passes SDPA the mask, so its memory-efficient kernel computes every score, and each block keeps a 16-bit copy of the micro_batch·seq_len² mask for backward (both counted, with the boolean mask itself; training.attention: flash skips the masked blocks and keeps no mask)")
}

// gpuBoundLinks are the intra-node link presets that come with a GPU's own
// package (its NVLink generation, AMD's Infinity Fabric): a GPU has the one
// its preset names, never another. PCIe presets are not in the list: most
// GPUs are also sold as PCIe cards.
var gpuBoundLinks = map[string]bool{"NVLink2": true, "NVSwitch": true, "NVLink3": true, "NVLink3-A800": true,
	"NVLink4": true, "NVLink5": true, "xGMI": true, XGMICDNA4: true}

// warnIntraLink warns when cluster.intra.preset names a GPU-bound
// interconnect other than the GPU preset's own: NVLink4 (450 GB/s) on an
// A100-40GB, whose NVLink3 carries 300 GB/s. It happens when a scenario
// that spells out its links (the embedded default names NVLink4 and NDR)
// gets another GPU with --set cluster.gpu=…: the file's links stay, and
// every intra-node collective runs at a speed that GPU does not have. An
// explicit intra.bandwidth says the user sized the links: no warning.
// V100s in NVSwitch boxes (DGX-2) keep NVLink2 ports, so NVSwitch is a V100
// link too.
func (l *loader) warnIntraLink(s *Scenario) {
	c := &s.Cluster
	if c.GPU == "" && c.GFX == "" && (c.Intra.Preset == "xGMI" || c.Intra.Preset == XGMICDNA4) {
		// A GPU described by its figures is NVIDIA's unless cluster.gfx
		// says otherwise (Cluster.AMD): AMD's link, NVIDIA's model.
		l.warn(s, "cluster.intra.preset", "intra preset "+c.Intra.Preset+" is AMD's Infinity Fabric, but a GPU described by its figures is taken as NVIDIA's: "+
			"its collectives run zerosim's alpha–beta model, not RCCL's, on an Intel host; add gfx: gfx942 or gfx950 (--set cluster.gfx=gfx950) for an AMD GPU")
		return
	}
	if !l.has("cluster.gpu") || !l.has("cluster.intra.preset") || l.has("cluster.intra.bandwidth") || !gpuBoundLinks[c.Intra.Preset] {
		return
	}
	g, ok := findGPU(c.GPU)
	if !ok || g.Intra == c.Intra.Preset || c.Intra.Preset == "NVSwitch" && g.Intra == "NVLink2" {
		return
	}
	have, _ := FindLink(c.Intra.Preset)
	own, _ := FindLink(g.Intra)
	l.warn(s, "cluster.intra.preset", fmt.Sprintf("intra preset %s (%v per direction) is not the %s's interconnect: it has %s (%v); "+
		"use preset: %s (--set cluster.intra.preset=%s), or intra.bandwidth: for links of your own",
		have.Name, have.Bandwidth, g.Name, own.Name, own.Bandwidth, own.Name, own.Name))
}

// ForeignIntraPreset is cluster.intra.preset when it names a GPU-bound
// interconnect other than the GPU preset's own and sets the links' speed
// (no intra.bandwidth of another figure), as warnIntraLink warns about:
// NVLink4 on an MI300X after --set cluster.gpu=MI300X on the default
// example. "" otherwise. A table that names the link class by the GPU
// (xGMI on AMD) names this preset beside it (qauser29 #4: "xgmi 450.00
// GB/s" was NVLink4's figure under xGMI's name).
func (c *Cluster) ForeignIntraPreset() string {
	if !gpuBoundLinks[c.Intra.Preset] {
		return ""
	}
	g, ok := findGPU(c.GPU)
	if !ok || g.Intra == c.Intra.Preset || c.Intra.Preset == "NVSwitch" && g.Intra == "NVLink2" {
		return ""
	}
	if p, ok := FindLink(c.Intra.Preset); !ok || c.Intra.Bandwidth != 0 && c.Intra.Bandwidth != p.Bandwidth {
		return ""
	}
	return c.Intra.Preset
}

// NVL72GPUs is the GPUs of one GB200 or GB300 NVL72 rack: 18 compute
// trays of 4 GPUs (2 Grace Blackwell superchips a tray) on one NVLink
// switch domain (NVIDIA GB200 NVL72 datasheet: "72 NVIDIA Blackwell GPUs",
// 18 compute nodes).
const NVL72GPUs = 72

// trayGPUs is the GPUs of a GB200/GB300 compute tray (2 superchips of 2
// GPUs each), how Slurm and the trays' own OS see a "node".
const trayGPUs = 4

// nvl36GPUs is the GPUs of a GB200 NVL36 rack's NVLink domain: 9 compute
// trays of 4, half an NVL72 (the NVLink domain sizes docs/scenario-format.md,
// cluster, names: 72 for an NVL72 rack, 36 for an NVL36).
const nvl36GPUs = NVL72GPUs / 2

// warnNVLTray warns when a GB200 or GB300 cluster (a GPU preset whose
// system is a Grace–Blackwell NVL rack: graceBlackwell) is described a
// compute tray per node. Such trays share one NVLink domain, and NCCL's
// multi-node NVLink (MNNVL, on by default: NCCL_MNNVL_ENABLE is 2, auto,
// src/init.cc:862, checked whenever nNodes > 1 at init.cc:1072, NVIDIA/nccl
// at 5067397c2676d5aed50042fc39e5c8ee96eb0027) groups the ranks whose
// GPUs report the same fabric clusterUuid and cliqueId into one clique
// (src/mnnvl.cc:47–54), fuses their topologies as one node's
// (src/graph/topo.cc:1887–1891, nLocalRanks = comm->clique.size) and
// counts nodes by the rings' first rank (init.cc:1293–1296), so the
// number of NVLink domains is nNodes (initNvlDomainInfo, init.cc:878).
// zerosim's node is NCCL's node: described per tray, the traffic between
// trays of one rack would be modelled over the NICs instead of NVLink.
//
// Any gpus_per_node that is not a whole NVLink domain (a multiple of
// nvl36GPUs: 36 for NVL36, 72 for NVL72) splits one across zerosim's
// nodes, not only a tray of 4 or less: HGX's 8 per node, 9 × 8 for one
// NVL72 rack, is the likely mistake (QA14 finding 5). A node that is a
// rack used in part (16 trays, 64 GPUs) is right as given, which the
// warning says for descriptions above a tray. Two nodes of 36 are silent:
// they are two NVL36 racks, or one GB200 NVL36×2 split at its racks (one
// domain of 72), which the loader cannot tell apart; the docs say so
// (docs/scenario-format.md, cluster).
func (l *loader) warnNVLTray(s *Scenario) {
	if msg := NVLTrayNote(&s.Cluster, false); msg != "" {
		l.warn(s, "cluster.gpus_per_node", msg)
	}
}

// MNNVLNote is the words of every NVLTrayNote, by which a command that
// changes the cluster's shape after loading finds the loader's warning
// of the file's shape (collective's --nodes and --gpus-per-node).
const MNNVLNote = "NCCL's MNNVL counts the NVL72 rack as one node"

// NVLTrayNote is warnNVLTray's warning for cluster c, "" when there is
// none; with flags it speaks of collective's --nodes and --gpus-per-node
// (which set the shape there) instead of the cluster keys (QA30 LOW-5: the
// warning named the file's 2 × 8 and its position for a run of 3 × 4).
func NVLTrayNote(c *Cluster, flags bool) string {
	if DefaultHostSystem(c.GPU) != graceBlackwell || c.Nodes <= 1 || c.GPUsPerNode%nvl36GPUs == 0 || c.GPUsPerNode > NVL72GPUs {
		// Above a rack, warnImpossibleHardware says so.
		return ""
	}
	shape := func(nodes, gpn int) string {
		if flags {
			return fmt.Sprintf("--nodes %d --gpus-per-node %d", nodes, gpn)
		}
		return fmt.Sprintf("nodes: %d, gpus_per_node: %d", nodes, gpn)
	}
	gpnName := func(gpn int) string {
		if flags {
			return fmt.Sprintf("--gpus-per-node %d", gpn)
		}
		return fmt.Sprintf("gpus_per_node: %d", gpn)
	}
	total := c.Nodes * c.GPUsPerNode
	// One instruction, the description of these GPUs: a node of them all
	// when they fit one rack, else a node per rack, else (not whole racks)
	// a node per NVLink domain; notes after it in parentheses.
	var do string
	var notes []string
	switch {
	case total <= NVL72GPUs:
		do = "describe the trays of one rack as one node: " + shape(1, total)
	case total%NVL72GPUs == 0:
		do = "describe each NVL72 rack as one node: " + shape(total/NVL72GPUs, NVL72GPUs)
		notes = append(notes, fmt.Sprintf("an NVL36 rack is a node of %d", nvl36GPUs))
	default:
		do = fmt.Sprintf("describe each NVLink domain as one node: %s for an NVL72 rack, %d for an NVL36", gpnName(NVL72GPUs), nvl36GPUs)
		notes = append(notes, fmt.Sprintf("%d GPUs are not whole racks", total))
	}
	what := fmt.Sprintf("a %s compute tray or less", c.GPU)
	if c.GPUsPerNode > trayGPUs {
		what = fmt.Sprintf("not a whole %s NVLink domain (72 GPUs in an NVL72 rack, 36 in an NVL36)", c.GPU)
		notes = append(notes, fmt.Sprintf("a node that is one rack used in part is right as %s", gpnName(c.GPUsPerNode)))
	}
	notes = append(notes, "docs/scenario-format.md, cluster")
	subject := fmt.Sprintf("gpus_per_node=%d", c.GPUsPerNode)
	if flags {
		subject = fmt.Sprintf("--gpus-per-node %d", c.GPUsPerNode)
	}
	return fmt.Sprintf("%s is %s, but %s, and the traffic between its trays would be modelled over the NICs instead of NVLink: %s (%s)",
		subject, what, MNNVLNote, do, strings.Join(notes, "; "))
}

// warnExpandable warns when memory.expandable_segments, written in the file
// or by --set (not filled in by a stack preset), has no effect: only the
// simulated caching allocator reads it, and the reserve is simulated only
// where Scenario.UnsimulatedReserve finds nothing against it, except that
// an allocator_overhead taken from a calibration fitted to the run is not
// warned of. Elsewhere the reserve is that fraction of the allocated peak
// whatever the segments. A warning, not an error: a sweep over stages or
// boundaries keeps the key in every point.
func (l *loader) warnExpandable(s *Scenario) {
	const path = "memory.expandable_segments"
	if !l.written(path) || s.Memory.ExpandableSegments == nil {
		return
	}
	why := s.UnsimulatedReserve()
	if why == "" || why == overheadGivesReserve && !l.written("memory.allocator_overhead") {
		return
	}
	l.warn(s, path, fmt.Sprintf("expandable_segments has no effect here: %s, and the caching allocator is simulated only under PyTorch FSDP (communication.boundary fsdp1, fsdp2 or fsdp2_head) at zero_stage 3 with nothing offloaded, no grad_sync: last and memory.allocator_overhead unset; elsewhere the reserve is memory.allocator_overhead of the allocated peak (delete the key)", why))
}

// warnStackAdamL2 warns when a stack preset's training.weight_decay meets
// an optimizer: adam the file or a --set gives (QA23 L5): every stack's
// optimizer is AdamW, whose decay is decoupled, while Adam adds the decay
// to the gradient (L2), so the run would neither be the stack's nor
// torch.optim.Adam's default (weight decay 0).
func (l *loader) warnStackAdamL2(s *Scenario) {
	t := s.Training
	if s.Stack == "" || t.Optimizer != OptimizerAdam || t.WeightDecay == 0 ||
		!l.written("training.optimizer") || l.written("training.weight_decay") {
		return
	}
	l.warn(s, "training.optimizer", fmt.Sprintf("optimizer adam with stack %s's weight_decay %s: Adam adds the decay to the gradient (L2), while the stack's AdamW decouples it; set optimizer: adamw to run the stack's optimizer, or weight_decay: 0 for plain Adam", s.Stack, fmtFloat(t.WeightDecay)))
}

// written reports whether the key at path is in the file or a --set, not
// filled in by a stack preset.
func (l *loader) written(path string) bool {
	e, ok := l.idx[path]
	if !ok || e.val == nil {
		return false
	}
	from, set := l.setOf[e.val]
	return !set || !strings.HasPrefix(from, stackOrigin)
}

// warnStraddle warns when parallelism.k's shard groups (N/K consecutive
// ranks) or cp's rings (cp consecutive ranks) spread over nodes unevenly,
// on the GPUs cluster.placement puts them on: a group with unequal
// numbers of its ranks on its nodes (6 + 2 over nodes of 6 GPUs), or
// groups split differently from one another (one on a node, another as
// 2 + 2 over two). NCCL prices a communicator by its smallest node, keeping
// the fewest channels and the least bandwidth any rank's graph found
// (src/init.cc lines 1439–1442 at
// 5067397c2676d5aed50042fc39e5c8ee96eb0027; collectives' Shape.MinPerNode),
// and a group that crosses the network waits for its slower links, so the
// step is slower than with groups that tile the nodes (QA17 M1: 4 nodes
// of 6 GPUs at ZeRO-3 take 452.78 ms at K 3 against 390.71 ms at K 2;
// QA18 M4: dp 6, cp 4 on 3 nodes of 8 under placement [dp, cp], each ring
// 2 + 1 + 1, 943.731 ms against 478.997 under [cp, dp]). Not an error:
// the layout runs, and may be what the cluster has.
func (l *loader) warnStraddle(s *Scenario) {
	gpn, n := s.Cluster.GPUsPerNode, s.N()
	if k := s.Parallelism.K; k > 1 && s.groupsUneven(n/k, k) {
		split, _ := s.groupSplit(n/k, k)
		var fits []string
		for d := 1; d <= n; d++ {
			if n%d == 0 && !s.groupsUneven(n/d, d) {
				fits = append(fits, strconv.Itoa(d))
			}
		}
		l.warn(s, "parallelism.k", fmt.Sprintf("k=%d makes shard groups of %d ranks on nodes of %d GPUs, so the groups spread over nodes unevenly (one as %s), and NCCL prices a group by its smallest node: expect a slower step than with groups that tile the nodes (k = %s)",
			k, n/k, gpn, split, strings.Join(fits, ", ")))
	}
	if cp := s.Parallelism.CP; cp > 1 && s.groupsUneven(cp, n/cp) {
		split, _ := s.groupSplit(cp, n/cp)
		l.warn(s, "parallelism.cp", fmt.Sprintf("cp=%d makes context-parallel rings of %d ranks on nodes of %d GPUs, so the rings spread over nodes unevenly (one as %s) under cluster.placement %s: their exchanges cross the network and their collectives are priced by their smallest node, as NCCL does; expect a slower step than with rings that tile the nodes (a cp that divides %d or is a multiple of it, placement [cp, dp])",
			cp, cp, gpn, split, placementText(s.Cluster.Placement), gpn))
	}
}

// StraddlingGroups are the keys whose groups spread over nodes unevenly
// (warnStraddle, groupSplit): "parallelism.k" for the shard groups,
// "parallelism.cp" for the cp rings.
func (s *Scenario) StraddlingGroups() []string {
	var keys []string
	n := s.N()
	if k := s.Parallelism.K; k > 1 && s.groupsUneven(n/k, k) {
		keys = append(keys, "parallelism.k")
	}
	if cp := s.Parallelism.CP; cp > 1 && s.groupsUneven(cp, n/cp) {
		keys = append(keys, "parallelism.cp")
	}
	return keys
}

// dpFirst reports whether cluster.placement varies dp fastest across GPUs.
func (s *Scenario) dpFirst() bool {
	return len(s.Cluster.Placement) > 0 && s.Cluster.Placement[0] == AxisDP
}

// groupsUneven is groupSplit's uneven, in O(1) where ranks sit on GPUs in
// order (placement [cp, dp]): consecutive groups then spread evenly
// exactly when they tile the nodes (zero.Symmetric's test).
func (s *Scenario) groupsUneven(size, groups int) bool {
	if !s.dpFirst() {
		return size > 0 && groups > 0 && !s.tilesNodes(size)
	}
	_, u := s.groupSplit(size, groups)
	return u
}

// gpuOf is the GPU (node·gpus_per_node + local) holding rank r under
// cluster.placement, as topology places it: [cp, dp] (the default) puts
// rank r on GPU r; [dp, cp] varies dp fastest across GPUs.
func (s *Scenario) gpuOf(r int) int {
	if s.dpFirst() {
		cp := max(s.Parallelism.CP, 1)
		return (r%cp)*s.Parallelism.DP + r/cp
	}
	return r
}

// groupSplit reports whether groups groups of size consecutive ranks
// (group i from rank i·size) spread over nodes unevenly, on the GPUs
// gpuOf puts them on: a group holds unequal numbers of ranks on its
// nodes, or two groups split differently; split is the most uneven
// group's ranks per node, "2 + 1 + 1" (the group whose smallest node
// holds fewest, then the one over more nodes).
func (s *Scenario) groupSplit(size, groups int) (split string, uneven bool) {
	gpn := s.Cluster.GPUsPerNode
	if size <= 0 || groups <= 0 || gpn <= 0 {
		return "", false
	}
	var first, worst []int
	counts := make([]int, max(s.Cluster.Nodes, 1)) // ranks per node of the group at hand
	var order, c, sorted []int
	for i := range groups {
		order = order[:0]
		for r := i * size; r < (i+1)*size; r++ {
			nd := min(s.gpuOf(r)/gpn, len(counts)-1)
			if counts[nd] == 0 {
				order = append(order, nd)
			}
			counts[nd]++
		}
		c = c[:0]
		for _, nd := range order {
			c = append(c, counts[nd])
			counts[nd] = 0
		}
		sorted = append(sorted[:0], c...)
		slices.Sort(sorted)
		if sorted[0] != sorted[len(sorted)-1] {
			uneven = true
		}
		if first == nil {
			first = slices.Clone(sorted)
		} else if !slices.Equal(first, sorted) {
			uneven = true
		}
		if worst == nil || slices.Min(c) < slices.Min(worst) || slices.Min(c) == slices.Min(worst) && len(c) > len(worst) {
			worst = slices.Clone(c)
		}
	}
	parts := make([]string, len(worst))
	for j, c := range worst {
		parts[j] = strconv.Itoa(c)
	}
	return strings.Join(parts, " + "), uneven
}

// placementText is a placement as the scenario writes it: "[cp, dp]".
func placementText(p []Axis) string {
	if len(p) == 0 {
		return "[cp, dp]"
	}
	parts := make([]string, len(p))
	for i, a := range p {
		parts[i] = string(a)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// tilesNodes reports whether groups of size consecutive GPUs tile the
// nodes: a whole number of nodes each, or a whole number of them a node.
func (s *Scenario) tilesNodes(size int) bool {
	gpn := s.Cluster.GPUsPerNode
	return gpn > 0 && (size%gpn == 0 || gpn%size == 0)
}

// nvlinkDomains is the most GPUs one NVLink (or Infinity Fabric) domain of
// a GPU preset holds, as published (NVIDIA's NVLink page,
// nvidia.com/en-us/data-center/nvlink: "DGX GH200 systems with NVLink
// Switch System support clusters of up to 256 connected H200s", "NVL72 can
// support 9X the GPU count than a single eight-GPU system"; the others from
// the systems' datasheets named beside them, whose addresses gpuPresets'
// comment lists; no address of the DGX-2 datasheet was found, and the
// A800's source is quoted at its row); zerosim's node is one such domain (its
// intra-node links are the GPU's own), so a node of more GPUs than that
// cannot exist (qa19 L8: 1,024 H100s or 144 GB200s a node were silent).
var nvlinkDomains = map[string]struct {
	gpus int
	src  string
}{
	"V100-16GB": {16, "DGX-2: 16 V100s on 12 NVSwitches, NVIDIA DGX-2 datasheet"},
	"V100-32GB": {16, "DGX-2: 16 V100s on 12 NVSwitches, NVIDIA DGX-2 datasheet"},
	"A100-40GB": {16, "HGX A100 16-GPU, NVIDIA A100 datasheet"},
	"A100-80GB": {16, "HGX A100 16-GPU, NVIDIA A100 datasheet"},
	// A800: NVIDIA lists the HGX A800 among its NVSwitch systems as an
	// 8-GPU board ("NVIDIA HGX A800 8-GPU — A800 and NVSwitch", NVIDIA Data
	// Center GPU Driver Release Notes 580, RN-08625 v2.1, Hardware and
	// Software Support, read as quoted: the PDF itself is not in the index;
	// Fabric Manager User Guide DU-09883-001 v1.3, October 2023: "Added
	// support language for NVIDIA HGX A800"). No 16-GPU A800 system (two
	// baseboards, as HGX A100 16-GPU) was found, so 8, not A100's 16.
	"A800-80GB":  {8, "HGX A800 8-GPU on NVSwitches, NVIDIA Data Center GPU Driver Release Notes 580"},
	"H100-80GB":  {256, "NVLink4's Switch System, up to 256 connected Hopper GPUs (DGX GH200), NVIDIA's NVLink page"},
	"H200":       {256, "NVLink4's Switch System, up to 256 connected H200s (DGX GH200), NVIDIA's NVLink page"},
	"GH200-96GB": {256, "NVLink4's Switch System, 256 GH200s in a DGX GH200, NVIDIA's NVLink page"},
	"B200":       {8, "HGX B200, 8 GPUs on NVLink5 switches, NVIDIA DGX B200 datasheet"},
	"B300":       {8, "HGX B300, 8 GPUs on NVLink5 switches, NVIDIA DGX B300 datasheet"},
	"GB200":      {NVL72GPUs, "GB200 NVL72 rack, NVIDIA GB200 NVL72 datasheet; NVIDIA's NVLink page: 9× an eight-GPU system"},
	"GB300":      {NVL72GPUs, "GB300 NVL72 rack, NVIDIA GB300 NVL72 datasheet"},
	"MI300X":     {8, "8 GPUs fully connected by Infinity Fabric, AMD Instinct MI300X platform"},
	"MI325X":     {8, "8 GPUs fully connected by Infinity Fabric, AMD Instinct MI325X platform"},
	"MI350X":     {8, "8 GPUs fully connected by Infinity Fabric, AMD Instinct MI350 series platform"},
	"MI355X":     {8, "8 GPUs fully connected by Infinity Fabric, AMD Instinct MI350 series platform"},
}

// warnImpossibleHardware warns of typed-in hardware that no one sells
// (qa19 L8): a node of more GPUs than one NVLink domain of its GPU holds
// (nvlinkDomains; a PCIe intra preset is left alone), and a NIC faster than
// the fastest whose line rate NVIDIA publishes, ConnectX-8 at 800 Gb/s
// (InfiniBand XDR, the XDR link preset; NVIDIA ConnectX-8 SuperNIC User
// Manual, Introduction, docs.nvidia.com/networking/display/connectx8supernic:
// "up to 800 gigabits per second"): 3200Gbps is usually a node's eight NICs
// written as one. ConnectX-9 (announced at GTC DC, October 2025, as "1.6T
// per GPU") is not the threshold: searched on 2026-11-30, NVIDIA's
// documents name it (MFT 4.35 firmware 82.48.1000, FlexBoot 3.9.101) but
// give no line rate, and third-party pages disagree (hardwareluxx: 1.6
// Tb/s per NIC; wheelersnetwork and wavesplitter: 800 Gb/s per chip, two
// per GPU). Warnings, not errors: zerosim models what it is given.
func (l *loader) warnImpossibleHardware(s *Scenario) {
	c := &s.Cluster
	if d, ok := nvlinkDomains[c.GPU]; ok && c.GPUsPerNode > d.gpus && (c.Intra.Preset == "" || gpuBoundLinks[c.Intra.Preset]) {
		// In the vendor's words: AMD's GPUs meet on Infinity Fabric (the
		// xGMI link preset), NVIDIA's on NVLink.
		domain, link := "NVLink", "NVLink"
		if c.AMD() {
			domain, link = "Infinity Fabric (xGMI)", "xGMI"
		}
		l.warn(s, "cluster.gpus_per_node", fmt.Sprintf("gpus_per_node=%d is more %s GPUs than one %s domain holds (%d: %s), and zerosim's node is one %s domain: its collectives would run over %s between GPUs that reach one another only through NICs; describe each domain as a node (gpus_per_node ≤ %d)",
			c.GPUsPerNode, c.GPU, domain, d.gpus, d.src, domain, link, d.gpus))
	}
	xdr, _ := FindLink("XDR")
	if c.Inter.Bandwidth > xdr.Bandwidth {
		at := "cluster.inter.bandwidth"
		if !l.has(at) {
			at = "cluster.inter"
		}
		l.warn(s, at, fmt.Sprintf("inter bandwidth %v per NIC is more than the fastest NIC with a published line rate, %v (ConnectX-8 SuperNIC, InfiniBand XDR, 800 Gb/s: its user manual): give one NIC's bandwidth, with nics: per_gpu or nics_per_node for a node's several", c.Inter.Bandwidth, xdr.Bandwidth))
	}
}

// warnNoActivations says what a model without transformer dimensions
// leaves out (CountsNoActivations): "params: 13B" is the first thing a
// planner types, and it replayed with 0 B of activations, no attention
// and no logits, and without seq_len at one token a sample, all silently,
// so plan recommended micro-batch 4 without checkpointing at 15.7 GiB
// (qauser s28 H1) where Llama 2 13B (hidden h 5,120, FFN f 13,824, 40
// layers: its config.json) keeps at least 16·s·h + 8·s·f bytes a layer for
// backward: Korthikanti et al. 2022 (arXiv 2205.05198) §4.1's bf16 count of
// what autograd saves (the norms' inputs 4·s·h, the q/k/v input and q, k, v
// 8·s·h, the output projection's input 2·s·h, the MLP's input 2·s·h),
// without dropout and with FlashAttention's output in place of the s²
// scores, and SwiGLU's gate, up, silu and product (4 × 2·s·f) in place of
// GELU's input and output: 192,512 B a token a layer, 29.4 GiB per
// 4,096-token sequence. The seeds' model-state tables use such models, and
// their commands drop it (ActivationsWarning).
func (l *loader) warnNoActivations(s *Scenario) {
	if !s.CountsNoActivations() {
		return
	}
	at, what, fix := "model.params", "model.params alone has no transformer dimensions", "give model.preset, model.hf_config, or kind: transformer with hidden, layers and heads"
	if !l.has("model.params") || l.has("model.layer_list") {
		at, what, fix = "model.layer_list", "model.layer_list gives no layer dims or activation_bytes", "give each layer's dims or activation_bytes, or use model.preset or model.hf_config"
		if !l.has(at) {
			at = "model"
		}
	}
	msg := what + ": activations, attention and the output logits are not counted"
	if s.Model.SeqLen == 0 {
		msg += ", and without model.seq_len a sample is one token"
	}
	msg += ", so memory and step time are lower bounds (" + fix + "; docs/scenario-format.md)"
	l.warn(s, at, msg)
	s.ActivationsWarning, s.activationsKey = s.Warnings[len(s.Warnings)-1], at
}
