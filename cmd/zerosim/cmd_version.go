package main

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"
)

func init() { commands = append(commands, newVersionCmd) }

// version is set at build time with -ldflags "-X main.version=…"; otherwise
// the module version from the build info is used.
var version = ""

func newVersionCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print zerosim's version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			v := version
			if v == "" {
				v = "devel"
				if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
					v = bi.Main.Version
				}
			}
			fmt.Fprintf(a.out, "zerosim %s (scenario format version 1)\n", v)
			return nil
		},
	}
}
