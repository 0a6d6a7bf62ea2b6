package memory

// ZeRO++ memory (DeepSpeed at edaa7221267243c7be7fb49c5d5f5c4fb97b4641):
//
//   - hpZ's secondary partition: releasing a unit gathered in forward fills
//     a bf16 copy of aligned_size // h elements per rank
//     (partition_parameters.py:1872-1901), kept through backward and dropped
//     after the optimizer step (stage3.py:2577 invalidate_secondary_tensor):
//     2P/h per GPU at its peak, none at rest.
//   - qwZ's quantization buffers: a gather in flight holds the int8 flat
//     tensor of the whole unit and world_size·groups fp32 scales
//     (partition_parameters.py:1450-1492) until the compute stream
//     dequantizes it; zerosim frees them when the unit's compute ends.
//
// Both rows appear only in reports of scenarios that use them.

// ZeRO++ components.
const (
	CompHPZ   Comp = "hpz secondary params"
	CompQuant Comp = "quantization buffers"
)

// optionalComps are left out of a report when they hold nothing.
var optionalComps = map[Comp]bool{CompHPZ: true, CompQuant: true, CompRing: true, CompMask: true, CompLogits: true, CompLossTemp: true, CompSavedWeights: true, CompCasts: true, CompKVCache: true}

// quantTargetGroup is CUDAQuantizer.target_group_size
// (partition_parameters.py:848).
const quantTargetGroup = 8000

// QuantGroups is the number of scale groups DeepSpeed's CUDAQuantizer
// picks for a tensor of numel elements (partition_parameters.py:860-871):
// ceil(numel/8000), raised to the first g with 8g | numel, then doubled while
// 16g | numel and numel/g > 8000. DeepSpeed asserts 8 | numel; zerosim pads
// differently, so for a numel that is not a multiple of 8 it keeps
// ceil(numel/8000).
func QuantGroups(numel int64) int64 {
	if numel <= 0 {
		return 0
	}
	g := (numel + quantTargetGroup - 1) / quantTargetGroup
	if numel%8 != 0 {
		return g
	}
	for g < numel && numel%(8*g) != 0 {
		g++
	}
	for numel%(16*g) == 0 && numel > quantTargetGroup*g {
		g *= 2
	}
	return g
}

// QWZGatherBytes is the size of a qwZ all-gather of elems (padded) elements
// over world ranks: one int8 byte per element and world ranks' fp32 scales,
// one per group of each rank's partition.
func QWZGatherBytes(elems int64, world int) int64 {
	if world < 1 {
		return elems
	}
	return elems + 4*QuantGroups(elems/int64(world))*int64(world)
}

// zeroPPMemory returns the qwZ buffer of unit u's gather (0 without qwZ)
// and its hpZ secondary partition (0 without hpZ).
func (m *model) zeroPPMemory(u int) (quant, secondary int64) {
	c := m.s.Communication
	if m.r.Stage != 3 {
		return 0, 0
	}
	ui := m.r.Units[u]
	if c.ZeroQuantizedWeights && m.r.Shards > 1 {
		var elems int64
		for _, g := range m.groups {
			if g.info.ParamBytes > 0 {
				elems = ui.Gather / g.info.ParamBytes
				break
			}
		}
		// The forward gather runs over all shards (hpZ's backward gathers
		// over fewer ranks hold fewer scales): the larger buffer.
		quant = QWZGatherBytes(elems, m.r.Shards)
	}
	if h := c.ZeroHPZPartitionSize; h > 1 {
		secondary = ui.Gather / int64(min(h, m.r.Shards))
	}
	return quant, secondary
}
