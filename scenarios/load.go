package scenarios

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/zerosim/zerosim/units"
	"gopkg.in/yaml.v3"
)

// Load decodes, overrides (sets are "key.path=value"), resolves and validates
// one scenario file. file names the input in error messages. Every error it
// returns is an *Error whose message is one line.
func Load(file string, data []byte, sets []string) (*Scenario, error) {
	l := &loader{file: file, setOf: map[*yaml.Node]string{}, idx: map[string]entry{}}
	s, err := l.load(data, sets)
	if err != nil {
		// Every message is one line, whatever the input held.
		e := &Error{File: file, Msg: err.Error()}
		if pe := (*Error)(nil); errors.As(err, &pe) {
			c := *pe
			e = &c
		}
		e.Msg = oneLine(e.Msg)
		return nil, e
	}
	return s, nil
}

// LoadFile reads path and loads it with Load; the path names the file in
// error messages.
func LoadFile(path string, sets []string) (*Scenario, error) {
	f, err := os.Open(path)
	if err != nil {
		var pe *os.PathError
		msg := err.Error()
		if errors.As(err, &pe) {
			msg = pe.Err.Error()
		}
		return nil, &Error{File: path, Msg: "cannot read the file: " + msg + " (check the path)"}
	}
	defer f.Close()
	data, err := ReadLimited(path, f)
	if err != nil {
		return nil, err
	}
	return Load(path, data, sets)
}

// loader holds the state of one Load.
type loader struct {
	file  string
	setOf map[*yaml.Node]string // nodes created or replaced by a --set flag
	idx   map[string]entry      // path → key and value of the final tree
}

// oneLine escapes line breaks and other control characters.
func oneLine(s string) string {
	if !strings.ContainsFunc(s, func(r rune) bool { return r < ' ' || r == 0x7f || r == 0x85 || r == 0x2028 || r == 0x2029 }) {
		return s
	}
	q := strconv.Quote(s)
	return q[1 : len(q)-1]
}

func (l *loader) fileErr(msg string) *Error { return &Error{File: l.file, Msg: msg} }

// errAt is an error at node n: at its position, or naming the --set flag
// that made it.
func (l *loader) errAt(n *yaml.Node, msg string) *Error {
	if n != nil {
		if set, ok := l.setOf[n]; ok {
			return &Error{File: l.file, Msg: "--set " + set + ": " + msg}
		}
		if n.Line > 0 {
			return &Error{File: l.file, Line: n.Line, Col: n.Column, Msg: msg}
		}
	}
	return l.fileErr(msg)
}

// errPath is an error about the key at path; when the key is absent it
// points at the nearest parent key that is present.
func (l *loader) errPath(path, msg string) *Error {
	e := l.errNear(path, msg)
	e.Path = path
	return e
}

func (l *loader) errNear(path, msg string) *Error {
	for p := path; p != ""; p = parentPath(p) {
		if e, ok := l.idx[p]; ok {
			if e.key != nil {
				if _, set := l.setOf[e.val]; set && p == path {
					return l.errAt(e.val, msg)
				}
				return l.errAt(e.key, msg)
			}
			return l.errAt(e.val, msg)
		}
	}
	return l.fileErr(msg)
}

func parentPath(p string) string {
	i := strings.LastIndexAny(p, ".[")
	if i < 0 {
		return ""
	}
	return p[:i]
}

func (l *loader) has(path string) bool { _, ok := l.idx[path]; return ok }

