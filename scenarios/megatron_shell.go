package scenarios

import (
	"strconv"
	"strings"
)

// This file reads the launch script of a Megatron-LM run far enough to
// find the arguments of pretrain_gpt.py: words split as the shell splits
// them (quotes, backslash continuations, comments), variables and arrays
// assigned at the script's top level (NAME=value, NAME=( ... ),
// NAME+=( ... ), ${NAME:-default}) expanded where the launch command uses
// them. It runs nothing: a value the script computes ($(...), $((...))),
// takes from its command line ($1) or the environment, or sets inside a
// for/while block, a function's body (run only when called) or an if whose
// condition it cannot decide stays
// unresolved, and the import refuses it only where a flag that matters
// holds it. An if whose test compares words the script sets (mgExpander.cond)
// runs its taken branch only, as bash would run the script without
// arguments; where a positional or environment default decides it, mgScript
// lists the if (mgDecided) and the import says so in a note. A command or
// { } group after && or || runs as its left side decides, and is a block
// of unknown outcome when that is not decided.

// mgWord is one shell word after expansion, at the line and column of the
// word it came from.
type mgWord struct {
	text      string
	line, col int
	// unresolved is the first variable or substitution the word holds
	// that the script does not set ("" when the word is known).
	unresolved string
	// held: for an array the script fills inside a block whose outcome
	// is not known, the --flags that block would put in it, with where
	// each was written.
	held []mgWord
}

// mgTok is one lexed token: a raw word (quotes kept), "(" or ")", or a
// command separator (sep).
type mgTok struct {
	raw       string
	line, col int
	sep       bool
	paren     byte
	// op is a separator's character: '\n', ';', '&' or '|' (&& and || are
	// two of them).
	op byte
	// off is the token's byte offset in the lexed text (mgReread).
	off int
}

// mgOpen is where a quote that is never closed opens (q 0: none), and
// the first quote before it that spans lines (span: its line, column and
// the line it closes on; 0 when none): a quote left open in the middle
// of a script closes at the next one, and the last is left open.
type mgOpen struct {
	line, col int
	q         byte
	span      [3]int
}

// note records a quote q opened at line, col and closed on line end, or
// never (unclosed).
func (o *mgOpen) note(line, col, end int, q byte, unclosed bool) {
	switch {
	case o.q != 0:
	case unclosed:
		o.line, o.col, o.q = line, col, q
	case end > line && o.span[0] == 0:
		o.span = [3]int{line, col, end}
	}
}

// mgLex splits src into raw words and separators (newline, ;, &&, ||, |,
// &). A backslash-newline joins lines; # at a word's start runs to the end
// of the line. Unbalanced quotes end at the end of the input; open is the
// first such quote, which bash refuses ("unexpected EOF while looking for
// matching").
func mgLex(src string) (toks []mgTok, open mgOpen) {
	line, col := 1, 1
	i := 0
	adv := func() {
		if src[i] == '\n' {
			line++
			col = 1
		} else {
			col++
		}
		i++
	}
	for i < len(src) {
		c := src[i]
		switch {
		case c == '\\' && i+1 < len(src) && src[i+1] == '\n':
			adv()
			adv()
		case c == '\\' && i+2 < len(src) && src[i+1] == '\r' && src[i+2] == '\n':
			adv()
			adv()
			adv()
		case c == ' ' || c == '\t' || c == '\r':
			adv()
		case c == '\n' || c == ';' || c == '&' || c == '|':
			toks = append(toks, mgTok{line: line, col: col, sep: true, op: c, off: i})
			adv()
		case c == '#':
			for i < len(src) && src[i] != '\n' {
				adv()
			}
		case c == '(' || c == ')':
			toks = append(toks, mgTok{line: line, col: col, paren: c, off: i})
			adv()
		default:
			t := mgTok{line: line, col: col, off: i}
			start := i
			for i < len(src) {
				c := src[i]
				if c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == ';' || c == '&' || c == '|' || c == '(' || c == ')' {
					break
				}
				switch c {
				case '\\':
					adv()
					if i < len(src) {
						adv()
					}
					continue
				case '\'':
					qline, qcol := line, col
					adv()
					for i < len(src) && src[i] != '\'' {
						adv()
					}
					open.note(qline, qcol, line, c, i == len(src))
				case '"':
					qline, qcol := line, col
					adv()
					for i < len(src) && src[i] != '"' {
						if src[i] == '\\' && i+1 < len(src) {
							adv()
						}
						adv()
					}
					open.note(qline, qcol, line, c, i == len(src))
				case '$':
					if i+1 < len(src) && (src[i+1] == '(' || src[i+1] == '{') {
						open, close := src[i+1], byte(')')
						if open == '{' {
							close = '}'
						}
						adv()
						depth := 0
						for i < len(src) {
							if src[i] == open {
								depth++
							} else if src[i] == close {
								depth--
								if depth == 0 {
									break
								}
							}
							adv()
						}
					}
				}
				if i < len(src) {
					adv()
				}
			}
			t.raw = src[start:i]
			toks = append(toks, t)
		}
	}
	return toks, open
}

