package banded

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/bandsolve/bandsolve/internal/registry"
	"github.com/bandsolve/bandsolve/tridiag"
)

// BatchSpec is what a backend builds a batch solver for: G systems of
// order N and half-bandwidth K in Layout, with the plan's options.
type BatchSpec struct {
	N, K, G int
	Layout  Layout
	Options BatchOptions
}

// BatchSolver solves the batches of one BatchSpec on a device other than
// the CPU: LU without pivoting with Options.Factor's boosting, failures
// and boosts reported as SolveBatch reports them with refinement off.
// BatchPlan checks the lengths before Solve and applies Options.Refine
// and Options.Check on the host afterwards.
type BatchSolver[T Scalar] interface {
	// Solve solves the batch whose matrices are a (Batch.Data of the
	// spec's shape and layout) for rhs into x (x may be rhs).
	Solve(ctx context.Context, a, rhs, x []T) (BatchResult, error)
	// Describe says how the device solves.
	Describe() string
	Close() error
}

// BatchBackend builds the batch solvers of one kind of device. Its
// constructors refuse, with an error wrapping ErrOption that names the
// option and the device, the options the device cannot honour (Refine and
// Check are BatchPlan's, never the backend's).
type BatchBackend interface {
	NewBatchSolver32(spec BatchSpec) (BatchSolver[float32], error)
	NewBatchSolver64(spec BatchSpec) (BatchSolver[float64], error)
}

// ComplexBatchBackend is implemented by the backends that solve complex
// batches (LU with partial pivoting). A device whose backend does not
// implement it makes NewBatchPlan[complex64] and
// NewBatchPlan[complex128] fail with an error wrapping ErrOption that
// names the device; the CPU solves them (SolveBatch).
type ComplexBatchBackend interface {
	NewBatchSolverC64(spec BatchSpec) (BatchSolver[complex64], error)
	NewBatchSolverC128(spec BatchSpec) (BatchSolver[complex128], error)
}

var backends registry.Registry[BatchBackend]

// RegisterBackend adds the batch solvers of another kind of device: open
// returns the backend of dev, or false when dev is not of its kind. The
// GPU solvers register themselves when package
// github.com/bandsolve/bandsolve/gpu is imported.
func RegisterBackend(open func(dev tridiag.Device) (BatchBackend, bool)) {
	backends.Add(func(dev any) (BatchBackend, bool) {
		d, ok := dev.(tridiag.Device)
		if !ok {
			return nil, false
		}
		return open(d)
	})
}

// backendOf returns the registered backend that serves dev.
func backendOf(dev tridiag.Device) (BatchBackend, error) {
	if b, ok := backends.Find(dev); ok {
		return b, nil
	}
	return nil, fmt.Errorf("%w: no banded batch solver for device %s (%T): for a GPU, build with -tags cuda and import github.com/bandsolve/bandsolve/gpu", ErrOption, dev.Name(), dev)
}

// BatchPlan solves batches of G banded systems of one shape and layout on
// a device, again and again. On the CPU it is SolveBatch; on a GPU one
// thread per system factors (LU without pivoting, with boosting) and
// solves, bit for bit as the CPU does, and the solutions that
// Options.Refine asks to refine (by default those of systems with a
// boosted pivot) are refined on the host, as are the checks of
// Options.Check, so that the results are SolveBatch's on every device.
// Solves of one plan may run concurrently on the CPU and run one at a
// time on a GPU.
type BatchPlan[T Scalar] struct {
	dev    tridiag.Device
	spec   BatchSpec
	cpu    *tridiag.CPU // set on the CPU: Solve is SolveBatch
	solver BatchSolver[T]
}

