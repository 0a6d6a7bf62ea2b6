package reports

import (
	"encoding/json"
	"io"

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
	return tablewriter.NewTable(w,
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAlignment(tw.AlignLeft),
		tablewriter.WithRowAlignmentConfig(align),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithFooterAutoFormat(tw.Off),
		tablewriter.WithFooterAlignmentConfig(align),
	)
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