// mgField is one word of a variable's value or of an expansion, with the
// first substitution in it the script does not set ("" when known).
type mgField struct {
	text, unresolved string
	// line, col: where an array element or value was written (0: here).
	line, col int
	// held: mgWord.held.
	held []mgWord
	// assumed: the defaults of variables the script does not set that the
	// value holds (mgAssume).
	assumed []mgAssume
	// sep: a command separator (;, &, |) in a value reread as words
	// (mgVar.cmd), which ends the command that expands it.
	sep bool
}

// mgAssume is a ${NAME:-default} of a positional parameter or an
// environment variable the script does not set, read as its default: the
// script as run without that argument, or without NAME in its environment.
type mgAssume struct {
	name, expr, value string
	line              int
	// via: the variable the script assigns the default to
	// (TOKENIZER_ARG=${3:-"MOCK"}), "" when the default is used in place.
	via string
}

// what names the assumption: "argument 3", "USE_MEGATRON_FSDP set".
func (a mgAssume) what() string {
	if a.name != "" && a.name[0] >= '0' && a.name[0] <= '9' {
		return "argument " + a.name
	}
	return a.name + " set"
}

// mgAddAssumed adds the assumptions of add to to, each variable once.
func mgAddAssumed(to, add []mgAssume) []mgAssume {
next:
	for _, a := range add {
		for _, b := range to {
			if a.name == b.name {
				continue next
			}
		}
		to = append(to, a)
	}
	return to
}

// mgVar is a script variable: a scalar (one field) or an array, or unknown
// (why says why: set inside a block).
type mgVar struct {
	words []mgField
	why   string
	// maybe: what the block that made the variable unknown assigned it.
	maybe []mgField
	// cmd: a scalar's value as words, each with its own position and
	// unresolved substitution, as the shell reads the string when it runs
	// it as a command (mgExpander.cmdOf); nil when not known that way.
	cmd []mgField
}

// mgExpander expands raw words with the script's variables.
type mgExpander struct {
	vars map[string]mgVar
	// appends: what blocks of unknown outcome may append to a variable
	// (appendsTo).
	appends []mgAppend
	// spent: the words values have been reread into (mgCmdBudget).
	spent int
	// line: the line of the word being expanded (mgAssume.line).
	line int
}

