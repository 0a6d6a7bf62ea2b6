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

// computePackages compute and never format output.
var computePackages = []string{"memory", "zero", "numerics", "sim", "topology", "collectives", "sweep"}

// goFiles parses the non-test Go files of dir.
func goFiles(t *testing.T, fset *token.FileSet, dir string) []*ast.File {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	var files []*ast.File
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return files
}

// TestCmdFunctionsAreShort: cmd/zerosim wires flags to libraries; no function
// there is longer than 60 lines (a longer one computes or renders something
// that belongs in a library).
func TestCmdFunctionsAreShort(t *testing.T) {
	const maxLines = 60
	fset := token.NewFileSet()
	for _, f := range goFiles(t, fset, filepath.Join("cmd", "zerosim")) {
		ast.Inspect(f, func(n ast.Node) bool {
			var body *ast.BlockStmt
			name := "func literal"
			switch x := n.(type) {
			case *ast.FuncDecl:
				body, name = x.Body, x.Name.Name
			case *ast.FuncLit:
				body = x.Body
			}
			if body == nil {
				return true
			}
			start, end := fset.Position(n.Pos()), fset.Position(body.End())
			if lines := end.Line - start.Line + 1; lines > maxLines {
				t.Errorf("%s: %s is %d lines long, more than %d: move the work into a library", start, name, lines, maxLines)
			}
			return true
		})
	}
}

// TestNoReportOnlyTypes: a compute package exports no type that only
// reports/ uses (an output shape belongs to reports, so a compute package's
// struct layout never becomes a file format). A type counts as used by its
// own package when the package's code names it anywhere besides its
// declaration and its methods' receivers; tests do not count.
func TestNoReportOnlyTypes(t *testing.T) {
	fset := token.NewFileSet()
	exported := map[string]map[string]bool{} // package → exported type names
	usedBy := map[string]map[string]bool{}   // "pkg.Type" → using packages
	use := func(pkg, typ, by string) {
		k := pkg + "." + typ
		if usedBy[k] == nil {
			usedBy[k] = map[string]bool{}
		}
		usedBy[k][by] = true
	}
	for _, pkg := range computePackages {
		exported[pkg] = map[string]bool{}
		for _, f := range goFiles(t, fset, pkg) {
			for _, d := range f.Decls {
				if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.TYPE {
					for _, s := range g.Specs {
						if ts := s.(*ast.TypeSpec); ts.Name.IsExported() {
							exported[pkg][ts.Name.Name] = true
						}
					}
				}
			}
		}
	}
	dirs := append([]string{"reports", "scenarios", "units", filepath.Join("cmd", "zerosim")}, computePackages...)
	for _, dir := range dirs {
		by := filepath.ToSlash(dir)
		for _, f := range goFiles(t, fset, dir) {
			imports := map[string]string{} // local name → our package
			for _, im := range f.Imports {
				p := strings.Trim(im.Path.Value, `"`)
				if rel, ok := strings.CutPrefix(p, module+"/"); ok {
					name := filepath.Base(rel)
					if im.Name != nil {
						name = im.Name.Name
					}
					imports[name] = rel
				}
			}
			skip := map[*ast.Ident]bool{}
			ast.Inspect(f, func(n ast.Node) bool {
				switch x := n.(type) {
				case *ast.TypeSpec:
					skip[x.Name] = true
				case *ast.FuncDecl:
					if x.Recv != nil {
						ast.Inspect(x.Recv, func(n ast.Node) bool {
							if id, ok := n.(*ast.Ident); ok {
								skip[id] = true
							}
							return true
						})
					}
				case *ast.Field:
					for _, id := range x.Names {
						skip[id] = true
					}
				case *ast.KeyValueExpr:
					if id, ok := x.Key.(*ast.Ident); ok {
						skip[id] = true
					}
				case *ast.SelectorExpr:
					if id, ok := x.X.(*ast.Ident); ok {
						if pkg, ok := imports[id.Name]; ok && exported[pkg][x.Sel.Name] {
							use(pkg, x.Sel.Name, by)
						}
					}
					skip[x.Sel] = true
				case *ast.Ident:
					if !skip[x] && exported[by][x.Name] {
						use(by, x.Name, by)
					}
				}
				return true
			})
		}
	}
	for _, pkg := range computePackages {
		for typ := range exported[pkg] {
			users := usedBy[pkg+"."+typ]
			if len(users) == 1 && users["reports"] {
				t.Errorf("%s.%s is used only by reports: make it a reports type (an output shape is not a compute result)", pkg, typ)
			}
		}
	}
}

// TestComputeTypesAreNoFileFormat: no exported struct of a compute package
// carries json tags. Output shapes are reports' types (reports/*_json.go),
// so changing a compute package's struct changes no file format.
func TestComputeTypesAreNoFileFormat(t *testing.T) {
	// Formats a compute package reads back itself: the sweep output's meta
	// line with the build it names, which merge and --resume parse.
	readBack := map[string]bool{"sweep.Meta": true, "sweep.Build": true}
	fset := token.NewFileSet()
	for _, pkg := range computePackages {
		for _, f := range goFiles(t, fset, pkg) {
			ast.Inspect(f, func(n ast.Node) bool {
				ts, ok := n.(*ast.TypeSpec)
				if !ok || !ts.Name.IsExported() || readBack[pkg+"."+ts.Name.Name] {
					return true
				}
				if st, ok := ts.Type.(*ast.StructType); ok {
					for _, fl := range st.Fields.List {
						if fl.Tag != nil && strings.Contains(fl.Tag.Value, "json:") {
							t.Errorf("%s: %s.%s has json tags: make the file format a reports type", fset.Position(fl.Pos()), pkg, ts.Name.Name)
							return false
						}
					}
				}
				return true
			})
		}
	}
}
