package memory

import "github.com/zerosim/zerosim/scenarios"

// EstimateStages estimates s at each of stages with each estimator, stage
// by stage in the order given: what `zerosim memory` prints.
func EstimateStages(s *scenarios.Scenario, stages []int, ests []Estimator, opt Options) ([]*Report, error) {
	var out []*Report
	for _, st := range stages {
		c := *s
		c.Parallelism.Stage = st
		for _, e := range ests {
			r, err := Estimate(&c, e, opt)
			if err != nil {
				return nil, err
			}
			out = append(out, r)
		}
	}
	return out, nil
}
