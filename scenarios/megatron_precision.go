package scenarios

import (
	"fmt"
	"strings"
)

// Megatron's precision-aware optimizer (--use-precision-aware-optimizer
// with --main-grads-dtype, --main-params-dtype, --exp-avg-dtype and
// --exp-avg-sq-dtype; megatron/training/arguments.py:2670-2682 at
// d580efc6, :3666-3682 at d98e8a64) hands the optimizer to Transformer
// Engine's FusedAdam with master_weights, use_decoupled_grad and the three
// dtypes (megatron/core/optimizer/__init__.py:338-350 at d580efc6), which
// holds the main params and Adam's states itself, with
// store_param_remainders from Transformer Engine 2.1 on (line 350 there;
// OptimizerConfig.store_param_remainders, default True, at d98e8a64);
// the distributed optimizer gives it the grad buffer's shard as
// decoupled_grad, with no .float() copy (_copy_model_grads_to_main_grads,
// megatron/core/optimizer/distrib_optimizer.py:1980-1988 at d580efc6).
// --main-grads-dtype acts only through validate_args: bf16 leaves
// accumulate_allreduce_grads_in_fp32 off, so the grad buffer holds the
// parameters' dtype (readPrecision). zerosim models the remainders and the
// uncopied gradient (training.store_param_remainders) but no lower-precision
// main param or Adam state under stack megatron (training.master_dtype bf16
// and optimizer_state_dtype are DeepSpeed's, scenarios/master.go): those
// stay fp32, and a note says by how many bytes the optimizer memory is then
// an upper bound.

// mgPrecisionAware is the precision-aware optimizer's flags as read.
type mgPrecisionAware struct {
	on                                     bool
	mainGrads, mainParams, expAvg, expAvg2 string
	// grad16: the grad buffer holds 16-bit gradients (readPrecision).
	grad16 bool
}

// readPrecisionFlags reads --use-precision-aware-optimizer and the four
// dtypes with argparse's choices into m.pao.
func (m *Megatron) readPrecisionFlags(a *mgArgs) error {
	p := &m.pao
	var err error
	if p.on, err = a.bool("use-precision-aware-optimizer"); err != nil {
		return err
	}
	for _, d := range []struct {
		flag    string
		to      *string
		choices []string
	}{
		// arguments.py:2675-2682 at d580efc6; bf16 moments since
		// 9d509a03b4 (arguments.py:3675-3682 at d98e8a64).
		{"main-grads-dtype", &p.mainGrads, []string{"fp32", "bf16"}},
		{"main-params-dtype", &p.mainParams, []string{"fp32", "fp16"}},
		{"exp-avg-dtype", &p.expAvg, []string{"fp32", "fp16", "bf16", "fp8"}},
		{"exp-avg-sq-dtype", &p.expAvg2, []string{"fp32", "fp16", "bf16", "fp8"}},
	} {
		v, _, err := a.str(d.flag, "fp32")
		if err != nil {
			return err
		}
		if err := a.oneOf(d.flag, v, d.choices...); err != nil {
			return err
		}
		*d.to = v
	}
	return nil
}

// checkPrecisionAware refuses what OptimizerConfig.__post_init__ asserts
// (megatron/core/optimizer/optimizer_config.py at d580efc6; it runs after
// validate_args): a dtype other than fp32 without
// --use-precision-aware-optimizer (lines 200-212), and the precision-aware
// optimizer without the distributed optimizer (lines 169-171).
func (m *Megatron) checkPrecisionAware(a *mgArgs) error {
	p := m.pao
	for _, d := range []struct{ flag, v string }{
		{"main-grads-dtype", p.mainGrads}, {"main-params-dtype", p.mainParams},
		{"exp-avg-dtype", p.expAvg}, {"exp-avg-sq-dtype", p.expAvg2},
	} {
		if d.v != "fp32" && !p.on {
			return a.errAt(a.flags[d.flag].at, "--%s %s needs --use-precision-aware-optimizer (OptimizerConfig asserts \"%s can only be fp32 when not using precision-aware optimizer\", megatron/core/optimizer/optimizer_config.py:200-212 at d580efc6): add --use-precision-aware-optimizer, or remove this", d.flag, ttName(d.v), strings.ReplaceAll(d.flag, "-", "_"))
		}
	}
	if p.on && a.flags["use-distributed-optimizer"].at.text == "" {
		return a.errAt(a.flags["use-precision-aware-optimizer"].at, "--use-precision-aware-optimizer needs --use-distributed-optimizer (OptimizerConfig asserts \"--use-precision-aware-optimizer only supported with distributed optimizer\", megatron/core/optimizer/optimizer_config.py:169-171 at d580efc6: add it or remove this)")
	}
	return nil
}

