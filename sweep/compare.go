package sweep

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/zerosim/zerosim/collectives"
	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/topology"
	"github.com/zerosim/zerosim/zero"
	"gopkg.in/yaml.v3"
)

// Variant is one side of a comparison: a source and its own overrides.
type Variant struct {
	Label string
	Src   Source
	Sets  []string
}

// Outcome is a replayed variant.
type Outcome struct {
	Variant
	Scenario *scenarios.Scenario
	Result   *zero.Result
}

// Vary returns one variant per value of key on src, labelled "key=value".
func Vary(src Source, key string, values []string) []Variant {
	out := make([]Variant, len(values))
	for i, v := range values {
		out[i] = Variant{Label: key + "=" + v, Src: src, Sets: []string{key + "=" + v}}
	}
	return out
}

// RunVariant loads and replays one variant with extra overrides after its
// own. Errors name the variant. Its Result has no collective records
// (zero.Options.NoCollectives): a comparison reads none, and a replay of
// gpt3-175b-16k keeps 803,404 of them in 39 MB, which made a compare of
// its K over 1, 2, 4 and 8 (42 replays) peak at 1.78 GB.
func RunVariant(v Variant, extra ...string) (*Outcome, error) {
	sets := append(append([]string(nil), v.Sets...), extra...)
	s, err := v.Src.Load(sets...)
	if err != nil {
		return nil, err
	}
	res, err := zero.Replay(s, zero.Options{NoCollectives: true})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", v.Label, refusal{err})
	}
	o := &Outcome{Variant: v, Scenario: s, Result: res}
	o.Sets = sets
	return o, nil
}

// CompareOptions configures Compare and RunVariants.
type CompareOptions struct {
	// AllK adds, for Compare, a run for every K dividing the first
	// variant's N with each of Algorithms.
	AllK bool
	// Jobs is how many replays run at once (≤ 0: runtime.GOMAXPROCS(0); at
	// most MaxJobs). The results and errors are the same for any Jobs.
	Jobs int
	// Progress, if set, is called after each replay with the replays done
	// and the total known so far (Compare learns how many slow-link and
	// all-K runs it needs from the variants' own replays), from one
	// goroutine at a time.
	Progress func(done, total int)
}

// RunVariants replays every variant; the outcomes are in the variants'
// order and an error is the first variant's in that order.
func RunVariants(vs []Variant, o CompareOptions) ([]*Outcome, error) {
	c := newCounter(o)
	c.grow(len(vs))
	return c.runAll(variantJobs(vs))
}

// replayJob is a variant with extra overrides after its own.
type replayJob struct {
	v     Variant
	extra []string
}

func variantJobs(vs []Variant) []replayJob {
	js := make([]replayJob, len(vs))
	for i, v := range vs {
		js[i] = replayJob{v: v}
	}
	return js
}

// counter runs replays on its jobs and reports progress.
type counter struct {
	jobs        int
	progress    func(done, total int)
	mu          sync.Mutex
	done, total int
}

func newCounter(o CompareOptions) *counter { return &counter{jobs: o.Jobs, progress: o.Progress} }

// grow adds n replays to the total.
func (c *counter) grow(n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.total += n
}

func (c *counter) step() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.done++
	if c.progress != nil {
		c.progress(c.done, c.total)
	}
}

// runAll replays js at most c.jobs at once and returns their outcomes in
// order, or the error of the first job in order that failed.
func (c *counter) runAll(js []replayJob) ([]*Outcome, error) {
	outs, errs := c.tryAll(js)
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return outs, nil
}

// tryAll is runAll keeping every job's error.
func (c *counter) tryAll(js []replayJob) ([]*Outcome, []error) {
	outs := make([]*Outcome, len(js))
	errs := make([]error, len(js))
	_ = parallel(context.Background(), len(js), c.jobs, func(i int) error {
		outs[i], errs[i] = RunVariant(js[i].v, js[i].extra...)
		c.step()
		return nil // kept per job: an error stops nothing
	})
	return outs, errs
}

// Divisors returns the divisors of n in ascending order (n ≥ 1).
func Divisors(n int) []int {
	var d []int
	for k := 1; k <= n; k++ {
		if n%k == 0 {
			d = append(d, k)
		}
	}
	return d
}