// expand expands raw into fields: quotes removed, $NAME, ${NAME},
// ${NAME[@]} and ${NAME:-default} substituted, unquoted substitutions
// split on blanks (split false: an assignment's value, kept whole). A
// substitution the script does not set is kept as written and named in
// its field's unresolved.
func (e *mgExpander) expand(raw string, split bool, depth int) []mgField {
	var fields []mgField
	var cur strings.Builder
	curUnres := ""
	curLine, curCol := 0, 0
	var curHeld []mgWord
	var curAssumed []mgAssume
	have := false
	emit := func() {
		if have {
			fields = append(fields, mgField{text: cur.String(), unresolved: curUnres, line: curLine, col: curCol, held: curHeld, assumed: curAssumed})
		}
		cur.Reset()
		have, curUnres, curLine, curCol, curHeld, curAssumed = false, "", 0, 0, nil, nil
	}
	unres := func(name string) {
		if curUnres == "" {
			curUnres = name
		}
	}
	put := func(f mgField) {
		// A word that starts with an array element or value is where
		// that was written (an opening quote, which sets have, writes
		// nothing).
		if cur.Len() == 0 && curLine == 0 && f.line > 0 {
			curLine, curCol = f.line, f.col
		}
		cur.WriteString(f.text)
		have = true
		if f.unresolved != "" {
			unres(f.unresolved)
		}
		curAssumed = mgAddAssumed(curAssumed, f.assumed)
	}
	add := func(vals []mgField, quoted bool) {
		if quoted || !split {
			for j, v := range vals {
				if j > 0 {
					if quoted && split {
						emit()
					} else {
						cur.WriteByte(' ')
					}
				}
				put(v)
			}
			if quoted {
				have = true
			}
			return
		}
		for j, v := range vals {
			if j > 0 {
				emit()
			}
			parts := strings.Fields(v.text)
			if len(parts) == 0 {
				continue
			}
			if c := v.text[0]; c == ' ' || c == '\t' || c == '\n' {
				emit()
			}
			for k, p := range parts {
				if k > 0 {
					emit()
				}
				put(mgField{text: p, unresolved: v.unresolved, line: v.line, col: v.col, assumed: v.assumed})
			}
			if c := v.text[len(v.text)-1]; c == ' ' || c == '\t' || c == '\n' {
				emit()
			}
		}
	}
	// addCmd adds a scalar's words (mgVar.cmd) unquoted: the first glued
	// to what comes before, the last to what follows.
	addCmd := func(cmd []mgField) {
		for j, f := range cmd {
			if j > 0 || f.sep {
				emit()
			}
			if f.sep {
				fields = append(fields, f)
				continue
			}
			put(f)
			if len(f.held) > 0 {
				curHeld = f.held
			}
		}
	}
	lit := func(text string) {
		unres(text)
		cur.WriteString(text)
		have = true
	}
	// dollar expands the substitution at raw[i] ('$'), returning the index
	// after it.
	dollar := func(i int, quoted bool) int {
		if i+1 >= len(raw) {
			cur.WriteByte('$')
			have = true
			return i + 1
		}
		switch c := raw[i+1]; {
		case c == '(':
			j, d := i+1, 0
			for ; j < len(raw); j++ {
				if raw[j] == '(' {
					d++
				} else if raw[j] == ')' {
					d--
					if d == 0 {
						break
					}
				}
			}
			end := min(j+1, len(raw))
			lit(raw[i:end])
			return end
		case c == '{':
			j := strings.IndexByte(raw[i:], '}')
			if j < 0 {
				lit(raw[i:])
				return len(raw)
			}
			body := raw[i+2 : i+j]
			name, def, hasDef := body, "", false
			if k := strings.Index(body, ":-"); k >= 0 {
				name, def, hasDef = body[:k], body[k+2:], true
			} else if k := strings.Index(body, ":="); k >= 0 {
				name, def, hasDef = body[:k], body[k+2:], true
			}
			name = strings.TrimSuffix(strings.TrimSuffix(name, "[@]"), "[*]")
			v, ok := e.vars[name]
			switch {
			case name == "":
				// ${:-x}: bash's "bad substitution", no value.
				lit("${" + body + "}")
			case ok && v.why == "" && (!hasDef || !mgNull(v.words)):
				if split && !quoted && v.cmd != nil {
					addCmd(v.cmd)
					break
				}
				add(v.words, quoted)
			case hasDef && (!ok || v.why == ""):
				if depth > 4 {
					lit("${" + body + "}")
					break
				}
				d := e.expand(def, false, depth+1)
				add(d, quoted)
				if !ok {
					// The default of what the script does not set: as
					// run without the argument or the variable.
					var val strings.Builder
					for _, f := range d {
						val.WriteString(f.text)
					}
					curAssumed = mgAddAssumed(curAssumed, []mgAssume{{name: name, expr: "${" + body + "}", value: val.String(), line: e.line}})
					have = have || !split
				}
			default:
				lit("${" + body + "}")
				if ok && v.why != "" {
					curHeld = mgFlagsOf(v.maybe)
				}
			}
			return i + j + 1
		case c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z':
			j := i + 1
			for j < len(raw) && (raw[j] == '_' || raw[j] >= 'A' && raw[j] <= 'Z' || raw[j] >= 'a' && raw[j] <= 'z' || raw[j] >= '0' && raw[j] <= '9') {
				j++
			}
			name := raw[i+1 : j]
			if v, ok := e.vars[name]; ok && v.why == "" {
				if split && !quoted && v.cmd != nil {
					addCmd(v.cmd)
				} else if len(v.words) > 0 {
					add(v.words[:1], quoted)
				}
			} else {
				lit("$" + name)
			}
			return j
		case c == '@' || c == '*':
			// The script's own arguments: read as run without any, so
			// "$@" and $* are no words (bash: "$@" with no positional
			// parameters expands to nothing, quoted or not).
			return i + 2
		case c >= '0' && c <= '9' || c == '#' || c == '?' || c == '!' || c == '$' || c == '-':
			lit(raw[i : i+2])
			return i + 2
		}
		cur.WriteByte('$')
		have = true
		return i + 1
	}
	for i := 0; i < len(raw); {
		c := raw[i]
		switch c {
		case '\\':
			if i+1 < len(raw) {
				cur.WriteByte(raw[i+1])
				have = true
				i += 2
			} else {
				i++
			}
		case '\'':
			j := strings.IndexByte(raw[i+1:], '\'')
			if j < 0 {
				j = len(raw) - i - 1
			}
			cur.WriteString(raw[i+1 : i+1+j])
			have = true
			i += j + 2
		case '"':
			if strings.HasPrefix(raw[i:], `"$@"`) || strings.HasPrefix(raw[i:], `"$*"`) {
				i += 4 // no arguments: no word, not an empty one
				continue
			}
			have = true
			i++
			for i < len(raw) && raw[i] != '"' {
				switch raw[i] {
				case '\\':
					if i+1 < len(raw) && strings.IndexByte("$`\"\\\n", raw[i+1]) >= 0 {
						cur.WriteByte(raw[i+1])
						i += 2
						continue
					}
					cur.WriteByte('\\')
					i++
				case '$':
					i = dollar(i, true)
				default:
					cur.WriteByte(raw[i])
					i++
				}
			}
			i++
		case '$':
			i = dollar(i, false)
		default:
			cur.WriteByte(c)
			have = true
			i++
		}
	}
	emit()
	return fields
}

