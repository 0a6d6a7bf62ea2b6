package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestCompletionAfterSpace: the shell scripts cobra generates call
// __complete with an empty last word when the cursor follows a space;
// that empty word is the request, not an empty argument (QA25 H1: every
// completion after a space returned nothing, exit 2).
func TestCompletionAfterSpace(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string // candidates that must be offered
		not  []string // candidates that must not
	}{
		{[]string{"__complete", ""}, []string{"run", "sweep", "scenarios"}, nil},
		{[]string{"__completeNoDesc", ""}, []string{"run", "sweep"}, nil},
		{[]string{"__complete", "scenarios", "show", ""}, []string{"default", "seed002-tiny"}, nil},
		{[]string{"__complete", "run", "--format", ""}, []string{"table", "json"}, []string{"csv"}},
		{[]string{"__complete", "memory", "--format", ""}, []string{"table", "json", "csv"}, nil},
		{[]string{"__complete", "sweep", "--format", "j"}, []string{"json"}, []string{"csv"}},
		{[]string{"__complete", "run", "--units", ""}, []string{"gib", "gb"}, nil},
		{[]string{"__complete", "memory", "--units", "g"}, []string{"gib", "gb"}, nil},
		{[]string{"__complete", "sweep", "--units", ""}, nil, []string{"gib", "gb"}}, // sweep refuses --units
		{[]string{"__complete", "plan", "--units", ""}, nil, []string{"gib", "gb"}},
		{[]string{"__complete", "run", ""}, []string{"default", "gpt3-175b-16k"}, nil},
		{[]string{"__complete", "plan", "de"}, []string{"default"}, []string{"gpt3-175b-16k"}},
		{[]string{"__complete", "sweep", "default", ""}, nil, []string{"default"}},
	} {
		out, errOut, code := runValidateCLI(t, nil, tc.args...)
		if code != 0 || strings.Contains(errOut, "zerosim:") {
			t.Errorf("%q: exit %d, stderr %q", tc.args, code, errOut)
			continue
		}
		got := map[string]bool{}
		for _, l := range strings.Split(out, "\n") {
			name, _, _ := strings.Cut(l, "\t")
			got[name] = true
		}
		for _, w := range tc.want {
			if !got[w] {
				t.Errorf("%q: %q not offered in %q", tc.args, w, out)
			}
		}
		for _, w := range tc.not {
			if got[w] {
				t.Errorf("%q: %q offered in %q", tc.args, w, out)
			}
		}
	}
}

// TestCompletionRejectsGlobalFlags: completion prints a shell script and
// rejects the global flags it would ignore, as version and scenarios do
// (QA25 L4: completion bash --set a=1 --format json -o x --wide exit 0).
func TestCompletionRejectsGlobalFlags(t *testing.T) {
	for _, tc := range []struct {
		flags   []string
		mention string
	}{
		{[]string{"--set", "a=1"}, "--set a=1: zerosim completion bash reads no scenario"},
		{[]string{"--format", "json"}, "--format json: completion prints a shell script"},
		{[]string{"-o", t.TempDir()}, "zerosim completion bash writes no files into a directory"},
		{[]string{"--wide"}, "--wide: zerosim completion bash has no narrower default"},
		{[]string{"--units", "gb"}, "--units gb: zerosim completion bash does not take --units"},
	} {
		args := append([]string{"completion", "bash"}, tc.flags...)
		code, out, errOut := runMain(t, "", args...)
		oneLine(t, args, code, out, errOut, tc.mention)
	}
	for _, sh := range []string{"bash", "zsh", "fish", "powershell"} {
		if code, out, errOut := runMain(t, "", "completion", sh); code != 0 || !strings.Contains(out, "zerosim") {
			t.Errorf("completion %s: exit %d, %d bytes, %q", sh, code, len(out), errOut)
		}
	}
}

// TestCompletionOffersDirectories: a scenario argument's completion offers
// the current directory's subdirectories that match ("configs/", with no
// space after), beside the examples and the .yaml files. The shells fall
// back to file completion only when no candidate comes back, so without
// them "zerosim run <TAB>" could not walk into configs/, and "run d<TAB>"
// lost docs/ (a regression from the completion that offered files only).
func TestCompletionOffersDirectories(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"configs", "docs", ".git"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"my.yaml", "dense.yaml", "notes.txt", "configs/a.yaml"} {
		if err := os.WriteFile(filepath.Join(dir, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
	for _, tc := range []struct {
		word, want, directive string
	}{
		{"", "configs/ default dense.yaml docs/ gpt3-175b-16k llama2-13b-a100-eth my.yaml seed000-k4 seed000-mlp seed001-azure seed001-dgx2h seed002-7b seed002-tiny", ":2"},
		{"d", "default dense.yaml docs/", ":2"},
		{"g", "gpt3-175b-16k", ":0"},
		{"configs/", "", ":0"}, // the shell's own file completion
	} {
		out, errOut, code := runValidateCLI(t, nil, "__completeNoDesc", "run", tc.word)
		if code != 0 {
			t.Fatalf("run %q: exit %d, stderr %q", tc.word, code, errOut)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		got := lines[:len(lines)-1]
		slices.Sort(got)
		if strings.Join(got, " ") != tc.want || lines[len(lines)-1] != tc.directive {
			t.Errorf("run %q: candidates %q, directive %s; want %q, %s", tc.word, got, lines[len(lines)-1], tc.want, tc.directive)
		}
	}
}
