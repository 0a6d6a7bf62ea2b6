package reports

import (
	"bytes"
	"encoding/xml"
	"io"
	"strings"
	"testing"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// TestSVGEscapesControlCharacters (QA19 L5): a title holding an ESC byte
// (a scenario's name) is drawn as \x1b, as the terminal tables show it,
// so the SVG stays well-formed XML; before, the raw byte made every plot
// "not well-formed (invalid token)". A title's newline still breaks the
// line (gonum splits lines before drawing them).
func TestSVGEscapesControlCharacters(t *testing.T) {
	pic := picture{w: 300, h: 200, draw: func(c vg.CanvasSizer) error {
		p := newPlot("<b>\x1b[31mred\nsecond line", "x", "y")
		p.Draw(draw.New(c))
		return nil
	}}
	var b bytes.Buffer
	if err := pic.writeSVG(&b); err != nil {
		t.Fatal(err)
	}
	d := xml.NewDecoder(&b)
	var text strings.Builder
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("the SVG is not well-formed XML: %v", err)
		}
		if cd, ok := tok.(xml.CharData); ok {
			text.Write(cd)
		}
	}
	for _, want := range []string{`<b>\x1b[31mred`, "second line"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("the SVG's text %q does not hold %q", text.String(), want)
		}
	}
}