// mgNull reports a value bash's ${NAME:-default} and ${NAME:=default}
// treat as unset: no field, or fields that join to the empty string (the
// colon forms test "unset or null", bash(1), "Parameter Expansion").
func mgNull(words []mgField) bool {
	for _, w := range words {
		if w.text != "" || w.unresolved != "" {
			return false
		}
	}
	return true
}

// mgFlagsOf lists the --flags among an array's fields (an element
// "--fp8-format hybrid" holds one), at the line and column each was
// written.
func mgFlagsOf(fields []mgField) []mgWord {
	var out []mgWord
	for _, f := range fields {
		for _, w := range strings.Fields(f.text) {
			if strings.HasPrefix(w, "--") && len(w) > 2 {
				out = append(out, mgWord{text: w, line: f.line, col: f.col})
			}
		}
	}
	return out
}

// mgAssign splits NAME=value or NAME+=value; ok false for other words.
func mgAssign(raw string) (name, value string, appendTo, ok bool) {
	eq := strings.IndexByte(raw, '=')
	if eq <= 0 {
		return "", "", false, false
	}
	name = raw[:eq]
	if strings.HasSuffix(name, "+") {
		name, appendTo = name[:len(name)-1], true
	}
	if name == "" {
		return "", "", false, false
	}
	for j := 0; j < len(name); j++ {
		c := name[j]
		if !(c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || j > 0 && c >= '0' && c <= '9') {
			return "", "", false, false
		}
	}
	return name, raw[eq+1:], appendTo, true
}

// mgCommand is one command of the script, its words expanded.
type mgCommand struct {
	words []mgWord
}

// mgDecided is an if (or elif) at line whose branch a default of what the
// script does not set decided (mgAssume).
type mgDecided struct {
	line    int
	assumed []mgAssume
	// from, to: the if or elif token and the if's fi (to: {0, 0} when the
	// script ends first); the branch that runs lies between them.
	from, to [2]int
}

// holds reports whether the word at line, col lies between the if (or
// elif) and its fi: in the branch the default decided, as the branches
// that do not run give no words.
func (d mgDecided) holds(line, col int) bool {
	at := [2]int{line, col}
	before := func(a, b [2]int) bool { return a[0] < b[0] || a[0] == b[0] && a[1] < b[1] }
	return !before(at, d.from) && (d.to == [2]int{} || before(at, d.to))
}

// mgScript runs the script's top-level assignments and returns its
// commands with their words expanded in order; env holds the variables
// the script's environment sets (nil: none). An if whose condition the
// script decides (mgFrame) runs only its taken branch; any other block's
// assignments make their variables unknown. decided lists the ifs whose
// branch rests on a positional or environment default.
func mgScript(src string, env map[string]mgVar) (cmds []mgCommand, decided []mgDecided) {
	e := &mgExpander{vars: map[string]mgVar{}}
	return e.run(src, env)
}

