package scenarios

import (
	"fmt"
	"math"
	"strconv"

	"github.com/zerosim/zerosim/units"
)

// Bounds within which a log's figure is taken to describe the scenario's
// run. torch's total_memory is what the driver leaves of the datasheet's
// size (an H100 80GB reports about 79.1 GiB, torchtitan pull request
// #1287's H100 95 GiB 94.99 GiB: 49.66 GiB at 52.28 %), so a device 10 %
// smaller or 2 % larger than cluster.gpu_memory is another GPU (40 against
// 80 GiB, 80 against 94 or 96 GiB). A parameter count within 2 % is the
// same model counted another way (Megatron pads the vocabulary to a
// multiple of make_vocab_size_divisible_by, 128 by default:
// megatron/training/arguments.py at NVIDIA/Megatron-LM d98e8a64ddf34856e74b24714e3bedb2f5a39553;
// GPT-2's 50,257 to 50,304: 0.1 % of a 124M model).
const (
	deviceLow, deviceHigh = 0.90, 1.02
	paramsTolerance       = 0.02
)

// CheckRun compares what the log states of its run (RunFacts) with s, the
// scenario it is to calibrate: a log of another run (another model, batch,
// sequence length, GPU count or GPU) would fit an efficiency that does not
// describe s. The error is one line naming the log's line, both values and
// the --set that makes s the logged run.
func (l *TrainLog) CheckRun(s *Scenario) error {
	f := &l.Run
	at := func(line int) string { return l.File + ":" + strconv.Itoa(line) }
	gib := func(b units.Bytes) string { return fmt.Sprintf("%.2f GiB", float64(b)/float64(units.GiB)) }
	if f.DeviceGiB > 0 && s.Cluster.GPUMemory > 0 {
		r := f.DeviceGiB * float64(units.GiB) / float64(s.Cluster.GPUMemory)
		if r < deviceLow || r > deviceHigh {
			// The suggested size: the whole GiB at or above the device's,
			// within 0.05 GiB (94.99 → 95, 79.11 → 80).
			return fmt.Errorf("%s: the logged GPU has %.2f GiB (torch's total_memory; %s), the scenario's %s %s (cluster.gpu_memory): the log is of another GPU; set the scenario's cluster.gpu to it, or --set cluster.gpu_memory=%dGiB",
				at(f.DeviceLine), f.DeviceGiB, f.DeviceWhat, s.Cluster.GPU, gib(s.Cluster.GPUMemory), int64(math.Ceil(f.DeviceGiB-0.05)))
		}
	}
	if f.Params > 0 {
		if p := s.Model.TotalParams(); p > 0 && math.Abs(float64(f.Params)/float64(p)-1) > paramsTolerance {
			return fmt.Errorf("%s: the logged model has %s parameters, the scenario's %s %s: the log is of another model; give the scenario of the logged one (zerosim import torchtitan its toml, or zerosim import hf its config.json)",
				at(f.ParamsLine), commas(f.Params), s.Model.Label(), commas(p))
		}
	}
	gpus := int64(s.Cluster.Nodes) * int64(s.Cluster.GPUsPerNode)
	if f.WorldSize > 0 && gpus > 0 && f.WorldSize != gpus {
		fix := fmt.Sprintf("give the scenario of a cluster of %d GPUs", f.WorldSize)
		if gpn := int64(s.Cluster.GPUsPerNode); gpn > 0 && f.WorldSize%gpn == 0 {
			cp := int64(max(s.Parallelism.CP, 1))
			fix = fmt.Sprintf("--set cluster.nodes=%d", f.WorldSize/gpn)
			if f.WorldSize%cp == 0 {
				fix += fmt.Sprintf(" --set parallelism.dp=%d", f.WorldSize/cp)
			}
		}
		return fmt.Errorf("%s: the log ran world_size %d GPUs, the scenario %d (cluster.nodes %d × gpus_per_node %d): the log is of another run; %s",
			at(f.WorldSizeLine), f.WorldSize, gpus, s.Cluster.Nodes, s.Cluster.GPUsPerNode, fix)
	}
	mb, ga, dp := max(s.Training.MicroBatch, 1), int64(max(s.Training.GradAccum, 1)), int64(max(s.Parallelism.DP, 1))
	if g := mb * ga * dp; f.GlobalBatch > 0 && f.GlobalBatch != g {
		fix := fmt.Sprintf("set training.micro_batch, training.grad_accum and parallelism.dp so that their product is %d", f.GlobalBatch)
		switch {
		case f.GlobalBatch%(mb*dp) == 0:
			fix = fmt.Sprintf("--set training.grad_accum=%d", f.GlobalBatch/(mb*dp))
		case f.GlobalBatch%(ga*dp) == 0:
			fix = fmt.Sprintf("--set training.micro_batch=%d", f.GlobalBatch/(ga*dp))
		}
		return fmt.Errorf("%s: the log's %s is %d sequences, the scenario's %d (micro_batch %d × grad_accum %d × dp %d): the log is of another run; %s",
			at(f.GlobalBatchLine), f.GlobalBatchWhat, f.GlobalBatch, g, mb, ga, dp, fix)
	}
	if f.SeqLen > 0 && s.Model.SeqLen > 0 && f.SeqLen != s.Model.SeqLen {
		return fmt.Errorf("%s: the log's %s is %d tokens, the scenario's model.seq_len %d: the log is of another run; --set model.seq_len=%d",
			at(f.SeqLenLine), f.SeqLenWhat, f.SeqLen, s.Model.SeqLen, f.SeqLen)
	}
	return nil
}
