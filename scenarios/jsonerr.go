package scenarios

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// utf8BOM is the UTF-8 byte-order mark some Windows editors put at the
// start of a file.
const utf8BOM = "\xef\xbb\xbf"

// jsonError is the one line for an importer's config that is not valid
// JSON: "FILE:LINE:COL: not valid JSON: what (give …)", at the byte where
// the parser stopped, so an editor jumps to it. A trailing comma, the most
// common slip in a hand-edited ds_config.json (JSON, unlike Python and
// JavaScript, allows none), points at the comma and says to delete it; a
// file cut off points at its end; a file with nothing in it says so. err
// is the decoder's error for data; give is what to give instead ("the
// model's config.json").
func jsonError(file string, data []byte, err error, give string) error {
	var se *json.SyntaxError
	switch {
	case bytes.HasPrefix(data, []byte(utf8BOM)):
		// It said "invalid character 'ï' looking for beginning of value"
		// (QA17 L7).
		return fmt.Errorf("%s:1:1: not valid JSON: the file starts with a UTF-8 byte-order mark (EF BB BF), which Python's json.loads refuses too (\"Unexpected UTF-8 BOM\"): save it as UTF-8 without the mark", file)
	case errors.As(err, &se):
		// Offset counts the bytes read, the offending one included.
		off := min(max(int(se.Offset)-1, 0), len(data))
		if off < len(data) && (data[off] == '}' || data[off] == ']') {
			prev := len(bytes.TrimRight(data[:off], " \t\r\n"))
			if prev > 0 && data[prev-1] == ',' {
				return fmt.Errorf("%s: not valid JSON: a comma before %q ends the list of %s with nothing after it (JSON allows no trailing comma: delete it)",
					jsonPos(file, data, prev-1), data[off], map[byte]string{'}': "keys", ']': "values"}[data[off]])
			}
		}
		fix := "fix the syntax there, or " + give
		if m := se.Error(); strings.HasSuffix(m, "after object key:value pair") || strings.HasSuffix(m, "after array element") {
			fix = "a comma is missing before it: add one"
		}
		return fmt.Errorf("%s: not valid JSON: %s (%s)", jsonPos(file, data, off), oneLine(se.Error()), fix)
	case errors.Is(err, io.EOF) && len(bytes.TrimSpace(data)) == 0:
		return fmt.Errorf("%s: empty file (%s)", file, give)
	case errors.Is(err, io.ErrUnexpectedEOF):
		end := len(bytes.TrimRight(data, " \t\r\n"))
		return fmt.Errorf("%s: not valid JSON: the file ends inside a value (a closing \", } or ] is missing, or the file was cut off: %s)", jsonPos(file, data, end), give)
	}
	return fmt.Errorf("%s: not valid JSON: %s (%s)", file, oneLine(err.Error()), give)
}

// jsonPos is "FILE:LINE:COL" of byte off of data (lineCol).
func jsonPos(file string, data []byte, off int) string {
	line, col := lineCol(data, off)
	return fmt.Sprintf("%s:%d:%d", file, line, col)
}

// lineCol is the 1-based line and column of byte off of data; the column
// counts characters, as yaml.v3's Node.Column does.
func lineCol(data []byte, off int) (line, col int) {
	off = min(max(off, 0), len(data))
	start := bytes.LastIndexByte(data[:off], '\n') + 1
	return 1 + bytes.Count(data[:off], []byte("\n")), 1 + utf8.RuneCount(data[start:off])
}

// LineCol is lineCol for the CLI's JSON inputs (verify --reference).
func LineCol(data []byte, off int) (line, col int) { return lineCol(data, off) }

// JSONError is jsonError for the CLI's JSON inputs (verify --reference).
func JSONError(file string, data []byte, err error, give string) error {
	return jsonError(file, data, err, give)
}

// nextValue is the offset of the first byte after off that is not JSON
// whitespace: where a second value starts.
func nextValue(data []byte, off int64) int {
	o := min(max(int(off), 0), len(data))
	return len(data) - len(bytes.TrimLeft(data[o:], " \t\r\n"))
}

// numberFix is the fix for a JSON value that should be a number: a number
// written in quotes ("4096") is to be written without them; anything else
// gets an example (eg).
func numberFix(v any, eg string) string {
	if s, ok := v.(string); ok {
		if _, err := strconv.ParseFloat(strings.TrimSpace(s), 64); err == nil {
			return "write it without quotes: " + clip(strings.TrimSpace(s))
		}
	}
	return "use a number such as " + eg
}

// wholeFix is the fix for n, a number with a fraction where a whole
// number in [lo, hi] is wanted: the nearest whole number in range, both
// at a half ("use 28672 or 28673, the nearest whole numbers" for
// 28672.5). Before, "use a number such as 1".
func wholeFix(n json.Number, lo, hi int64) string {
	f, err := strconv.ParseFloat(n.String(), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return fmt.Sprintf("use a whole number, %d to %d", lo, hi)
	}
	clamp := func(x float64) int64 { return int64(max(float64(lo), min(float64(hi), x))) }
	down, up := clamp(math.Floor(f)), clamp(math.Ceil(f))
	switch {
	case down == up:
		return fmt.Sprintf("use %d to %d; %d is the nearest", lo, hi, down)
	case f-math.Floor(f) == 0.5:
		return fmt.Sprintf("use %d or %d, the nearest whole numbers", down, up)
	case f-math.Floor(f) < 0.5:
		return fmt.Sprintf("use %d, the nearest whole number", down)
	}
	return fmt.Sprintf("use %d, the nearest whole number", up)
}

