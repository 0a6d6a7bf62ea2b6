package collectives

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"gonum.org/v1/gonum/optimize"
	"gonum.org/v1/gonum/stat"

	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/units"
)

// Curve is one measured curve: the time of a collective at one shape for
// increasing sizes (from an nccl-tests log).
type Curve struct {
	Op      Op
	Shape   Shape
	Sizes   []int64   // bytes, increasing
	TimesUS []float64 // µs
	Source  string    // file:line of the log's header
	// GPUsPerThread is the GPUs each host thread of the logged run drove
	// (nccl-tests -g; 0 or 1: one GPU per thread): the host launch floor
	// (HostLaunchFloor) in its times.
	GPUsPerThread int
}

// CurveOf is the measured curve of a log: per size, the faster of its
// out-of-place and in-place times (one-off noise hits one of the two).
func CurveOf(l *Log) Curve {
	c := Curve{Op: l.Op, Shape: Shape{Ranks: l.Ranks, Nodes: l.Nodes}, Source: fmt.Sprintf("%s:%d", l.File, l.Line), GPUsPerThread: l.GPUsPerThread}
	for _, r := range l.Rows {
		t := r.Time
		if r.InTime > 0 {
			t = math.Min(t, r.InTime)
		}
		c.Sizes = append(c.Sizes, int64(r.Size))
		c.TimesUS = append(c.TimesUS, t)
	}
	return c
}

// NICShape is the logged group's shape on nodes of gpusPerNode GPUs
// that share shared NICs each (0: each GPU has its own; GPU g's NIC is
// g·shared/gpusPerNode, as topology.NIC lays them out): {Ranks, Nodes},
// with Shape.MinNICs the fewest NICs its ranks cross on one node where
// that differs from min(shared, ranks per node), as ShapeOf gives a
// replayed group's (rev23 LOW-6: a log of 4 of 8 GPUs on 4 shared NICs,
// which cross 2, was fitted as crossing 4, its inter efficiency halved to
// match). The ranks' GPUs are the devices block's "device N". ok is false
// where the NICs matter, shared NICs and part of each node, and the log
// does not tell them: no devices block, a device not below gpusPerNode,
// one device twice on a host (each process's CUDA_VISIBLE_DEVICES
// renumbered its GPU 0), or hosts that are not the log's nodes of
// Ranks/Nodes ranks each (--nodes over a shared hostname); the shape is
// then {Ranks, Nodes}, the rule's.
func (l *Log) NICShape(gpusPerNode, shared int) (Shape, bool) {
	sh := Shape{Ranks: l.Ranks, Nodes: l.Nodes}
	if shared <= 0 || shared >= gpusPerNode || l.Nodes < 1 || l.Ranks >= gpusPerNode*l.Nodes {
		return sh, true
	}
	if len(l.RankHost) != l.Ranks || len(l.RankDevice) != l.Ranks {
		return sh, false
	}
	nics := make([]map[int]bool, l.Nodes)
	used := make([]map[int]bool, l.Nodes)
	for r, h := range l.RankHost {
		d := l.RankDevice[r]
		if h < 0 || h >= l.Nodes || d < 0 || d >= gpusPerNode {
			return sh, false
		}
		if used[h] == nil {
			used[h], nics[h] = map[int]bool{}, map[int]bool{}
		}
		if used[h][d] {
			return sh, false
		}
		used[h][d], nics[h][d*shared/gpusPerNode] = true, true
	}
	least := 0
	for h, n := range nics {
		if len(used[h]) != l.Ranks/l.Nodes {
			// Hosts the block names are not the nodes calibrate's
			// --nodes made of them (containers sharing a hostname).
			return sh, false
		}
		least = minPositive(least, len(n))
	}
	if least != min(shared, l.Ranks/l.Nodes) {
		sh.MinNICs = least
	}
	return sh, true
}

