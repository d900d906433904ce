package sptrsv

import (
	"context"
	"fmt"

	"github.com/bandsolve/bandsolve/internal/registry"
	"github.com/bandsolve/bandsolve/sparse"
	"github.com/bandsolve/bandsolve/tridiag"
)

// DevicePlan is a triangle analysed on a device other than the CPU (a
// GPU's plan), made by the device's Backend. Users hold a Plan.
type DevicePlan interface {
	// Algorithm is the solve the plan runs (Auto's choice when asked).
	Algorithm() Algorithm
	// Stats are the triangle's statistics as far as the analysis
	// computed them.
	Stats() Stats
	// Solve solves T x = b with host vectors b and x of the plan's
	// precision ([]float32 or []float64); x may be b.
	Solve(b, x any) error
	// Close releases what the device holds for the plan.
	Close() error
}

// Backend makes the plans of one kind of device. The CPU's is built in;
// others come from RegisterBackend.
type Backend interface {
	// NewPlan analyses the triangle of a (as Analyze would check it) for
	// solves in float64 (f64) or float32 with algorithm alg.
	NewPlan(a *sparse.CSR, opts Options, alg Algorithm, f64 bool) (DevicePlan, error)
}

var backends registry.Registry[Backend]

// RegisterBackend adds the triangular solves of another kind of device:
// open returns the backend of dev, or false when dev is not of its kind.
// The GPU's backend is registered by package
// github.com/bandsolve/bandsolve/gpu.
func RegisterBackend(open func(dev tridiag.Device) (Backend, bool)) {
	backends.Add(func(dev any) (Backend, bool) {
		d, ok := dev.(tridiag.Device)
		if !ok {
			return nil, false
		}
		return open(d)
	})
}

// AutoLevelSetRowsCPU is the mean rows per level from which Auto runs the
// level-set solve on the CPU rather than the sequential one.
//
//	go test ./sptrsv/ -run '^$' -bench BenchmarkSolve -benchtime 20x
//
// on two cores (AMD EPYC, one shared): with 4096 rows in every level
// levelset takes 3.15 ms against sequential's 2.74 ms, with 250 rows 2.06
// against 2.03 ms; the synchronization-free solves pay for their atomics
// (21–22 ms on both). -bench 'LevelThreshold/width(4096|16384)' gives the
// workers 3.24 against 3.15 ms serially at 4096 rows a level, 3.02
// against 3.38 ms at 16384.
const AutoLevelSetRowsCPU = 4 * DefaultSerialLevelRows

// AutoLevelSetRowsGPU is the mean rows per level from which Auto solves
// by level sets on a GPU, else synchronization-free by rows.
//
//	bandsolve bench -grid sptrsv -device cuda -peers cusparse
//
// on an H100: the levels of two-level (5·10⁶ rows a level) and road-like
// (1.7·10⁵) take 173 and 417 µs by level sets against 268 and 396 µs
// synchronization-free (FP32); at 3400 rows a level (the 7-point 3-D
// Laplacian) 1.82 against 2.02 ms, at 2000 (power-law) 2.92 against 5.85
// ms with a thread a row, 1.10 with a warp.
const AutoLevelSetRowsGPU = 20000

// ChooseCPU is Auto's choice on the CPU with the given workers for a
// triangle of statistics st: the sequential solve with one worker or
// narrow levels, the level-set solve from AutoLevelSetRowsCPU rows a
// level.
func ChooseCPU(st Stats, workers int) Algorithm {
	if workers >= 2 && st.MeanRowsPerLevel >= AutoLevelSetRowsCPU {
		return LevelSet
	}
	return Sequential
}

// Plan is a triangle analysed for one device, for solves in precision T.
// Its solves may run concurrently on the CPU; a device plan's may not.
type Plan[T Float] struct {
	alg Algorithm
	an  *Analysis  // the CPU's
	loc *Locality  // the CPU's, for Locality
	dp  DevicePlan // another device's
}

// NewPlan analyses the triangle of a for solves with algorithm alg on dev
// (nil: tridiag.DefaultCPU()). The CPU offers every Algorithm, its
// workers those of the device (Options.Workers, when set, wins); Auto is
// ChooseCPU's choice there and the device's own rule elsewhere. The
// errors are Analyze's, and ErrAlgorithm for an algorithm the device
// does not offer.
func NewPlan[T Float](dev tridiag.Device, a *sparse.CSR, opts Options, alg Algorithm) (*Plan[T], error) {
	if alg < Auto || alg > LocalityAware {
		return nil, fmt.Errorf("%w: %s", ErrAlgorithm, alg)
	}
	if dev == nil {
		dev = tridiag.DefaultCPU()
	}
	if cpu, ok := dev.(*tridiag.CPU); ok {
		if opts.Workers <= 0 {
			opts.Workers = cpu.Workers()
		}
		an, err := Analyze(a, opts)
		if err != nil {
			return nil, err
		}
		if alg == Auto {
			alg = ChooseCPU(an.Stats(), an.workers)
		}
		p := &Plan[T]{alg: alg, an: an}
		if alg == LocalityAware {
			if p.loc, err = AnalyzeLocality(an, LocalityOptions{}); err != nil {
				return nil, err
			}
		}
		return p, nil
	}
	b, ok := backends.Find(dev)
	if !ok {
		return nil, fmt.Errorf("%w: no triangular solves for device %v (import github.com/bandsolve/bandsolve/gpu for a GPU)", ErrAlgorithm, dev)
	}
	var zero T
	_, f64 := any(zero).(float64)
	dp, err := b.NewPlan(a, opts, alg, f64)
	if err != nil {
		return nil, err
	}
	return &Plan[T]{alg: dp.Algorithm(), dp: dp}, nil
}

// Algorithm returns the solve the plan runs.
func (p *Plan[T]) Algorithm() Algorithm { return p.alg }

// Stats returns the triangle's statistics (a device plan's as far as its
// analysis computed them).
func (p *Plan[T]) Stats() Stats {
	if p.an != nil {
		return p.an.Stats()
	}
	return p.dp.Stats()
}

// Solve solves T x = b; x may be b.
func (p *Plan[T]) Solve(ctx context.Context, b, x []T) error {
	if p.dp != nil {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("sptrsv: solve not started: %w", err)
		}
		return p.dp.Solve(b, x)
	}
	switch p.alg {
	case Sequential:
		return SolveSequential(p.an, b, x)
	case LevelSet:
		return Solve(ctx, p.an, b, x)
	case SyncFree:
		return SolveSyncFree(ctx, p.an, b, x)
	case LocalityAware:
		return SolveLocality(ctx, p.loc, b, x)
	default:
		return SolveSyncFreeCSR(ctx, p.an, b, x)
	}
}

// Close releases what a device holds for the plan (nothing on the CPU).
func (p *Plan[T]) Close() error {
	if p.dp != nil {
		return p.dp.Close()
	}
	return nil
}
