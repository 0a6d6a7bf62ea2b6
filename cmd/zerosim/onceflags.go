package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// onceValue is a flag of one value that refuses a second, different one:
// pflag keeps the last, so "run -o a1 -o b1" wrote only b1 and a
// generated command line with a duplicated flag silently wrote elsewhere
// (QA25 L5). The same value again changes nothing and passes.
type onceValue struct {
	pflag.Value
	given bool
	first string
}

// errTwice is a second, different value of a onceValue.
type errTwice struct{ first, second string }

func (e errTwice) Error() string { return fmt.Sprintf("given twice (%q, then %q)", e.first, e.second) }

func (v *onceValue) Set(s string) error {
	if v.given && s != v.first {
		return errTwice{v.first, s}
	}
	v.given, v.first = true, s
	return v.Value.Set(s)
}

// onceFlags makes every flag of one value of root and its commands a
// onceValue; lists (--set, --grid, --vary) and counts take several.
func onceFlags(root *cobra.Command) {
	wrap := func(f *pflag.Flag) {
		t := f.Value.Type()
		if _, ok := f.Value.(*onceValue); ok || strings.Contains(t, "Slice") || strings.Contains(t, "Array") || t == "count" {
			return
		}
		f.Value = &onceValue{Value: f.Value}
	}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.PersistentFlags().VisitAll(wrap)
		c.Flags().VisitAll(wrap)
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(root)
}

// twiceFlag is pflag's error for a onceValue given a second value, as one
// line naming the flag as typed and both values; nil for any other error.
func twiceFlag(err error) error {
	var iv *pflag.InvalidValueError
	var tw errTwice
	if !errors.As(err, &iv) || !errors.As(err, &tw) {
		return nil
	}
	f := iv.GetFlag()
	name := "--" + f.Name
	if f.Shorthand != "" {
		name = fmt.Sprintf("-%s (--%s)", f.Shorthand, f.Name)
	}
	return fmt.Errorf("%s %v: give it once", name, tw)
}
