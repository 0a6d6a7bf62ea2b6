package scenarios

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// readConfigFile reads the regular file at path for an importer (a
// config.json, ds_config.json, job config, training YAML or launch
// script), at most limit+1 bytes: the importer refuses more, naming its
// kind. Errors name the file (control characters escaped) and, for what is
// not a regular file, want: what to give instead.
func readConfigFile(path, want string, limit int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		msg := err.Error()
		var pe *os.PathError
		if errors.As(err, &pe) {
			msg = pe.Err.Error()
		}
		return nil, fmt.Errorf("%s: cannot read the file: %s (check the path)", ttName(path), msg)
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file (give %s)", ttName(path), want)
	}
	data, err := io.ReadAll(io.LimitReader(f, int64(limit)+1))
	if err != nil {
		return nil, fmt.Errorf("%s: cannot read the file: %v", ttName(path), err)
	}
	return data, nil
}

// ImportSetting is one scenario key a config importer determines (import
// deepspeed, accelerate, llm-foundry).
type ImportSetting struct {
	// Key is the dotted scenario path (communication.bucket_size).
	Key string
	// Value is its YAML scalar.
	Value string
	// From names the config's keys (or default) and the rule that give
	// it, one line: the comment printed above the key.
	From string
}

// ImportSettings are an import's keys in print order.
type ImportSettings []ImportSetting

// Get returns the value of the scenario key, "" when the import does not
// set it.
func (ss ImportSettings) Get(key string) string {
	for _, s := range ss {
		if s.Key == key {
			return s.Value
		}
	}
	return ""
}

// InOrder returns ss sorted by section (the part before the first dot) in
// the order sections gives, keeping the import's order within a section.
func (ss ImportSettings) InOrder(sections ...string) ImportSettings {
	rank := map[string]int{}
	for i, sec := range sections {
		rank[sec] = i
	}
	out := append(ImportSettings(nil), ss...)
	sort.SliceStable(out, func(i, j int) bool {
		a, _, _ := strings.Cut(out[i].Key, ".")
		b, _, _ := strings.Cut(out[j].Key, ".")
		return rank[a] < rank[b]
	})
	return out
}

// clusterYAML writes an imported scenario's cluster section: nodes and the
// GPU preset, or the SET_NODES and SET_GPU placeholders Load rejects at
// their line (nodesHint and gpuHint say what to put there), and
// gpus_per_node; nodesFrom and gpusFrom, when not "", say where a given
// value came from.
func clusterYAML(w func(string, ...any), nodes int, nodesFrom, nodesHint string, gpusPerNode int, gpusFrom, gpu, gpuHint string) {
	from := func(s string) string {
		if s == "" {
			return ""
		}
		return "  # " + s
	}
	w("cluster:\n")
	if nodes > 0 {
		w("  nodes: %d%s\n", nodes, from(nodesFrom))
	} else {
		w("  nodes: SET_NODES  # %s\n", nodesHint)
	}
	w("  gpus_per_node: %d%s\n", gpusPerNode, from(gpusFrom))
	if gpu != "" {
		w("  gpu: %s\n", gpu)
	} else {
		w("  gpu: SET_GPU  # %s\n", gpuHint)
	}
}