// run is mgScript with the expander e, which keeps what the script's
// blocks may append to its variables (mgExpander.appends).
func (e *mgExpander) run(src string, env map[string]mgVar) (cmds []mgCommand, decided []mgDecided) {
	toks, _ := mgLex(src)
	for k, v := range env {
		e.vars[k] = v
	}
	var frames []mgFrame
	// skip: a branch that does not run encloses the command; depth: the
	// blocks of unknown outcome that enclose it.
	skipIn := func(frames []mgFrame) bool {
		for _, f := range frames {
			if f.state == mgNo {
				return true
			}
		}
		return false
	}
	// and: whether the command runs as the && or || before it decides
	// (mgAfterAndOr).
	and := mgYes
	skip := func() bool { return skipIn(frames) || and == mgNo }
	// fn: a function definition's NAME ( ) or function NAME was read, and
	// its body's { is next.
	fn := false
	depthIn := func(frames []mgFrame) int {
		n := 0
		for _, f := range frames {
			if f.state == mgUnknown {
				n++
			}
		}
		return n
	}
	depth := func() int {
		if and == mgUnknown {
			return depthIn(frames) + 1
		}
		return depthIn(frames)
	}
	for i := 0; i < len(toks); {
		// One command: tokens up to a separator; ci is its first token.
		j := i
		for j < len(toks) && !toks[j].sep {
			j++
		}
		ci := i
		and = e.mgAfterAndOr(toks, i)
		i = j + 1
		// Leading keywords.
		for ci < j && toks[ci].paren == 0 {
			if toks[ci].raw != "{" {
				fn = false
			}
			if _, _, _, assign := mgAssign(toks[ci].raw); !assign && ci+2 < j && toks[ci+1].paren == '(' && toks[ci+2].paren == ')' {
				// NAME ( ) { body }: bash runs the body only when the
				// function is called, so it is read as a block of
				// unknown outcome.
				ci += 3
				fn = true
				continue
			}
			switch toks[ci].raw {
			case "function":
				ci++
				if ci < j && toks[ci].paren == 0 {
					ci++ // NAME
				}
				if ci+1 < j && toks[ci].paren == '(' && toks[ci+1].paren == ')' {
					ci += 2
				}
				fn = true
				continue
			case "{":
				// A function's body (mgUnknown), or a group that runs
				// as the && or || before it decides.
				f := mgFrame{loop: true, brace: true, state: and}
				if fn {
					f.state = mgUnknown
				}
				frames = append(frames, f)
				fn, and = false, mgYes
				ci++
				continue
			case "}":
				if n := len(frames); n > 0 && frames[n-1].brace {
					frames = frames[:n-1]
				}
				ci++
				continue
			case "if":
				cond, then, as := e.cond(toks, ci+1)
				// Inside a branch that does not run, skip() holds for
				// everything the if encloses whatever its outcome, and a
				// default that decides it decides nothing; inside a block
				// of unknown outcome (a function's body, a loop) the
				// branch's assignments are unknown whatever the default,
				// and $1 is the function's argument (review s18 C2).
				f := mgFrame{state: cond, taken: cond == mgYes, unknown: cond == mgUnknown}
				if len(as) > 0 && !skip() && depth() == 0 {
					f.decided = append(f.decided, len(decided))
					decided = append(decided, mgDecided{line: toks[ci].line, assumed: as, from: [2]int{toks[ci].line, toks[ci].col}})
				}
				frames = append(frames, mgAndOrFrame(and)...)
				frames = append(frames, f)
				and = mgYes
				if then > 0 {
					i = then
				}
				ci = j
				continue
			case "elif":
				cond, then, as := e.cond(toks, ci+1)
				if n := len(frames); n > 0 && !frames[n-1].loop {
					// An earlier branch that may run (unknown) leaves
					// this one unknown whatever its condition.
					if !frames[n-1].taken && !frames[n-1].unknown && !skipIn(frames[:n-1]) && depthIn(frames[:n-1]) == 0 && len(as) > 0 {
						frames[n-1].decided = append(frames[n-1].decided, len(decided))
						decided = append(decided, mgDecided{line: toks[ci].line, assumed: as, from: [2]int{toks[ci].line, toks[ci].col}})
					}
					frames[n-1].branch(cond)
				}
				if then > 0 {
					i = then
				}
				ci = j
				continue
			case "else":
				if n := len(frames); n > 0 && !frames[n-1].loop {
					frames[n-1].branch(mgYes)
				}
				ci++
				continue
			case "for", "while", "until", "case", "select":
				frames = append(frames, mgAndOrFrame(and)...)
				frames = append(frames, mgFrame{loop: true, state: mgUnknown})
				and = mgYes
				ci = j
				continue
			case "fi", "done", "esac":
				if n := len(frames); n > 0 {
					for _, d := range frames[n-1].decided {
						decided[d].to = [2]int{toks[ci].line, toks[ci].col}
					}
					frames = frames[:n-1]
					if n := len(frames); n > 0 && frames[n-1].andOr {
						frames = frames[:n-1]
					}
				}
				ci++
				continue
			case "then", "do", "export", "local", "declare", "readonly":
				ci++
				continue
			}
			break
		}
		if ci == j {
			continue
		}
		skipped := skip()
		if toks[ci].paren == 0 {
			if name, val, app, ok := mgAssign(toks[ci].raw); ok {
				// An array: NAME=( words ) across separators.
				if val == "" && ci+1 < j && toks[ci+1].paren == '(' {
					var words []mgField
					m := ci + 2
					for m < len(toks) && toks[m].paren != ')' {
						if !toks[m].sep && toks[m].paren == 0 && !skipped {
							e.line = toks[m].line
							for _, f := range e.expand(toks[m].raw, true, 0) {
								if f.sep {
									continue // an array element is a word
								}
								if f.line == 0 {
									f.line, f.col = toks[m].line, toks[m].col
								}
								words = append(words, f)
							}
						}
						m++
					}
					// Skip the rest of the command after ")".
					for m < len(toks) && !toks[m].sep {
						m++
					}
					i = m + 1
					if !skipped {
						e.set(name, words, app, depth())
					}
					continue
				}
				if ci+1 == j {
					if !skipped {
						e.line = toks[ci].line
						vals := e.expand(val, false, 0)
						for k, v := range vals {
							as := append([]mgAssume(nil), v.assumed...)
							for n := range as {
								if as[n].via == "" {
									as[n].via = name
								}
							}
							vals[k].assumed = as
						}
						// The value as words, read before the assignment
						// (NAME="$NAME more" reads the old value).
						var cmd []mgField
						if !app && mgTextLen(vals) <= mgMaxCmdBytes {
							cmd = e.cmdOf(mgReread(toks[ci].raw, len(toks[ci].raw)-len(val), toks[ci].line, toks[ci].col))
							if len(cmd) == 1 && len(vals) == 1 {
								// One word is where it is used, as before
								// words were reread.
								cmd[0].line, cmd[0].col = vals[0].line, vals[0].col
							}
						}
						if depth() > 0 && !app && e.appendsTo(name, val, cmd, toks[ci].line) {
							continue
						}
						e.set(name, vals, app, depth())
						if v := e.vars[name]; v.why == "" && !app && len(v.words) <= 1 {
							v.cmd = cmd
							e.vars[name] = v
						}
					}
					continue
				}
				// NAME=value before a command: its environment only.
				for ci < j && toks[ci].paren == 0 {
					if _, _, _, ok := mgAssign(toks[ci].raw); !ok {
						break
					}
					ci++
				}
			}
		}
		if skipped {
			continue
		}
		cmds = append(cmds, e.command(toks[ci:j], 0)...)
	}
	return cmds, decided
}

