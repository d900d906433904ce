// Command spline fits cubic splines through many curves at once with
// package spline (one batch of tridiagonal solves for all the curves),
// checks them against known answers, times the fits on each device and
// plots a few fitted curves with their data points. The checks: a clamped
// spline reproduces a cubic exactly (to rounding), whatever its knots
// (thousands of random cubics, each with its own knots); the periodic
// spline of a sine converges at fourth order (the error falls 16-fold each
// time the knot spacing halves); fitting the whole batch gives the same
// curves as fitting each alone.
//
// Usage:
//
//	go run ./examples/spline
//	go run ./examples/spline -plot examples/spline/spline.png
//	go run -tags cuda ./examples/spline -device cpu,cuda
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"time"

	"github.com/bandsolve/bandsolve/spline"
	"github.com/bandsolve/bandsolve/tridiag"
)

type config struct {
	devices   []string
	curves    int           // curves per batch in the checks and timings
	knots     int           // knots per curve in the timings
	levels    int           // grids of the periodic convergence table
	benchTime time.Duration // minimum duration of each timing
	plot      string        // PNG to write ("" for none)
}

func defaultConfig() config {
	return config{devices: availableDevices(), curves: 10000, knots: 64, levels: 5, benchTime: time.Second}
}

// convergence is one row of the periodic-sine table.
type convergence struct {
	intervals int
	err       float64
	ratio     float64 // error of the previous row / this error (0 on the first)
}

// timing is the fitting rate on one device.
type timing struct {
	device       string
	curvesPerSec float64
	fits         int
}

type result struct {
	cubicErr    float64 // clamped spline vs the cubic, largest over all curves
	naturalErr  float64 // natural spline through a straight line
	batchVsOne  float64 // largest |batch − one at a time| moment
	periodic    []convergence
	timings     []timing
	plotWritten bool
}

func main() {
	cfg := defaultConfig()
	devs := flag.String("device", strings.Join(cfg.devices, ","), "comma-separated devices: "+strings.Join(availableDevices(), ", "))
	flag.IntVar(&cfg.curves, "curves", cfg.curves, "curves per batch")
	flag.IntVar(&cfg.knots, "knots", cfg.knots, "knots per curve in the timings")
	flag.IntVar(&cfg.levels, "levels", cfg.levels, "rows of the periodic convergence table")
	flag.DurationVar(&cfg.benchTime, "benchtime", cfg.benchTime, "minimum duration of each timing")
	flag.StringVar(&cfg.plot, "plot", "", "write a PNG of a few fitted curves to this file")
	flag.Parse()
	cfg.devices = strings.Split(*devs, ",")
	if _, err := run(cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "spline:", err)
		os.Exit(1)
	}
}

