package scenarios

import (
	"errors"
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"
)

// Error is an input error at a position in a scenario file. Its message is one
// line: "file:line:col: what is wrong (what is allowed)". Line and Col are 0
// when the error is about the file as a whole or about a --set flag.
type Error struct {
	File      string
	Line, Col int
	Msg       string
	// Path is the key the error is about ("cluster.nodes"), when known.
	Path string
	// Alone marks a value wrong by itself: out of its key's own range or
	// not one of its names, whatever the other keys hold (zero_stage=7,
	// micro_batch=0), not one that does not fit them (k=3 with dp 2).
	// sweep --grid refuses such a value before the first point (AloneError).
	Alone bool
	// Example is the embedded example File is (exampleOf), "" for a
	// file of the user's: a position in it is one that "zerosim
	// scenarios show Example" prints, which the message says, since the
	// user never saw a file of that name.
	Example string
}

// AloneError is the message of err, the error of loading a scenario with
// "--set key=value" (set), when it is about the value at key (or inside
// it) and that value is wrong by itself (Error.Alone), without the
// "--set key=value: " that names the flag; false otherwise.
func AloneError(err error, set string) (string, bool) {
	var e *Error
	if !errors.As(err, &e) || !e.Alone {
		return "", false
	}
	key, _, _ := strings.Cut(set, "=")
	if !UnderKey(e.Path, strings.TrimSpace(key)) {
		return "", false
	}
	return strings.TrimPrefix(e.Msg, "--set "+set+": "), true
}

// EveryPointError reports whether err, the error of loading a scenario
// with the keys keys set to one point of a sweep, is one that every point
// gives: a value wrong by itself (Error.Alone), or the file's own syntax
// or keys, that is not at or inside one of keys (a point's value there
// replaced the file's). A sweep refuses such a file before its first row
// instead of writing an error row per point.
func EveryPointError(err error, keys []string) bool {
	var e *Error
	if !errors.As(err, &e) || !e.Alone {
		return false
	}
	for _, k := range keys {
		if UnderKey(e.Path, k) {
			return false
		}
	}
	return true
}

// underKey reports whether key path is key or inside it (a field or list
// element of it: "cluster.links[0].bandwidth" is inside "cluster.links").
// UnderKey reports whether path is key or a key below it
// ("parallelism.k" under "parallelism", "model.layer_list[3]" under
// "model.layer_list").
func UnderKey(path, key string) bool {
	return path == key || strings.HasPrefix(path, key+".") || strings.HasPrefix(path, key+"[")
}

func (e *Error) Error() string {
	switch {
	case e.Line > 0 && e.Example != "":
		return fmt.Sprintf("%s:%d:%d (built-in example: zerosim scenarios show %s): %s", e.File, e.Line, e.Col, e.Example, e.Msg)
	case e.Line > 0:
		return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Col, e.Msg)
	case e.File != "":
		return fmt.Sprintf("%s: %s", e.File, e.Msg)
	}
	return e.Msg
}

// Place puts err, the error a check made on a loaded scenario returned
// about one of its keys (an *Error with Path set and no File, as
// zero.CheckPins returns), where Load(file, data, sets) would put its own
// error about that key (errPath): at the key's line and column, or at the
// --set flag or stack preset that gave its value, or at the nearest parent
// key present. Load keeps no positions, so Place reads the file again: a
// parse, paid only when a check fails. Any other error is returned as it
// is.
func Place(file string, data []byte, sets []string, err error) error {
	var e *Error
	if !errors.As(err, &e) || e.File != "" || e.Path == "" {
		return err
	}
	l := &loader{file: file, example: exampleOf(file, data), setOf: map[*yaml.Node]string{}, idx: map[string]entry{}}
	root, perr := l.fileTree(data)
	for _, set := range sets {
		if perr == nil {
			perr = l.applySet(root, set)
		}
	}
	if perr == nil {
		perr = l.applyStack(root)
	}
	placed := l.fileErr(e.Msg)
	if perr == nil {
		l.index(root, "")
		placed = l.errPath(e.Path, e.Msg)
	}
	placed.Msg, placed.Path, placed.Alone = oneLine(placed.Msg), e.Path, e.Alone
	return placed
}

// Place is Place of the input's file and bytes.
func (in Input) Place(sets []string, err error) error { return Place(in.File, in.Data, sets, err) }
