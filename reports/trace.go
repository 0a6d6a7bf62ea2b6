package reports

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/zerosim/zerosim/units"
	"github.com/zerosim/zerosim/zero"
)

// TraceMaxRanks is how many ranks a trace holds by default: the first
// ranks of big runs (Perfetto struggles with millions of slices).
const TraceMaxRanks = 64

// traceTime formats picoseconds as microseconds with exactly six decimals,
// from the integers (no float formatting): 1234567 ps → "1.234567".
func traceTime(ps units.Duration) string { return string(appendTraceTime(nil, ps)) }

// appendTraceTime appends traceTime(ps) to b.
func appendTraceTime(b []byte, ps units.Duration) []byte {
	v := int64(ps)
	if v < 0 {
		b, v = append(b, '-'), -v
	}
	b = strconv.AppendInt(b, v/1_000_000, 10)
	b = append(b, '.')
	frac := v % 1_000_000
	for d := int64(100_000); d > 1 && frac < d; d /= 10 {
		b = append(b, '0')
	}
	return strconv.AppendInt(b, frac, 10)
}

// jsonString quotes s as a JSON string.
func jsonString(s string) string {
	b, _ := json.Marshal(s) // a string always marshals
	return string(b)
}

// writeTrace writes the replayed step in the Chrome trace event format
// (JSON object form) that Perfetto and chrome://tracing open: one process
// per rank (pid = rank, named "rank N"), one thread per stream (tid =
// stream, named by Stream.String()) and one more for each task it runs
// beside another (traceLanes), a complete event ("ph":"X") per task
// with ts and dur in µs printed exactly from the integer picoseconds, and
// counter events ("ph":"C") with the memory rank's bytes per component.
// A collective's args hold queued_us, Start − Arrive: from the rank
// reaching it to its start, waiting for its group and for the
// collectives before it on its communicator, while the rank's other
// streams may run; and waiting_for_peers_us, its share of the report's
// waiting for peers (zero.PeerWait): summed over a rank's slices, the
// report's waiting (RankStats.Wait).
// Only the first maxRanks ranks are written (≤ 0: TraceMaxRanks), and the
// ranks Result.Notable names whose timelines the replay kept
// (Result.NotableSpans), labelled as the timeline plot labels them
// (notableRole). The
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
	// The first ranks, then those Result.Notable names beyond them whose
	// timelines the replay kept (the straggler, the rank that waits most),
	// in rank order.
	type tracedRank struct {
		rank  int
		spans []zero.Span
		label string
	}
	var traced []tracedRank
	for rank := range min(len(r.Spans), maxRanks) {
		traced = append(traced, tracedRank{rank, r.Spans[rank], "rank " + strconv.Itoa(rank)})
	}
	for _, rank := range r.Notable() {
		if spans, ok := r.NotableSpans[rank]; ok && rank >= len(traced) {
			traced = append(traced, tracedRank{rank, spans, "rank " + strconv.Itoa(rank) + " (" + notableRole(r, rank) + ")"})
		}
	}
	slices.SortFunc(traced, func(a, b tracedRank) int { return cmp.Compare(a.rank, b.rank) })
	ranks := len(traced)
	bw := bufio.NewWriterSize(w, 1<<16)
	first := true
	sep := func() {
		if first {
			first = false
		} else {
			bw.WriteString(",\n")
		}
	}
	emit := func(format string, args ...any) {
		sep()
		fmt.Fprintf(bw, format, args...)
	}
	bw.WriteString(traceHead)
	fmt.Fprintf(bw, "%s,\"stage\":%d,\"n\":%d,\"k\":%d,\"step_time_ps\":%d,\"ranks_shown\":%d",
		jsonString(r.Name), r.Stage, r.N, r.K, int64(r.StepTime), ranks)
	bw.WriteString("},\n\"traceEvents\":[\n")
	// Streams any task uses, in stream order.
	var used [8]bool
	for _, t := range sc.Tasks {
		used[t.Stream] = true
	}
	lanes := make([][]uint8, ranks)
	for i, tr := range traced {
		var most [8]uint8
		rank := tr.rank
		lanes[i], most = traceLanes(sc, tr.spans)
		emit(`{"name":"process_name","ph":"M","pid":%d,"tid":0,"args":{"name":%s}}`, rank, jsonString(tr.label))
		emit(`{"name":"process_sort_index","ph":"M","pid":%d,"tid":0,"args":{"sort_index":%d}}`, rank, rank)
		for st := range used {
			if !used[st] {
				continue
			}
			for lane := range int(most[st]) + 1 {
				name, tid := zero.Stream(st).String(), st+len(used)*lane
				if lane > 0 {
					name += " (" + strconv.Itoa(lane+1) + ")"
				}
				emit(`{"name":"thread_name","ph":"M","pid":%d,"tid":%d,"args":{"name":%s}}`, rank, tid, jsonString(name))
				emit(`{"name":"thread_sort_index","ph":"M","pid":%d,"tid":%d,"args":{"sort_index":%d}}`, rank, tid, tid)
			}
		}
	}
	// A task's slice differs between ranks only in pid, ts, dur and the
	// wait: the rest is formatted once per task (a 64-rank trace of
	// gpt3-175b-16k at ZeRO-1, 1.13 M slices, spent 82 % of its 8.7 s in
	// formatting every field of every slice).
	type taskText struct{ head, args, tail string }
	texts := make([]taskText, len(sc.Tasks))
	for i := range sc.Tasks {
		t := &sc.Tasks[i]
		tx := &texts[i]
		tx.head = `{"name":` + jsonString(taskName(sc, int32(i))) + `,"cat":` + jsonString(t.Kind.String()) + `,"ph":"X","pid":`
		tx.args = `,"args":{"task":` + strconv.Itoa(i) + `,"phase":` + jsonString(t.Phase.String())
		if t.Kind.IsComm() {
			tx.args += `,"bytes":` + strconv.FormatInt(t.Bytes, 10) + `,"group":` + jsonString(t.Group.String()) + `,"queued_us":`
		}
		if t.Unit >= 0 {
			tx.tail += `,"unit":` + strconv.Itoa(t.Unit)
		}
		if t.Bucket >= 0 {
			tx.tail += `,"bucket":` + strconv.Itoa(t.Bucket)
		}
		tx.tail += "}}"
	}
	var line []byte
	for k, tr := range traced {
		peers := zero.PeerWait(sc, tr.spans)
		for i, sp := range tr.spans {
			tx := &texts[sp.Task]
			line = append(line[:0], tx.head...)
			line = strconv.AppendInt(line, int64(tr.rank), 10)
			line = append(line, `,"tid":`...)
			line = strconv.AppendInt(line, int64(int(sc.Tasks[sp.Task].Stream)+len(used)*int(lanes[k][i])), 10)
			line = append(line, `,"ts":`...)
			line = appendTraceTime(line, sp.Start)
			line = append(line, `,"dur":`...)
			line = appendTraceTime(line, sp.End-sp.Start)
			line = append(line, tx.args...)
			if sc.Tasks[sp.Task].Kind.IsComm() {
				line = appendTraceTime(line, sp.Start-sp.Arrive)
				line = append(line, `,"waiting_for_peers_us":`...)
				line = appendTraceTime(line, peers[i])
			}
			line = append(line, tx.tail...)
			sep()
			bw.Write(line)
		}
	}
	if m := r.Memory.Rank; !slices.ContainsFunc(traced, func(t tracedRank) bool { return t.rank == m }) && len(r.Memory.Components) > 0 {
		emit(`{"name":"process_name","ph":"M","pid":%d,"tid":0,"args":{"name":"rank %d (memory only)"}}`, m, m)
	}
	writeMemoryCounters(emit, r.Memory)
	bw.WriteString("\n]}\n")
	return bw.Flush()
}

