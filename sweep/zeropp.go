package sweep

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/zerosim/zerosim/scenarios"

	"github.com/zerosim/zerosim/topology"
)

// ZeroPPVariants are the variants `compare --zeropp` replays for src, the
// two ways to cut ZeRO-3's cross-node traffic side by side:
//
//   - "ZeRO-3": stage 3, K = 1, no ZeRO++;
//   - "ZeRO-3 K=nodes": stage 3 sharded inside each node and replicated
//     across nodes (raising K to the node count);
//   - "ZeRO++": stage 3, K = 1 with qwZ, hpZ over one node and qgZ
//     (DeepSpeed's recommended configuration, zero_hpz_partition_size =
//     GPUs per node).
//
// The K variant is left out on one node (K would be 1).
func ZeroPPVariants(src Source) ([]Variant, error) {
	s, err := src.Load()
	if err != nil {
		return nil, err
	}
	base := []string{"parallelism.zero_stage=3", "parallelism.k=1",
		"communication.zero_quantized_weights=false", "communication.zero_hpz_partition_size=0", "communication.zero_quantized_gradients=false"}
	vs := []Variant{{Label: "ZeRO-3", Src: src, Sets: base}}
	if k := s.Cluster.Nodes; k > 1 && s.N()%k == 0 {
		vs = append(vs, Variant{Label: fmt.Sprintf("ZeRO-3 K=%d", k), Src: src,
			Sets: append(append([]string(nil), base...), "parallelism.k="+strconv.Itoa(k))})
	}
	zpp := Variant{Label: "ZeRO++", Src: src, Sets: append(append([]string(nil), base...),
		"communication.zero_quantized_weights=true", "communication.zero_hpz_partition_size="+strconv.Itoa(s.Cluster.GPUsPerNode),
		"communication.zero_quantized_gradients=true")}
	if err := zeroPPDense(src, s); err != nil {
		return nil, err
	}
	if _, err := src.Load(zpp.Sets...); err != nil {
		return nil, zeroPPRefused(src, s, zpp.Sets, err)
	}
	return append(vs, zpp), nil
}

// zeroPPDense refuses a scenario with expert or context parallelism, which
// the ZeRO++ variant cannot run (scenarios' resolveZeroPP: ZeRO++ is
// modelled for dense data parallelism over dp only), at the user's key or
// --set, saying what compare did: loading the variant would blame the hpZ
// --set compare added itself (qa21 M3).
func zeroPPDense(src Source, s *scenarios.Scenario) error {
	key, v := "parallelism.ep", s.Parallelism.EP
	if v <= 1 {
		key, v = "parallelism.cp", s.Parallelism.CP
	}
	if v <= 1 {
		return nil
	}
	err := &scenarios.Error{Path: key, Msg: fmt.Sprintf("compare's ZeRO++ variant turns on qwZ, hpZ and qgZ (DeepSpeed's ZeRO++), which zerosim models for dense data parallelism only; this scenario sets %s=%d (add --set %s=1)", key, v, key)}
	return fmt.Errorf("--zeropp: %w", scenarios.Place(src.File, src.Data, src.Sets, err))
}

// zeroPPRefused says why src's ZeRO++ variant does not load, naming
// --zeropp rather than the keys it sets (qa19 L12: under stack torchtitan
// the error blamed communication.zero_quantized_gradients, which the user
// never set, and said "drop one"), and the --set that make it load:
// stack=deepspeed (ZeRO++ is DeepSpeed's stage 3: the three
// zero_optimization keys of deepspeed/runtime/zero/config.py at
// deepspeedai/DeepSpeed edaa7221267243c7be7fb49c5d5f5c4fb97b4641), or
// training.reduce_dtype=param_dtype (qgZ reduces quantized gradients, never
// in fp32), whichever loads.
func zeroPPRefused(src Source, s *scenarios.Scenario, sets []string, err error) error {
	var fixes []string
	for _, f := range []string{"stack=deepspeed", "training.reduce_dtype=param_dtype"} {
		try := src
		try.Sets = append(slices.Clone(src.Sets), f)
		if _, e := try.Load(sets...); e == nil {
			fixes = append(fixes, "--set "+f)
		}
	}
	why := err.Error()
	if s.Training.ReduceDType == scenarios.ReduceFP32 {
		by := "this scenario reduces them"
		if s.Stack != "" {
			by = "stack " + s.Stack + " reduces them"
		}
		why = "qgZ reduces quantized gradients and " + by + " in fp32 (training.reduce_dtype=fp32)"
	}
	if len(fixes) == 0 {
		return fmt.Errorf("--zeropp: %s cannot run ZeRO++ (qwZ, hpZ, qgZ: DeepSpeed's ZeRO stage 3): %w", src.File, err)
	}
	return fmt.Errorf("--zeropp: %s cannot run ZeRO++ (qwZ, hpZ, qgZ: DeepSpeed's ZeRO stage 3): %s; add %s", src.File, why, strings.Join(fixes, ", or "))
}

// NetworkPerNode is the network wire bytes of one step per node (every
// rank's sends over the network, divided by the nodes).
func NetworkPerNode(o *Outcome) int64 {
	_, total := BusiestWire(o.Result, topology.Inter)
	return total / int64(o.Scenario.Cluster.Nodes)
}
