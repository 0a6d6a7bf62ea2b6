// Package zerosim_test holds repository-wide checks: the import rules between
// zerosim's packages (DEVELOPERS.md) and that compute packages never print.
package zerosim_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const module = "github.com/zerosim/zerosim"

// deps returns, for every package of the module, the module packages and
// output libraries it imports (transitively).
func deps(t *testing.T) map[string][]string {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps=false", "-f", `{{.ImportPath}}{{range .Deps}} {{.}}{{end}}`, "./...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	m := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		m[strings.TrimPrefix(f[0], module+"/")] = f[1:]
	}
	return m
}

func TestImportRules(t *testing.T) {
	all := deps(t)
	ours := func(d string) (string, bool) {
		if strings.HasPrefix(d, module+"/") {
			return strings.TrimPrefix(d, module+"/"), true
		}
		return "", false
	}
	for pkg, ds := range all {
		for _, d := range ds {
			p, isOurs := ours(d)
			switch {
			case isOurs && strings.HasPrefix(p, "cmd/"):
				t.Errorf("%s imports %s: nothing may import cmd/", pkg, p)
			case pkg == "sim" && isOurs:
				t.Errorf("sim imports %s: sim must import none of our packages", p)
			case pkg == "topology" && isOurs && p != "units" && p != "scenarios":
				t.Errorf("topology imports %s: topology knows no algorithm", p)
			case isOurs && p == "reports" && !strings.HasPrefix(pkg, "cmd/"):
				t.Errorf("%s imports reports: only cmd/ may", pkg)
			}
			formatter := strings.HasPrefix(d, "github.com/olekukonko/tablewriter") || strings.HasPrefix(d, "gonum.org/v1/plot") ||
				strings.HasPrefix(d, "github.com/schollz/progressbar") || strings.HasPrefix(d, "github.com/spf13/cobra")
			if formatter && pkg != "reports" && !strings.HasPrefix(pkg, "cmd/") && !strings.HasPrefix(pkg, "reports/") {
				t.Errorf("%s imports %s: only reports/ and cmd/ format output", pkg, d)
			}
		}
	}
}

// TestComputePackagesDoNotPrint scans memory/, zero/, numerics/, sim/, sweep/,
// topology/ and collectives/ for calls that print or touch files.
func TestComputePackagesDoNotPrint(t *testing.T) {
	banned := map[string]bool{
		"fmt.Print": true, "fmt.Printf": true, "fmt.Println": true, "fmt.Fprint": true, "fmt.Fprintf": true, "fmt.Fprintln": true,
		"os.Create": true, "os.WriteFile": true, "os.OpenFile": true, "os.Stdout": true, "os.Stderr": true, "log.Print": true, "log.Printf": true, "log.Println": true, "println": true, "print": true,
	}
	for _, dir := range []string{"memory", "zero", "numerics", "sim", "topology", "collectives", "sweep"} {
		files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			fset := token.NewFileSet()
			af, err := parser.ParseFile(fset, f, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(af, func(n ast.Node) bool {
				var name string
				switch x := n.(type) {
				case *ast.SelectorExpr:
					if id, ok := x.X.(*ast.Ident); ok {
						name = id.Name + "." + x.Sel.Name
					}
				case *ast.CallExpr:
					if id, ok := x.Fun.(*ast.Ident); ok {
						name = id.Name
					}
				}
				if banned[name] {
					t.Errorf("%s: %s uses %s: compute packages never print or write files", fset.Position(n.Pos()), dir, name)
				}
				return true
			})
		}
	}
}