// at interpolates the curve log–log at size b; ok is false outside its
// range or for another op, shape or number of GPUs per host thread (a run
// with another host launch floor).
func (c *Curve) at(op Op, sh Shape, gpusPerThread int, b units.Bytes) (float64, bool) {
	if c.Op != op || c.Shape != sh || max(c.GPUsPerThread, 1) != max(gpusPerThread, 1) || len(c.Sizes) == 0 || int64(b) < c.Sizes[0] || int64(b) > c.Sizes[len(c.Sizes)-1] || b <= 0 {
		return 0, false
	}
	i := sort.Search(len(c.Sizes), func(i int) bool { return c.Sizes[i] >= int64(b) })
	if c.Sizes[i] == int64(b) {
		return c.TimesUS[i], true
	}
	x0, x1 := math.Log(float64(c.Sizes[i-1])), math.Log(float64(c.Sizes[i]))
	y0, y1 := math.Log(c.TimesUS[i-1]), math.Log(c.TimesUS[i])
	f := (math.Log(float64(b)) - x0) / (x1 - x0)
	return math.Exp(y0 + float64(f*(y1-y0))), true
}

// Time is op over sh on nBytes: a measured curve's interpolation at its
// shape and size range, else the fitted model's choice with algorithm a
// (Auto: NCCL's choice). The Choice's Algo and Proto name the model's pick
// either way; with a curve, its Time and Latency are the measured ones.
func (m *Model) Time(op Op, sh Shape, a Algo, nBytes units.Bytes) (Choice, error) {
	c, err := m.Choose(op, sh, a, nBytes)
	if err != nil {
		return c, err
	}
	c = m.hostBound(c)
	if a != Auto {
		return c, nil
	}
	for i := range m.Curves {
		if us, ok := m.Curves[i].at(op, sh, m.GPUsPerThread, nBytes); ok {
			c.Time = units.Duration(math.Round(us * 1e6))
			c.Latency = min(c.Latency, c.Time)
			if bw := c.Time - c.Latency; bw > 0 {
				c.AlgBW = float64(nBytes) / (float64(bw) * 1e-12)
			}
			return c, nil
		}
	}
	return c, nil
}

// Fit is the calibration of a model against measured curves.
type Fit struct {
	Params Params
	// Errors[i] is curve i's relative time error per row of the fitted
	// model (not the interpolation), (model − measured)/measured.
	Errors [][]float64
	// Held are the parameters the curves do not identify (Identified), as
	// indices of scenarios.CalParamNames (paramVec's order), increasing:
	// they stay at their nominal values.
	Held []int
}

// MinShare is the least change of a logged time, as a share of the
// modelled time, that a parameter's probe step (idProbe) must make at
// some logged size for the rows to identify it: the run-to-run noise of
// nccl-tests' times, which its out-of-place and in-place columns (two
// runs of one size) show: per log, the median over its rows of
// |in-place − out-of-place| / out-of-place time (the mean of the middle
// two for an even count) is 0.15 % to 2.83 % over the ten published logs
// of testdata/nccl-tests (1.11 % on b200_2node, 0.51 % on the 2-node and
// 1.48 % on the 4-node XE9680 log; TestMinShareNoise).
const MinShare = 0.01

// idProbe is the step of each parameter Identified probes with, in
// paramVec's x: 10 % of an efficiency (ln 1.1), 1 µs of a latency: the
// size of the corrections the fits of the published logs make (intra
// efficiency 0.914, inter 1.003, hops +0.24 and +0.23 µs, fixed −2.12 µs
// on the XE9680 logs; docs/calibration.md's accuracy table).
var idProbe = [5]float64{math.Log(1.1), math.Log(1.1), 1, 1, 1}

