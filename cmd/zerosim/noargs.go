package main

import (
	"fmt"

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