// NewBatchPlan makes a plan for batches of g systems of order n and
// half-bandwidth k in layout on dev (nil: tridiag.DefaultCPU()). Errors:
// ErrShape for a bad shape or layout (and, on a GPU, K outside what its
// kernels take), ErrOption for bad or unsupported options (naming the
// option and the device), and an error wrapping ErrOption for a device
// without a banded backend. Complex plans (complex64, complex128) need
// opts.Pivot, and a device whose backend is a ComplexBatchBackend (the
// CPU is); otherwise the error wraps ErrOption.
func NewBatchPlan[T Scalar](dev tridiag.Device, n, k, g int, layout Layout, opts BatchOptions) (*BatchPlan[T], error) {
	if dev == nil {
		dev = tridiag.DefaultCPU()
	}
	b := &Batch[T]{N: n, K: k, G: g, Layout: layout}
	if err := b.checkHead(); err != nil {
		return nil, err
	}
	if err := opts.Refine.Check(); err != nil {
		return nil, err
	}
	if opts.Workers < 0 {
		return nil, fmt.Errorf("%w: BatchOptions.Workers=%d, want ≥ 0", ErrOption, opts.Workers)
	}
	if err := checkComplexOptions[T](opts, "NewBatchPlan"); err != nil {
		return nil, err
	}
	p := &BatchPlan[T]{dev: dev, spec: BatchSpec{N: n, K: k, G: g, Layout: layout, Options: opts}}
	if cpu, ok := dev.(*tridiag.CPU); ok {
		if opts.CheckFinite {
			return nil, fmt.Errorf("%w: BatchOptions.CheckFinite is not available on device %s: the CPU leaves non-finite solutions to Check", ErrOption, dev.Name())
		}
		if p.spec.Options.Workers == 0 {
			p.spec.Options.Workers = cpu.Workers()
		}
		p.cpu = cpu
		return p, nil
	}
	be, err := backendOf(dev)
	if err != nil {
		return nil, err
	}
	var s any
	switch any(*new(T)).(type) {
	case float32:
		s, err = be.NewBatchSolver32(p.spec)
	case float64:
		s, err = be.NewBatchSolver64(p.spec)
	default:
		cb, ok := be.(ComplexBatchBackend)
		if !ok {
			return nil, fmt.Errorf("%w: no complex banded batch solver for device %s (%T)", ErrOption, dev.Name(), dev)
		}
		if _, c64 := any(*new(T)).(complex64); c64 {
			s, err = cb.NewBatchSolverC64(p.spec)
		} else {
			s, err = cb.NewBatchSolverC128(p.spec)
		}
	}
	if err != nil {
		return nil, err
	}
	p.solver = s.(BatchSolver[T])
	return p, nil
}

// Shape returns N, K and G.
func (p *BatchPlan[T]) Shape() (n, k, g int) { return p.spec.N, p.spec.K, p.spec.G }

// Layout is the layout of the plan's batches.
func (p *BatchPlan[T]) Layout() Layout { return p.spec.Layout }

// Device is the device the plan solves on.
func (p *BatchPlan[T]) Device() tridiag.Device { return p.dev }

// Describe says how the plan solves, e.g. "cpu (…): SolveBatch, LU
// without pivoting, refinement boosted, 8 workers".
func (p *BatchPlan[T]) Describe() string {
	o := p.spec.Options
	alg := "LU without pivoting"
	if o.Pivot {
		alg = "LU with partial pivoting"
	}
	if p.cpu != nil {
		return fmt.Sprintf("%s: SolveBatch, %s, refinement %v, %d workers", p.dev.Name(), alg, o.Refine.Mode, o.Workers)
	}
	return fmt.Sprintf("%s: %s, refinement %v on the host", p.solver.Describe(), alg, o.Refine.Mode)
}

// Solve solves the batch whose matrices are a (Batch.Data of the plan's
// shape and layout: (2K+1)·N·G elements) for the right-hand sides rhs into
// x (N·G elements each, in the layout; x may be rhs). Results and errors
// are SolveBatch's: failed systems get x = NaN and are listed in a
// *BatchError, boosted pivots are in the result.
func (p *BatchPlan[T]) Solve(ctx context.Context, a, rhs, x []T) (BatchResult, error) {
	n, k, g := p.spec.N, p.spec.K, p.spec.G
	if want := (2*k + 1) * n * g; len(a) != want {
		return BatchResult{}, shapeErr("len(a)=%d, want (2K+1)·N·G=%d", len(a), want)
	}
	if len(rhs) != n*g || len(x) != n*g {
		return BatchResult{}, shapeErr("len(rhs)=%d, len(x)=%d, want N·G=%d", len(rhs), len(x), n*g)
	}
	b := &Batch[T]{N: n, K: k, G: g, Layout: p.spec.Layout, Data: a}
	if p.cpu != nil {
		return SolveBatch(ctx, b, rhs, x, p.spec.Options)
	}
	o := p.spec.Options
	var rhs0 []T
	if o.Refine.Mode != RefineOff || o.Check {
		rhs0 = append([]T(nil), rhs...) // x may be rhs
	}
	res, err := p.solver.Solve(ctx, a, rhs, x)
	if rhs0 == nil {
		return res, err
	}
	return finishOnHost(ctx, b, rhs0, x, o, res, err)
}

