package main

import (
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/zerosim/zerosim/scenarios"
)

// isCompletionRequest reports cobra's hidden __complete commands, which
// the shell scripts of "zerosim completion" call with the command line
// being completed as their arguments.
func isCompletionRequest(cmd *cobra.Command) bool {
	return cmd.Name() == cobra.ShellCompRequestCmd || cmd.Name() == cobra.ShellCompNoDescRequestCmd
}

// scenarioArgs names the commands whose arguments are scenarios (FILE or
// an example's name), with whether every argument is one (compare) or
// only the first.
var scenarioArgs = map[string]bool{"run": false, "plan": false, "sweep": false, "fit": false, "memory": false, "verify": false, "compare": true}

// addCompletions offers the values of --format (the command's own) and
// --units, and the example scenarios' names where a scenario goes.
func addCompletions(root *cobra.Command) {
	_ = root.RegisterFlagCompletionFunc("format", func(cmd *cobra.Command, _ []string, prefix string) ([]string, cobra.ShellCompDirective) {
		formats := []string{"table", "json", "csv"}
		if o, ok := commandOutputs[commandKey(cmd)]; ok {
			formats = o.formats
		}
		return withPrefix(formats, prefix), cobra.ShellCompDirectiveNoFileComp
	})
	_ = root.RegisterFlagCompletionFunc("units", func(cmd *cobra.Command, _ []string, prefix string) ([]string, cobra.ShellCompDirective) {
		if o, ok := commandOutputs[commandKey(cmd)]; !ok || !o.units {
			return nil, cobra.ShellCompDirectiveNoFileComp // the command refuses --units
		}
		return withPrefix([]string{"gib", "gb"}, prefix), cobra.ShellCompDirectiveNoFileComp
	})
	for _, c := range root.Commands() {
		every, ok := scenarioArgs[c.Name()]
		if !ok || c.ValidArgsFunction != nil {
			continue
		}
		c.ValidArgsFunction = func(_ *cobra.Command, args []string, prefix string) ([]string, cobra.ShellCompDirective) {
			if len(args) > 0 && !every {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			return scenarioCandidates(prefix)
		}
	}
}

// scenarioCandidates are the example names, and the scenario files
// (.yaml, .yml, .json) and the directories ("configs/") of the current
// directory, that start with prefix; none (a path, or no example
// matching) leaves the shell to complete file names. The shells fall
// back to their own file completion only when no candidate comes back,
// so the directories are offered here, with no space after them, for the
// next TAB to walk into (a prefix with a "/" in it).
func scenarioCandidates(prefix string) ([]string, cobra.ShellCompDirective) {
	if strings.ContainsAny(prefix, `/\`) {
		return nil, cobra.ShellCompDirectiveDefault
	}
	out := withPrefix(scenarios.ExampleNames(), prefix)
	if len(out) == 0 {
		return nil, cobra.ShellCompDirectiveDefault
	}
	dirs := false
	entries, _ := os.ReadDir(".")
	for _, e := range entries {
		n := e.Name()
		if !strings.HasPrefix(n, prefix) || (strings.HasPrefix(n, ".") && !strings.HasPrefix(prefix, ".")) {
			continue
		}
		if isDir(e) {
			out, dirs = append(out, n+"/"), true
		} else if strings.HasSuffix(n, ".yaml") || strings.HasSuffix(n, ".yml") || strings.HasSuffix(n, ".json") {
			out = append(out, n)
		}
	}
	if dirs {
		return out, cobra.ShellCompDirectiveNoSpace
	}
	return out, cobra.ShellCompDirectiveDefault
}

// isDir reports a directory entry that is a directory or a link to one.
func isDir(e os.DirEntry) bool {
	if e.IsDir() {
		return true
	}
	if e.Type()&os.ModeSymlink == 0 {
		return false
	}
	st, err := os.Stat(e.Name())
	return err == nil && st.IsDir()
}

// withPrefix is the values that start with prefix.
func withPrefix(values []string, prefix string) []string {
	var out []string
	for _, v := range values {
		if strings.HasPrefix(v, prefix) {
			out = append(out, v)
		}
	}
	return out
}