// Identified says which parameters the rows can measure: a parameter is
// identified when its probe step (idProbe) either way changes the nominal
// model's time (Model.Time without curves, as FitModel's cost times it)
// of at least one row by MinShare or more (either way: the
// model can cap a link's rate, so that a faster one changes nothing). A log of large sizes only
// leaves the latencies unidentified (a 1 µs network hop moves the 2-node
// XE9680 log's rows from 64 MiB up by at most 0.40 %:
// TestFitHoldsUnidentified): fitted anyway, they went wherever the
// optimiser stopped, below any hardware's (Unphysical).
func Identified(hw Hardware, curves []Curve, lo, hi units.Bytes) [5]bool {
	var id [5]bool
	m := NewModel(hw)
	for _, c := range curves {
		m.GPUsPerThread = c.GPUsPerThread
		for j, s := range c.Sizes {
			if units.Bytes(s) < lo || units.Bytes(s) > hi || c.TimesUS[j] <= 0 {
				continue
			}
			m.Params = Nominal
			t0, err := m.Time(c.Op, c.Shape, Auto, units.Bytes(s))
			if err != nil || t0.Time <= 0 {
				continue
			}
			for k := range id {
				for _, sign := range []float64{-1, 1} {
					x := make([]float64, 5)
					x[k] = sign * idProbe[k]
					m.Params = paramVec(x)
					t1, err := m.Time(c.Op, c.Shape, Auto, units.Bytes(s))
					if err != nil || t1.Time <= 0 {
						continue
					}
					if math.Abs(math.Log(float64(t1.Time)/float64(t0.Time))) >= math.Log1p(MinShare) {
						id[k] = true
					}
				}
			}
		}
	}
	return id
}

// paramVec maps the optimiser's unconstrained x to Params: efficiencies
// as exp(x), latencies in µs as they are.
func paramVec(x []float64) Params {
	return Params{IntraEff: math.Exp(x[0]), InterEff: math.Exp(x[1]), IntraHop: x[2], InterHop: x[3], Fixed: x[4]}
}

// FitModel fits the model's Params to the curves' rows between lo and hi
// bytes: least squares of the log time ratio, with a weak pull towards
// the nominal figures so that a parameter no curve constrains (the
// network on one node) stays nominal. It uses gonum's Nelder–Mead.
func FitModel(hw Hardware, curves []Curve, lo, hi units.Bytes) (*Fit, error) {
	return fitModel(hw, curves, lo, hi, false)
}

// FitBandwidth is FitModel with the latencies (the hops and the fixed
// cost) held at nominal, the efficiencies alone fitted: for rows of
// large sizes only, chosen because the small ones are not a latency plus
// a bandwidth (calibrate --min-size). A 1 µs hop still moves such rows
// by a percent or so, enough for Identified, but what the optimiser puts
// there is the misfit of the bandwidth, not a latency: the 2 × 8 H100
// NDR log (XE9680) from 16 MiB fitted an inter hop of −18.64 µs.
func FitBandwidth(hw Hardware, curves []Curve, lo, hi units.Bytes) (*Fit, error) {
	return fitModel(hw, curves, lo, hi, true)
}

