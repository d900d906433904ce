// Command stability measures, for one matrix type of the stability suite,
// how the error of tree partitioning reduction (TPR) depends on its slice
// size S, next to Thomas and the pivoting solver (GTSV), using packages
// stability and tridiag directly: the recipe behind `bandsolve stability
// -slice S`, for choosing S.
//
// Several problems of the type (one per seed) are solved as one batch; the
// table gives the median and largest relative error ‖x̂ − x‖₂/‖x‖₂ over
// the batch, and how many systems broke down.
//
//	go run ./examples/stability
//	go run ./examples/stability -type 14 -n 2048 -precision f32
//	go run -tags cuda ./examples/stability -device cuda
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"slices"

	"github.com/bandsolve/bandsolve/stability"
	"github.com/bandsolve/bandsolve/tridiag"
	"github.com/bandsolve/bandsolve/tridiag/tpr"
)

type config struct {
	device    string
	typ       stability.Type
	n         int
	seeds     int     // systems in the batch, one per seed 1…seeds
	precision string  // f32 or f64
	tolerance float64 // a slice size is "stable" when its largest error is within this factor of GTSV's
}

func defaultConfig() config {
	return config{device: "cpu", typ: 1, n: 4096, seeds: 8, precision: "f32", tolerance: 10}
}

// row is one line of the table: one algorithm (and slice size for TPR).
type row struct {
	name       string
	alg        tridiag.Algorithm
	slice      int // TPR's S, 0 otherwise
	median     float64
	worst      float64 // NaN when a system failed
	breakdowns int
	na         string // why the device has no plan for it ("" when it ran)
}

type result struct {
	rows       []row
	fastest    int // tpr.DefaultSliceSize(n)
	stable     int // tpr.StableSliceSize(n)
	chosen     int // smallest S within tolerance of GTSV (0 if none)
	referenced float64
}

func main() {
	cfg := defaultConfig()
	flag.Func("type", "matrix type of the suite: 1…21, 2T, 6T, 14T or 16T (see package stability; default 1)", func(s string) error {
		t, err := stability.ParseType(s)
		cfg.typ = t
		return err
	})
	flag.StringVar(&cfg.device, "device", cfg.device, "device: "+devicesHelp)
	flag.IntVar(&cfg.n, "n", cfg.n, "rows of each system")
	flag.IntVar(&cfg.seeds, "seeds", cfg.seeds, "systems in the batch (seeds 1…seeds)")
	flag.StringVar(&cfg.precision, "precision", cfg.precision, "f32 or f64")
	flag.Float64Var(&cfg.tolerance, "tolerance", cfg.tolerance, "accept slice sizes whose largest error is within this factor of GTSV's")
	flag.Parse()
	if _, err := run(cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "stability:", err)
		os.Exit(1)
	}
}

func run(cfg config, w io.Writer) (result, error) {
	if !cfg.typ.Valid() || cfg.n < stability.MinN || cfg.seeds < 1 || cfg.tolerance < 1 {
		return result{}, fmt.Errorf("bad configuration %+v", cfg)
	}
	dev, closeDev, err := openDevice(cfg.device)
	if err != nil {
		return result{}, err
	}
	defer closeDev()
	switch cfg.precision {
	case "f32":
		return study[float32](cfg, dev, w)
	case "f64":
		return study[float64](cfg, dev, w)
	}
	return result{}, fmt.Errorf("precision %q: want f32 or f64", cfg.precision)
}

