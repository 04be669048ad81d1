package main

import (
	"fmt"
	"image/color"
	"math"
	"os"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/mitzbloom/mitzbloom/bench"
)

// style is how a contender's line looks, the same in every panel.
type style struct {
	color  color.Color
	glyph  draw.GlyphDrawer
	dashes []vg.Length
}

var styles = map[string]style{
	"mitzbloom":              {color.RGBA{0x1f, 0x4e, 0xb4, 0xff}, draw.CircleGlyph{}, nil},
	"mitzbloom-batch":        {color.RGBA{0x4f, 0xa3, 0xf7, 0xff}, draw.RingGlyph{}, []vg.Length{vg.Points(5), vg.Points(3)}},
	"mitzbloom-unsync":       {color.RGBA{0xc0, 0x1f, 0x6e, 0xff}, draw.CircleGlyph{}, nil},
	"mitzbloom-unsync-batch": {color.RGBA{0xf0, 0x7a, 0xb0, 0xff}, draw.RingGlyph{}, []vg.Length{vg.Points(5), vg.Points(3)}},
	guava:                    {color.RGBA{0xe3, 0x74, 0x1c, 0xff}, draw.SquareGlyph{}, nil},
	"bits-and-blooms":        {color.RGBA{0x2c, 0x9c, 0x4a, 0xff}, draw.TriangleGlyph{}, nil},
	"blobloom":               {color.RGBA{0x8e, 0x44, 0xad, 0xff}, draw.PyramidGlyph{}, nil},
	"map":                    {color.RGBA{0x70, 0x70, 0x70, 0xff}, draw.CrossGlyph{}, []vg.Length{vg.Points(2), vg.Points(2)}},
}

func styleOf(contender string) style {
	if s, ok := styles[contender]; ok {
		return s
	}
	return style{color.Black, draw.PlusGlyph{}, nil}
}