func fitModel(hw Hardware, curves []Curve, lo, hi units.Bytes, holdLatencies bool) (*Fit, error) {
	type pt struct {
		c    int
		op   Op
		sh   Shape
		size units.Bytes
		us   float64
		g    int // GPUs per host thread of the curve's run
	}
	var pts []pt
	for i, c := range curves {
		for j, s := range c.Sizes {
			if units.Bytes(s) >= lo && units.Bytes(s) <= hi && c.TimesUS[j] > 0 {
				pts = append(pts, pt{i, c.Op, c.Shape, units.Bytes(s), c.TimesUS[j], c.GPUsPerThread})
			}
		}
	}
	if len(pts) == 0 {
		return nil, fmt.Errorf("collectives: no measured sizes between %v and %v to calibrate on", lo, hi)
	}
	m := NewModel(hw)
	cost := func(x []float64) float64 {
		p := paramVec(x)
		m.Params = p
		var s float64
		for _, q := range pts {
			m.GPUsPerThread = q.g
			c, err := m.Time(q.op, q.sh, Auto, q.size)
			if err != nil || c.Time <= 0 {
				return math.Inf(1)
			}
			r := math.Log(float64(c.Time) / 1e6 / q.us)
			s += float64(r * r)
		}
		// The pull to nominal: 10 % of efficiency (ln 1.1 ≈ 0.095) or 1 µs
		// of latency costs ~1e-6, as much as one row 1 % off (ln 1.01² ≈
		// 1e-4, over the mean) in a fit of 100 rows.
		reg := 1e-2 * (float64(x[0]*x[0]) + float64(x[1]*x[1]) + (float64(x[2]*x[2])+float64(x[3]*x[3])+float64(x[4]*x[4]))/100)
		return s/float64(len(pts)) + float64(reg*1e-2)
	}
	// The parameters the rows do not identify stay nominal (x = 0); the
	// optimiser searches the others.
	id := Identified(hw, curves, lo, hi)
	if holdLatencies {
		id[2], id[3], id[4] = false, false, false // paramVec's hops and fixed cost
	}
	var free []int
	var held []int
	for k, ok := range id {
		if ok {
			free = append(free, k)
		} else {
			held = append(held, k)
		}
	}
	full := func(y []float64) []float64 {
		if len(free) == len(id) {
			return y
		}
		x := make([]float64, len(id))
		for i, k := range free {
			x[k] = y[i]
		}
		return x
	}
	x := make([]float64, len(id))
	if len(free) > 0 {
		res, err := optimize.Minimize(optimize.Problem{Func: func(y []float64) float64 { return cost(full(y)) }}, make([]float64, len(free)), &optimize.Settings{MajorIterations: 4000}, &optimize.NelderMead{})
		if err != nil && res == nil {
			return nil, fmt.Errorf("collectives: calibration fit: %w", err)
		}
		x = full(res.X)
	}
	f := &Fit{Params: paramVec(x), Held: held}
	m.Params = f.Params
	f.Errors = make([][]float64, len(curves))
	for _, q := range pts {
		m.GPUsPerThread = q.g
		c, err := m.Time(q.op, q.sh, Auto, q.size)
		if err != nil {
			return nil, err
		}
		f.Errors[q.c] = append(f.Errors[q.c], (float64(c.Time)/1e6-q.us)/q.us)
	}
	return f, nil
}

// MaxLineRate bounds the share of a link's line rate a calibrated model
// may move payload at: 1, with 5 % for what a fit of measured times to the
// model leaves in its efficiencies (the 4-node XE9680 log alone fits an
// inter efficiency of 1.049, 100.7 % of NDR's line rate).
const MaxLineRate = 1.05

// LineRates are the shares of the intra-node link's and a NIC's line rate
// at which the model with params p moves a collective's payload on hw:
// NCCL's NVLink (or PCIe) fraction and the ring search's NIC fraction,
// each times its fitted efficiency (intraBW, netBW).
func LineRates(hw Hardware, p Params) (intra, inter float64) {
	f := nvlinkFraction[hw.Arch]
	if hw.PCI {
		f = pciFraction
	}
	return f * p.IntraEff, searchFraction * p.InterEff
}

// Impossible says which of p's efficiencies no link of hw can reach (a
// share of its line rate above MaxLineRate): intra and inter, each "" when
// the link can.
func Impossible(hw Hardware, p Params) (intra, inter string) {
	fi, fe := LineRates(hw, p)
	if fi > MaxLineRate {
		intra = fmt.Sprintf("%s %.3f (%.0f %% of the intra-node link's line rate)", scenarios.CalParamNames[0].Name, p.IntraEff, fi*100)
	}
	if fe > MaxLineRate {
		inter = fmt.Sprintf("%s %.3f (%.0f %% of a NIC's line rate)", scenarios.CalParamNames[1].Name, p.InterEff, fe*100)
	}
	return intra, inter
}

