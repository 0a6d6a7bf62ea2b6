package scenarios

import (
	"path"
	"strings"
)

// This file follows a launch command that a script builds in a string
// and runs later: TRAINING_CMD="torchrun ${TORCHRUN_ARGS[@]}
// $MEGATRON_LM_DIR/pretrain_gpt.py ${MODEL_ARGS[@]} …" run as
// srun … bash -c "$CMD_PREFIX $TRAINING_CMD", as $TRAINING_CMD, or through
// eval (swiss-ai/Megatron-LM's submit-llama3-8b.sh at e50c6ba0,
// testdata/megatron/README.md). The shell expands the string's variables
// and arrays when it assigns it; bash -c and eval then read the result as
// a script (bash(1), "-c": "commands are read from the first non-option
// argument"; "eval": "the arguments are read and concatenated together
// into a single command"), and an unquoted $TRAINING_CMD splits it into
// words. zerosim reads the string's own text again as words where it is
// written (mgReread), so that each word keeps its line and column and its
// own unknown substitution: a $(hostname) in torchrun's arguments does not
// make --num-layers unknown. Nothing is run. One difference from bash: an
// unquoted $NAME whose value holds quotes ("--a 'b c'") is read with the
// quotes honoured, as bash -c and eval read it, where a plain expansion
// would keep them in the words.

// mgRereadDepth bounds bash -c and eval inside one another.
const mgRereadDepth = 4

// mgCmdBudget bounds the words a script's values are reread into, all
// values together (mgExpander.cmdOf): past it, values keep the plain
// expansion, so that a script that grows a value line after line reads in
// time linear in its length.
const mgCmdBudget = 1 << 17

// mgMaxCmdBytes bounds the value that is reread as words (mgVar.cmd): a
// longer one (no launch script's) keeps the plain expansion.
const mgMaxCmdBytes = 1 << 16

// mgTextLen is the length of the fields' text.
func mgTextLen(fs []mgField) int {
	n := 0
	for _, f := range fs {
		n += len(f.text)
	}
	return n
}

// mgMaxCmdWords bounds a value's words (mgExpander.cmdOf): a value that
// doubles itself line after line falls back to the plain expansion.
const mgMaxCmdWords = 1 << 14

// mgUnquote removes one level of quoting from raw, as the shell's
// expansion of the word does, and leaves its substitutions ($NAME, ${…},
// $(…)) as written; offs holds each result byte's offset in raw. Inside
// double quotes a backslash escapes $ ` " \ and a newline (which it
// removes); outside quotes it escapes any character.
func mgUnquote(raw string) (u string, offs []int) {
	var b []byte
	put := func(at int) {
		b = append(b, raw[at])
		offs = append(offs, at)
	}
	for i := 0; i < len(raw); {
		switch c := raw[i]; {
		case c == '\'':
			i++
			for i < len(raw) && raw[i] != '\'' {
				put(i)
				i++
			}
			i++
		case c == '"':
			i++
			for i < len(raw) && raw[i] != '"' {
				if raw[i] == '\\' && i+1 < len(raw) {
					switch raw[i+1] {
					case '\n':
						i += 2
						continue
					case '$', '`', '"', '\\':
						put(i + 1)
						i += 2
						continue
					}
				}
				put(i)
				i++
			}
			i++
		case c == '\\':
			if i+1 < len(raw) && raw[i+1] != '\n' {
				put(i + 1)
			}
			i += 2
		case c == '$' && i+1 < len(raw) && (raw[i+1] == '(' || raw[i+1] == '{'):
			// Copied through its close, as mgLex reads it.
			open, close := raw[i+1], byte(')')
			if open == '{' {
				close = '}'
			}
			depth := 0
			for i < len(raw) {
				put(i)
				if raw[i] == open {
					depth++
				} else if raw[i] == close {
					depth--
					if depth == 0 {
						i++
						break
					}
				}
				i++
			}
		default:
			put(i)
			i++
		}
	}
	return string(b), offs
}