// mgDTypeBytes is a precision-aware optimizer dtype's bytes per element.
func mgDTypeBytes(d string) int {
	switch d {
	case "fp16", "bf16":
		return 2
	case "fp8":
		return 1
	}
	return 4
}

// readPrecisionAware writes training.store_param_remainders for the
// precision-aware optimizer over bf16 params with an fp32 master
// (Transformer Engine keeps it whatever the moments' dtypes:
// FusedAdam.__init__ takes store_param_remainders "and master_weights and
// master_weight_dtype == torch.float32", transformer_engine/pytorch/
// optimizers/fused_adam.py at NVIDIA/TransformerEngine d0067d0), and says
// in one note what zerosim does not keep as Megatron does: the master and
// moments below fp32, in bytes per element of the rank's optimizer shard,
// and where the key is not written the fp32 copy of a 16-bit gradient that
// FusedAdam's decoupled_grad does not make. Under an fp8 recipe other than
// delayed Megatron-Core keeps the fp32 master itself
// (use_precision_aware_optimizer_no_fp8_or_ds_fp8, optimizer_config.py at
// c550cf6c, core_v0.13.0, and at d98e8a64); the remainders beside fp8
// primary weights (--fp8-param-gather) are not modelled.
func (m *Megatron) readPrecisionAware(a *mgArgs) error {
	p := m.pao
	if !p.on {
		return nil
	}
	fp8Recipe := ""
	if _, ok := a.flags["fp8-format"]; ok {
		var err error
		if fp8Recipe, _, err = a.str("fp8-recipe", "delayed"); err != nil {
			return err
		}
	}
	paramGather := a.flags["fp8-param-gather"].at.text != "" && fp8Recipe != ""
	var parts, lower, over []string
	n := 0
	for _, d := range []struct{ flag, name, v string }{
		{"main-params-dtype", "the main params", p.mainParams},
		{"exp-avg-dtype", "exp_avg", p.expAvg},
		{"exp-avg-sq-dtype", "exp_avg_sq", p.expAvg2},
	} {
		if b := mgDTypeBytes(d.v); b < 4 {
			lower = append(lower, "--"+d.flag+" "+d.v)
			over = append(over, fmt.Sprintf("%d of %s in %s", 4-b, d.name, d.v))
			n += 4 - b
		}
	}
	if len(lower) > 0 {
		parts = append(parts, fmt.Sprintf("with %s: master params and optimizer states below fp32 are not modelled (fp32 master and states: zerosim's optimizer memory is an upper bound by %d bytes per element of the rank's optimizer shard, %s)", strings.Join(lower, ", "), n, ListAnd(over)))
	}
	remainders := false
	switch {
	case p.mainParams != "fp32":
	case a.flags["bf16"].at.text == "":
		parts = append(parts, "without --bf16: store_param_remainders applies to bf16 parameters only, the fp32 master is kept whole")
	case fp8Recipe != "" && fp8Recipe != "delayed":
		parts = append(parts, fmt.Sprintf("with --fp8-recipe %s: Megatron-Core keeps the fp32 master itself (use_precision_aware_optimizer_no_fp8_or_ds_fp8 is false), as modelled", fp8Recipe))
	case paramGather:
		parts = append(parts, "with --fp8-param-gather: store_param_remainders beside fp8 primary weights is not modelled (a whole fp32 master)")
	default:
		remainders = true
		m.set("training.store_param_remainders", "true", "--use-precision-aware-optimizer: Transformer Engine's FusedAdam (TE >= 2.1) keeps the fp32 master as int16 remainders beside the bf16 params (OptimizerConfig.store_param_remainders, default True)")
	}
	if p.grad16 && !remainders {
		parts = append(parts, "with 16-bit gradients: FusedAdam reads the gradient shard as decoupled_grad (distrib_optimizer.py:1980-1988 at d580efc6), where zerosim's optimizer step counts its fp32 copy, 4 bytes per element of the shard while the step runs")
	}
	if len(parts) > 0 {
		m.note("--use-precision-aware-optimizer %s", strings.Join(parts, "; "))
	}
	return nil
}