// Unphysical says which of p's fitted values no hardware can have on hw,
// each with its calibration file key: an efficiency above the link's line
// rate (Impossible), or a per-hop or per-collective latency that with
// NCCL's least table latency of its kind (NVLink or PCIe 0.6 or 1.0 µs,
// network 2.7 µs, base 6.6 µs for a ring or a tree: tuning.cc's tables,
// hwLat and baseLat) and the hardware's extra latency is below 0, which
// times small collectives at 0 µs. nil when every value can be.
func Unphysical(hw Hardware, p Params) []string {
	var bad []string
	intra, inter := Impossible(hw, p)
	if intra != "" {
		bad = append(bad, "params."+scenarios.CalParamNames[0].Key+": "+intra)
	}
	if inter != "" {
		bad = append(bad, "params."+scenarios.CalParamNames[1].Key+": "+inter)
	}
	tu := hw.tuning() // the same LL rows in every release (ncclTunings)
	minIntra := tu.hwLat[0][tRing][LL]
	if hw.PCI {
		minIntra = tu.hwLat[1][tRing][LL]
	}
	if t := minIntra + p.IntraHop + float64(hw.IntraLatency)/1e6; t < 0 {
		bad = append(bad, fmt.Sprintf("params.%s: %+.2f µs makes an intra-node hop %.2f µs, below 0", scenarios.CalParamNames[2].Key, p.IntraHop, t))
	}
	if t := min(tu.hwLat[2][tRing][LL], tu.hwLat[2][tTree][LL]) + p.InterHop + float64(hw.InterLatency)/1e6; t < 0 {
		bad = append(bad, fmt.Sprintf("params.%s: %+.2f µs makes a network hop %.2f µs, below 0", scenarios.CalParamNames[3].Key, p.InterHop, t))
	}
	if t := min(tu.baseLat[tRing][LL], tu.baseLat[tTree][LL]) + p.Fixed; t < 0 {
		bad = append(bad, fmt.Sprintf("params.%s: %+.2f µs makes NCCL's base latency %.2f µs, below 0", scenarios.CalParamNames[4].Key, p.Fixed, t))
	}
	return bad
}

// Summary is the median and largest |error| of a set of relative errors.
func Summary(errs []float64) (median, worst float64) {
	if len(errs) == 0 {
		return 0, 0
	}
	a := make([]float64, len(errs))
	for i, e := range errs {
		a[i] = math.Abs(e)
	}
	slices.Sort(a)
	return stat.Quantile(0.5, stat.Empirical, a, nil), a[len(a)-1]
}

// Calibration is a fitted model with its measured curves.
type Calibration struct {
	HW     Hardware
	Params Params
	Curves []Curve
}

// Model is the calibrated model; hw, if its figures differ from the
// calibration's, is the hardware to model (another cluster): the fitted
// efficiencies and latencies then apply to its figures and the curves
// are kept only where the hardware is the one measured.
func (c *Calibration) Model(hw Hardware) *Model {
	m := &Model{HW: hw, Params: c.Params}
	if hw == c.HW {
		m.Curves = c.Curves
	}
	return m
}

// Measured reports whether hw is the hardware the calibration was fitted
// on, the case in which Model keeps the measured curves.
func (c *Calibration) Measured(hw Hardware) bool { return hw == c.HW }

// OtherHardware reports whether hw, its NCCL pins aside (PinsDiffer says
// those), is not the hardware the calibration was fitted on: the second
// reason, with the pins, that Model drops the measured curves. run's
// warnings and collective's header give both (final read R1 F3: collective
// said only the pins when both differed).
func (c *Calibration) OtherHardware(hw Hardware) bool {
	hw.Algos, hw.Protos = c.HW.Algos, c.HW.Protos
	return !c.Measured(hw)
}