func run(cfg config, w io.Writer) (result, error) {
	var res result
	if cfg.curves < 1 || cfg.knots < 4 || cfg.levels < 2 {
		return res, fmt.Errorf("bad configuration %+v", cfg)
	}
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 1))

	// 1. Clamped splines through random cubics, each with its own knots
	// and its own end slopes: the spline is the cubic.
	const n = 12
	x := make([]float64, 0, n*cfg.curves)
	y := make([]float64, 0, n*cfg.curves)
	d0, dn := make([]float64, cfg.curves), make([]float64, cfg.curves)
	polys := make([][4]float64, cfg.curves)
	for k := range cfg.curves {
		p := [4]float64{rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()}
		polys[k] = p
		t := -1 - rng.Float64()
		for range n {
			x = append(x, t)
			v, _ := cubic(p, t)
			y = append(y, v)
			t += 0.05 + 0.5*rng.Float64()
		}
		_, d0[k] = cubic(p, x[k*n])
		_, dn[k] = cubic(p, x[k*n+n-1])
	}
	cv, err := spline.FitBatch(n, x, y, spline.ClampedEach(d0, dn))
	if err != nil {
		return res, err
	}
	for k := range cfg.curves {
		xs := cv.Knots(k)
		for j := range 16 {
			t := xs[0] + (xs[n-1]-xs[0])*(float64(j)+0.5)/16
			want, _ := cubic(polys[k], t)
			res.cubicErr = max(res.cubicErr, math.Abs(cv.Eval(k, t)-want)/max(1, math.Abs(want)))
		}
	}
	fmt.Fprintf(w, "clamped splines through %d random cubics (own knots and end slopes each): largest relative error %.1e\n", cfg.curves, res.cubicErr)

	// 2. Natural splines through straight lines are those lines; the batch
	// equals the curves fitted one at a time.
	lines := make([]float64, n*cfg.curves)
	for k := range cfg.curves {
		a, b := rng.NormFloat64(), rng.NormFloat64()
		for i := range n {
			lines[k*n+i] = a + b*x[i] // curve 0's knots, shared
		}
	}
	nat, err := spline.FitBatch(n, x[:n], lines, spline.Natural())
	if err != nil {
		return res, err
	}
	for _, m := range nat.M {
		res.naturalErr = max(res.naturalErr, math.Abs(m))
	}
	for _, k := range []int{0, cfg.curves / 2, cfg.curves - 1} {
		one, err := spline.FitBatch(n, x[k*n:(k+1)*n], y[k*n:(k+1)*n], spline.Clamped(d0[k], dn[k]))
		if err != nil {
			return res, err
		}
		for i, m := range one.M {
			res.batchVsOne = max(res.batchVsOne, math.Abs(m-cv.M[k*n+i]))
		}
	}
	fmt.Fprintf(w, "natural splines through %d straight lines: largest |S″| %.1e\n", cfg.curves, res.naturalErr)
	fmt.Fprintf(w, "batch vs one curve at a time: largest difference %.1e\n", res.batchVsOne)

	// 3. Periodic spline of sin(x) and cos(3x) on [0, 2π]: fourth order.
	fmt.Fprintf(w, "\nperiodic spline of sin x on [0, 2π], uniform knots\n%10s %12s %7s\n", "intervals", "max error", "ratio")
	for l := range cfg.levels {
		m := 8 << l
		e, err := periodicSineError(m)
		if err != nil {
			return res, err
		}
		c := convergence{intervals: m, err: e}
		ratio := "—"
		if l > 0 {
			c.ratio = res.periodic[l-1].err / e
			ratio = fmt.Sprintf("%.2f", c.ratio)
		}
		res.periodic = append(res.periodic, c)
		fmt.Fprintf(w, "%10d %12.3e %7s\n", m, e, ratio)
	}

	// 4. Fitting rate on each device: one Fitter (one plan per end
	// condition) reused for every batch.
	fmt.Fprintf(w, "\nfitting %d natural curves of %d knots (shared knots), float64\n", cfg.curves, cfg.knots)
	for _, name := range cfg.devices {
		tm, err := timeFits(ctx, strings.TrimSpace(name), cfg, rng)
		if err != nil {
			return res, err
		}
		res.timings = append(res.timings, tm)
		fmt.Fprintf(w, "  %-50s %10.3g curves/s (%d fits)\n", tm.device, tm.curvesPerSec, tm.fits)
	}

	if cfg.plot != "" {
		if err := plotCurves(cfg.plot); err != nil {
			return res, err
		}
		res.plotWritten = true
		fmt.Fprintf(w, "\nwrote %s\n", cfg.plot)
	}
	return res, nil
}

func cubic(c [4]float64, t float64) (v, d float64) {
	return c[0] + t*(c[1]+t*(c[2]+t*c[3])), c[1] + t*(2*c[2]+t*3*c[3])
}

// periodicSineError fits sin x and cos 3x with m uniform intervals on
// [0, 2π] as one batch of two periodic curves and returns the largest error
// of the sine over two periods.
func periodicSineError(m int) (float64, error) {
	n := m + 1
	x := make([]float64, n)
	y := make([]float64, 2*n)
	for i := range x {
		x[i] = 2 * math.Pi * float64(i) / float64(m)
		y[i], y[n+i] = math.Sin(x[i]), math.Cos(3*x[i])
	}
	y[n-1], y[2*n-1] = y[0], y[n] // sin 2π rounds to −2.4e−16: make the ends equal
	cv, err := spline.FitBatch(n, x, y, spline.Periodic())
	if err != nil {
		return 0, err
	}
	worst := 0.0
	for j := range 4000 {
		t := -2*math.Pi + 4*math.Pi*float64(j)/3999
		worst = max(worst, math.Abs(cv.Eval(0, t)-math.Sin(t)))
	}
	return worst, nil
}

// timeFits fits batches of cfg.curves natural curves on the named device
// until cfg.benchTime has passed.
func timeFits(ctx context.Context, name string, cfg config, rng *rand.Rand) (timing, error) {
	dev, closeDev, err := openDevice(name)
	if err != nil {
		return timing{}, err
	}
	defer closeDev()
	n := cfg.knots
	f, err := spline.NewFitter[float64](dev, n, cfg.curves, tridiag.Options{})
	if err != nil {
		return timing{}, err
	}
	defer f.Close()
	x := make([]float64, n)
	for i := range x {
		x[i] = float64(i) + 0.3*rng.Float64()
	}
	y := make([]float64, n*cfg.curves)
	for i := range y {
		y[i] = rng.NormFloat64()
	}
	if _, err := f.Fit(ctx, x, y, spline.Natural()); err != nil { // makes the plan
		return timing{}, err
	}
	start := time.Now()
	fits := 0
	for fits == 0 || time.Since(start) < cfg.benchTime {
		if _, err := f.Fit(ctx, x, y, spline.Natural()); err != nil {
			return timing{}, err
		}
		fits++
	}
	return timing{device: dev.Name(), fits: fits,
		curvesPerSec: float64(fits*cfg.curves) / time.Since(start).Seconds()}, nil
}
