package collectives

import (
	"github.com/zerosim/zerosim/topology"
	"github.com/zerosim/zerosim/units"
)

// EachTransfer calls fn for every transfer of every phase of p, with the
// bytes it moves and the link class it crosses, in plan order. Callers that
// account traffic per phase (the step replay) use it instead of looking the
// paths up again.
func (p *Plan) EachTransfer(fn func(src, dst int, c topology.Class, b units.Bytes)) {
	for i := range p.Phases {
		ph := &p.Phases[i]
		for j, x := range ph.Transfers {
			fn(x.Src, x.Dst, ph.paths[j].Class, ph.Bytes)
		}
	}
}
