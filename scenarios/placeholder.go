package scenarios

import (
	"fmt"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"
)

// placeholderRE matches the values the importers write where their input
// does not say the value (clusterYAML's SET_NODES and SET_GPU, SET_DP,
// SET_GRAD_ACCUM, SET_HF_CONFIG).
var placeholderRE = regexp.MustCompile(`^SET_[A-Z_]+$`)

// placeholders refuses a document that still holds an importer's
// placeholders, in one line at the first, naming the others and how to
// fill them all: decoding them one at a time said `nodes: "SET_NODES" is
// not an integer (use a whole number)`, then the same of SET_DP, then
// that gpu "SET_GPU" is unknown, three runs for one cause.
func (l *loader) placeholders(root *yaml.Node) error {
	var found []*yaml.Node
	key := map[*yaml.Node]string{}
	var walk func(n *yaml.Node, k string)
	walk = func(n *yaml.Node, k string) {
		if n.Kind == yaml.ScalarNode && n.Style&^yaml.TaggedStyle == 0 && placeholderRE.MatchString(n.Value) {
			found = append(found, n)
			key[n] = k
		}
		for i, c := range n.Content {
			if n.Kind == yaml.MappingNode && i%2 == 1 {
				walk(c, n.Content[i-1].Value)
			} else {
				walk(c, k)
			}
		}
	}
	walk(root, "")
	if len(found) == 0 {
		return nil
	}
	var others []string
	flags := map[string]bool{}
	for _, n := range found {
		if n != found[0] {
			at := ""
			if n.Line > 0 {
				at = fmt.Sprintf(" (%d:%d)", n.Line, n.Column)
			}
			others = append(others, n.Value+at)
		}
		if n.Value == "SET_HF_CONFIG" {
			flags["--hf CONFIG"] = true
		} else {
			flags["--nodes N --gpu GPU"] = true
		}
	}
	msg := key[found[0]] + ": " + found[0].Value + " is a placeholder zerosim import wrote where its input does not say the value"
	if len(others) > 0 {
		msg += "; so are " + strings.Join(others, ", ")
	}
	var fl []string
	for _, f := range []string{"--nodes N --gpu GPU", "--hf CONFIG"} {
		if flags[f] {
			fl = append(fl, f)
		}
	}
	msg += " (write your values there, the comment beside each says what, or run the import again with " + strings.Join(fl, " and ") + ")"
	return l.errAt(found[0], msg)
}