// OtherHardwareWords is, for a calibration of other hardware
// (OtherHardware), the warning's words: "fitted on <its hardware>, this
// cluster is <hw>: ...", each named by Describe and, where the NCCL
// releases whose tuners ran differ, by the release ("NCCL 2.26", "NCCL
// 2.30" for the default), which Describe leaves out: a file fitted under
// another release alone read as two identical descriptions. The fix is
// to calibrate on this cluster, or, when the release is the only
// difference, to run the release the file was fitted under.
func (c *Calibration) OtherHardwareWords(hw Hardware) string {
	fitted, this := c.HW.Describe(), hw.Describe()
	fix := "calibrate on this cluster"
	if c.HW.NCCL != hw.NCCL {
		release := func(h Hardware) string { return ", NCCL " + cmp.Or(h.NCCL, DefaultNCCL) }
		fitted += release(c.HW)
		this += release(hw)
		same := hw
		same.NCCL = c.HW.NCCL
		if same == c.HW {
			fix = "time under NCCL " + cmp.Or(c.HW.NCCL, DefaultNCCL) + " as fitted (communication.nccl_version, collective --nccl-version), or calibrate on logs of this release"
		}
	}
	return "fitted on " + fitted + ", this cluster is " + this + ": its efficiencies and latencies are applied to this cluster's links, its measured curves are not used (" + fix + ")"
}

// CurvesUnused says, for a header, why Model on hw drops the measured
// curves: " of other hardware", " measured under other NCCL_ALGO or
// NCCL_PROTO settings" or both, then ", its measured curves not used"; ""
// when it keeps them (run's header and collective's say it alike).
func (c *Calibration) CurvesUnused(hw Hardware) string {
	other, pins := c.OtherHardware(hw), c.PinsDiffer(hw) != ""
	switch {
	case other && pins:
		return " of other hardware, measured under other NCCL_ALGO or NCCL_PROTO settings, its measured curves not used"
	case other:
		return " of other hardware, its measured curves not used"
	case pins:
		return " measured under other NCCL_ALGO or NCCL_PROTO settings, its measured curves not used"
	}
	return ""
}

// PinsDiffer says, when hw's NCCL_ALGO and NCCL_PROTO (Algos, Protos) are
// not those of the run the calibration measured (its hardware.algos and
// hardware.protos), both: "measured with NCCL_ALGO Ring, NCCL_PROTO
// Simple (hardware.algos, hardware.protos), this run has NCCL_ALGO NCCL's
// default, NCCL_PROTO NCCL's default"; "" when they are the same. A
// calibration records them, it does not set NCCL's environment: Model
// then applies its fitted parameters, which correct the links' figures
// whatever algorithm runs over them, and drops its curves, end-to-end
// times of the algorithms those settings let NCCL choose (Measured is
// false), as for a calibration of other hardware.
func (c *Calibration) PinsDiffer(hw Hardware) string {
	if c.HW.Algos == hw.Algos && c.HW.Protos == hw.Protos {
		return ""
	}
	env := func(h Hardware) string {
		a, p := "NCCL's default", "NCCL's default"
		if h.Algos != 0 {
			a = strings.Join(algoNames(h.Algos), ",")
		}
		if h.Protos != 0 {
			p = strings.Join(ProtoNames(h.Protos), ",")
		}
		return "NCCL_ALGO " + a + ", NCCL_PROTO " + p
	}
	return "measured with " + env(c.HW) + " (hardware.algos, hardware.protos), this run has " + env(hw)
}

