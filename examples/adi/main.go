// Command adi solves the heat equation u_t = Δu on the unit square and cube
// with alternating-direction implicit (ADI) time steps: Peaceman–Rachford
// in 2D, Douglas in 3D. Every implicit half-step is one batch of
// tridiagonal solves along one axis of the row-major array, taken in place
// through a strided layout (no transpose), with one plan per axis made once
// and constant coefficients. Periodic boundaries use the cyclic solver.
//
// It checks itself against the exact solution, a decaying Fourier mode:
// the error falls 4-fold each time the grid spacing and the time step are
// halved (second order), printed as a table per problem, and it reports
// the steps per second on each device. With -tags cuda, -device cuda runs
// the 2D stepper with the field resident on the GPU for the whole run.
//
//	go run ./examples/adi
//	go run ./examples/adi -levels 4 -bench2d 1024 -bench3d 128
//	go run -tags cuda ./examples/adi -device cpu,cuda
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/bandsolve/bandsolve/tridiag"
)

// config is what one run does.
type config struct {
	devices   []string // "cpu", and "cuda" in a cuda build
	precision string   // "f64" or "f32"
	levels    int      // grids per convergence table, each halving h and Δt
	n2, n3    int      // cells per side of the coarsest 2D and 3D grids
	steps     int      // time steps on the coarsest grid
	tEnd      float64  // final time
	bench2d   int      // unknowns per side of the 2D timing run (0: none)
	bench3d   int      // unknowns per side of the 3D timing run (0: none)
	benchTime time.Duration
}

func defaultConfig() config {
	return config{
		devices: availableDevices(), precision: "f64", levels: 3, n2: 16, n3: 8, steps: 8,
		tEnd: 0.05, bench2d: 512, bench3d: 64, benchTime: time.Second,
	}
}

// level is one row of a convergence table.
type level struct {
	n, steps     int
	r, err       float64
	ratio        float64 // error of the coarser grid / this error (0 on the first)
	stepsPerSec  float64
	pointsPerSec float64
}

// table is one convergence study: one problem refined levels times.
type table struct {
	dims     int
	periodic bool
	levels   []level
}

// deviceResult is everything run did on one device.
type deviceResult struct {
	device string
	tables []table
	bench  []level // timing runs (err and ratio unset)
}

func main() {
	cfg := defaultConfig()
	devs := flag.String("device", strings.Join(cfg.devices, ","), "comma-separated devices: "+strings.Join(availableDevices(), ", "))
	flag.StringVar(&cfg.precision, "precision", cfg.precision, "f64 or f32")
	flag.IntVar(&cfg.levels, "levels", cfg.levels, "grids per convergence table (each halves h and Δt)")
	flag.IntVar(&cfg.n2, "n2", cfg.n2, "cells per side of the coarsest 2D grid")
	flag.IntVar(&cfg.n3, "n3", cfg.n3, "cells per side of the coarsest 3D grid")
	flag.IntVar(&cfg.steps, "steps", cfg.steps, "time steps on the coarsest grid")
	flag.Float64Var(&cfg.tEnd, "t", cfg.tEnd, "final time")
	flag.IntVar(&cfg.bench2d, "bench2d", cfg.bench2d, "unknowns per side of the 2D timing run (0: skip)")
	flag.IntVar(&cfg.bench3d, "bench3d", cfg.bench3d, "unknowns per side of the 3D timing run (0: skip)")
	flag.DurationVar(&cfg.benchTime, "benchtime", cfg.benchTime, "minimum duration of each timing run")
	flag.Parse()
	cfg.devices = strings.Split(*devs, ",")
	if _, err := run(cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "adi:", err)
		os.Exit(1)
	}
}

// run does the convergence studies and timing runs of cfg on each device,
// printing the tables to w.
func run(cfg config, w io.Writer) ([]deviceResult, error) {
	if cfg.levels < 1 || cfg.n2 < 2 || cfg.n3 < 2 || cfg.steps < 1 || cfg.tEnd <= 0 {
		return nil, fmt.Errorf("bad configuration %+v", cfg)
	}
	var out []deviceResult
	for _, name := range cfg.devices {
		d, err := openDevice(strings.TrimSpace(name))
		if err != nil {
			return out, err
		}
		var res deviceResult
		switch cfg.precision {
		case "f64":
			res, err = runDevice[float64](cfg, d, w)
		case "f32":
			res, err = runDevice[float32](cfg, d, w)
		default:
			err = fmt.Errorf("precision %q: want f64 or f32", cfg.precision)
		}
		d.close()
		if err != nil {
			return out, fmt.Errorf("%s: %w", d.name, err)
		}
		out = append(out, res)
	}
	return out, nil
}