// SeedSlowLink is the per-rank slow-link volume of res as seed 000 counts
// it ("Slow-link total": ~2P for K=1, ~6P/8 for N=8, K=4): every phase whose
// collectives put bytes on the network counts its logical volume per rank
// (S for an all-gather or reduce-scatter of S bytes, 2S for an all-reduce),
// except the inter-group all-reduce of K > 1, which counts its ring cost
// 2(K−1)/K·S/(N/K). Phases that stay on NVLink count nothing, and so does
// context parallelism's ring (zero.PhaseCPRing), which the seed's ZeRO
// accounting does not have.
func SeedSlowLink(res *zero.Result) int64 {
	var t int64
	for _, p := range res.Phases {
		if p.Wire[topology.Inter] == 0 || p.Phase == zero.PhaseCPRing {
			continue
		}
		if p.Phase == zero.PhaseInterAR {
			t += p.Sent
		} else {
			t += p.Logical
		}
	}
	return t
}

// BufferBytes is S, the bytes of the full bf16 gradient (or parameter)
// buffer of res's model: 2 bytes per parameter.
func BufferBytes(s *scenarios.Scenario) int64 { return 2 * s.Model.TotalParams() }

// BusiestWire returns the busiest rank's bytes over a link class summed
// over the phases (an upper bound when different ranks are busiest in
// different phases), and the total over every rank.
func BusiestWire(res *zero.Result, class topology.Class) (busiest, total int64) {
	for _, p := range res.Phases {
		busiest += p.MaxRankWire[class]
		total += p.Wire[class]
	}
	return busiest, total
}

// Label returns a short label for a file-based variant: the file's base
// name without .yaml.
func Label(file string) string {
	if i := strings.LastIndexAny(file, "/\\"); i >= 0 {
		file = file[i+1:]
	}
	return strings.TrimSuffix(strings.TrimSuffix(file, ".yaml"), ".yml")
}

// Runs are the replays behind a comparison.
type Runs struct {
	Variants []*Outcome
	// SlowLink holds, when the variants differ in K alone, every variant
	// (K ascending) run with each of Algorithms.
	SlowLink []*Outcome
	// BeyondK lists, when the variants differ in K and in more (two files,
	// or a --vary of another key on files with different K), the resolved
	// keys other than parallelism.k in which a variant differs from the
	// first (BeyondK's paths): there are no slow-link runs then, since
	// their K figures would credit the other changes to K.
	BeyondK []string
	// SlowSkipped names the slow-link runs an algorithm cannot replay
	// ("K=2 hierarchical: …": hierarchical collectives need the same
	// number of a group's ranks on every node), left out of SlowLink.
	SlowSkipped []string
	// KNoEffect lists the K of variants that differ in K alone at ZeRO
	// stage 0, which shards nothing, so K changes nothing (run's K line:
	// "no effect: stage 0 shards nothing"): there are no slow-link runs
	// then, whose rows would all read "no change" (qa21 LOW 14).
	KNoEffect []int
	// AllK holds, when asked, runs for every K dividing the first
	// variant's N with both algorithms; Skipped says which K could not run.
	AllK    []*Outcome
	Skipped []string
}

// Algorithms are the collective algorithms the slow-link runs compare:
// auto, what a run does by default (on a cluster with a GPU preset, NCCL's
// own choice by its cost model, laid on the links as NCCL lays it: its
// ring crosses every node boundary once per channel), the flat ring in
// group order, and zerosim's two-level hierarchical collectives.
var Algorithms = []string{"auto", "ring", "hierarchical"}