// traceLanes places each of one rank's spans (in start order) on a lane
// of its stream, the lowest whose slices have ended by its start, and
// returns each span's lane and each stream's highest lane. A trace's
// slices on one thread must nest (the Trace Event Format; Perfetto drops
// or mis-draws a slice that overlaps another partly: perfetto.dev FAQ,
// google/perfetto#4280), and a stream runs up to its cap of tasks at once
// (ZeRO++'s quantize kernels beside the all-gathers of the
// parameters' stream): lane 0 is the stream's thread, lane l its
// (l+1)-th.
func traceLanes(sc *zero.Schedule, spans []zero.Span) ([]uint8, [8]uint8) {
	var most [8]uint8
	lane := make([]uint8, len(spans))
	var ends [8][]units.Duration // per stream, each lane's last end
	for i, sp := range spans {
		st := sc.Tasks[sp.Task].Stream
		l := 0
		for l < len(ends[st]) && ends[st][l] > sp.Start {
			l++
		}
		if l == len(ends[st]) {
			if l > 255 {
				l = 255 // never: a stream's cap is a few tasks
			} else {
				ends[st] = append(ends[st], 0)
			}
		}
		ends[st][l] = max(ends[st][l], sp.End)
		lane[i] = uint8(l)
		most[st] = max(most[st], uint8(l))
	}
	return lane, most
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

// traceHead starts every trace zerosim writes (up to the scenario's name).
const traceHead = "{\"displayTimeUnit\":\"ns\",\n\"otherData\":{\"scenario\":"

// IsRunTrace reports whether head, the start of a file, is the start of a
// trace zerosim wrote: an output flag replaces only a file of its own kind.
func IsRunTrace(head []byte) bool { return bytes.HasPrefix(head, []byte(traceHead)) }