func runDevice[T tridiag.Float](cfg config, d *device, w io.Writer) (deviceResult, error) {
	res := deviceResult{device: d.name}
	fmt.Fprintf(w, "device: %s, %s\n", d.name, cfg.precision)
	if d.note3D != "" {
		fmt.Fprintf(w, "note: %s\n", d.note3D)
	}
	for _, p := range []struct {
		dims     int
		periodic bool
	}{{2, false}, {2, true}, {3, false}, {3, true}} {
		cells := cfg.n2
		if p.dims == 3 {
			cells = cfg.n3
		}
		var tb table
		tb.dims, tb.periodic = p.dims, p.periodic
		for l := range cfg.levels {
			c := cells << l
			g := grid{dims: p.dims, n: c, periodic: p.periodic, steps: cfg.steps << l}
			if !p.periodic {
				g.n = c - 1 // c cells, c−1 interior unknowns
			}
			g.dt = cfg.tEnd / float64(g.steps)
			if l == 0 {
				fmt.Fprintf(w, "\n%s, t = %g\n", g.describe(), cfg.tEnd)
				fmt.Fprintf(w, "%9s %6s %8s %12s %7s %10s %9s\n", "grid", "steps", "Δt/h²", "max error", "ratio", "steps/s", "Mpoint/s")
			}
			lv, err := solve[T](d, g)
			if err != nil {
				return res, err
			}
			if l > 0 {
				lv.ratio = tb.levels[l-1].err / lv.err
			}
			tb.levels = append(tb.levels, lv)
			ratio := "—"
			if l > 0 {
				ratio = fmt.Sprintf("%.2f", lv.ratio)
			}
			fmt.Fprintf(w, "%9s %6d %8.3g %12.3e %7s %10.1f %9.2f\n", gridName(g), g.steps, lv.r, lv.err, ratio, lv.stepsPerSec, lv.pointsPerSec/1e6)
		}
		res.tables = append(res.tables, tb)
	}
	for _, b := range []struct{ dims, n int }{{2, cfg.bench2d}, {3, cfg.bench3d}} {
		if b.n <= 0 {
			continue
		}
		g := grid{dims: b.dims, n: b.n, dt: 1e-5}
		lv, err := timeSteps[T](d, g, cfg.benchTime)
		if err != nil {
			return res, err
		}
		if len(res.bench) == 0 {
			fmt.Fprintf(w, "\ntiming (zero boundaries, %s)\n%12s %10s %10s %9s\n", cfg.precision, "grid", "steps", "steps/s", "Mpoint/s")
		}
		fmt.Fprintf(w, "%12s %10d %10.1f %9.1f\n", gridName(g), lv.steps, lv.stepsPerSec, lv.pointsPerSec/1e6)
		res.bench = append(res.bench, lv)
	}
	fmt.Fprintln(w)
	return res, nil
}

func gridName(g grid) string {
	s := fmt.Sprintf("%d×%d", g.n, g.n)
	if g.dims == 3 {
		s += fmt.Sprintf("×%d", g.n)
	}
	return s
}

// newStepper makes the stepper of grid g on device d.
func newStepper[T tridiag.Float](d *device, g grid) (stepper, error) {
	if g.dims == 2 {
		return newPR[T](d, g)
	}
	return newDouglas[T](d, g)
}

// solve runs grid g to its final time and measures the error.
func solve[T tridiag.Float](d *device, g grid) (level, error) {
	s, err := newStepper[T](d, g)
	if err != nil {
		return level{}, err
	}
	defer s.Close()
	start := time.Now()
	if err := s.Step(context.Background(), g.steps); err != nil {
		return level{}, err
	}
	el := time.Since(start).Seconds()
	u := make([]float64, g.size())
	if err := s.Field(u); err != nil {
		return level{}, err
	}
	sps := float64(g.steps) / el
	return level{n: g.n, steps: g.steps, r: g.r(), err: relMaxError(u, g.mode(float64(g.steps)*g.dt)),
		stepsPerSec: sps, pointsPerSec: sps * float64(g.size())}, nil
}

// timeSteps takes steps on grid g, doubling their number until a run
// lasts minTime at least, and reports the rate of the last run.
func timeSteps[T tridiag.Float](d *device, g grid, minTime time.Duration) (level, error) {
	s, err := newStepper[T](d, g)
	if err != nil {
		return level{}, err
	}
	defer s.Close()
	ctx := context.Background()
	if err := s.Step(ctx, 1); err != nil { // warm up
		return level{}, err
	}
	for k := 1; ; k *= 2 {
		start := time.Now()
		if err := s.Step(ctx, k); err != nil {
			return level{}, err
		}
		if el := time.Since(start); el >= minTime || k >= 1<<20 {
			sps := float64(k) / el.Seconds()
			return level{n: g.n, steps: k, stepsPerSec: sps, pointsPerSec: sps * float64(g.size())}, nil
		}
	}
}