func (l *loader) load(data []byte, sets []string) (*Scenario, error) {
	orig, err := l.parseDoc(data)
	if err != nil {
		return nil, err
	}
	x := &expander{l: l, active: map[*yaml.Node]bool{}}
	root, err := x.copy(orig)
	if err != nil {
		return nil, err
	}
	if err := l.checkKeys(root); err != nil {
		return nil, err
	}
	for _, set := range sets {
		if err := l.applySet(root, set); err != nil {
			return nil, err
		}
	}
	if err := l.checkDepth(root, 1); err != nil {
		return nil, err
	}
	l.index(root, "")
	// The version comes first: a file of another version may use other keys.
	if v, ok := l.idx["version"]; !ok {
		return nil, l.fileErr("version is missing (start the file with \"version: 1\")")
	} else if v.val.Kind == yaml.ScalarNode && v.val.Tag == "!!int" && strings.TrimLeft(v.val.Value, "+0") != "1" {
		return nil, l.errAt(v.key, fmt.Sprintf("version=%s is not supported (use version: 1)", describe(v.val)))
	}

	var errs []*Error
	l.typecheck(root, scenarioType, "", &errs)
	s, derr := l.decode(root)
	if derr != nil {
		errs = append(errs, derr)
	}
	if len(errs) > 0 {
		return nil, first(errs)
	}
	if err := l.resolve(s); err != nil {
		return nil, err
	}
	return s, nil
}

// first returns the error that comes first: --set errors, then by position.
func first(errs []*Error) *Error {
	sort.SliceStable(errs, func(i, j int) bool {
		a, b := errs[i], errs[j]
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Col < b.Col
	})
	return errs[0]
}

var (
	scenarioType    = reflect.TypeFor[Scenario]()
	unmarshalerType = reflect.TypeFor[yaml.Unmarshaler]()
	// typesByName maps "scenarios.Cluster" to its type, for yaml.v3's
	// "not found in type" errors.
	typesByName = map[string]reflect.Type{}
)

func init() { registerTypes(scenarioType) }

func registerTypes(t reflect.Type) {
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice:
		registerTypes(t.Elem())
	case reflect.Struct:
		if _, ok := typesByName[t.String()]; ok {
			return
		}
		typesByName[t.String()] = t
		for i := 0; i < t.NumField(); i++ {
			registerTypes(t.Field(i).Type)
		}
	}
}

// yamlKeys lists the keys of struct type t in declaration order.
func yamlKeys(t reflect.Type) []string {
	var keys []string
	for i := 0; i < t.NumField(); i++ {
		if k := yamlKey(t.Field(i)); k != "" {
			keys = append(keys, k)
		}
	}
	return keys
}

func yamlKey(f reflect.StructField) string {
	tag := f.Tag.Get("yaml")
	name, _, _ := strings.Cut(tag, ",")
	if name == "-" || !f.IsExported() {
		return ""
	}
	if name == "" {
		return strings.ToLower(f.Name)
	}
	return name
}

func fieldByKey(t reflect.Type, key string) (reflect.Type, bool) {
	for i := 0; i < t.NumField(); i++ {
		if yamlKey(t.Field(i)) == key {
			return t.Field(i).Type, true
		}
	}
	return nil, false
}

