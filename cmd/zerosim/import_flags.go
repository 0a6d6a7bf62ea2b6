package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/zerosim/zerosim/scenarios"
)

// The cluster and batch flags the config importers share (import
// deepspeed, accelerate, llm-foundry, megatron; torchtitan's reader checks
// its own), checked against the limits a scenario has.

// checkGPUFlag checks --gpu: unset, or a GPU preset's name.
func checkGPUFlag(name string) error {
	if name == "" {
		return nil
	}
	for _, g := range scenarios.GPUPresets() {
		if g.Name == name {
			return nil
		}
	}
	return inputError{errors.New(scenarios.UnknownGPU("--gpu", name))}
}

// checkCountFlag checks a given --flag's whole number v against 1..hi.
func checkCountFlag(flag string, given bool, v, hi int64) error {
	if given && (v < 1 || v > hi) {
		return inputError{fmt.Errorf("--%s %d is out of range (use 1 to %d)", flag, v, hi)}
	}
	return nil
}

// checkClusterFlags checks --nodes and --gpus-per-node, each when given.
func checkClusterFlags(nodesGiven bool, nodes int64, gpusGiven bool, gpus int64) error {
	if err := checkCountFlag("nodes", nodesGiven, nodes, scenarios.MaxNodes); err != nil {
		return err
	}
	return checkCountFlag("gpus-per-node", gpusGiven, gpus, scenarios.MaxGPUsPerNode)
}

// importSettingJSON is one imported key in an importer's --format json.
type importSettingJSON struct {
	Key   string `json:"key"`
	Value string `json:"value"`
	From  string `json:"from"`
}

func settingsJSON(ss scenarios.ImportSettings) []importSettingJSON {
	out := make([]importSettingJSON, 0, len(ss))
	for _, s := range ss {
		out = append(out, importSettingJSON(s))
	}
	return out
}

// writeSettings writes ss as YAML sections, each key under a comment
// naming where it comes from; section, when not nil, is called as each
// section begins (before its header) and may write what goes before it
// or, returning lines, extra keys right after the header; after, when not
// nil, is called after each key and may write a key that follows it.
func writeSettings(b *strings.Builder, ss scenarios.ImportSettings, section func(sec string) string, after func(key string)) {
	cur := ""
	for _, s := range ss {
		sec, key, _ := strings.Cut(s.Key, ".")
		if sec != cur {
			cur = sec
			extra := ""
			if section != nil {
				extra = section(sec)
			}
			fmt.Fprintf(b, "%s:\n%s", sec, extra)
		}
		fmt.Fprintf(b, "  # %s\n  %s: %s\n", s.From, key, s.Value)
		if after != nil {
			after(s.Key)
		}
	}
}
