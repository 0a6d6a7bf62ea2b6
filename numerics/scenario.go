package numerics

import (
	"fmt"

	"github.com/zerosim/zerosim/memory"
	"github.com/zerosim/zerosim/scenarios"
)

// FromScenario maps a scenario onto the configuration verify starts from:
// N = dp·cp ranks, the toy model of the scenario's model kind ("mlp": seed
// 000's residual MLP at hidden 16, 3 layers; any other kind: seed 002's
// 260-parameter tiny transformer), its seed and steps, its Adam
// hyper-parameters (when it sets a learning rate) and its padding.
func FromScenario(s *scenarios.Scenario) (Config, error) {
	n := s.N()
	if n < 1 || n > MaxRanks {
		return Config{}, fmt.Errorf("verify simulates every rank: N = dp·cp = %d must be in [1, %d] (use a cluster of at most %d GPUs: --set cluster.nodes=… --set parallelism.dp=auto)", n, MaxRanks, MaxRanks)
	}
	if st := s.Training.Steps; st < 1 || st > MaxSteps {
		// Said "verify tiny-transformer N16 stage 0 K 1 bucket one exact:
		// steps 100000: must be in [1, 1000]", naming a configuration
		// instead of the key (QA15).
		return Config{}, fmt.Errorf("training.steps %d: verify runs 1 to %d steps (use --set training.steps=%d)", st, MaxSteps, min(max(st, 1), MaxSteps))
	}
	pad := memory.PaddingOf(s.Communication.Padding)
	c := Config{Model: TinyTransformer, N: n, K: 1, Steps: s.Training.Steps,
		Seed: uint64(s.Training.Seed), Padding: pad}
	if s.Model.Kind == scenarios.KindMLP {
		c.Model, c.Hidden, c.Layers = ResidualMLP, 16, 3
	}
	if cm := s.Communication; cm.ZeroQuantizedWeights || cm.ZeroQuantizedGradients {
		// ZeRO++ (scenario keys mirroring DeepSpeed's): stage 3, K 1.
		c.Stage, c.QuantWeights, c.QuantGrads, c.Local = 3, cm.ZeroQuantizedWeights, cm.ZeroQuantizedGradients, s.Cluster.GPUsPerNode
		c.Steps = max(c.Steps, MatrixSteps)
	}
	t := s.Training
	if t.LR > 0 {
		c.Hyper = Hyper{LR: t.LR, Beta1: t.Beta1, Beta2: t.Beta2, Eps: t.Eps, WeightDecay: t.WeightDecay, Decoupled: t.Optimizer == scenarios.OptimizerAdamW}
		if err := c.Hyper.Validate(); err != nil {
			return Config{}, err
		}
	}
	return c, nil
}

// Unfollowed is a scenario setting verify reads past: the scenario sets it
// away from what verify runs, and verify runs its own (reports words it).
type Unfollowed struct {
	// Key is the scenario key, Value the scenario's value.
	Key, Value string
	// Rows and SeqTokens are, for training.micro_batch, the toy model's
	// batch per rank that verify runs instead: Rows sequences of SeqTokens
	// tokens (inputs and targets) for the transformer, Rows input rows
	// (SeqTokens 0) for the MLP; 0 for the other keys.
	Rows, SeqTokens int
}

// NotFollowed lists the settings of s that change a real run's numerics
// but not verify's (it follows N = dp·cp, the seed, steps, the optimizer
// and its hyper-parameters, padding and ZeRO++'s quantization):
// gradient accumulation (verify runs one micro-step per step, where
// ZeRO-2/3 add each micro-step's reduced shard into a kept partition and
// unsharded training reduces once), the micro-batch (the toy's own
// batch), fp32 reduction and an fp32 parameter shard (verify sums exactly
// and rounds once to bf16; bf16 parameters beside an fp32 master shard)
// and fp16 parameters. Each is listed only when s sets it away from what
// verify runs; micro_batch 1, the default, stands for the toy's batch.
func NotFollowed(s *scenarios.Scenario) []Unfollowed {
	t := s.Training
	var out []Unfollowed
	if t.GradAccum > 1 {
		out = append(out, Unfollowed{Key: "training.grad_accum", Value: fmt.Sprint(t.GradAccum)})
	}
	if t.MicroBatch > 1 {
		u := Unfollowed{Key: "training.micro_batch", Value: fmt.Sprint(t.MicroBatch), Rows: ttBatch, SeqTokens: ttT + 1}
		if s.Model.Kind == scenarios.KindMLP {
			u.Rows, u.SeqTokens = mlpBatch, 0
		}
		out = append(out, u)
	}
	if t.ReduceDType == scenarios.ReduceFP32 {
		out = append(out, Unfollowed{Key: "training.reduce_dtype", Value: string(t.ReduceDType)})
	}
	if t.ShardDType == scenarios.ShardFP32 {
		out = append(out, Unfollowed{Key: "training.shard_dtype", Value: string(t.ShardDType)})
	}
	if t.ParamDType != "" && t.ParamDType != scenarios.BF16 {
		out = append(out, Unfollowed{Key: "training.param_dtype", Value: string(t.ParamDType)})
	}
	return out
}

// ScenarioConfigs are the configurations verify checks for a scenario: the
// whole Matrix (for ZeRO++ the one quantized configuration), or with a
// corruption only the scenario's own stage and K, run long enough to reach
// the corrupted step. base is FromScenario's.
func ScenarioConfigs(s *scenarios.Scenario, corrupt *Corruption) (base Config, cfgs []Config, err error) {
	base, err = FromScenario(s)
	if err != nil {
		return Config{}, nil, err
	}
	if corrupt == nil {
		if base.Quantized() {
			// ZeRO++ runs at stage 3 with K 1 only: one configuration,
			// checked against its quantizing reference.
			return base, []Config{base}, nil
		}
		return base, Matrix(base), nil
	}
	one := base
	one.Stage, one.K, one.Steps = s.Parallelism.Stage, s.Parallelism.K, max(base.Steps, corrupt.Step)
	one.Corrupt = corrupt
	return base, []Config{one}, nil
}

// ModeDrift is the drift between K = KA and K = KB under one native
// reduction mode, after every step.
type ModeDrift struct {
	Mode   ReduceMode
	KA, KB int
	Steps  []DriftStep
}

// DriftModes compares K = 1 with the largest K ≤ 4 dividing base.N, at
// stage 1, under NCCL-like fp32 and bf16-per-hop ring reductions.
func DriftModes(base Config) ([]ModeDrift, error) {
	kb := 1
	for k := 2; k <= 4; k++ {
		if base.N%k == 0 {
			kb = k
		}
	}
	dc := base
	dc.Stage = 1
	var out []ModeDrift
	for _, mode := range []ReduceMode{Native, NativeBF16} {
		dc.Mode = mode
		d, err := Drift(dc, 1, kb)
		if err != nil {
			return nil, fmt.Errorf("drift: %w", err)
		}
		out = append(out, ModeDrift{Mode: mode, KA: 1, KB: kb, Steps: d})
	}
	return out, nil
}