// chart draws ns per key by filter size: a panel per operation (columns)
// and key type (rows), a line per contender, both axes logarithmic and one
// y range for all panels, so that panels compare at a glance.
func (r *Report) chart(path string) error {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, res := range r.Results {
		lo, hi = min(lo, res.NsPerOp), max(hi, res.NsPerOp)
	}
	if lo > hi {
		return fmt.Errorf("chart: no results")
	}
	plots, legend, err := r.panels(lo, hi)
	if err != nil {
		return err
	}
	img := r.draw(plots, legend)
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// panels returns one plot for each kind of key (rows) and operation
// (columns), on one ns-per-key scale from lo to hi, and the legend of all
// their lines.
func (r *Report) panels(lo, hi float64) ([][]*plot.Plot, plot.Legend, error) {
	keys := r.keys()
	plots := make([][]*plot.Plot, len(keys))
	legend := plot.NewLegend()
	inLegend := map[string]bool{}
	for i, key := range keys {
		for _, op := range bench.Ops {
			p := plot.New()
			p.Title.Text = fmt.Sprintf("%s, %s keys", op, key)
			p.Title.TextStyle.Font.Size = vg.Points(13)
			p.X.Label.Text = "expected insertions n"
			p.Y.Label.Text = "ns per key"
			p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
			p.X.Tick.Marker, p.Y.Tick.Marker = decadeTicks{}, ticks125{}
			p.X.Min, p.X.Max = float64(r.Settings.Sizes[0])/2, float64(r.Settings.Sizes[len(r.Settings.Sizes)-1])*2
			p.Y.Min, p.Y.Max = lo/1.25, hi*1.25
			p.Add(plotter.NewGrid())
			for _, c := range contenders(key) {
				line, points, err := r.line(op, key, c)
				if err != nil {
					return nil, legend, err
				}
				if line == nil {
					continue
				}
				p.Add(line, points)
				if !inLegend[c] {
					legend.Add(c, line, points)
					inLegend[c] = true
				}
			}
			plots[i] = append(plots[i], p)
		}
	}
	return plots, legend, nil
}

// line returns the line and points of contender c's results for op on key,
// by filter size, or nil if it has none.
func (r *Report) line(op bench.Op, key, c string) (*plotter.Line, *plotter.Scatter, error) {
	var xys plotter.XYs
	for _, n := range r.Settings.Sizes {
		if res := r.result(op, key, n, c); res != nil {
			xys = append(xys, plotter.XY{X: float64(n), Y: res.NsPerOp})
		}
	}
	if len(xys) == 0 {
		return nil, nil, nil
	}
	line, points, err := plotter.NewLinePoints(xys)
	if err != nil {
		return nil, nil, fmt.Errorf("chart: %w", err)
	}
	s := styleOf(c)
	line.Color, line.Width, line.Dashes = s.color, vg.Points(2), s.dashes
	points.Color, points.Shape, points.Radius = s.color, s.glyph, vg.Points(4)
	return line, points, nil
}

// draw lays the title, the panels and the legend out on one image.
func (r *Report) draw(plots [][]*plot.Plot, legend plot.Legend) *vgimg.Canvas {
	const (
		width, height = 21 * vg.Inch, 9 * vg.Inch
		titleHeight   = 0.6 * vg.Inch
		legendWidth   = 3.2 * vg.Inch // room for "mitzbloom-unsync-batch"
	)
	img := vgimg.NewWith(vgimg.UseWH(width, height), vgimg.UseDPI(96))
	dc := draw.New(img)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())

	title := fmt.Sprintf("ns per key by filter size, p = %g (lower is better). %s, %d cores, %s; %s",
		r.Settings.P, r.Machine.CPU, r.Machine.Cores, r.Machine.Go, r.Started.Format("2006-01-02"))
	titleStyle := plot.New().Title.TextStyle
	titleStyle.Font.Size = vg.Points(16)
	titleStyle.XAlign = draw.XCenter
	dc.FillText(titleStyle, vg.Point{X: (width - legendWidth) / 2, Y: height - titleHeight/2}, title)

	panels := draw.Canvas{Canvas: dc.Canvas, Rectangle: vg.Rectangle{
		Min: vg.Point{X: 0, Y: 0}, Max: vg.Point{X: width - legendWidth, Y: height - titleHeight}}}
	tiles := draw.Tiles{Rows: len(plots), Cols: len(bench.Ops), PadX: vg.Points(20), PadY: vg.Points(20),
		PadTop: vg.Points(5), PadBottom: vg.Points(10), PadLeft: vg.Points(10), PadRight: vg.Points(10)}
	canvases := plot.Align(plots, tiles, panels)
	for i := range plots {
		for j := range plots[i] {
			plots[i][j].Draw(canvases[i][j])
		}
	}

	legend.Top, legend.Left = true, true
	legend.TextStyle.Font.Size = vg.Points(14)
	legend.ThumbnailWidth = vg.Points(40)
	legend.Padding = vg.Points(8)
	legend.Draw(draw.Canvas{Canvas: dc.Canvas, Rectangle: vg.Rectangle{
		Min: vg.Point{X: width - legendWidth + vg.Points(10), Y: 0},
		Max: vg.Point{X: width, Y: height - titleHeight - vg.Points(20)}}})
	return img
}

// decadeTicks labels the powers of ten as 1e4, 1e6, …
type decadeTicks struct{}

func (decadeTicks) Ticks(lo, hi float64) []plot.Tick {
	var ticks []plot.Tick
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		v := math.Pow(10, e)
		if v < lo || v > hi {
			continue
		}
		ticks = append(ticks, plot.Tick{Value: v, Label: fmt.Sprintf("1e%.0f", e)})
	}
	return ticks
}

// ticks125 labels 1, 2 and 5 times each power of ten, a scale people read
// easily on a logarithmic axis.
type ticks125 struct{}

func (ticks125) Ticks(lo, hi float64) []plot.Tick {
	var ticks []plot.Tick
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		for _, m := range []float64{1, 2, 5} {
			v := m * math.Pow(10, e)
			if v >= lo && v <= hi {
				ticks = append(ticks, plot.Tick{Value: v, Label: fmt.Sprint(v)})
			}
		}
	}
	return ticks
}