// Outcomes of a condition or a branch (mgFrame.state).
const (
	mgNo      int8 = 0
	mgYes     int8 = 1
	mgUnknown int8 = -1
)

// mgFrame is an open block: an if (its current branch runs: mgYes, does
// not: mgNo, may: mgUnknown), a loop or case (mgUnknown), a function's
// body (mgUnknown) or a { } group (mgYes).
type mgFrame struct {
	// loop: not an if (a loop, a case, or a { } group: brace).
	loop, brace bool
	state       int8
	// taken: an earlier branch of the if runs; unknown: an earlier
	// branch may run.
	taken, unknown bool
	// decided: the if's entries in mgScript's decided list.
	decided []int
	// andOr: the frame holds the compound command after it (an if, a
	// loop) to what the && or || before it decides (mgAndOrFrame).
	andOr bool
}

// mgAndOrFrame is the frame for an if or a loop after && or || whose
// left side does not decide that it runs (none when it runs).
func mgAndOrFrame(and int8) []mgFrame {
	if and == mgYes {
		return nil
	}
	return []mgFrame{{loop: true, andOr: true, state: and}}
}

// branch moves the if to its next branch (elif with condition cond, else
// with mgYes): it runs when no earlier branch does and cond holds.
func (f *mgFrame) branch(cond int8) {
	switch {
	case f.taken:
		f.state = mgNo
	case cond == mgNo:
		f.state = mgNo
	case f.unknown || cond == mgUnknown:
		f.state = mgUnknown
	default:
		f.state = mgYes
	}
	f.taken = f.taken || f.state == mgYes
	f.unknown = f.unknown || f.state == mgUnknown
}

// cond evaluates the condition of an if or elif that starts at toks[s]:
// test commands ([ A = B ], [[ A == B ]], != and -z / -n, each possibly
// negated by !; true, : and false) joined by && and ||, on words the script sets at its top
// level (a ${N:-default} of an unset variable or positional parameter is
// its default, as the script runs without arguments and with its
// environment's defaults). then is the index of the "then" token (0 when
// there is none); a test it cannot decide (a file test, a variable the
// script does not set, a pattern, an unquoted word that [ would see as no
// word or several, any other command) makes the condition mgUnknown unless
// && or || decides it without that test; a pipeline (|) or a background
// job (&) in it makes it mgUnknown.
func (e *mgExpander) cond(toks []mgTok, s int) (result int8, then int, assumed []mgAssume) {
	for k := s; k < len(toks); k++ {
		if t := toks[k]; !t.sep && t.paren == 0 && t.raw == "then" && (k == s || toks[k-1].sep) {
			result, assumed = e.list(toks, s, k)
			return result, k, assumed
		}
	}
	return mgUnknown, 0, nil
}

