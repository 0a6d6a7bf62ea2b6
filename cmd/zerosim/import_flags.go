package main

import (
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
	var names []string
	for _, g := range scenarios.GPUPresets() {
		if g.Name == name {
			return nil
		}
		names = append(names, g.Name)
	}
	return inputError{fmt.Errorf("--gpu %q is not a GPU preset (use one of %s)", name, strings.Join(names, ", "))}
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
