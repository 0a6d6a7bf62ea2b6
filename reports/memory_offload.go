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
// steady state. Without st.Wide the exact-byte columns are left out and the
// note wraps, within 120 columns.
func writeDeepSpeedOffload(w io.Writer, r *memory.Report, st MemoryStyle) error {
	u := st.Units
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
	if !st.Wide {
		t = newTable(w, 5, 0, 4)
		wrapColumns(t, map[int]int{0: 30, 4: 36})
		t.Header([]string{"options", "host/node", "per GPU", "deepspeed prints", "host figure"})
	}
	for _, x := range r.DeepSpeedOffload {
		printed := fmt.Sprintf("%7.2fGB | %6.2fGB", float64(x.HostPerNode)/(1<<30), float64(x.GPU)/(1<<30))
		row := []string{x.Options(), commas(x.HostPerNode), u.format(x.HostPerNode), commas(x.GPU), u.format(x.GPU), printed, x.HostNote}
		if !st.Wide {
			row = []string{x.Options(), u.format(x.HostPerNode), u.format(x.GPU), printed, x.HostNote}
		}
		if err := t.Append(row); err != nil {
			return err
		}
	}
	return t.Render()
}
