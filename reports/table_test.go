package reports

import (
	"bytes"
	"testing"
)

// Every JSON output shares one encoder: indented, and a name such as
// <stdin> is written as is, not as \u003cstdin\u003e.
func TestWriteJSON(t *testing.T) {
	var b bytes.Buffer
	if err := writeJSON(&b, struct {
		File  string `json:"file"`
		Bytes int64  `json:"bytes"`
	}{"<stdin> & co", 9007199254740993}); err != nil {
		t.Fatal(err)
	}
	want := "{\n  \"file\": \"<stdin> & co\",\n  \"bytes\": 9007199254740993\n}\n"
	if b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}
