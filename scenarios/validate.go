package scenarios

import (
	"errors"
	"fmt"
	"slices"

	"gopkg.in/yaml.v3"
)

// Resolve expands presets, fills defaults and validates s in place, by the
// same code path as Load: a Go caller (a test, a CLI edit, a sweep point)
// that builds or edits a Scenario calls Resolve before handing it to the
// compute packages, which trust it and validate nothing themselves. Zero
// values stand for absent keys (their defaults apply; Version 0 is 1); resolving a resolved
// scenario changes nothing. Model.LayerList, once filled, is the model:
// clear it to re-derive the layers after editing model dimensions. The error is an *Error naming the key
// ("scenario: cluster.nodes: nodes=0 is out of range (use 1 to 65536)").
func Resolve(s *Scenario) error {
	if s == nil {
		return &Error{Msg: "no scenario"}
	}
	r, err := resolved(s)
	if err != nil {
		return err
	}
	*s = *r
	return nil
}

// Validate reports whether s is a valid scenario, as Resolve would, without
// changing it.
func Validate(s *Scenario) error {
	if s == nil {
		return &Error{Msg: "no scenario"}
	}
	_, err := resolved(s)
	return err
}

// resolved re-encodes s as YAML and loads it: one validation for files and
// Go values. Line and column refer to the re-encoded text, so the error names
// the key instead.
func resolved(s *Scenario) (*Scenario, error) {
	name := s.Name
	if name == "" {
		name = "scenario"
	}
	c := *s
	if c.Version == 0 {
		c.Version = 1 // the only version; a Go value need not spell it
	}
	// A calibration already read (by Load, or set by a Go caller) is kept,
	// not read again from a path that was relative to the scenario file.
	cal := c.Communication.CalibrationData
	if cal != nil {
		c.Communication.Calibration, c.Communication.CalibrationData = "", nil
	}
	data, err := yaml.Marshal(encodeScenario(&c))
	if err != nil {
		return nil, &Error{File: name, Msg: fmt.Sprintf("cannot encode the scenario: %v", err)}
	}
	r, err := Load(name, data, nil)
	if err != nil {
		var e *Error
		if !errors.As(err, &e) {
			return nil, err
		}
		c := *e
		c.Line, c.Col = 0, 0
		if c.Path != "" {
			c.Msg = c.Path + ": " + c.Msg
		}
		return nil, &c
	}
	if len(s.importNotes) > 0 && len(r.importNotes) == 0 && s.importAt <= len(r.Warnings) {
		// Not imported again (the layer list is filled): the import's
		// warnings are put back where Load gave them.
		notes := s.importNotes
		if r.Model.SeqLen != s.defaultSeqLen {
			notes = slices.DeleteFunc(slices.Clone(notes), func(w string) bool { return w == s.seqLenNote })
		}
		r.Warnings = slices.Insert(slices.Clone(r.Warnings), s.importAt, notes...)
		r.importNotes, r.importAt, r.seqLenNote, r.defaultSeqLen = notes, s.importAt, s.seqLenNote, s.defaultSeqLen
	}
	if i := slices.Index(r.Warnings, r.ActivationsWarning); s.ActivationsWarning != "" && i >= 0 {
		// The re-encoded text gives the layer list Load derived from a
		// bare model.params: the warning stays the one s's file gave.
		r.Warnings = slices.Clone(r.Warnings)
		r.Warnings[i], r.ActivationsWarning, r.activationsKey = s.ActivationsWarning, s.ActivationsWarning, s.activationsKey
	}
	if cal != nil {
		b, err := MarshalCalibration(cal)
		if err == nil {
			_, err = parseCalibration("communication.calibration", b, nil)
		}
		if err != nil {
			return nil, &Error{File: name, Msg: err.Error()}
		}
		r.Communication.Calibration, r.Communication.CalibrationData = s.Communication.Calibration, cal
		// The efficiency a calibration set is now an explicit key: keep
		// saying where it came from while it is unchanged.
		if r.Training.ComputeEfficiency == s.Training.ComputeEfficiency {
			r.Training.ComputeEfficiencyFrom = s.Training.ComputeEfficiencyFrom
		}
		if r.Training.AttentionEfficiency == s.Training.AttentionEfficiency {
			r.Training.AttentionEfficiencyFrom = s.Training.AttentionEfficiencyFrom
			r.Training.AttentionEfficiencyHeadDim = s.Training.AttentionEfficiencyHeadDim
			r.Training.AttentionEfficiencyGPU = s.Training.AttentionEfficiencyGPU
		}
		if a, b := r.Memory.AllocatorOverhead, s.Memory.AllocatorOverhead; a != nil && b != nil && *a == *b {
			r.Memory.AllocatorOverheadFrom = s.Memory.AllocatorOverheadFrom
		}
	}
	// The default efficiency is an explicit key in the re-encoded text:
	// keep calling it the default while it is unchanged.
	if r.Training.ComputeEfficiency == s.Training.ComputeEfficiency {
		r.Training.ComputeEfficiencyDefault = s.Training.ComputeEfficiencyDefault
	}
	// The re-encoded text reads no file: the files are those s came from.
	r.ReadFiles = s.ReadFiles
	return r, nil
}
