package reports

import (
	"bytes"
	"strings"
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

// TestTablesEscapeControlCharacters: a scenario string with an escape
// sequence, a line break, a bidirectional override or invalid UTF-8 reaches
// a table escaped, never raw.
func TestTablesEscapeControlCharacters(t *testing.T) {
	for in, want := range map[string]string{
		"plain ünïcode": "plain ünïcode",
		"a\x1b[31mred":  `a\x1b[31mred`,
		"two\nlines\r":  `two\nlines\r`,
		"rev\u202eerse": `rev\u202eerse`,
		"bad\xffutf8":   `bad\xffutf8`,
		"del\x7f\u0085": `del\x7f\u0085`,
	} {
		if got := EscapeControl(in); got != want {
			t.Errorf("EscapeControl(%q) = %q, want %q", in, got, want)
		}
	}
	var b strings.Builder
	tab := newTable(&b, 2, 0)
	tab.Header([]string{"name", "value"})
	tab.Append([]string{"evil\x1b]0;title\x07\nforged", "1"})
	if err := tab.Render(); err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(b.String(), "\x1b\x07") || !strings.Contains(b.String(), `evil\x1b]0;title\a\nforged`) {
		t.Errorf("table:\n%s", b.String())
	}
}
