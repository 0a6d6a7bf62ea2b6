package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/zerosim/zerosim/scenarios"
)

// loadScenario reads the scenario a command was given: "" is the embedded
// default example, "-" standard input, an existing path a file, and any
// other name of an embedded example (see "zerosim scenarios") that example.
// --set overrides are applied. Errors are input errors (exit code 2).
func (a *app) loadScenario(arg string) (*scenarios.Scenario, error) {
	s, err := a.readScenario(arg)
	if err != nil {
		return nil, inputError{err}
	}
	for _, w := range s.Warnings {
		fmt.Fprintf(a.err, "zerosim: warning: %s\n", w)
	}
	return s, nil
}

func (a *app) readScenario(arg string) (*scenarios.Scenario, error) {
	switch arg {
	case "":
		data, _ := scenarios.Example(scenarios.DefaultExample)
		return scenarios.Load(scenarios.DefaultExample+".yaml", data, a.sets)
	case "-":
		data, err := scenarios.ReadLimited("<stdin>", a.in)
		if err != nil {
			return nil, err
		}
		return scenarios.Load("<stdin>", data, a.sets)
	}
	if _, err := os.Stat(arg); errors.Is(err, fs.ErrNotExist) {
		if data, ok := scenarios.Example(arg); ok {
			return scenarios.Load(arg+".yaml", data, a.sets)
		}
	}
	return scenarios.LoadFile(arg, a.sets)
}