// mgPosIn is the line and column of raw[k], raw being a token at line, col.
func mgPosIn(line, col int, raw string, k int) (int, int) {
	k = min(max(k, 0), len(raw))
	if nl := strings.LastIndexByte(raw[:k], '\n'); nl >= 0 {
		return line + strings.Count(raw[:k], "\n"), k - nl
	}
	return line, col + k
}

// mgReread lexes raw[from:], a word at line, col, as the shell reads the
// string its expansion gives when it runs it as a command (bash -c, eval):
// one level of quoting removed, then split into words and separators
// again. Each token is at the line and column of the text it comes from.
func mgReread(raw string, from, line, col int) []mgTok {
	if from < 0 || from > len(raw) {
		return nil
	}
	u, offs := mgUnquote(raw[from:])
	toks, _ := mgLex(u)
	for k := range toks {
		o := len(raw)
		if toks[k].off < len(offs) {
			o = from + offs[toks[k].off]
		}
		toks[k].line, toks[k].col = mgPosIn(line, col, raw, o)
		toks[k].off = 0
	}
	return toks
}

// cmdOf expands reread tokens (mgReread) into words as a command would
// (mgVar.cmd): ;, & and | stay as separators, a newline is a blank. nil
// when there are more than mgMaxCmdWords.
func (e *mgExpander) cmdOf(toks []mgTok) []mgField {
	if e.spent >= mgCmdBudget {
		return nil
	}
	var out []mgField
	defer func() { e.spent += len(out) }()
	for _, t := range toks {
		switch {
		case t.sep && t.op == '\n':
			continue
		case t.sep:
			out = append(out, mgField{text: string(t.op), line: t.line, col: t.col, sep: true})
			continue
		case t.paren != 0:
			out = append(out, mgField{text: string(t.paren), line: t.line, col: t.col})
			continue
		}
		e.line = t.line
		for _, f := range e.expand(t.raw, true, 0) {
			if f.line == 0 {
				f.line, f.col = t.line, t.col
			}
			out = append(out, f)
		}
		if len(out) > mgMaxCmdWords || e.spent+len(out) > mgCmdBudget {
			e.spent = mgCmdBudget
			out = nil
			return nil
		}
	}
	if out == nil {
		out = []mgField{}
	}
	return out
}

// command expands one command's tokens into the commands it runs: itself
// (split where a value it expands holds a separator), and the script of a
// bash -c (sh, dash, zsh, ksh) or an eval, reread (mgReread) after it.
func (e *mgExpander) command(toks []mgTok, depth int) []mgCommand {
	var out, inner []mgCommand
	var c mgCommand
	flush := func() {
		if len(c.words) > 0 {
			out = append(out, c)
		}
		c = mgCommand{}
	}
	for k, t := range toks {
		if t.paren != 0 {
			continue
		}
		if depth < mgRereadDepth && mgShellString(c.words) {
			// The command string; the words after it are its $0, $1, ….
			inner = e.commands(mgReread(t.raw, 0, t.line, t.col), depth+1)
			break
		}
		if depth < mgRereadDepth && len(c.words) == 1 && c.words[0].text == "eval" && c.words[0].unresolved == "" {
			var rt []mgTok
			for _, u := range toks[k:] {
				if u.paren == 0 {
					rt = append(rt, mgReread(u.raw, 0, u.line, u.col)...)
				}
			}
			c = mgCommand{}
			inner = e.commands(rt, depth+1)
			break
		}
		e.line = t.line
		for _, w := range e.expand(t.raw, true, 0) {
			if w.sep {
				flush()
				continue
			}
			if w.line == 0 {
				w.line, w.col = t.line, t.col
			}
			c.words = append(c.words, mgWord{text: w.text, line: w.line, col: w.col, unresolved: w.unresolved, held: w.held})
		}
	}
	flush()
	return append(out, inner...)
}

