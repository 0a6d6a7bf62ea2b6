package reports

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"github.com/zerosim/zerosim/units"
	"github.com/zerosim/zerosim/zero"
)

// TraceMaxRanks is how many ranks a trace holds by default: the first
// ranks of big runs (Perfetto struggles with millions of slices).
const TraceMaxRanks = 64

// traceTime formats picoseconds as microseconds with exactly six decimals,
// from the integers (no float formatting): 1234567 ps → "1.234567".
func traceTime(ps units.Duration) string {
	v := int64(ps)
	sign := ""
	if v < 0 {
		sign, v = "-", -v
	}
	return fmt.Sprintf("%s%d.%06d", sign, v/1_000_000, v%1_000_000)
}

// jsonString quotes s as a JSON string.
func jsonString(s string) string {
	b, _ := json.Marshal(s) // a string always marshals
	return string(b)
}

// writeTrace writes the replayed step in the Chrome trace event format
// (JSON object form) that Perfetto and chrome://tracing open: one process
// per rank (pid = rank, named "rank N"), one thread per stream (tid =
// stream, named by Stream.String()), a complete event ("ph":"X") per task
// with ts and dur in µs printed exactly from the integer picoseconds, and
// counter events ("ph":"C") with the memory rank's bytes per component.
// Only the first maxRanks ranks are written (≤ 0: TraceMaxRanks). The
// output is a function of the result only: same result, same bytes.
func writeTrace(w io.Writer, r *zero.Result, maxRanks int) error {
	if r == nil || r.Schedule == nil {
		return fmt.Errorf("reports: trace needs a result with its schedule")
	}
	if len(r.Spans) == 0 {
		return fmt.Errorf("reports: trace needs the task spans (replay with KeepSpans)")
	}
	if maxRanks <= 0 {
		maxRanks = TraceMaxRanks
	}
	sc := r.Schedule
	ranks := min(len(r.Spans), maxRanks)
	bw := bufio.NewWriterSize(w, 1<<16)
	first := true
	emit := func(format string, args ...any) {
		if first {
			first = false
		} else {
			bw.WriteString(",\n")
		}
		fmt.Fprintf(bw, format, args...)
	}
	bw.WriteString("{\"displayTimeUnit\":\"ns\",\n\"otherData\":{")
	fmt.Fprintf(bw, "\"scenario\":%s,\"stage\":%d,\"n\":%d,\"k\":%d,\"step_time_ps\":%d,\"ranks_shown\":%d",
		jsonString(r.Name), r.Stage, r.N, r.K, int64(r.StepTime), ranks)
	bw.WriteString("},\n\"traceEvents\":[\n")
	// Streams any task uses, in stream order.
	var used [8]bool
	for _, t := range sc.Tasks {
		used[t.Stream] = true
	}
	for rank := 0; rank < ranks; rank++ {
		emit(`{"name":"process_name","ph":"M","pid":%d,"tid":0,"args":{"name":"rank %d"}}`, rank, rank)
		emit(`{"name":"process_sort_index","ph":"M","pid":%d,"tid":0,"args":{"sort_index":%d}}`, rank, rank)
		for st := range used {
			if !used[st] {
				continue
			}
			emit(`{"name":"thread_name","ph":"M","pid":%d,"tid":%d,"args":{"name":%s}}`, rank, st, jsonString(zero.Stream(st).String()))
			emit(`{"name":"thread_sort_index","ph":"M","pid":%d,"tid":%d,"args":{"sort_index":%d}}`, rank, st, st)
		}
	}
	for rank := 0; rank < ranks; rank++ {
		for _, sp := range r.Spans[rank] {
			t := &sc.Tasks[sp.Task]
			args := `"task":` + strconv.Itoa(int(sp.Task)) + `,"phase":` + jsonString(t.Phase.String())
			if t.Kind.IsComm() {
				args += fmt.Sprintf(`,"bytes":%d,"group":%s,"waited_us":%s`, t.Bytes,
					jsonString(t.Group.String()), jsonString(traceTime(sp.Start-sp.Arrive)))
			}
			if t.Unit >= 0 {
				args += `,"unit":` + strconv.Itoa(t.Unit)
			}
			if t.Bucket >= 0 {
				args += `,"bucket":` + strconv.Itoa(t.Bucket)
			}
			emit(`{"name":%s,"cat":%s,"ph":"X","pid":%d,"tid":%d,"ts":%s,"dur":%s,"args":{%s}}`,
				jsonString(taskName(sc, sp.Task)), jsonString(t.Kind.String()), rank, t.Stream,
				traceTime(sp.Start), traceTime(sp.End-sp.Start), args)
		}
	}
	if m := r.Memory.Rank; m >= ranks && len(r.Memory.Components) > 0 {
		emit(`{"name":"process_name","ph":"M","pid":%d,"tid":0,"args":{"name":"rank %d (memory only)"}}`, m, m)
	}
	writeMemoryCounters(emit, r.Memory)
	bw.WriteString("\n]}\n")
	return bw.Flush()
}

// writeMemoryCounters emits the memory rank's components as one counter
// per time the memory changes (the state after every change at that time).
func writeMemoryCounters(emit func(string, ...any), m zero.MemoryTimeline) {
	if len(m.Components) == 0 {
		return
	}
	// Components that are ever non-zero, in component order.
	nonzero := make([]bool, len(m.Components))
	cur := make([]int64, len(m.Components))
	copy(cur, m.AtRest)
	for i, v := range cur {
		nonzero[i] = v != 0
	}
	for _, p := range m.Points {
		if p.Component >= 0 && p.Component < len(cur) {
			cur[p.Component] += p.Delta
			nonzero[p.Component] = nonzero[p.Component] || cur[p.Component] != 0
		}
	}
	copy(cur, m.AtRest)
	counter := func(ts units.Duration) {
		args := ""
		for i, name := range m.Components {
			if !nonzero[i] {
				continue
			}
			if args != "" {
				args += ","
			}
			args += jsonString(name) + ":" + strconv.FormatInt(cur[i], 10)
		}
		emit(`{"name":"memory (bytes)","ph":"C","pid":%d,"ts":%s,"args":{%s}}`, m.Rank, traceTime(ts), args)
	}
	if len(m.Points) == 0 || m.Points[0].Time > 0 {
		counter(0)
	}
	for i, p := range m.Points {
		if p.Component >= 0 && p.Component < len(cur) {
			cur[p.Component] += p.Delta
		}
		if i+1 == len(m.Points) || m.Points[i+1].Time != p.Time {
			counter(p.Time)
		}
	}
}
