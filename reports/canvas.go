package reports

import (
	"image/color"
	"io"
	"strings"

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

// writePNG renders the picture as PNG.
func (p picture) writePNG(w io.Writer) error {
	c := vgimg.NewWith(vgimg.UseWH(p.w, p.h), vgimg.UseDPI(96), vgimg.UseBackgroundColor(color.White))
	if err := p.draw(c); err != nil {
		return err
	}
	_, err := vgimg.PngCanvas{Canvas: c}.WriteTo(w)
	return err
}

// writeSVG renders the picture as SVG.
func (p picture) writeSVG(w io.Writer) error {
	c := vgsvg.New(p.w, p.h)
	if err := p.draw(c); err != nil {
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