// Compare replays the variants, then the slow-link runs when they differ
// in K alone (Runs.BeyondK says when they differ in more), then every K dividing N when o.AllK is set (varying
// parallelism.k), o.Jobs replays at a time.
func Compare(vs []Variant, o CompareOptions) (*Runs, error) {
	c := newCounter(o)
	c.grow(len(vs))
	outs, err := c.runAll(variantJobs(vs))
	if err != nil {
		return nil, err
	}
	runs := &Runs{Variants: outs}
	ks := map[int]bool{}
	order := make([]int, len(outs))
	for i, o := range outs {
		ks[o.Result.K] = true
		order[i] = i
	}
	var slow, allK []replayJob
	var slowK []int // slow[i]'s K
	if len(ks) > 1 {
		runs.BeyondK, err = BeyondK(outs)
		if err != nil {
			return nil, err
		}
	}
	if len(ks) > 1 && len(runs.BeyondK) == 0 && outs[0].Result.Stage == 0 {
		for k := range ks {
			runs.KNoEffect = append(runs.KNoEffect, k)
		}
		slices.Sort(runs.KNoEffect)
	} else if len(ks) > 1 && len(runs.BeyondK) == 0 {
		slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(outs[a].Result.K, outs[b].Result.K) })
		for _, i := range order {
			for _, al := range Algorithms {
				slow = append(slow, replayJob{v: vs[i], extra: []string{"communication.algorithm=" + al}})
				slowK = append(slowK, outs[i].Result.K)
			}
		}
	}
	if o.AllK && len(outs) > 0 {
		for _, k := range Divisors(outs[0].Result.N) {
			v := Variant{Label: fmt.Sprintf("K=%d", k), Src: vs[0].Src, Sets: []string{"parallelism.k=" + strconv.Itoa(k)}}
			for _, al := range Algorithms {
				allK = append(allK, replayJob{v: v, extra: []string{"communication.algorithm=" + al}})
			}
		}
	}
	c.grow(len(slow) + len(allK))
	outs, errs := c.tryAll(append(slow, allK...))
	// A variant replays with its own algorithm (above); one of the others
	// may not run on its groups (hierarchical on groups that straddle
	// nodes unevenly): that row is left out and named, not the comparison.
	for i, err := range errs[:len(slow)] {
		var layout *collectives.LayoutError
		if err != nil && !errors.As(err, &layout) {
			return nil, err
		}
		if err != nil {
			runs.SlowSkipped = append(runs.SlowSkipped, skipped(slow[i], "K="+strconv.Itoa(slowK[i]), err))
			continue
		}
		runs.SlowLink = append(runs.SlowLink, outs[i])
	}
	for i, err := range errs[len(slow):] {
		if err != nil {
			runs.Skipped = append(runs.Skipped, skipped(allK[i], allK[i].v.Label, err))
			continue
		}
		runs.AllK = append(runs.AllK, outs[len(slow)+i])
	}
	return runs, nil
}

// skipped names a replay that could not run: "K=2 hierarchical: why".
func skipped(j replayJob, label string, err error) string {
	return fmt.Sprintf("%s %s: %v", label, strings.TrimPrefix(j.extra[0], "communication.algorithm="), err)
}

// BeyondK returns the resolved scenario keys, other than parallelism.k and
// the labels name and description, in which an outcome differs from the
// first, sorted with the presets (the choices the others follow from)
// first; a key under a list (model.layer_list[3].params) is named
// by its list (model.layer_list). Nothing else follows from K in a
// resolved scenario (scenarios' resolveParallelism only checks that K
// divides dp·cp), so an empty list means the variants differ in K alone.
func BeyondK(outs []*Outcome) ([]string, error) {
	var base map[string]string
	diff := map[string]bool{}
	for i, o := range outs {
		c := *o.Scenario
		c.Parallelism.K, c.Name, c.Description, c.Warnings = 1, "", "", nil
		data, err := scenarios.Encode(&c)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", o.Label, err)
		}
		var tree any
		if err := yaml.Unmarshal(data, &tree); err != nil {
			return nil, fmt.Errorf("%s: %w", o.Label, err)
		}
		flat := map[string]string{}
		flatten("", tree, flat)
		if i == 0 {
			base = flat
			continue
		}
		for k, v := range flat {
			if b, ok := base[k]; !ok || b != v {
				diff[listKey(k)] = true
			}
		}
		for k := range base {
			if _, ok := flat[k]; !ok {
				diff[listKey(k)] = true
			}
		}
	}
	keys := make([]string, 0, len(diff))
	for k := range diff {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		pa, pb := strings.HasSuffix(a, ".preset"), strings.HasSuffix(b, ".preset")
		if pa != pb {
			if pa {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	return keys, nil
}

// flatten adds the leaves of a decoded YAML tree to out by dotted path,
// list items as path[i].
func flatten(path string, v any, out map[string]string) {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			p := k
			if path != "" {
				p = path + "." + k
			}
			flatten(p, x, out)
		}
	case []any:
		out[path+"[]"] = strconv.Itoa(len(t))
		for i, x := range t {
			flatten(path+"["+strconv.Itoa(i)+"]", x, out)
		}
	default:
		out[path] = fmt.Sprint(v)
	}
}

// listKey is a flattened path up to its first list.
func listKey(path string) string {
	if i := strings.IndexByte(path, '['); i >= 0 {
		return path[:i]
	}
	return path
}
