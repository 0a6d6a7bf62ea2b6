package golden

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDiff(t *testing.T) {
	for _, tc := range []struct{ want, got, diff string }{
		{"a\nb\n", "a\nb\n", ""},
		{"a\nb\nc\n", "a\nx\nc\n", "@@ line 2: 1 lines of want, 1 of got differ @@\n-b\n+x\n"},
		{"a\n", "a\nb\n", "@@ line 2: 0 lines of want, 1 of got differ @@\n+b\n"},
		{"a\nb", "a\nc", "@@ line 2: 1 lines of want, 1 of got differ @@\n-b\n\\ no newline at end\n+c\n\\ no newline at end\n"},
	} {
		if d := Diff([]byte(tc.want), []byte(tc.got)); d != tc.diff {
			t.Errorf("Diff(%q, %q) =\n%s\nwant\n%s", tc.want, tc.got, d, tc.diff)
		}
	}
}

// fakeT records failures instead of failing the test.
type fakeT struct {
	testing.TB
	errs []string
}

func (f *fakeT) Helper() {}
func (f *fakeT) Errorf(format string, args ...any) {
	f.errs = append(f.errs, fmt.Sprintf(format, args...))
}
func (f *fakeT) Fatalf(string, ...any) { f.errs = append(f.errs, "fatal") }
func (f *fakeT) Fatal(...any)          { f.errs = append(f.errs, "fatal") }

// TestCheck: a mismatch fails and writes NAME.got; a match removes it.
func TestCheck(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.golden")
	if err := os.WriteFile(path, []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ft := &fakeT{}
	Check(ft, path, []byte("two\n"), false)
	if got, err := os.ReadFile(path + ".got"); len(ft.errs) != 1 || err != nil || string(got) != "two\n" {
		t.Fatalf("mismatch: failures %v, .got %q %v", ft.errs, got, err)
	}
	ft = &fakeT{}
	Check(ft, path, []byte("one\n"), false)
	if _, err := os.Stat(path + ".got"); len(ft.errs) != 0 || !os.IsNotExist(err) {
		t.Errorf("match: failures %v, .got left: %v", ft.errs, err)
	}
	Check(ft, path, []byte("three\n"), true)
	if got, _ := os.ReadFile(path); string(got) != "three\n" || len(ft.errs) != 0 {
		t.Errorf("update wrote %q", got)
	}
}

func TestSplice(t *testing.T) {
	const b, e = "<!-- b -->\n", "<!-- e -->"
	for _, c := range []struct{ doc, want string }{
		{"x\n" + b + "old\n" + e + "\ny", "x\n" + b + "new\n" + e + "\ny"},
		{"x\n" + b + e, "x\n" + b + "new\n" + e},
		{"x\n" + e + b, ""}, // wrong order
		{"x\n" + b, ""},     // no end
	} {
		got, err := Splice(c.doc, b, e, "new\n")
		if got != c.want || (err == nil) != (c.want != "") {
			t.Errorf("Splice(%q) = %q, %v; want %q", c.doc, got, err, c.want)
		}
	}
}

// TestCheckQuotes: a quote may span lines; a missing one fails, naming
// the line where its longest start is.
func TestCheckQuotes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "doc.md")
	if err := os.WriteFile(path, []byte("# Doc\n\nZeRO++ is 155.3 %\nfaster, and 3.7 % at 800 Gb/s.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		quotes []string
		errs   []string // what each failure's message contains
	}{
		{[]string{"ZeRO++ is 155.3 % faster", "3.7 % at 800"}, nil},
		{[]string{"ZeRO++ is 155.4 % faster"}, []string{path + ":3 says\n\t\"ZeRO++ is 155.3 % faster,\"\nwhere a test gives\n\t\"ZeRO++ is 155.4 % faster\""}},
		{[]string{"faster, and 3.8 %"}, []string{path + ":4 says"}},
		{[]string{"nothing like it", "ZeRO++ is 155.3 % faster"}, []string{"nor anything that starts like it"}},
	} {
		ft := &fakeT{}
		CheckQuotes(ft, path, "a test", tc.quotes...)
		if len(ft.errs) != len(tc.errs) {
			t.Errorf("CheckQuotes(%q): failures %q, want %d", tc.quotes, ft.errs, len(tc.errs))
			continue
		}
		for i, e := range tc.errs {
			if !strings.Contains(ft.errs[i], e) {
				t.Errorf("CheckQuotes(%q): failure %q, want it to contain %q", tc.quotes, ft.errs[i], e)
			}
		}
	}
}
