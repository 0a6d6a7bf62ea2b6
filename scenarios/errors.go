package scenarios

import "fmt"

// Error is an input error at a position in a scenario file. Its message is one
// line: "file:line:col: what is wrong (what is allowed)". Line and Col are 0
// when the error is about the file as a whole or about a --set flag.
type Error struct {
	File      string
	Line, Col int
	Msg       string
	// Path is the key the error is about ("cluster.nodes"), when known.
	Path string
}

func (e *Error) Error() string {
	switch {
	case e.Line > 0:
		return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Col, e.Msg)
	case e.File != "":
		return fmt.Sprintf("%s: %s", e.File, e.Msg)
	}
	return e.Msg
}
