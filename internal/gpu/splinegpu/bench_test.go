//go:build cuda

package splinegpu

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/internal/gpu/gpuclock"
	"github.com/bandsolve/bandsolve/spline"
	"github.com/bandsolve/bandsolve/tridiag"
)

// The batch of issue 31's targets: 10⁴ curves of 10³ shared knots,
// evaluated at 10⁴ unsorted points shared by every curve, FP64 (the same
// batch as scripts/cupy-spline.py).
const benchN, benchCount, benchP = 1000, 10000, 10000

var (
	copyBWOnce sync.Once
	copyBW     float64
)

// copyBandwidth is the device's copy bandwidth (bytes read + written per
// second), the limit the benchmarks report against.
func copyBandwidth(b *testing.B) float64 {
	copyBWOnce.Do(func() {
		var err error
		if copyBW, err = gpuclock.CopyBandwidth(dev, 1<<30, 20); err != nil {
			b.Fatal(err)
		}
		fmt.Printf("# %s: device-to-device copy %.0f GB/s (bytes read + written, 1 GiB, median of 20)\n", dev.Name(), copyBW/1e9)
	})
	return copyBW
}

// benchData is the batch: knots 0, 1, … with jitter, values sin + noise,
// points uniform over the knots, unsorted.
func benchData(n, count, p int) (x, y, t []float64) {
	r := rand.New(rand.NewPCG(31, 1))
	x = make([]float64, n)
	for i := range x {
		x[i] = float64(i) + 0.4*r.Float64()
	}
	y = make([]float64, n*count)
	for k := range count {
		for i := range n {
			y[k*n+i] = math.Sin(0.01*float64(i)*float64(1+k%7)) + 0.1*r.Float64()
		}
	}
	t = make([]float64, p)
	for j := range t {
		t[j] = x[0] + (x[n-1]-x[0])*r.Float64()
	}
	return x, y, t
}