// list evaluates the and-or list toks[s:stop] as cond does (mgUnknown when
// it holds no test, a pipeline or a background job).
func (e *mgExpander) list(toks []mgTok, s, stop int) (result int8, assumed []mgAssume) {
	result = mgUnknown
	if s < len(toks) {
		e.line = toks[s].line
	}
	var test []string
	var pending byte // the && or || before the current test
	first := true
	// end evaluates the test and keeps the defaults of the tests that
	// decide the result so far (review s18 C3): after && the right test
	// decides when the left is Yes or the right is No (the left alone,
	// No, when the right does not run); after || likewise with Yes and
	// No swapped; after ; the last test.
	end := func() {
		r, as := e.test(test)
		if r == mgUnknown {
			as = nil
		}
		switch {
		case first:
			result, assumed = r, as
		case pending == '&' || pending == '|':
			// stop is the left side's result that skips the right test
			// (No before &&, Yes before ||) and decides the list alone.
			stop, pass := mgNo, mgYes
			if pending == '|' {
				stop, pass = mgYes, mgNo
			}
			switch {
			case result == stop: // the right test does not run
			case r == stop:
				result, assumed = stop, as
			case result == mgUnknown || r == mgUnknown:
				result, assumed = mgUnknown, nil
			default:
				result, assumed = pass, mgAddAssumed(assumed, as)
			}
		default:
			result, assumed = r, as // a; b: the last command's status
		}
		first, test, pending = false, nil, 0
	}
	pipe := false // a single | or &: a pipeline or a background job
	for k := s; k < stop; k++ {
		t := toks[k]
		switch {
		case t.sep:
			if len(test) > 0 {
				end()
			}
			if t.op == '&' || t.op == '|' {
				if mgAndOr(toks, k) {
					k++ // && or ||
				} else {
					pipe = true
				}
				pending = t.op
			}
		case t.paren != 0:
			test = append(test, string(t.paren))
		default:
			test = append(test, t.raw)
		}
	}
	if len(test) > 0 {
		end()
	}
	if first || pipe || result == mgUnknown {
		return mgUnknown, nil
	}
	return result, assumed
}

// mgAndOr reports whether toks[k] and toks[k+1] are && or ||.
func mgAndOr(toks []mgTok, k int) bool {
	if k < 0 || k+1 >= len(toks) {
		return false
	}
	t, u := toks[k], toks[k+1]
	return t.sep && u.sep && (t.op == '&' || t.op == '|') && u.op == t.op && u.line == t.line && u.col == t.col+1
}

// mgAfterAndOr is whether the command at toks[i] runs when it follows
// && or || (review s18 C4): mgYes when it does not follow one; else as
// the and-or list left of the operator decides (&& runs on Yes, || on
// No), mgUnknown when that list is not decided.
func (e *mgExpander) mgAfterAndOr(toks []mgTok, i int) int8 {
	if !mgAndOr(toks, i-2) {
		return mgYes
	}
	op := toks[i-1].op
	// The list starts after the last separator that is not && or ||,
	// past a leading then, do, else or {.
	s := i - 2
	for s > 0 {
		if !toks[s-1].sep {
			s--
			continue
		}
		if mgAndOr(toks, s-2) {
			s -= 2
			continue
		}
		break
	}
	for s < i-2 && toks[s].paren == 0 && !toks[s].sep && (toks[s].raw == "then" || toks[s].raw == "do" || toks[s].raw == "else" || toks[s].raw == "{") {
		s++
	}
	switch left, _ := e.list(toks, s, i-2); {
	case left == mgUnknown:
		return mgUnknown
	case (left == mgYes) == (op == '&'):
		return mgYes
	}
	return mgNo
}