// typecheck checks scalar kinds against the Go types yaml.v3 will decode
// into, where yaml.v3 is lenient (it truncates 1.5 into an int). Unknown keys
// are left to yaml.v3's KnownFields.
func (l *loader) typecheck(n *yaml.Node, t reflect.Type, path string, errs *[]*Error) {
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		return
	}
	bad := func(want, use string) {
		*errs = append(*errs, l.errAt(n, fmt.Sprintf("%s: %s is not %s (use %s)", leaf(path), describe(n), want, use)))
	}
	switch t.Kind() {
	case reflect.Pointer:
		l.typecheck(n, t.Elem(), path, errs)
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			bad("a mapping", "key: value pairs such as "+strings.Join(first3(yamlKeys(t)), ", "))
			return
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			if ft, ok := fieldByKey(t, n.Content[i].Value); ok {
				l.typecheck(n.Content[i+1], ft, joinPath(path, n.Content[i].Value), errs)
			}
		}
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			bad("a list", "a list such as [a, b] or one \"- item\" per line")
			return
		}
		for i, e := range n.Content {
			l.typecheck(e, t.Elem(), fmt.Sprintf("%s[%d]", path, i), errs)
		}
	case reflect.Int, reflect.Int64:
		if n.Kind != yaml.ScalarNode || n.Tag != "!!int" {
			if n.Kind == yaml.ScalarNode && n.Tag == "!!float" && isWholeFloat(n.Value) {
				*errs = append(*errs, l.errAt(n, fmt.Sprintf("%s: %s does not fit in 64 bits (use a whole number below 2^63)", leaf(path), describe(n))))
				return
			}
			bad("an integer", "a whole number")
			return
		}
		if d := strings.TrimLeft(n.Value, "+-"); len(d) > 1 && d[0] == '0' && d[1] >= '0' && d[1] <= '9' {
			// yaml.v3 keeps YAML 1.1's octal: 010 would silently be 8.
			v := strings.TrimLeft(d, "0_")
			if v == "" {
				v = "0"
			}
			*errs = append(*errs, l.errAt(n, fmt.Sprintf("%s: %s has a leading zero, which YAML reads as octal (write %s, or 0o%s if you mean octal)", leaf(path), describe(n), v, v)))
			return
		}
		if _, err := strconv.ParseInt(strings.ReplaceAll(n.Value, "_", ""), 0, 64); err != nil {
			*errs = append(*errs, l.errAt(n, fmt.Sprintf("%s: %s does not fit in 64 bits (use a whole number below 2^63)", leaf(path), describe(n))))
		}
	case reflect.Float64:
		if n.Kind != yaml.ScalarNode || (n.Tag != "!!int" && n.Tag != "!!float") {
			bad("a number", "a decimal such as 0.5")
			return
		}
		switch strings.ToLower(strings.TrimLeft(n.Value, "+-")) {
		case ".inf", ".nan":
			bad("a finite number", "a decimal such as 0.5")
			return
		}
		if f, err := strconv.ParseFloat(strings.ReplaceAll(n.Value, "_", ""), 64); err == nil && (math.IsInf(f, 0) || math.IsNaN(f)) {
			bad("a finite number", "a decimal such as 0.5")
		}
	case reflect.Bool:
		if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" {
			bad("a boolean", "true or false")
		}
	case reflect.String:
		if n.Kind != yaml.ScalarNode {
			bad("a string", "a plain value")
		}
	}
}

func first3(s []string) []string {
	if len(s) > 3 {
		return append(s[:3:3], "…")
	}
	return s
}

var wholeRE = regexp.MustCompile(`^[-+]?[0-9_]+$`)

func isWholeFloat(s string) bool { return wholeRE.MatchString(s) }

// lineRE matches one of yaml.v3's type errors, "line N: message".
var (
	lineRE     = regexp.MustCompile(`^line (\d+): (.*)$`)
	notFoundRE = regexp.MustCompile(`^field (.*) not found in type (\S+)$`)
	cannotRE   = regexp.MustCompile("^cannot unmarshal (\\S+)(?: `(.*)`)? into (\\S+)$")
)

// decode re-encodes the final tree and decodes it strictly with yaml.v3
// (KnownFields), mapping yaml.v3's errors back to the original positions.
func (l *loader) decode(root *yaml.Node) (*Scenario, *Error) {
	stripStyle(root)
	enc, err := yaml.Marshal(root)
	if err != nil {
		return nil, l.fileErr("cannot re-encode the document: " + err.Error())
	}
	var edoc yaml.Node
	if err := yaml.Unmarshal(enc, &edoc); err != nil || len(edoc.Content) != 1 {
		return nil, l.fileErr("cannot re-read the document (please report this)")
	}
	byLine := map[int][]located{}
	byPos := map[[2]int]located{}
	if !pairUp(edoc.Content[0], root, "", byLine, byPos) {
		return nil, l.fileErr("cannot map the document's positions (please report this)")
	}
	dec := yaml.NewDecoder(bytes.NewReader(enc))
	dec.KnownFields(true)
	var s Scenario
	err = dec.Decode(&s)
	if err == nil {
		return &s, nil
	}
	var pe *units.PosError
	if errors.As(err, &pe) {
		if loc, ok := byPos[[2]int{pe.Line, pe.Column}]; ok {
			return nil, l.errAt(loc.orig, fmt.Sprintf("%s: %v", leaf(loc.path), pe.Err))
		}
		return nil, l.fileErr(pe.Err.Error())
	}
	var te *yaml.TypeError
	if errors.As(err, &te) {
		var errs []*Error
		for _, msg := range te.Errors {
			errs = append(errs, l.mapTypeError(msg, byLine))
		}
		return nil, first(errs)
	}
	return nil, l.fileErr(strings.TrimPrefix(err.Error(), "yaml: "))
}