func study[T float32 | float64](cfg config, dev tridiag.Device, w io.Writer) (result, error) {
	n, G := cfg.n, cfg.seeds
	if !cfg.typ.Random() {
		G = 1 // the matrix does not depend on the seed
	}
	// The batch: system g is the problem of seed g+1, stored contiguously.
	a, b, c, d := make([]T, n*G), make([]T, n*G), make([]T, n*G), make([]T, n*G)
	exact := make([][]float64, G)
	for g := range G {
		p, err := stability.NewProblem[T](cfg.typ, n, uint64(g+1))
		if err != nil {
			return result{}, err
		}
		copy(a[g*n:], p.A)
		copy(b[g*n:], p.B)
		copy(c[g*n:], p.C)
		copy(d[g*n:], p.D)
		exact[g] = p.X
	}
	res := result{fastest: tpr.DefaultSliceSize(n), stable: tpr.StableSliceSize(n)}
	res.rows = []row{{name: "thomas", alg: tridiag.Thomas}, {name: "gtsv", alg: tridiag.GTSV}}
	for s := 2; s <= max(2, nextPow2(n)); s *= 2 {
		res.rows = append(res.rows, row{name: fmt.Sprintf("tpr S=%d", s), alg: tridiag.TPR, slice: s})
	}
	shape := tridiag.Shape{N: n, G: G}
	x := make([]T, n*G)
	for i := range res.rows {
		r := &res.rows[i]
		plan, err := tridiag.NewPlan[T](dev, shape, tridiag.Options{Algorithm: r.alg, SliceSize: r.slice})
		if errors.Is(err, tridiag.ErrOptions) || errors.Is(err, tridiag.ErrShape) {
			// This device cannot run it (a GPU kernel's limits, say).
			r.na, r.median, r.worst = err.Error(), math.NaN(), math.NaN()
			continue
		} else if err != nil {
			return res, err
		}
		err = plan.Solve(context.Background(), a, b, c, d, x)
		plan.Close()
		var be *tridiag.BatchError
		if err != nil && !errors.As(err, &be) {
			return res, fmt.Errorf("%s: %w", r.name, err)
		}
		if be != nil {
			r.breakdowns = len(be.Failed) // their rows are NaN
		}
		errs := make([]float64, G)
		for g := range G {
			errs[g] = stability.RelError(x[g*n:(g+1)*n], exact[g])
		}
		r.worst = slices.Max(errs)
		if slices.ContainsFunc(errs, math.IsNaN) {
			r.worst = math.NaN()
		}
		errs = slices.DeleteFunc(errs, math.IsNaN)
		r.median = math.NaN()
		if len(errs) > 0 {
			slices.Sort(errs)
			r.median = errs[len(errs)/2]
		}
	}
	res.referenced = res.rows[1].worst
	for _, r := range res.rows[2:] {
		if r.worst <= cfg.tolerance*res.referenced { // false for NaN
			res.chosen = r.slice
			break
		}
	}

	fmt.Fprintf(w, "type %s (%v), n = %d, %d system(s) (seeds 1…%d), %s, device %s\n", cfg.typ.Name(), cfg.typ, n, G, G, cfg.precision, dev.Name())
	fmt.Fprintf(w, "%-14s %12s %12s %10s\n", "algorithm", "median", "largest", "breakdown")
	for _, r := range res.rows {
		mark := ""
		switch r.slice {
		case 0:
		case res.fastest:
			mark = "  ← fastest (default S)"
		case res.stable:
			mark = "  ← tpr-stable"
		}
		if r.slice != 0 && r.slice == res.fastest && r.slice == res.stable {
			mark = "  ← fastest = tpr-stable"
		}
		if r.na != "" {
			fmt.Fprintf(w, "%-14s %12s %12s %10s  (%s)\n", r.name, "n/a", "n/a", "", r.na)
			continue
		}
		fmt.Fprintf(w, "%-14s %12s %12s %10d%s\n", r.name, cell(r.median), cell(r.worst), r.breakdowns, mark)
	}
	if res.chosen > 0 {
		fmt.Fprintf(w, "smallest S whose largest error is within %gx of gtsv: %d\n", cfg.tolerance, res.chosen)
	} else {
		fmt.Fprintf(w, "no slice size comes within %gx of gtsv\n", cfg.tolerance)
	}
	return res, nil
}

func cell(v float64) string {
	if math.IsNaN(v) {
		return "NaN"
	}
	return fmt.Sprintf("%.2e", v)
}

func nextPow2(n int) int {
	p := 1
	for p < n {
		p *= 2
	}
	return p
}
