package zero

import (
	"fmt"
	"slices"
	"strings"

	"github.com/zerosim/zerosim/collectives"
	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/topology"
	"github.com/zerosim/zerosim/units"
)

// pinnedColl is one collective the step of a scenario issues, as NCCL's
// tuner sees it: its operation, the algorithm the replay asks for
// (kindAlgo), the shape of a group it runs over, and a size it runs at.
type pinnedColl struct {
	kind  Kind
	algo  collectives.Algo
	shape collectives.Shape
	bytes units.Bytes
}

// CheckPins reports, without replaying s, whether NCCL's tuner has an
// algorithm for every collective s's step issues (each operation over
// each shape of its groups, and the context-parallel ring's all-gathers)
// under communication.nccl_algo, nccl_proto and an explicit nvls or
// nvlstree algorithm: the question collectives.Model.Choose answers for
// the replay, asked before it, so that a scenario the replay would refuse
// (NCCL's "No algorithm/protocol available", topoGetAlgoInfo, src/enqueue.cc
// line 2063 at NVIDIA/nccl 5067397c)
// is refused at load (final read R2 F1: validate said ok, then run
// exited 2 naming no position). Its error is a *scenarios.Error with the
// key to change as Path and no position (scenarios.Place puts it at the
// key) and the fix. Where the pins leave NCCL's ring with its Simple
// protocol (NCCL's defaults among them), every operation has it and the
// check costs nothing (ringSimpleLeft); otherwise it builds the schedule
// once. Any other error is left to the replay.
func CheckPins(s *scenarios.Scenario) error {
	c := &s.Communication
	if err := allReduceOnly(s); err != nil {
		return err
	}
	algo := algoOf[c.Algorithm]
	if algo == collectives.Auto && ringSimpleLeft(c) || !c.Algorithm.NCCLModel() {
		return nil
	}
	return checkPins(s, algo)
}

// allReduceOnly refuses an nccl_algo of NCCL's all-reduce algorithms only
// (Tree, NVLSTree) under a ZeRO stage that reduce-scatters and
// all-gathers: NCCL's tree and NVLS-tree run all-reduce only (tuning.cc at
// 5067397c: ncclTopoTuneModel leaves them off for the other functions),
// so the step's reduce-scatters and all-gathers have no algorithm, which
// NCCL refuses ("no algorithm/protocol available", enqueue.cc
// topoGetAlgoInfo) (QA18 M5: the run failed with no position). The step
// refuses it, not the loader: `collective` and `calibrate` replay no step,
// and a log of all_reduce_perf under NCCL_ALGO=Tree is calibrated under
// nccl_algo: Tree.
func allReduceOnly(s *scenarios.Scenario) error {
	c := &s.Communication
	if c.NCCLAlgo == "" || s.Parallelism.Stage < 1 {
		return nil
	}
	m, err := collectives.ParseNCCLAlgos(c.NCCLAlgo)
	if err != nil || m&(1<<collectives.Ring|1<<collectives.NVLS|1<<collectives.PAT) != 0 {
		return nil
	}
	return &scenarios.Error{Path: "communication.nccl_algo", Msg: fmt.Sprintf("nccl_algo %q leaves only NCCL's all-reduce algorithms (Tree, NVLSTree), and ZeRO stage %d reduce-scatters and all-gathers, which NCCL then refuses (no algorithm/protocol available): add Ring (nccl_algo: Ring,%s) or drop nccl_algo", c.NCCLAlgo, s.Parallelism.Stage, c.NCCLAlgo)}
}

// ringSimpleLeft reports whether communication.nccl_algo and nccl_proto
// leave NCCL's ring and its Simple protocol on (unset, or listing them):
// the ring runs every collective the step issues (all-gather,
// reduce-scatter, all-reduce) over any group with Simple, which NCCL never
// switches off by itself (src/graph/tuning.cc ncclTopoTuneModel at
// 5067397c2676d5aed50042fc39e5c8ee96eb0027: the ring's bandwidth is set for
// every collective, and only LL128 and the NVLS/CollNet/PAT algorithms are
// disabled by hardware). So the tuner always has an algorithm: the check
// need not build the schedule (rev24: plan on the 16,384-rank example with
// nccl_algo Ring,Tree took 5–7 s instead of 0.35 s rebuilding it for every
// candidate). TestRingSimpleLeftNeedsNoCheck holds it to the full check.
func ringSimpleLeft(c *scenarios.Communication) bool {
	if c.NCCLAlgo != "" {
		if m, err := collectives.ParseNCCLAlgos(c.NCCLAlgo); err != nil || m&(1<<collectives.Ring) == 0 {
			return false
		}
	}
	if c.NCCLProto != "" {
		if m, err := collectives.ParseNCCLProtos(c.NCCLProto); err != nil || m&(1<<collectives.Simple) == 0 {
			return false
		}
	}
	return true
}

