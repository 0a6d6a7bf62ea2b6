package main

import (
	"encoding/json"
	"fmt"
	"runtime"

	"github.com/spf13/cobra"
	"github.com/zerosim/zerosim/reports"
)

func init() { commands = append(commands, newVersionCmd) }

// scenarioFormat is the scenario file format version this binary reads.
const scenarioFormat = 1

func newVersionCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print zerosim's version (the git revision it was built from)",
		Long: `version prints the zerosim version, the git revision and commit time the
binary was built from (when it was built inside a git checkout), and the
scenario format version it reads. "zerosim --version" prints the same line.
--format json prints it as a JSON object.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			b := reports.ReadBuild()
			if a.format == "json" {
				e := json.NewEncoder(a.out)
				e.SetIndent("", "  ")
				return e.Encode(versionJSON{b, runtime.Version(), scenarioFormat})
			}
			fmt.Fprintln(a.out, versionLine(b))
			return nil
		},
	}
}

// versionJSON is version --format json (docs/version.schema.json): the
// build as result.json's zerosim block, the Go toolchain and the scenario
// format version it reads.
type versionJSON struct {
	reports.Build
	Go             string `json:"go"`
	ScenarioFormat int    `json:"scenario_format"`
}

// versionLine is what "zerosim version" and "zerosim --version" print.
func versionLine(b reports.Build) string {
	return fmt.Sprintf("zerosim %s (scenario format version %d)", b, scenarioFormat)
}
