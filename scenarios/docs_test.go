package scenarios

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/units"
)

// TestDocs keeps docs/scenario-format.md honest: its model preset table
// matches the presets' totals, its GPU and link tables list every preset,
// and its complete example loads.
func TestDocs(t *testing.T) {
	b, err := os.ReadFile("../docs/scenario-format.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	rows := 0
	for _, line := range strings.Split(doc, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 8 {
			continue
		}
		name := strings.TrimSpace(cells[1])
		if _, ok := findModel(name); !ok {
			continue
		}
		rows++
		count := strings.Fields(strings.TrimSpace(cells[7]))[0]
		want, err := strconv.ParseInt(strings.ReplaceAll(count, ",", ""), 10, 64)
		if err != nil {
			t.Errorf("%s: bad count %q", name, count)
			continue
		}
		s := loadModel(t, "  preset: "+name+"\n")
		if int64(s.Model.Params) != want {
			t.Errorf("docs say %s has %d parameters, Load gives %d", name, want, s.Model.Params)
		}
	}
	if rows != len(modelPresets) {
		t.Errorf("docs model table has %d preset rows, want %d", rows, len(modelPresets))
	}
	for _, n := range append(gpuNames(), linkNames()...) {
		if !strings.Contains(doc, "| "+n+" |") {
			t.Errorf("docs have no table row for preset %s", n)
		}
	}
	// The GPU table's memory column is the preset's: whole GiB, else MiB.
	for _, g := range gpuPresets {
		cell := commas(int64(g.Memory/units.MiB)) + " MiB"
		if g.Memory%units.GiB == 0 {
			cell = strconv.FormatInt(int64(g.Memory/units.GiB), 10) + " GiB"
		}
		if !strings.Contains(doc, "| "+g.Name+" | "+cell+" |") {
			t.Errorf("docs' GPU table does not give %s's memory as %s", g.Name, cell)
		}
	}
	for _, n := range ExampleNames() {
		if !strings.Contains(doc, "| "+n+" |") {
			t.Errorf("docs do not list example %s", n)
		}
	}
	i := strings.Index(doc, "```yaml\n")
	j := strings.Index(doc[i+8:], "```")
	if i < 0 || j < 0 {
		t.Fatal("no yaml example in the docs")
	}
	s, err := Load("scenario-format.md", []byte(doc[i+8:i+8+j]), nil)
	if err != nil {
		t.Fatalf("the docs' complete example: %v", err)
	}
	if s.N() != 16 || s.Parallelism.K != 2 || s.Model.Params != 6_738_415_616 || len(s.Cluster.LinkOverrides) != 1 {
		t.Errorf("the docs' example resolved to N=%d K=%d P=%d", s.N(), s.Parallelism.K, s.Model.Params)
	}
}