// Describe names hw as a calibration warning compares two clusters: the
// GPU generation, the intra-node link and the NICs per node.
func (hw Hardware) Describe() string {
	intra := "NVLink"
	if hw.PCI {
		intra = "PCIe"
	}
	gen := hw.Arch.String()
	if hw.GFX != "" {
		gen, intra = hw.GFX, "xGMI"
	}
	d := fmt.Sprintf("%s, %s %s GB/s, %d × %s GB/s NICs per node", gen, intra, gbps(hw.IntraBW), hw.NICsPerNode, gbps(hw.NICBW))
	if hw.NVLS {
		d += ", NVLS"
	}
	if hw.InterLatency != 0 {
		d += fmt.Sprintf(", network latency +%v", hw.InterLatency)
	}
	if hw.IntraLatency != 0 {
		d += fmt.Sprintf(", intra-node latency +%v", hw.IntraLatency)
	}
	if hw.PluginLatency != 0 {
		d += fmt.Sprintf(", plugin latency %v", hw.PluginLatency)
	}
	if hw.Protos != 0 {
		var ps []string
		for p := LL; p < numProtos; p++ {
			if hw.Protos&(1<<p) != 0 {
				ps = append(ps, p.String())
			}
		}
		d += ", NCCL_PROTO=" + strings.Join(ps, ",")
	}
	if hw.Algos != 0 {
		d += ", NCCL_ALGO=" + strings.Join(algoNames(hw.Algos), ",")
	}
	if hw.BuffSize != 0 {
		d += fmt.Sprintf(", NCCL_BUFFSIZE=%d", int64(hw.BuffSize))
	}
	switch hw.CPU {
	case scenarios.HostAMD:
		d += ", AMD host"
	case scenarios.HostArm:
		d += ", Arm host"
	}
	return d
}

// ncclAlgoNames are NCCL's names of ncclAlgos (NCCL_ALGO's spellings,
// ncclAlgoStr, src/init.cc line 53 at NVIDIA/nccl
// 5067397c2676d5aed50042fc39e5c8ee96eb0027), in ncclAlgos' order:
// scenarios', which parses NCCL_ALGO lists.
var ncclAlgoNames = scenarios.NCCLAlgoNames

// algoNames lists the algorithms of mask (bit 1<<a for Algo a) by NCCL's
// names, in NCCL's order.
func algoNames(mask uint8) []string {
	var names []string
	for i, a := range ncclAlgos {
		if mask&(1<<a) != 0 {
			names = append(names, ncclAlgoNames[i])
		}
	}
	return names
}

// gbps is b in GB/s with as many decimals as it has (up to 3).
func gbps(b units.Bandwidth) string {
	return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.3f", float64(b)/1e9), "0"), ".")
}

// File is p as the calibration file's params (scenarios.CalParams).
func (p Params) File() scenarios.CalParams {
	return scenarios.CalParams{IntraEff: p.IntraEff, InterEff: p.InterEff, IntraHopUS: p.IntraHop, InterHopUS: p.InterHop, FixedUS: p.Fixed}
}

// File is the calibration as its file format (scenarios.Calibration).
func (c *Calibration) File() *scenarios.Calibration {
	// An AMD GPU's file names its target, not an NVIDIA generation
	// (scenarios.CalHardware.Arch: the Ampere tables HardwareOf gives it
	// are read back from gfx).
	arch := c.HW.Arch.String()
	if c.HW.GFX != "" {
		arch = ""
	}
	f := &scenarios.Calibration{Version: 1,
		Hardware: scenarios.CalHardware{Arch: arch, PCI: c.HW.PCI, NVLS: c.HW.NVLS, IntraGBps: float64(c.HW.IntraBW) / 1e9,
			NICGBps: float64(c.HW.NICBW) / 1e9, NICsPerNode: c.HW.NICsPerNode, InterLatencyUS: float64(c.HW.InterLatency) / 1e6,
			IntraLatencyUS: float64(c.HW.IntraLatency) / 1e6, BuffSize: int64(c.HW.BuffSize), HostCPU: string(c.HW.CPU),
			PluginLatencyUS: float64(c.HW.PluginLatency) / 1e6, GFX: c.HW.GFX, NCCLVersion: c.HW.NCCL,
			ComputeCapability: c.HW.CompCap},
		Params: c.Params.File()}
	for p := LL; p < numProtos; p++ {
		if c.HW.Protos&(1<<p) != 0 {
			f.Hardware.Protos = append(f.Hardware.Protos, p.String())
		}
	}
	f.Hardware.Algos = algoNames(c.HW.Algos)
	for _, cv := range c.Curves {
		f.Curves = append(f.Curves, scenarios.CalCurve{Op: cv.Op.String(), Ranks: cv.Shape.Ranks, Nodes: cv.Shape.Nodes, MinNICs: cv.Shape.MinNICs, Source: cv.Source,
			Sizes: cv.Sizes, TimesUS: cv.TimesUS, GPUsPerThread: cv.GPUsPerThread})
	}
	return f
}

