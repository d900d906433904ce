package main

import (
	"fmt"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/bandsolve/bandsolve/spline"
)

// sample is one curve of the plot: data f at knots x, fitted with bc.
type sample struct {
	label string
	f     func(float64) float64
	bc    spline.Boundary
}

// plotCurves fits four curves on [−1, 1] (natural, clamped and periodic
// ends) and draws each spline with its data points to a PNG file.
func plotCurves(path string) error {
	const n = 9
	x := make([]float64, n)
	for i := range x {
		x[i] = -1 + 2*float64(i)/(n-1)
	}
	runge := func(t float64) float64 { return 1 / (1 + 25*t*t) }
	samples := []sample{
		{"1/(1+25x²), natural", runge, spline.Natural()},
		{"tanh 3x − 1.5, natural", func(t float64) float64 { return math.Tanh(3*t) - 1.5 }, spline.Natural()},
		{"x³ + 1.5, clamped (exact)", func(t float64) float64 { return t*t*t + 1.5 }, spline.Clamped(3, 3)},
		{"sin πx + ½cos 2πx − 3, periodic", func(t float64) float64 {
			return math.Sin(math.Pi*t) + 0.5*math.Cos(2*math.Pi*t) - 3
		}, spline.Periodic()},
	}
	p := plot.New()
	p.Title.Text = fmt.Sprintf("cubic splines through %d knots (package spline)", n)
	p.X.Label.Text = "x"
	p.Y.Label.Text = "y"
	p.Legend.Top = true
	p.Legend.Left = true
	p.Add(plotter.NewGrid())
	for i, s := range samples {
		y := make([]float64, n)
		for j, t := range x {
			y[j] = s.f(t)
		}
		if s.bc.Kind == spline.KindPeriodic {
			y[n-1] = y[0]
		}
		cv, err := spline.FitBatch(n, x, y, s.bc)
		if err != nil {
			return fmt.Errorf("%s: %w", s.label, err)
		}
		fine := make(plotter.XYs, 401)
		for j := range fine {
			t := -1 + 2*float64(j)/float64(len(fine)-1)
			fine[j] = plotter.XY{X: t, Y: cv.Eval(0, t)}
		}
		pts := make(plotter.XYs, n)
		for j := range pts {
			pts[j] = plotter.XY{X: x[j], Y: y[j]}
		}
		line, err := plotter.NewLine(fine)
		if err != nil {
			return err
		}
		line.Color = plotutil.Color(i)
		line.Width = vg.Points(1.5)
		dots, err := plotter.NewScatter(pts)
		if err != nil {
			return err
		}
		dots.GlyphStyle = draw.GlyphStyle{Color: plotutil.Color(i), Radius: vg.Points(3), Shape: draw.CircleGlyph{}}
		p.Add(line, dots)
		p.Legend.Add(s.label, line, dots)
	}
	p.Y.Min, p.Y.Max = -4.7, 3.4
	return p.Save(7*vg.Inch, 5*vg.Inch, path)
}