// SolveBatch solves a Batch of the plan's shape and layout (see Solve).
func (p *BatchPlan[T]) SolveBatch(ctx context.Context, b *Batch[T], rhs, x []T) (BatchResult, error) {
	if err := b.Check(); err != nil {
		return BatchResult{}, err
	}
	s := p.spec
	if b.N != s.N || b.K != s.K || b.G != s.G || b.Layout != s.Layout {
		return BatchResult{}, shapeErr("batch N=%d K=%d G=%d %v, plan N=%d K=%d G=%d %v",
			b.N, b.K, b.G, b.Layout, s.N, s.K, s.G, s.Layout)
	}
	return p.Solve(ctx, b.Data, rhs, x)
}

// Close releases the plan's device resources.
func (p *BatchPlan[T]) Close() error {
	if p.solver != nil {
		return p.solver.Close()
	}
	return nil
}

// finishOnHost refines and checks, as SolveBatch does after each system's
// factor and solve, the systems that a device solved without refinement:
// res and err are the device's, x its solutions.
func finishOnHost[T Scalar](ctx context.Context, b *Batch[T], rhs, x []T, opt BatchOptions, res BatchResult, err error) (BatchResult, error) {
	var failed []SystemError
	if err != nil {
		var be *BatchError
		if !errors.As(err, &be) {
			return res, err
		}
		failed = append(failed, be.Failed...)
	}
	if err := ctx.Err(); err != nil {
		return res, err
	}
	down := map[int]bool{}
	for _, f := range failed {
		down[f.System] = true
	}
	boosted := map[int]int{} // system → index in res.Boosted
	for i, sb := range res.Boosted {
		boosted[sb.System] = i
	}
	n := b.N
	var sys, orig *Band[T]
	var vec, rhsv []T
	for s := 0; s < b.G; s++ {
		if down[s] {
			continue
		}
		bi, isBoosted := boosted[s]
		refine := !isComplex[T]() && (opt.Refine.Mode == RefineAlways || (opt.Refine.Mode == RefineBoosted && isBoosted))
		if !refine && !opt.Check {
			continue
		}
		if sys == nil { // the first system to refine or check: most solves have none
			sys = &Band[T]{N: n, K: b.K, Data: make([]T, (2*b.K+1)*n)}
			orig = &Band[T]{N: n, K: b.K, Data: make([]T, len(sys.Data))}
			vec, rhsv = make([]T, n), make([]T, n)
		}
		for i := range vec {
			vec[i] = x[b.VecIndex(s, i)]
			rhsv[i] = rhs[b.VecIndex(s, i)]
		}
		lost := false
		if refine {
			b.copyOut(s, sys.Data)
			b.copyOut(s, orig.Data)
			rres, boosts, rerr, ferr := refineOnHost(sys, orig, rhsv, vec, opt)
			if ferr != nil {
				return res, fmt.Errorf("banded: system %d: the device solved it, the host factorization failed: %w", s, ferr)
			}
			if isBoosted {
				res.Boosted[bi].Refine = rres
			}
			if rerr != nil {
				failed = append(failed, refineFailure(s, rres, boosts > 0, rerr))
				setNaN(vec)
				lost = true
			}
		}
		if opt.Check && !lost {
			if se := checkSystem(b, s, rhsv, vec, opt.Refine.Tol, isBoosted); se != nil {
				failed = append(failed, *se)
			}
		}
		for i, v := range vec {
			x[b.VecIndex(s, i)] = v
		}
	}
	if len(failed) > 0 {
		sort.SliceStable(failed, func(i, j int) bool { return failed[i].System < failed[j].System })
		return res, &BatchError{G: b.G, Failed: failed}
	}
	return res, nil
}

// refineOnHost factors sys (a copy of orig) by LU without pivoting and
// refines vec, a device's solution for rhs, with it: the refinement
// result, the number of boosted pivots, the refinement's error and the
// factorization's. Complex systems are not refined (nothing is done).
func refineOnHost[T Scalar](sys, orig *Band[T], rhs, vec []T, opt BatchOptions) (RefineResult, int, error, error) {
	switch sys := any(sys).(type) {
	case *Band[float32]:
		return refineReal(sys, any(orig).(*Band[float32]), any(rhs).([]float32), any(vec).([]float32), opt)
	case *Band[float64]:
		return refineReal(sys, any(orig).(*Band[float64]), any(rhs).([]float64), any(vec).([]float64), opt)
	}
	return RefineResult{}, 0, nil, nil
}

func refineReal[T Float](sys, orig *Band[T], rhs, vec []T, opt BatchOptions) (RefineResult, int, error, error) {
	bs, ferr := FactorLU(sys, opt.Factor)
	if ferr != nil {
		return RefineResult{}, 0, nil, ferr
	}
	rres, rerr := Refine(orig, func(r []T) error { SolveLU(sys, r); return nil }, append([]T(nil), rhs...), vec, opt.Refine)
	return rres, bs.Count(), rerr, nil
}