// test evaluates one test command of raw words; assumed: the defaults its
// words hold (mgAssume).
func (e *mgExpander) test(raw []string) (r int8, assumed []mgAssume) {
	n := len(raw)
	switch {
	case n == 1 && (raw[0] == "true" || raw[0] == ":"):
		return mgYes, nil
	case n == 1 && raw[0] == "false":
		return mgNo, nil
	case n >= 2 && raw[0] == "[" && raw[n-1] == "]", n >= 2 && raw[0] == "[[" && raw[n-1] == "]]":
	default:
		return mgUnknown, nil
	}
	single := raw[0] == "[" // [ splits words, [[ does not
	raw = raw[1 : n-1]
	neg := false
	if len(raw) > 0 && raw[0] == "!" {
		neg, raw = true, raw[1:]
	}
	word := func(r string) (string, bool) {
		if strings.ContainsAny(r, "*?[") {
			return "", false // a pattern, or a glob
		}
		if single && len(e.expand(r, true, 0)) != 1 {
			// [ is a command: an unquoted word that expands to no word
			// or to several changes its arguments ([ -n $D ] with D
			// empty is [ -n ], true).
			return "", false
		}
		var b strings.Builder
		for _, f := range e.expand(r, false, 0) {
			if f.unresolved != "" {
				return "", false
			}
			b.WriteString(f.text)
			assumed = mgAddAssumed(assumed, f.assumed)
		}
		return b.String(), true
	}
	r = mgUnknown
	switch {
	case len(raw) == 3 && (raw[1] == "=" || raw[1] == "==" || raw[1] == "!="):
		a, okA := word(raw[0])
		b, okB := word(raw[2])
		if okA && okB {
			r = mgNo
			if (a == b) == (raw[1] != "!=") {
				r = mgYes
			}
		}
	case len(raw) == 2 && (raw[0] == "-z" || raw[0] == "-n"):
		if a, ok := word(raw[1]); ok {
			r = mgNo
			if (a == "") == (raw[0] == "-z") {
				r = mgYes
			}
		}
	}
	if neg && r != mgUnknown {
		r = 1 - r
	}
	return r, assumed
}

// set assigns a variable; inside a block the variable becomes unknown.
func (e *mgExpander) set(name string, words []mgField, app bool, depth int) {
	if depth > 0 {
		old := e.vars[name]
		maybe := words
		if app {
			maybe = append(append(append([]mgField(nil), old.words...), old.maybe...), words...)
		}
		e.vars[name] = mgVar{why: "set inside an if/for/while block", maybe: maybe}
		return
	}
	if app {
		old, ok := e.vars[name]
		if ok && old.why != "" {
			return
		}
		words = append(append([]mgField(nil), old.words...), words...)
	}
	e.vars[name] = mgVar{words: words}
}

// mgSbatchNodes reads the node count of a batch script's #SBATCH --nodes
// (or -N) directive: a plain count, the last one given. sbatch reads
// directives only before the first command ("sbatch will stop processing
// further #SBATCH directives once the first non-comment non-whitespace
// line has been reached", sbatch(1)); a range (--nodes=2-4) is not read.
// line and col are the directive's.
func mgSbatchNodes(src string) (n string, line, col int, ok bool) {
	return mgSbatchCount(src, "--nodes", "-N", false)
}

// mgSbatchGPUs reads a batch script's #SBATCH --gpus-per-node, which sets
// SLURM_GPUS_PER_NODE ("Requested GPU count per allocated node. Only set
// if the --gpus-per-node option is specified", sbatch(1), OUTPUT
// ENVIRONMENT VARIABLES): a count, or type:count.
func mgSbatchGPUs(src string) (n string, line, col int, ok bool) {
	return mgSbatchCount(src, "--gpus-per-node", "", true)
}

// mgSbatchCount reads the count of the directive long (or short) as
// mgSbatchNodes says; typed: the value may be TYPE:count.
func mgSbatchCount(src, long, short string, typed bool) (n string, line, col int, ok bool) {
	for i, l := range strings.Split(src, "\n") {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "#") && !strings.HasPrefix(t, "#SBATCH") {
			continue
		}
		if !strings.HasPrefix(t, "#SBATCH") {
			break
		}
		fs := strings.Fields(strings.TrimPrefix(t, "#SBATCH"))
		for k := 0; k < len(fs); k++ {
			v, got := "", false
			switch {
			case strings.HasPrefix(fs[k], long+"="):
				v, got = strings.TrimPrefix(fs[k], long+"="), true
			case fs[k] == long || short != "" && fs[k] == short:
				if k+1 < len(fs) {
					v, got = fs[k+1], true
					k++
				}
			case short != "" && strings.HasPrefix(fs[k], short):
				v, got = strings.TrimPrefix(fs[k], short), true
			}
			if !got {
				continue
			}
			if typed {
				if c := strings.LastIndexByte(v, ':'); c >= 0 {
					v = v[c+1:]
				}
			}
			if c, err := strconv.Atoi(v); err == nil && c >= 1 && c <= 65536 {
				n, line, col, ok = strconv.Itoa(c), i+1, strings.Index(l, "#SBATCH")+1, true
			} else {
				n, ok = "", false
			}
		}
	}
	return n, line, col, ok
}