// CalibrationOf reads a validated calibration file.
func CalibrationOf(f *scenarios.Calibration) (*Calibration, error) {
	if !f.HasNetwork() {
		// It said "(only compute)" for a file with only a memory part.
		var parts []string
		if f.Compute != nil {
			parts = append(parts, "compute")
		}
		if f.Memory != nil {
			parts = append(parts, "memory")
		}
		has := "nothing"
		if len(parts) > 0 {
			has = "only " + strings.Join(parts, " and ")
		}
		return nil, fmt.Errorf("calibration: the file has no network part (%s): write one with zerosim calibrate LOG...", has)
	}
	h := f.Hardware
	c := &Calibration{HW: Hardware{PCI: h.PCI, NVLS: h.NVLS, IntraBW: units.Bandwidth(math.Round(h.IntraGBps * 1e9)),
		NICBW: units.Bandwidth(math.Round(h.NICGBps * 1e9)), NICsPerNode: h.NICsPerNode, InterLatency: units.Duration(math.Round(h.InterLatencyUS * 1e6)),
		IntraLatency: units.Duration(math.Round(h.IntraLatencyUS * 1e6)), BuffSize: units.Bytes(h.BuffSize), CPU: hostCPU(scenarios.HostCPU(h.HostCPU)),
		PluginLatency: units.Duration(math.Round(h.PluginLatencyUS * 1e6)), GFX: h.GFX, NCCL: h.NCCLVersion, CompCap: h.ComputeCapability},
		Params: Params{f.Params.IntraEff, f.Params.InterEff, f.Params.IntraHopUS, f.Params.InterHopUS, f.Params.FixedUS}}
	arch := -1
	for a := Volta; a <= Blackwell; a++ {
		if a.String() == h.Arch {
			arch = int(a)
		}
	}
	if h.Arch == "" && h.GFX != "" {
		// An AMD file without arch: HardwareOf's Ampere for an AMD GPU.
		arch = int(Ampere)
	}
	if arch < 0 {
		return nil, fmt.Errorf("calibration: hardware.arch %q: use Volta, Ampere, Hopper or Blackwell", h.Arch)
	}
	c.HW.Arch = Arch(arch)
	for _, name := range h.Protos {
		p := LL
		for p < numProtos && p.String() != name {
			p++
		}
		if p == numProtos {
			return nil, fmt.Errorf("calibration: hardware.protos: %q: use LL, LL128 or Simple", name)
		}
		c.HW.Protos |= 1 << p
	}
	for _, name := range h.Algos {
		a := slices.Index(ncclAlgoNames[:], name)
		if a < 0 {
			return nil, fmt.Errorf("calibration: hardware.algos: %q: use %s", name, strings.Join(ncclAlgoNames[:], ", "))
		}
		c.HW.Algos |= 1 << ncclAlgos[a]
	}
	for i, cc := range f.Curves {
		op, err := ParseOp(cc.Op)
		if err != nil {
			return nil, fmt.Errorf("calibration: curves[%d]: %w", i, err)
		}
		c.Curves = append(c.Curves, Curve{Op: op, Shape: Shape{Ranks: cc.Ranks, Nodes: cc.Nodes, MinNICs: cc.MinNICs}, Sizes: cc.Sizes, TimesUS: cc.TimesUS, Source: cc.Source, GPUsPerThread: cc.GPUsPerThread})
	}
	return c, nil
}
