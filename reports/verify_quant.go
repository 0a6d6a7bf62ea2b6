package reports

import (
	"fmt"
	"io"
	"strconv"
)

// QuantDriftRow is one step of ZeRO++'s drift from unquantized training:
// the losses and the bf16 parameters' largest absolute and relative L2
// difference.
type QuantDriftRow struct {
	Config          string  `json:"config"`
	Step            int     `json:"step"`
	Loss            float64 `json:"loss"`
	PlainLoss       float64 `json:"unquantized_loss"`
	MaxAbsParamDiff float64 `json:"max_abs_param_diff"`
	RelParamDiff    float64 `json:"rel_l2_param_diff"`
}

func writeQuantDrift(w io.Writer, rows []QuantDriftRow) error {
	if len(rows) == 0 {
		return nil
	}
	if _, err := fmt.Fprintln(w, "# ZeRO++ drift: quantized training (bit-exact against its quantizing reference above) vs unquantized training, after each step"); err != nil {
		return err
	}
	t := newTable(w, 6, 0)
	t.Header([]string{"config", "step", "loss", "unquantized loss", "max |Δparam|", "relative L2 Δparam"})
	for _, x := range rows {
		if err := t.Append([]string{x.Config, strconv.Itoa(x.Step), strconv.FormatFloat(x.Loss, 'g', 6, 64), strconv.FormatFloat(x.PlainLoss, 'g', 6, 64),
			fmtDiff(x.MaxAbsParamDiff), strconv.FormatFloat(x.RelParamDiff, 'e', 2, 64)}); err != nil {
			return err
		}
	}
	return t.Render()
}
