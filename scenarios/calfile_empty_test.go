package scenarios

import (
	"os"
	"path/filepath"
	"testing"
)

// TestCalibrationEmptyOrDirectory: an empty calibration file, one of
// comments only, and a directory named as the calibration each give one
// line that says so and what to give (QA22 L5: yaml's bare "EOF", and
// "cannot read /tmp: read /tmp: is a directory" with no fix).
func TestCalibrationEmptyOrDirectory(t *testing.T) {
	dir := t.TempDir()
	empty, comments := filepath.Join(dir, "empty.yaml"), filepath.Join(dir, "comments.yaml")
	if err := os.WriteFile(empty, []byte("\n  \n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(comments, []byte("# fitted later\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	data, _ := Example("default")
	for _, c := range []struct{ set, want string }{
		{"communication.calibration=" + empty, "s.yaml: --set communication.calibration=" + empty + ": " + empty + ": empty file (a calibration file is written by zerosim calibrate)"},
		{"communication.calibration=" + comments, "s.yaml: --set communication.calibration=" + comments + ": " + comments + ": no calibration in the file, only comments (a calibration file is written by zerosim calibrate)"},
		{"communication.calibration=" + dir, "s.yaml: --set communication.calibration=" + dir + ": " + dir + " is a directory (name the file zerosim calibrate wrote, e.g. " + filepath.Join(dir, "calibration.yaml") + ")"},
	} {
		_, err := Load("s.yaml", data, []string{c.set})
		if err == nil || err.Error() != c.want {
			t.Errorf("--set %s:\n got %v\nwant %s", c.set, err, c.want)
		}
	}
}
