package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/zerosim/zerosim/reports"
	"github.com/zerosim/zerosim/scenarios"
)

func init() { commands = append(commands, newScenariosCmd) }

func newScenariosCmd(a *app) *cobra.Command {
	c := &cobra.Command{
		Use:   "scenarios",
		Short: "List the embedded example scenarios",
		Long: `scenarios lists the example scenarios built into zerosim with their
descriptions. "zerosim scenarios show NAME" prints one of them; save it, edit
it and check it with "zerosim validate FILE".`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return listScenarios(a.out, a.format)
		},
	}
	c.AddCommand(&cobra.Command{
		Use:   "show NAME",
		Short: "Print an embedded example scenario verbatim",
		Args:  cobra.ExactArgs(1),
		ValidArgsFunction: func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
			if len(args) > 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			var out []string
			for _, n := range scenarios.ExampleNames() {
				if strings.HasPrefix(n, toComplete) {
					out = append(out, n)
				}
			}
			return out, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			b, ok := scenarios.Example(args[0])
			if !ok {
				if near := scenarios.NearExample(args[0]); near != "" {
					// It listed all nine for "defualt".
					return inputError{fmt.Errorf("unknown scenario %q (did you mean %s?)", args[0], near)}
				}
				return inputError{fmt.Errorf("unknown scenario %q (use %s)", args[0], strings.Join(scenarios.ExampleNames(), ", "))}
			}
			_, err := a.out.Write(b)
			return err
		},
	})
	return c
}

// scenariosJSON is scenarios --format json: the build whose examples
// they are, as every JSON output names it, and the examples.
type scenariosJSON struct {
	Zerosim   reports.Build  `json:"zerosim"`
	Scenarios []scenarioInfo `json:"scenarios"`
}

// scenarioInfo is one row of the scenarios list.
type scenarioInfo struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

func exampleInfos() ([]scenarioInfo, error) {
	var rows []scenarioInfo
	for _, n := range scenarios.ExampleNames() {
		b, _ := scenarios.Example(n)
		s, err := scenarios.Load(n+".yaml", b, nil)
		if err != nil {
			return nil, fmt.Errorf("embedded example %s: %w", n, err)
		}
		rows = append(rows, scenarioInfo{n, s.Description})
	}
	return rows, nil
}

func listScenarios(out io.Writer, format string) error {
	rows, err := exampleInfos()
	if err != nil {
		return err
	}
	switch format {
	case "json":
		e := json.NewEncoder(out)
		e.SetIndent("", "  ")
		return e.Encode(scenariosJSON{Zerosim: reports.ReadBuild(), Scenarios: rows})
	case "csv":
		w := csv.NewWriter(out)
		w.Write([]string{"name", "description"})
		for _, r := range rows {
			w.Write([]string{r.Name, r.Description})
		}
		w.Flush()
		return w.Error()
	}
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "NAME\tDESCRIPTION")
	for _, r := range rows {
		fmt.Fprintf(w, "%s\t%s\n", r.Name, r.Description)
	}
	return w.Flush()
}