func median(ts []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ts...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

// BenchmarkEvalShared times the evaluation kernel on the batch with the
// curves, points and results in device memory: the values alone, and the
// values with both derivatives. Reported: MPoints/s = curves × points per
// second (of the median of 15 back-to-back launches, CUDA events), GB/s
// and %bw = the floor bytes per second over the device's copy bandwidth.
// The floor reads y and M of every curve and the points, and writes each
// result once. "call" times EvalDevice whole (launch, wait, flag check).
// Run on the GPU machine with
//
//	./splinegpu.test -test.run '^$' -test.bench EvalShared -test.benchtime 1x
func BenchmarkEvalShared(b *testing.B) {
	bw := copyBandwidth(b)
	ctx := context.Background()
	hx, hy, ht := benchData(benchN, benchCount, benchP)
	fit, err := spline.NewFitter[float64](nil, benchN, benchCount, tridiag.Options{})
	if err != nil {
		b.Fatal(err)
	}
	cv, err := fit.Fit(ctx, hx, hy, spline.Natural())
	if err != nil {
		b.Fatal(err)
	}
	dc := uploadBench(b, cv)
	defer dc.X.Free()
	defer dc.Y.Free()
	defer dc.M.Free()
	dt, err := cuda.Upload(dev, ht)
	if err != nil {
		b.Fatal(err)
	}
	defer dt.Free()
	e, err := NewEvaluator[float64](dev)
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	outs := make([]*cuda.Buffer[float64], 3)
	for q := range outs {
		if outs[q], err = cuda.Alloc[float64](dev, benchCount*benchP); err != nil {
			b.Fatal(err)
		}
		defer outs[q].Free()
	}
	for _, c := range []struct {
		name string
		out  Out[float64]
		q    int
	}{
		{"value", Out[float64]{Value: outs[0]}, 1},
		{"all3", Out[float64]{Value: outs[0], Deriv: outs[1], Deriv2: outs[2]}, 3},
	} {
		floor := 8 * (2*int64(benchN)*benchCount + benchP + int64(c.q)*benchCount*benchP)
		pts := Points[float64]{T: dt, P: benchP}
		b.Run(fmt.Sprintf("f64/N=%d/curves=%d/points=%d/%s/kernel", benchN, benchCount, benchP, c.name), func(b *testing.B) {
			var med time.Duration
			for i := 0; i < b.N; i++ {
				ts, err := e.timeEval(dc, pts, c.out, 3, 15)
				if err != nil {
					b.Fatal(err)
				}
				med = median(ts)
			}
			report(b, med, floor, bw)
		})
		b.Run(fmt.Sprintf("f64/N=%d/curves=%d/points=%d/%s/call", benchN, benchCount, benchP, c.name), func(b *testing.B) {
			var ts []time.Duration
			for i := 0; i < b.N; i++ {
				for r := 0; r < 8; r++ {
					start := time.Now()
					if err := e.EvalDevice(ctx, dc, pts, c.out); err != nil {
						b.Fatal(err)
					}
					ts = append(ts, time.Since(start))
				}
			}
			report(b, median(ts), floor, bw)
		})
	}
}

// BenchmarkFitEval times the pipeline of scripts/cupy-spline.py on the
// GPU: a natural fit of the batch (spline.Fitter on the GPU, host slices
// in and out: the fit has no device-resident form yet), the values and
// moments copied to the device, and EvalDevice at the shared points;
// wall time of the whole, median of 5.
func BenchmarkFitEval(b *testing.B) {
	ctx := context.Background()
	hx, hy, ht := benchData(benchN, benchCount, benchP)
	fit, err := spline.NewFitter[float64](dev, benchN, benchCount, tridiag.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer fit.Close()
	e, err := NewEvaluator[float64](dev)
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	dt, err := cuda.Upload(dev, ht)
	if err != nil {
		b.Fatal(err)
	}
	defer dt.Free()
	val, err := cuda.Alloc[float64](dev, benchCount*benchP)
	if err != nil {
		b.Fatal(err)
	}
	defer val.Free()
	b.Run(fmt.Sprintf("f64/N=%d/curves=%d/points=%d", benchN, benchCount, benchP), func(b *testing.B) {
		var ts, fits []time.Duration
		for i := 0; i < b.N; i++ {
			for r := 0; r < 6; r++ {
				start := time.Now()
				cv, err := fit.Fit(ctx, hx, hy, spline.Natural())
				if err != nil {
					b.Fatal(err)
				}
				fitted := time.Since(start)
				dc := uploadBench(b, cv)
				if err := e.EvalDevice(ctx, dc, Points[float64]{T: dt, P: benchP}, Out[float64]{Value: val}); err != nil {
					b.Fatal(err)
				}
				if r > 0 { // the first run makes the plans
					ts, fits = append(ts, time.Since(start)), append(fits, fitted)
				}
				_ = dc.X.Free()
				_ = dc.Y.Free()
				_ = dc.M.Free()
			}
		}
		med := median(ts)
		b.ReportMetric(float64(med.Microseconds())/1e3, "ms")
		b.ReportMetric(float64(median(fits).Microseconds())/1e3, "ms-fit")
		b.ReportMetric(float64(benchCount)*benchP/med.Seconds()/1e6, "MPoints/s")
	})
}

func report(b *testing.B, med time.Duration, floor int64, bw float64) {
	sec := med.Seconds()
	b.ReportMetric(float64(benchCount)*benchP/sec/1e6, "MPoints/s")
	b.ReportMetric(float64(floor)/sec/1e9, "GB/s")
	b.ReportMetric(100*float64(floor)/sec/bw, "%bw")
	b.ReportMetric(float64(med.Microseconds()), "µs")
}

func uploadBench(b *testing.B, cv *spline.Curves[float64]) *Curves[float64] {
	x, err := cuda.Upload(dev, cv.X)
	if err != nil {
		b.Fatal(err)
	}
	y, err := cuda.Upload(dev, cv.Y)
	if err != nil {
		b.Fatal(err)
	}
	m, err := cuda.Upload(dev, cv.M)
	if err != nil {
		b.Fatal(err)
	}
	return &Curves[float64]{N: cv.N, Count: cv.Count, Kind: cv.Kind, X: x, Y: y, M: m}
}

// timeEval times launches of the evaluation kernel on device-resident
// data: warmup untimed, then reps back to back on the evaluator's stream,
// a CUDA event between consecutive launches.
func (e *Evaluator[T]) timeEval(cv *Curves[T], pts Points[T], out Out[T], warmup, reps int) ([]time.Duration, error) {
	l := &evalLaunch{x: cv.X.Ptr(), y: cv.Y.Ptr(), m: cv.M.Ptr(), t: pts.T.Ptr(), n: cv.N, count: cv.Count, p: pts.P,
		periodic: cv.Kind == spline.KindPeriodic, val: ptrOf(out.Value), der: ptrOf(out.Deriv), der2: ptrOf(out.Deriv2)}
	if cv.X.Len() != cv.N {
		l.xs = int64(cv.N)
	}
	if pts.PerCurve {
		l.ts = int64(pts.P)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	var ts []time.Duration
	err := e.dev.Enqueue(func() error {
		if err := e.ensureFlags(cv.Count); err != nil {
			return err
		}
		var err error
		ts, err = gpuclock.BackToBack(e.stream, warmup, reps, nil, func() error { return e.launchEval(l) })
		if err != nil {
			return err
		}
		_, err = e.readFlags(cv.Count, "timing")
		return err
	})
	return ts, err
}

// BenchmarkFitEvalDevice times the device-resident pipeline: the batch of
// scripts/cupy-spline.py (10⁴ curves of 10³ shared knots, FP64) fitted
// with Fitter.FitDeviceInto and evaluated at 10⁴ shared points with
// EvalDevice, the knots, values, moments, points and results in device
// memory throughout; natural end condition. Knots: "jittered" is the
// batch of cupy-spline.py (unequal spans: coefficient arrays), "uniform"
// knots 0, 1, 2, … (constant coefficients). Algorithms: the GPU's Auto
// choice, and Thomas (the CPU's moments bit for bit). Reported, medians
// of 10 after a warm-up: ms (fit + evaluate, wall time of the two calls),
// ms-fit, ms-eval, GB/s and %bw of the floor bytes over the whole (read y,
// write M, read y and M for the evaluation, read the points, write the
// results) against the device's copy bandwidth. Run on the GPU machine
// with
//
//	./splinegpu.test -test.run '^$' -test.bench FitEvalDevice -test.benchtime 1x
func BenchmarkFitEvalDevice(b *testing.B) {
	bw := copyBandwidth(b)
	ctx := context.Background()
	hx, hy, ht := benchData(benchN, benchCount, benchP)
	ux := make([]float64, benchN)
	for i := range ux {
		ux[i] = float64(i)
	}
	up := func(v []float64) *cuda.Buffer[float64] {
		d, err := cuda.Upload(dev, v)
		if err != nil {
			b.Fatal(err)
		}
		return d
	}
	dx, dux, dy, dt := up(hx), up(ux), up(hy), up(ht)
	defer dx.Free()
	defer dux.Free()
	defer dy.Free()
	defer dt.Free()
	m, err := cuda.Alloc[float64](dev, benchN*benchCount)
	if err != nil {
		b.Fatal(err)
	}
	defer m.Free()
	val, err := cuda.Alloc[float64](dev, benchCount*benchP)
	if err != nil {
		b.Fatal(err)
	}
	defer val.Free()
	e, err := NewEvaluator[float64](dev)
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	floor := 8 * (4*int64(benchN)*benchCount + benchP + int64(benchCount)*benchP)
	for _, algo := range []tridiag.Algorithm{tridiag.Auto, tridiag.Thomas} {
		fit, err := NewFitter[float64](dev, benchN, benchCount, tridiag.Options{Algorithm: algo})
		if err != nil {
			b.Fatal(err)
		}
		for _, knots := range []struct {
			name string
			x    *cuda.Buffer[float64]
		}{{"jittered", dx}, {"uniform", dux}} {
			uniform := knots.name == "uniform"
			solver, err := fit.Algorithm(spline.KindNatural, uniform)
			if err != nil {
				b.Fatal(err)
			}
			b.Run(fmt.Sprintf("f64/N=%d/curves=%d/points=%d/%s/%v(%v)", benchN, benchCount, benchP, knots.name, algo, solver), func(b *testing.B) {
				var all, fits, evals []time.Duration
				for i := 0; i < b.N; i++ {
					for r := 0; r < 11; r++ {
						start := time.Now()
						cv, err := fit.FitDeviceInto(ctx, knots.x, dy, m, spline.Natural())
						if err != nil {
							b.Fatal(err)
						}
						fitted := time.Now()
						if err := e.EvalDevice(ctx, cv, Points[float64]{T: dt, P: benchP}, Out[float64]{Value: val}); err != nil {
							b.Fatal(err)
						}
						done := time.Now()
						if r > 0 { // the first run makes the plans
							all = append(all, done.Sub(start))
							fits = append(fits, fitted.Sub(start))
							evals = append(evals, done.Sub(fitted))
						}
					}
				}
				med := median(all)
				b.ReportMetric(float64(med.Microseconds())/1e3, "ms")
				b.ReportMetric(float64(median(fits).Microseconds())/1e3, "ms-fit")
				b.ReportMetric(float64(median(evals).Microseconds())/1e3, "ms-eval")
				b.ReportMetric(float64(floor)/med.Seconds()/1e9, "GB/s")
				b.ReportMetric(100*float64(floor)/med.Seconds()/bw, "%bw")
			})
		}
		if err := fit.Close(); err != nil {
			b.Fatal(err)
		}
	}
}
