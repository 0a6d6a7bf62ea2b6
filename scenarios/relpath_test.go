package scenarios

import (
	"os"
	"path/filepath"
	"testing"
)

// TestRelativePathFromWorkingDirectory: a relative hf_config or calibration
// typed on the command line (--set) names a file from the working
// directory, but the loader reads it from the scenario's directory, as the
// format says; the error said only "check the path". It now gives the path
// to write, from the scenario's directory (../cfg/… for sub/s.yaml), and
// says nothing more when the file is nowhere.
func TestRelativePathFromWorkingDirectory(t *testing.T) {
	dir := t.TempDir()
	cfg, err := os.ReadFile(filepath.Join("hfpresets", "llama3.2-1b.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"sub", "cfg"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "cfg", "x.json"), cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "cfg", "cal.yaml"), []byte("version: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	data, _ := Example("default")
	for _, c := range []struct{ set, want string }{
		{"model.hf_config=cfg/x.json", "sub/s.yaml: --set model.hf_config=cfg/x.json: hf_config: sub/cfg/x.json: cannot read the file: no such file or directory (a relative path is read from the scenario's directory, sub, not the working directory, where cfg/x.json is: give it as ../cfg/x.json, or as an absolute path)"},
		{"model.hf_config=cfg/none.json", "sub/s.yaml: --set model.hf_config=cfg/none.json: hf_config: sub/cfg/none.json: cannot read the file: no such file or directory (check the path)"},
		{"communication.calibration=cfg/cal.yaml", "sub/s.yaml: --set communication.calibration=cfg/cal.yaml: cannot read sub/cfg/cal.yaml (a relative path is read from the scenario's directory, sub, not the working directory, where cfg/cal.yaml is: give it as ../cfg/cal.yaml, or as an absolute path)"},
	} {
		_, err := Load("sub/s.yaml", data, []string{c.set})
		if err == nil || err.Error() != c.want {
			t.Errorf("--set %s:\n got %v\nwant %s", c.set, err, c.want)
		}
	}
}
