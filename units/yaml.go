package units

import (
	"fmt"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// PosError is a parse error at a position in a YAML document. Line and
// Column count from 1, as yaml.v3 reports them.
type PosError struct {
	Line, Column int
	Err          error
}

func (e *PosError) Error() string { return fmt.Sprintf("%d:%d: %v", e.Line, e.Column, e.Err) }
func (e *PosError) Unwrap() error { return e.Err }

func scalar(n *yaml.Node, what string) (string, error) {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		return "", &PosError{n.Line, n.Column, fmt.Errorf("expected a %s, got %s", what, DescribeNode(n))}
	}
	return n.Value, nil
}

// DescribeNode names a YAML node's value for error messages: "a mapping",
// "a list", "an alias", "a document", "empty", a quoted string ("\"abc\"")
// or a bare number (1.5), clipped to 40 characters. Scenario errors and the
// unit unmarshalers share it, so a value is named the same way everywhere.
func DescribeNode(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	case yaml.DocumentNode:
		return "a document"
	}
	v := n.Value
	if len(v) > 40 {
		v = v[:37] + "..."
	}
	switch {
	case n.Tag == "!!null":
		return "empty"
	case n.Tag != "!!str" && strconv.CanBackquote(v) && !strings.ContainsAny(v, "` "):
		return v
	}
	return strconv.Quote(v)
}

func unmarshal[T ~int64](n *yaml.Node, dst *T, what string, p func(string) (T, error)) error {
	s, err := scalar(n, what)
	if err != nil {
		return err
	}
	v, err := p(s)
	if err != nil {
		return &PosError{n.Line, n.Column, err}
	}
	*dst = v
	return nil
}

// UnmarshalYAML reads a size such as 80GiB.
func (b *Bytes) UnmarshalYAML(n *yaml.Node) error { return unmarshal(n, b, "size", ParseBytes) }

// UnmarshalYAML reads a bandwidth such as 450GB/s.
func (bw *Bandwidth) UnmarshalYAML(n *yaml.Node) error {
	return unmarshal(n, bw, "bandwidth", ParseBandwidth)
}

// UnmarshalYAML reads a duration such as 500ns.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	return unmarshal(n, d, "duration", ParseDuration)
}

// UnmarshalYAML reads a count such as 7B.
func (c *Count) UnmarshalYAML(n *yaml.Node) error { return unmarshal(n, c, "count", ParseCount) }

// UnmarshalYAML reads a rate such as 312TFLOPS.
func (f *FLOPS) UnmarshalYAML(n *yaml.Node) error { return unmarshal(n, f, "rate", ParseFLOPS) }

// MarshalYAML writes the exact number of bytes with its unit, so a round
// trip is lossless (a bare number is not a size).
func (b Bytes) MarshalYAML() (any, error) { return fmt.Sprintf("%dB", int64(b)), nil }

// MarshalYAML writes the exact rate in bytes per second with its unit.
func (bw Bandwidth) MarshalYAML() (any, error) { return fmt.Sprintf("%dB/s", int64(bw)), nil }

// MarshalYAML writes the exact time in picoseconds with its unit.
func (d Duration) MarshalYAML() (any, error) { return fmt.Sprintf("%dps", int64(d)), nil }

// MarshalYAML writes the exact count.
func (c Count) MarshalYAML() (any, error) { return int64(c), nil }

// MarshalYAML writes the exact rate.
func (f FLOPS) MarshalYAML() (any, error) { return int64(f), nil }
