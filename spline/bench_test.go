package spline_test

import (
	"context"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/bandsolve/bandsolve/spline"
	"github.com/bandsolve/bandsolve/tridiag"
)

// The benchmark batch: 10⁴ curves of 10³ knots, FP64, evaluated at 10⁴
// points (10⁸ values, 800 MB per output). scripts/spline-scipy.py times
// SciPy on the same shapes.
const (
	benchCurves = 10000
	benchKnots  = 1000
	benchPoints = 10000
)

type benchData struct {
	xShared, xEach, y []float64
	unsorted, sorted  []float64 // shared points
	each              []float64 // per-curve points, benchPoints/10 per curve
	eachSorted        []float64
	natural, perCurve *spline.Curves[float64]
	out               []float64
}

var benchOnce = sync.OnceValue(func() *benchData {
	rng := rand.New(rand.NewPCG(1, 2))
	d := &benchData{}
	d.xShared = randomKnots(rng, benchKnots, 0, 1)
	for range benchCurves {
		d.xEach = append(d.xEach, randomKnots(rng, benchKnots, 0, 1)...)
	}
	d.y = make([]float64, benchKnots*benchCurves)
	for i := range d.y {
		d.y[i] = rng.NormFloat64()
	}
	d.unsorted = make([]float64, benchPoints)
	for j := range d.unsorted {
		d.unsorted[j] = rng.Float64()
	}
	d.sorted = slices.Sorted(slices.Values(d.unsorted))
	d.each = make([]float64, benchCurves*benchPoints/10)
	for j := range d.each {
		d.each[j] = rng.Float64()
	}
	d.eachSorted = slices.Clone(d.each)
	for k := range benchCurves {
		slices.Sort(d.eachSorted[k*benchPoints/10 : (k+1)*benchPoints/10])
	}
	var err error
	if d.natural, err = spline.FitBatch(benchKnots, d.xShared, d.y, spline.Natural()); err != nil {
		panic(err)
	}
	if d.perCurve, err = spline.FitBatch(benchKnots, d.xEach, d.y, spline.Natural()); err != nil {
		panic(err)
	}
	d.out = make([]float64, benchCurves*benchPoints)
	for i := range d.out { // map the pages before the first timing
		d.out[i] = 1
	}
	return d
})

func reportPoints(b *testing.B, points int) {
	b.ReportMetric(float64(points)*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mpoints/s")
}

// BenchmarkEval evaluates the 10⁴ curves at 10⁴ shared points (values,
// slopes or curvatures), with shared knots and with knots per curve, the
// points shuffled or ascending; and at 10³ points per curve.
func BenchmarkEval(b *testing.B) {
	d := benchOnce()
	ev, err := spline.NewEvaluator[float64](nil)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for _, c := range []struct {
		name string
		cv   *spline.Curves[float64]
		pts  spline.Points[float64]
		out  func([]float64) spline.Out[float64]
	}{
		{"sharedKnots/unsorted/value", d.natural, spline.SharedPoints(d.unsorted), func(o []float64) spline.Out[float64] { return spline.Out[float64]{Value: o} }},
		{"sharedKnots/sorted/value", d.natural, spline.SharedPoints(d.sorted), func(o []float64) spline.Out[float64] { return spline.Out[float64]{Value: o} }},
		{"sharedKnots/unsorted/deriv", d.natural, spline.SharedPoints(d.unsorted), func(o []float64) spline.Out[float64] { return spline.Out[float64]{Deriv: o} }},
		{"sharedKnots/unsorted/deriv2", d.natural, spline.SharedPoints(d.unsorted), func(o []float64) spline.Out[float64] { return spline.Out[float64]{Deriv2: o} }},
		{"curveKnots/unsorted/value", d.perCurve, spline.SharedPoints(d.unsorted), func(o []float64) spline.Out[float64] { return spline.Out[float64]{Value: o} }},
		{"curveKnots/sorted/value", d.perCurve, spline.SharedPoints(d.sorted), func(o []float64) spline.Out[float64] { return spline.Out[float64]{Value: o} }},
		{"curvePoints/unsorted/value", d.natural, spline.CurvePoints(d.each), func(o []float64) spline.Out[float64] { return spline.Out[float64]{Value: o[:len(d.each)]} }},
		{"curvePoints/sorted/value", d.natural, spline.CurvePoints(d.eachSorted), func(o []float64) spline.Out[float64] { return spline.Out[float64]{Value: o[:len(d.each)]} }},
	} {
		b.Run(c.name, func(b *testing.B) {
			out := c.out(d.out)
			points := len(c.pts.T)
			if !c.pts.PerCurve {
				points *= c.cv.Count
			}
			for b.Loop() {
				if err := ev.Eval(ctx, c.cv, c.pts, out); err != nil {
					b.Fatal(err)
				}
			}
			reportPoints(b, points)
		})
	}
}

// BenchmarkIntegrate integrates each of the 10⁴ curves over most of its
// knots.
func BenchmarkIntegrate(b *testing.B) {
	d := benchOnce()
	ev, err := spline.NewEvaluator[float64](nil)
	if err != nil {
		b.Fatal(err)
	}
	out := make([]float64, benchCurves)
	for b.Loop() {
		if err := ev.Integrate(context.Background(), d.natural, []float64{0.01}, []float64{0.99}, out); err != nil {
			b.Fatal(err)
		}
	}
	reportPoints(b, benchCurves)
}

// BenchmarkFit fits the 10⁴ curves of 10³ shared knots with each end
// condition, reusing one Fitter.
func BenchmarkFit(b *testing.B) {
	d := benchOnce()
	y := slices.Clone(d.y)
	for k := range benchCurves {
		y[k*benchKnots+benchKnots-1] = y[k*benchKnots]
	}
	for _, bc := range []spline.Boundary{spline.Natural(), spline.Clamped(0, 1), spline.Periodic()} {
		b.Run(bc.Kind.String(), func(b *testing.B) {
			f, err := spline.NewFitter[float64](nil, benchKnots, benchCurves, tridiag.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			for b.Loop() {
				if _, err := f.Fit(context.Background(), d.xShared, y, bc); err != nil {
					b.Fatal(err)
				}
			}
			reportPoints(b, benchCurves*benchKnots)
		})
	}
}
