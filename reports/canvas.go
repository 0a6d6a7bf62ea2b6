package reports

import (
	"image/color"
	"io"
	"strings"

	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// picture is a drawing of w×h points, rendered the same way by every plot:
// PNG at 96 dpi on white, or SVG.
type picture struct {
	w, h vg.Length
	draw func(vg.CanvasSizer) error
}

// escapedText is a canvas that draws every string with its control
// characters escaped as the terminal tables show them (EscapeControl:
// ESC as \x1b). A scenario name or --vary value holding one reached the
// SVGs raw, and an ESC byte is not allowed in XML: the browser showed an
// error instead of the plot (QA19 L5). Escaping, not refusing the name
// at load: the name already runs and prints escaped on stdout, and every
// output should show it the same way. gonum's text handler splits lines
// before FillString, so a title's "\n" is not escaped.
type escapedText struct{ vg.CanvasSizer }

func (c escapedText) FillString(f font.Face, pt vg.Point, text string) {
	c.CanvasSizer.FillString(f, pt, EscapeControl(text))
}

// writePNG renders the picture as PNG.
func (p picture) writePNG(w io.Writer) error {
	c := vgimg.NewWith(vgimg.UseWH(p.w, p.h), vgimg.UseDPI(96), vgimg.UseBackgroundColor(color.White))
	if err := p.draw(escapedText{c}); err != nil {
		return err
	}
	_, err := vgimg.PngCanvas{Canvas: c}.WriteTo(w)
	return err
}

// writeSVG renders the picture as SVG.
func (p picture) writeSVG(w io.Writer) error {
	c := vgsvg.New(p.w, p.h)
	if err := p.draw(escapedText{c}); err != nil {
		return err
	}
	_, err := c.WriteTo(w)
	return err
}

// inlineSVG returns the picture as an SVG element without its XML prolog,
// for inlining into HTML.
func (p picture) inlineSVG() (string, error) {
	var b strings.Builder
	if err := p.writeSVG(&b); err != nil {
		return "", err
	}
	s := b.String()
	if i := strings.Index(s, "<svg"); i > 0 {
		s = s[i:]
	}
	return s, nil
}

// files renders the picture as stem.png and stem.svg.
func (p picture) files(stem string) ([]OutputFile, error) {
	png, err := render(stem+".png", p.writePNG)
	if err != nil {
		return nil, err
	}
	svg, err := render(stem+".svg", p.writeSVG)
	if err != nil {
		return nil, err
	}
	return []OutputFile{png, svg}, nil
}