// jsonWhole reads n as a whole number: an integer, or a float without a
// fraction (4096.0, 1e7: DeepSpeed's pydantic int fields and config.json
// writers give both) of magnitude at most limit. tooLarge is a whole float
// beyond limit (1e30), out of range rather than not whole.
func jsonWhole(n json.Number, limit float64) (i int64, whole, tooLarge bool) {
	if i, err := strconv.ParseInt(n.String(), 10, 64); err == nil {
		return i, true, false
	}
	f, err := strconv.ParseFloat(n.String(), 64)
	if err != nil || f != math.Trunc(f) {
		return 0, false, false
	}
	if math.Abs(f) > limit {
		return 0, false, true
	}
	return int64(f), true, false
}

// jsonDuplicate is a key an object of a JSON document repeats: its path
// (dotted, [i] for array elements) and the offsets of its first and its
// second occurrence.
type jsonDuplicate struct {
	Path          string
	First, Second int
}

// duplicateKey is the first key some object of data (valid JSON) repeats,
// nil when none does. encoding/json keeps the last value of a repeated key
// silently; DeepSpeed refuses the file (duplicateKeyError).
func duplicateKey(data []byte) *jsonDuplicate {
	seen := map[string]int{}
	var dup *jsonDuplicate
	walkJSONKeys(data, func(path string, at int) bool {
		if first, again := seen[path]; again {
			dup = &jsonDuplicate{Path: path, First: first, Second: at}
			return false
		}
		seen[path] = at
		return true
	})
	return dup
}

// walkJSONKeys calls visit with every key of data (valid JSON) in document
// order: its path (dotted, [i] for array elements) and the offset of its
// opening quote, until visit returns false. A path repeats only where an
// object repeats a key.
func walkJSONKeys(data []byte, visit func(path string, at int) bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var walk func(path string) bool
	walk = func(path string) bool {
		tok, err := dec.Token()
		if d, ok := tok.(json.Delim); err != nil || !ok {
			return true
		} else if d == '[' {
			for i := 0; dec.More(); i++ {
				if !walk(fmt.Sprintf("%s[%d]", path, i)) {
					return false
				}
			}
		} else if d == '{' {
			for dec.More() {
				// The decoder consumes the comma before a key with the key.
				at := len(data) - len(bytes.TrimLeft(data[min(int(dec.InputOffset()), len(data)):], " \t\r\n,"))
				tok, err := dec.Token()
				key, ok := tok.(string)
				if err != nil || !ok {
					return false
				}
				p := key
				if path != "" {
					p = path + "." + key
				}
				if !visit(p, at) || !walk(p) {
					return false
				}
			}
		}
		dec.Token() // the closing ] or }
		return true
	}
	walk("")
}

// jsonKeys is where the keys of a JSON document are, for errors that name
// a key: the offset of each path's first occurrence (walkJSONKeys) and of
// the top-level value.
type jsonKeys struct {
	data []byte
	at   map[string]int
	top  int
}

// newJSONKeys indexes the keys of data (valid JSON).
func newJSONKeys(data []byte) *jsonKeys {
	k := &jsonKeys{data: data, at: map[string]int{}, top: nextValue(data, 0)}
	walkJSONKeys(data, func(path string, at int) bool {
		if _, ok := k.at[path]; !ok {
			k.at[path] = at
		}
		return true
	})
	return k
}

// leadingKey is the key path an importer's message starts with
// ("zero_optimization.stage is …", "fp16.enabled and …",
// "architectures[0] …").
var leadingKey = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+|\[[0-9]+\])*`)

// where is "FILE:LINE:COL" of the key msg starts with, so an editor jumps
// to it: the key itself when the file has it, else the nearest enclosing
// key it has (the object a missing key belongs in), else, for a key the
// file lacks at the top level (a config key: it has "_" or ".", or msg
// says it is missing), the top-level object. A message that starts with no
// key (a flag, a sentence) gets FILE alone, as does a nil k.
func (k *jsonKeys) where(file, msg string) string {
	path := leadingKey.FindString(msg)
	if k == nil || path == "" {
		return file
	}
	for p := path; p != ""; p = parentKey(p) {
		if off, ok := k.at[p]; ok {
			return jsonPos(file, k.data, off)
		}
	}
	if strings.ContainsAny(path, "_.[") || strings.HasPrefix(msg[len(path):], " is missing") {
		return jsonPos(file, k.data, k.top)
	}
	return file
}

// parentKey is the path of the object or array holding path: "a.b[2]" →
// "a.b" → "a" → "".
func parentKey(path string) string {
	if i := strings.LastIndexAny(path, ".["); i >= 0 {
		return path[:i]
	}
	return ""
}