// commands splits reread tokens at their separators into commands, each
// without the NAME=value words before it (its environment), and expands
// them (command).
func (e *mgExpander) commands(toks []mgTok, depth int) []mgCommand {
	var out []mgCommand
	for i := 0; i < len(toks); {
		j := i
		for j < len(toks) && !toks[j].sep {
			j++
		}
		ci := i
		for ci < j && toks[ci].paren == 0 {
			if _, _, _, ok := mgAssign(toks[ci].raw); !ok {
				break
			}
			ci++
		}
		out = append(out, e.command(toks[ci:j], depth)...)
		i = j + 1
	}
	return out
}

// mgShellString reports whether the next word of a command whose words so
// far are ws is the command string of a shell's -c: a shell (bash, sh,
// dash, zsh, ksh, by its path's last element) followed by options only,
// the last a cluster that holds c (-c, -lc, -ec).
func mgShellString(ws []mgWord) bool {
	n := len(ws)
	if n < 2 {
		return false
	}
	last := ws[n-1].text
	if len(last) < 2 || last[0] != '-' || last[1] == '-' || !strings.Contains(last, "c") {
		return false
	}
	for i := n - 1; i >= 0; i-- {
		w := ws[i].text
		switch path.Base(w) {
		case "bash", "sh", "dash", "zsh", "ksh":
			return i < n-1 && ws[i].unresolved == ""
		}
		if !strings.HasPrefix(w, "-") {
			return false
		}
	}
	return false
}

// mgAppend is what a block of unknown outcome at line may append to the
// variable name, NAME="$NAME …": its --flags, with where each is written.
type mgAppend struct {
	name  string
	line  int
	flags []mgWord
}

// appendsTo handles NAME="$NAME more" inside a block of unknown outcome
// (an if on a variable from the environment, such as WANDB_API_KEY): NAME
// keeps its value, as the script runs when the block does not, and the
// block's appended --flags are kept in e.appends for the import's note.
// false (nothing done) for any other assignment, or when NAME is not a
// known scalar read as words (mgVar.cmd).
func (e *mgExpander) appendsTo(name, val string, cmd []mgField, line int) bool {
	old, ok := e.vars[name]
	if !ok || old.why != "" || old.cmd == nil || cmd == nil || len(cmd) < len(old.cmd) {
		return false
	}
	v := strings.TrimPrefix(val, `"`)
	rest, ok := strings.CutPrefix(v, "${"+name+"}")
	if !ok {
		if rest, ok = strings.CutPrefix(v, "$"+name); !ok {
			return false
		}
		if rest != "" && (rest[0] == '_' || rest[0] >= 'A' && rest[0] <= 'Z' || rest[0] >= 'a' && rest[0] <= 'z' || rest[0] >= '0' && rest[0] <= '9') {
			return false // $NAMEX
		}
	}
	if rest != "" && !strings.ContainsRune(" \t\\\"", rune(rest[0])) {
		return false // glued to the last word
	}
	e.appends = append(e.appends, mgAppend{name: name, line: line, flags: mgFlagsOf(cmd[len(old.cmd):])})
	return true
}

// mgNamesPretrain finds the first word outside comments that names a
// pretrain_*.py script, and the line and column of that name.
func mgNamesPretrain(src string) (line, col int, name string, ok bool) {
	toks, _ := mgLex(src)
	for _, t := range toks {
		k := strings.Index(t.raw, "pretrain_")
		if t.sep || t.paren != 0 || k < 0 {
			continue
		}
		end := k + len("pretrain_")
		for end < len(t.raw) && (t.raw[end] == '_' || t.raw[end] >= 'a' && t.raw[end] <= 'z' || t.raw[end] >= 'A' && t.raw[end] <= 'Z' || t.raw[end] >= '0' && t.raw[end] <= '9') {
			end++
		}
		if !strings.HasPrefix(t.raw[end:], ".py") {
			continue
		}
		line, col = mgPosIn(t.line, t.col, t.raw, k)
		return line, col, t.raw[k : end+3], true
	}
	return 0, 0, "", false
}