func (l *loader) mapTypeError(msg string, byLine map[int][]located) *Error {
	m := lineRE.FindStringSubmatch(msg)
	if m == nil {
		return l.fileErr(msg)
	}
	line, _ := strconv.Atoi(m[1])
	body := m[2]
	if f := notFoundRE.FindStringSubmatch(body); f != nil {
		for _, loc := range byLine[line] {
			if loc.key && loc.orig.Value == f[1] {
				return l.errAt(loc.orig, unknownKeyMsg(f[1], parentPath(loc.path), typesByName[f[2]]))
			}
		}
		return l.fileErr(unknownKeyMsg(f[1], "", typesByName[f[2]]))
	}
	if c := cannotRE.FindStringSubmatch(body); c != nil {
		for _, loc := range byLine[line] {
			if !loc.key && tagMatches(loc.orig, c[1], c[2]) {
				return l.errAt(loc.orig, fmt.Sprintf("%s: %s is not %s (use %s)", leaf(loc.path), describe(loc.orig), goTypeName(c[3]), goTypeUse(c[3])))
			}
		}
	}
	return l.fileErr(body)
}

// tagMatches says whether n is the node yaml.v3 describes as tag `value`.
func tagMatches(n *yaml.Node, tag, value string) bool {
	switch tag {
	case "!!map":
		return n.Kind == yaml.MappingNode
	case "!!seq":
		return n.Kind == yaml.SequenceNode
	}
	if p, ok := strings.CutSuffix(value, "..."); ok {
		return n.Kind == yaml.ScalarNode && strings.HasPrefix(n.Value, p)
	}
	return n.Kind == yaml.ScalarNode && (value == "" || n.Value == value)
}

func goTypeName(t string) string {
	switch {
	case strings.HasPrefix(t, "[]"):
		return "a list"
	case strings.HasPrefix(t, "int"), strings.HasPrefix(t, "*int"):
		return "an integer"
	case strings.HasPrefix(t, "float"):
		return "a number"
	case t == "bool", t == "*bool":
		return "a boolean"
	case t == "string":
		return "a string"
	case strings.HasPrefix(t, "scenarios."):
		return "a mapping"
	}
	return "a " + t
}

func goTypeUse(t string) string {
	switch goTypeName(t) {
	case "a list":
		return "a list such as [a, b] or one \"- item\" per line"
	case "a mapping":
		return "key: value pairs"
	case "a boolean":
		return "true or false"
	case "a string":
		return "a plain value"
	}
	return "a number"
}

// unknownKeyMsg says that key is not allowed in the mapping at parent and
// suggests the nearest allowed key.
func unknownKeyMsg(key, parent string, t reflect.Type) string {
	where := "at the top level"
	if parent != "" {
		where = "in " + parent
	}
	if t == nil || t.Kind() != reflect.Struct {
		return fmt.Sprintf("unknown key %q %s", key, where)
	}
	keys := yamlKeys(t)
	best, bestD := "", 1<<30
	for _, k := range keys {
		if d := editDistance(strings.ToLower(key), k); d < bestD {
			best, bestD = k, d
		}
	}
	if best != "" && (bestD <= 2 || bestD <= len(key)/3) {
		return fmt.Sprintf("unknown key %q %s (did you mean %q?)", key, where, best)
	}
	return fmt.Sprintf("unknown key %q %s (allowed: %s)", key, where, strings.Join(keys, ", "))
}

// editDistance is the Levenshtein distance between a and b (bytes).
func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 1 << 20
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := prev[j-1]
			if a[i-1] != b[j-1] {
				c++
			}
			cur[j] = min(c, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
