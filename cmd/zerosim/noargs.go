package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
)

// noArgs is cobra.NoArgs naming the argument as one: cobra's says
// `unknown command "extra" for "zerosim version"` of a command that has
// no commands (QA25 L11).
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	return inputError{fmt.Errorf("%s takes no arguments (got %q; usage: %s)", commandName(cmd), args[0], cmd.UseLine())}
}

// scenarioFlagArgs is noArgs for a command that takes its scenario as
// --scenario (collective): an argument that names a scenario file (a
// .yaml or .yml name, or a file that exists) is refused with the flag
// that takes it (qatput33 U2: "collective takes no arguments" named no
// fix); any other argument as noArgs refuses it.
func scenarioFlagArgs(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	a := args[0]
	fi, err := os.Stat(a)
	if strings.HasSuffix(a, ".yaml") || strings.HasSuffix(a, ".yml") || err == nil && fi.Mode().IsRegular() {
		return inputError{fmt.Errorf("%s takes no arguments (got %q): give the scenario as --scenario %s", commandName(cmd), a, a)}
	}
	return noArgs(cmd, args)
}
