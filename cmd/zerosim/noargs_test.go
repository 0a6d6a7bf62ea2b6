package main

import "testing"

// TestNoArgsCommands: an argument to a command that takes none is named
// as an argument, not as an unknown command (QA25 L11: "unknown command
// \"extra\" for \"zerosim version\"").
func TestNoArgsCommands(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		mention string
	}{
		{[]string{"version", "extra"}, `zerosim: version takes no arguments (got "extra"; usage: zerosim version [flags])`},
		{[]string{"collective", "extra", "more"}, `zerosim: collective takes no arguments (got "extra"; usage: zerosim collective [flags])`},
		// A scenario file: the flag that takes it (qatput33 U2).
		{[]string{"collective", "base.yaml"}, `zerosim: collective takes no arguments (got "base.yaml"): give the scenario as --scenario base.yaml`},
		{[]string{"collective", "noargs_test.go"}, `give the scenario as --scenario noargs_test.go`},
		{[]string{"completion", "bash", "extra"}, `zerosim: completion bash takes no arguments (got "extra"; usage: zerosim completion bash)`},
		{[]string{"completion", "fish", "extra"}, `zerosim: completion fish takes no arguments (got "extra"`},
	} {
		code, out, errOut := runMain(t, "", tc.args...)
		oneLine(t, tc.args, code, out, errOut, tc.mention)
	}
}
