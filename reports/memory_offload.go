package reports

import (
	"fmt"
	"io"

	"github.com/zerosim/zerosim/memory"
)

// writeDeepSpeedOffload writes the rows DeepSpeed's _all_cold estimator
// prints for r (its "per CPU | per GPU | Options" table): host RAM per node
// and memory per GPU in exact bytes, in u, and in the GB (2^30 B, two
// decimals) DeepSpeed prints, each host figure marked start-up peak or
// steady state.
func writeDeepSpeedOffload(w io.Writer, r *memory.Report, u MemoryUnits) error {
	if len(r.DeepSpeedOffload) == 0 {
		return nil
	}
	helper := "estimate_zero2_model_states_mem_needs_all_cold"
	if r.DeepSpeedOffload[0].Stage == 3 {
		helper = "estimate_zero3_model_states_mem_needs_all_cold"
	}
	if _, err := fmt.Fprintf(w, "# DeepSpeed %s: host RAM per node and memory per GPU\n", helper); err != nil {
		return err
	}
	t := newTable(w, 7, 0, 6)
	t.Header([]string{"options", "host/node (B)", "host/node", "per GPU (B)", "per GPU", "deepspeed prints", "host figure"})
	for _, x := range r.DeepSpeedOffload {
		printed := fmt.Sprintf("%7.2fGB | %6.2fGB", float64(x.HostPerNode)/(1<<30), float64(x.GPU)/(1<<30))
		if err := t.Append([]string{x.Options(), exact(x.HostPerNode), u.format(x.HostPerNode), exact(x.GPU), u.format(x.GPU), printed, x.HostNote}); err != nil {
			return err
		}
	}
	return t.Render()
}
