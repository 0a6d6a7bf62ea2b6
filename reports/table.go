package reports

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"
)

// newTable makes zerosim's terminal table: headers as written (never
// upper-cased), numbers right-aligned, the columns listed in left (text)
// left-aligned, long cells never wrapped. cols is the number of columns.
func newTable(w io.Writer, cols int, left ...int) *tablewriter.Table {
	for _, c := range left {
		cols = max(cols, c+1)
	}
	align := tw.CellAlignment{Global: tw.AlignRight, PerColumn: make([]tw.Align, cols)}
	for i := range align.PerColumn {
		align.PerColumn[i] = tw.AlignRight
	}
	for _, c := range left {
		align.PerColumn[c] = tw.AlignLeft
	}
	escape := tw.CellFilter{Global: func(cells []string) []string {
		for i, c := range cells {
			cells[i] = EscapeControl(c)
		}
		return cells
	}}
	return tablewriter.NewTable(w,
		tablewriter.WithHeaderFilter(escape),
		tablewriter.WithRowFilter(escape),
		tablewriter.WithFooterFilter(escape),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAlignment(tw.AlignLeft),
		tablewriter.WithRowAlignmentConfig(align),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithFooterAutoFormat(tw.Off),
		tablewriter.WithFooterAlignmentConfig(align),
	)
}

// EscapeControl writes control characters (C0, DEL, C1, line and paragraph
// separators, bidirectional overrides) and invalid UTF-8 as Go escapes
// (\n, \x1b, \u202e), so a scenario string cannot move the cursor, recolour
// the terminal, forge a line or reverse the text of a table it appears in.
func EscapeControl(s string) string {
	if !strings.ContainsFunc(s, needsEscape) && utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, "\\x%02x", s[i])
		case needsEscape(r):
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

func needsEscape(r rune) bool {
	return unicode.IsControl(r) || r == 0x2028 || r == 0x2029 || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069)
}

// wrapColumn wraps the cells of column col at width runes (at spaces), so a
// long text column keeps a table within maxColumns.
func wrapColumn(t *tablewriter.Table, col, width int) { wrapColumns(t, map[int]int{col: width}) }

// wrapColumns wraps each column of widths (column → runes); none, nothing.
func wrapColumns(t *tablewriter.Table, widths map[int]int) {
	if len(widths) == 0 {
		return
	}
	m := tw.NewMapper[int, int]()
	for c, w := range widths {
		m.Set(c, w)
	}
	t.Configure(func(cfg *tablewriter.Config) {
		cfg.Row.Formatting.AutoWrap = tw.WrapNormal
		cfg.Row.ColMaxWidths.PerColumn = m
	})
}

// writeJSON writes v as indented JSON, the one format of every --format json
// and result.json: exact integers, struct field order, and no HTML escaping
// (a file named <stdin> stays readable).
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
