package reports

import (
	"fmt"
	"strings"

	"github.com/zerosim/zerosim/zero"
)

// CalibrationUse is a run's zero.CalibrationUse as result.json and
// compare write it: the calibration file the scenario named and the parts
// of it the run applied (network, compute, memory); nil when it named none.
type CalibrationUse struct {
	File  string   `json:"file"`
	Parts []string `json:"parts"`
}

// calibrationUse is r's CalibrationUse, nil without a calibration.
func calibrationUse(r *zero.Result) *CalibrationUse {
	if r.Calibration == nil {
		return nil
	}
	return &CalibrationUse{File: r.Calibration.File, Parts: append([]string{}, r.Calibration.Parts...)}
}

// String is u as compare's header says it: "calibration FILE (network,
// compute)", "(no part applied)" when the scenario's own keys and
// algorithm left none.
func (u *CalibrationUse) String() string {
	parts := "no part applied"
	if len(u.Parts) > 0 {
		parts = strings.Join(u.Parts, ", ")
	}
	return fmt.Sprintf("calibration %s (%s)", EscapeControl(u.File), parts)
}