// checkPins is CheckPins's full check: the step's collectives asked of
// Choose under algo.
func checkPins(s *scenarios.Scenario, algo collectives.Algo) error {
	m, err := Model(s)
	if err != nil || m == nil {
		return nil
	}
	colls, err := stepCollectives(s, algo)
	if err != nil {
		return nil
	}
	bad, err := firstUnrun(m, colls)
	if err == nil {
		return nil
	}
	key, fix := pinFix(s, colls)
	why := strings.TrimSuffix(strings.TrimPrefix(err.Error(), "collectives: "), ".")
	msg := fmt.Sprintf("%s: the step's %ss: %s: %s", key, bad.kind, why, fix)
	return &scenarios.Error{Path: key, Msg: msg}
}

// firstUnrun is the first of colls m has no algorithm for, with Choose's
// error (nil when m runs them all).
func firstUnrun(m *collectives.Model, colls []pinnedColl) (pinnedColl, error) {
	for _, c := range colls {
		if _, err := m.Choose(opOf[c.kind], c.shape, c.algo, c.bytes); err != nil {
			return c, err
		}
	}
	return pinnedColl{}, nil
}

// pinFix is the key that leaves colls an operation without an algorithm
// and its fix: nccl_algo when NCCL's own algorithms would run them all,
// with the first algorithm (in NCCL's order) whose addition does;
// nccl_proto when its protocols would, likewise; communication.algorithm
// otherwise (nvls or nvlstree where they cannot run), or both pins.
func pinFix(s *scenarios.Scenario, colls []pinnedColl) (key, fix string) {
	hw := collectives.HardwareOf(s)
	runs := func(h collectives.Hardware) bool {
		_, err := firstUnrun(collectives.NewModel(h), colls)
		return err == nil
	}
	for _, p := range []struct {
		key, names string
		mask       *uint8
		all        []string
		parse      func(string) (uint8, error)
		namesOf    func(uint8) []string
	}{{"nccl_algo", s.Communication.NCCLAlgo, &hw.Algos, scenarios.NCCLAlgoNames, collectives.ParseNCCLAlgos, collectives.AlgoNames},
		{"nccl_proto", s.Communication.NCCLProto, &hw.Protos, scenarios.NCCLProtoNames, collectives.ParseNCCLProtos, collectives.ProtoNames}} {
		if *p.mask == 0 {
			continue
		}
		pinned := *p.mask
		*p.mask = 0
		if !runs(hw) {
			*p.mask = pinned
			continue
		}
		key = "communication." + p.key
		all, _ := p.parse(strings.Join(p.all, ","))
		for _, name := range p.all {
			bit, _ := p.parse(name)
			if *p.mask = pinned | bit; bit&pinned != 0 || !runs(hw) {
				continue
			}
			if pinned|bit == all {
				return key, fmt.Sprintf("drop %s (%q switches off %s, which runs them)", p.key, p.names, name)
			}
			return key, fmt.Sprintf("add %s (%s: %s), or drop %s", name, p.key, strings.Join(p.namesOf(pinned|bit), ","), p.key)
		}
		return key, "drop " + p.key
	}
	if c := s.Communication; c.Algorithm == scenarios.AlgoAuto {
		return "communication.nccl_algo", "drop nccl_algo and nccl_proto"
	}
	return "communication.algorithm", "set algorithm: auto (NCCL's own choice)"
}

// stepCollectives lists the collectives s's step issues that NCCL's tuner
// chooses an algorithm for (all-to-alls are point-to-point sends): each
// (operation, group kind) of the schedule's tasks over every distinct
// shape of that kind's groups, and with cp > 1 the ring's all-gathers
// over each cp group (ringPhase). The cp groups come first: Build times
// their all-gathers, and fails on the same pins.
func stepCollectives(s *scenarios.Scenario, algo collectives.Algo) ([]pinnedColl, error) {
	t, err := topology.Build(s)
	if err != nil {
		return nil, err
	}
	var out []pinnedColl
	add := func(k Kind, members []int, bytes int64) {
		if len(members) < 2 || bytes <= 0 {
			return
		}
		c := pinnedColl{k, kindAlgo(algo, k), collectives.ShapeOf(t, members), units.Bytes(bytes)}
		if !slices.ContainsFunc(out, func(o pinnedColl) bool { return o.kind == c.kind && o.algo == c.algo && o.shape == c.shape }) {
			out = append(out, c)
		}
	}
	if t.CP() > 1 {
		for d := range t.DP() {
			add(AllGather, cpGroup(t, d), 1)
		}
	}
	sc, err := Build(s)
	if err != nil {
		// The ring's all-gathers, which Build times, or an error the
		// replay reports.
		return out, nil
	}
	type kg struct {
		k Kind
		g GroupKind
	}
	seen := map[kg]bool{}
	for _, tk := range sc.Tasks {
		if !tk.Kind.IsComm() || tk.Kind == AllToAll || seen[kg{tk.Kind, tk.Group}] || tk.Bytes <= 0 {
			continue
		}
		seen[kg{tk.Kind, tk.Group}] = true
		for i := range groupCount(sc, tk.Group) {
			add(tk.Kind, sc.groupMembers(tk.Group, i), tk.Bytes)
		}
	}
	return out, nil
}
