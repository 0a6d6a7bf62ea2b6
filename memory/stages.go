package memory

import (
	"errors"

	"github.com/zerosim/zerosim/scenarios"
)

// EstimateStages returns the estimates of s at each of stages by each of
// ests, in that order. A zerosim estimate of a stage other than s's own
// whose layout the bucket size cannot make (a *TooManyBucketsError: more
// than MaxBuckets buckets at stages 0–2, where one group is cut into
// buckets, when stage 3 cuts each unit) comes back, when unlaid is not nil,
// as that stage's report with NotApplicable set to unlaid's reason for the
// error and NotLaidOut true, its figures zero: the scenario itself (what
// validate and run check) is fine, only that stage is not. An error at s's
// own stage is returned.
//
// at, when not nil, gives s at another stage as the loader reads it
// (--set parallelism.zero_stage=st over the file: a stack preset's
// stage-dependent keys, torchtitan's DDP precision and buckets at stage
// 0, filled in), else nil, when s with its stage set stands for it.
func EstimateStages(s *scenarios.Scenario, stages []int, ests []Estimator, opt Options, unlaid func(stage int, err error) string, at func(stage int) *scenarios.Scenario) ([]*Report, error) {
	var out []*Report
	for _, st := range stages {
		c := AtStage(s, st, at)
		for _, e := range ests {
			if err := StackRefusal(s, st); err != nil && e == EstimatorZerosim {
				r, err := unlaidStage(c, st, opt, err, func(int, error) string { return err.Error() })
				if err != nil {
					return nil, err
				}
				out = append(out, r)
				continue
			}
			r, err := Estimate(c, e, opt)
			if err != nil && unlaid != nil && e == EstimatorZerosim && st != s.Parallelism.Stage && errors.As(err, new(*TooManyBucketsError)) {
				r, err = unlaidStage(c, st, opt, err, unlaid)
			}
			var refused *StageRefusedError
			if err != nil && e == EstimatorZerosim && st != s.Parallelism.Stage && errors.As(err, &refused) {
				// A stage the stack refuses has no figures: the summary
				// says why, as for a stage the bucket size cannot lay out.
				r, err = unlaidStage(c, st, opt, err, func(int, error) string { return refused.Error() })
			}
			if err != nil {
				return nil, err
			}
			out = append(out, r)
		}
	}
	return out, nil
}

// unlaidStage is EstimateStages' report of stage st of c, whose layout the
// bucket size cannot make (refused, a *TooManyBucketsError): its setup,
// NotApplicable set to unlaid's reason and NotLaidOut true. Should the
// setup itself fail, the refusal is the error the caller gets, not the
// setup's.
func unlaidStage(c *scenarios.Scenario, st int, opt Options, refused error, unlaid func(stage int, err error) string) (*Report, error) {
	r, err := analyzeSetup(c, opt)
	if err != nil {
		return nil, refused
	}
	r.NotApplicable, r.NotLaidOut = unlaid(st, refused), true
	r.Params = c.Model.TotalParams()
	return r, nil
}

// StackRefusal is a *StageRefusedError for stage st, another than s's own,
// when s's stack preset does not run it at all (torchtitan has no ZeRO-1,
// scenarios.StackLayout): the per-stage tables and the run's memory plot
// leave it out, as fit and plan search only what the stack runs (qauser32
// L10: zerosim memory and memory_stages.png showed torchtitan at stage 1).
// nil otherwise: s's own stage is modelled as asked, with the loader's
// warning.
func StackRefusal(s *scenarios.Scenario, st int) error {
	l, ok := s.StackLayout()
	if !ok || st == s.Parallelism.Stage {
		return nil
	}
	if note := l.StageNote(st, s.Cluster.Nodes); note != "" {
		return &StageRefusedError{Stage: st, Reason: note}
	}
	return nil
}

// AtStage is s at ZeRO stage st: at's scenario where at gives one (the
// file reloaded at that stage), else a copy of s with its stage set.
func AtStage(s *scenarios.Scenario, st int, at func(int) *scenarios.Scenario) *scenarios.Scenario {
	if st != s.Parallelism.Stage && at != nil {
		if c := at(st); c != nil {
			return c
		}
	}
	c := *s
	c.Parallelism.Stage = st
	return &c
}
