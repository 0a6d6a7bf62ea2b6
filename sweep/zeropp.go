package sweep

import (
	"fmt"
	"strconv"

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
	vs = append(vs, Variant{Label: "ZeRO++", Src: src, Sets: append(append([]string(nil), base...),
		"communication.zero_quantized_weights=true", "communication.zero_hpz_partition_size="+strconv.Itoa(s.Cluster.GPUsPerNode),
		"communication.zero_quantized_gradients=true")})
	return vs, nil
}

// NetworkPerNode is the network wire bytes of one step per node (every
// rank's sends over the network, divided by the nodes).
func NetworkPerNode(o *Outcome) int64 {
	_, total := BusiestWire(o.Result, topology.Inter)
	return total / int64(o.Scenario.Cluster.Nodes)
}
