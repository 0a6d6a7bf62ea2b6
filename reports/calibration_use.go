package reports

import (
	"fmt"
	"strings"

	"github.com/zerosim/zerosim/scenarios"
)

// CalibrationUse names the calibration file a scenario used
// (communication.calibration, as its file names it) and the parts of it
// the run applied: "network" when NCCL's cost model times the
// collectives (scenarios.Algorithm.NCCLModel), "compute" when it set the
// compute efficiency or the attention efficiency
// (Training.ComputeEfficiencyFrom, AttentionEfficiencyFrom), "memory" when it set the allocator overhead
// (memory.AllocatorOverheadFrom): a key the scenario sets itself wins
// over the file's (scenarios' resolveCompute). result.json's and compare's
// "calibration"; nil when the scenario names none.
type CalibrationUse struct {
	File  string   `json:"file"`
	Parts []string `json:"parts"`
}

// calibrationUse is s's CalibrationUse, nil without a calibration.
func calibrationUse(s *scenarios.Scenario) *CalibrationUse {
	cd := s.Communication.CalibrationData
	if cd == nil {
		return nil
	}
	u := &CalibrationUse{File: s.Communication.Calibration, Parts: []string{}}
	if cd.HasNetwork() && s.Communication.Algorithm.NCCLModel() {
		u.Parts = append(u.Parts, "network")
	}
	if t := &s.Training; t.ComputeEfficiencyFrom != "" || t.AttentionEfficiencyFrom != "" {
		u.Parts = append(u.Parts, "compute")
	}
	if s.Memory.AllocatorOverheadFrom != "" {
		u.Parts = append(u.Parts, "memory")
	}
	return u
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
