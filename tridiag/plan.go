package tridiag

import (
	"context"
	"fmt"
	"math"
	"sync"

	"github.com/bandsolve/bandsolve/tridiag/internal/tri"
)

// Plan solves batches of one shape, precision, layout and algorithm on one
// device. Make it once and reuse it: it owns its workspace. A Plan may be
// used from several goroutines, but its solves run one at a time.
type Plan[T Scalar] struct {
	spec   Spec
	dev    Device
	mu     sync.Mutex
	solver Solver[T]
	dcopy  []T // Options.Check: d kept for an in-place solve
}

// NewPlan makes a plan for batches of the given shape on dev (nil means
// the CPU device with one worker per core). A shape whose workspace does
// not fit the memory the process can have is refused, before anything is
// allocated, with an error wrapping ErrMemory that names the sizes. A
// complex plan (T complex64 or complex128) needs a device whose backend
// implements ComplexBackend (the CPU's does); on another device NewPlan
// fails with an error wrapping ErrOptions that names the device.
func NewPlan[T Scalar](dev Device, shape Shape, opts Options) (*Plan[T], error) {
	if err := shape.Validate(); err != nil {
		return nil, err
	}
	if err := opts.validate(); err != nil {
		return nil, err
	}
	if dev == nil {
		dev = DefaultCPU()
	}
	spec := Spec{Shape: shape.Normalize(), Options: opts}
	be, err := BackendOf(dev)
	if err != nil {
		return nil, err
	}
	s, err := planSolver[T](be, dev, spec)
	if err != nil {
		return nil, fmt.Errorf("tridiag: making %s plan for N=%d G=%d on %s: %w", opts.Algorithm, shape.N, shape.G, dev.Name(), err)
	}
	return &Plan[T]{spec: spec, dev: dev, solver: s}, nil
}

// Shape returns the plan's shape (with its layout resolved).
func (p *Plan[T]) Shape() Shape { return p.spec.Shape }

// Options returns the plan's options.
func (p *Plan[T]) Options() Options { return p.spec.Options }

// Device returns the device the plan solves on.
func (p *Plan[T]) Device() Device { return p.dev }

// Describe says how the plan solves: the algorithm, with Auto resolved to
// what the device runs, and, where the device says so, how it launches it
// (a GPU's kernels and blocks). On the CPU, Auto says which test sends a
// system to GTSV and, after a solve, for how many systems of the last
// solve it did: "thomas, gtsv for the systems that fail its pivot growth
// test or break down; last solve: gtsv for 3 of 64 systems". With
// PivotAlways it names the pivoting solver. After Close it names the algorithm of the
// options.
func (p *Plan[T]) Describe() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return describe(p.solver, p.spec.Algorithm)
}

// describe is the Describe of a plan with solver s (nil once closed) for
// algorithm alg.
func describe(s any, alg Algorithm) string {
	if d, ok := s.(Describer); ok {
		return d.Describe()
	}
	return alg.String()
}

// Solve solves the batch with coefficient arrays a, b, c and right-hand
// sides d, writing the solutions to x (x may be d). Every array must hold
// Shape().Len() elements at least (but a, which LDLT ignores, may then be
// nil). When some systems fail, the error is a
// *BatchError and the other systems' solutions are valid. With
// Options.Check the systems that fail the accuracy check are listed too,
// each with its Status.
func (p *Plan[T]) Solve(ctx context.Context, a, b, c, d, x []T) error {
	return p.run(ctx, Batch[T]{A: a, B: b, C: c, D: d, X: x})
}

// SolveConst solves the batch whose systems all have the same constant
// coefficients: a on the sub-diagonal, b on the diagonal, c on the
// super-diagonal (and in the corners when the plan is cyclic). LDLT
// ignores a and takes c on both off-diagonals.
func (p *Plan[T]) SolveConst(ctx context.Context, a, b, c T, d, x []T) error {
	return p.run(ctx, Batch[T]{ConstA: a, ConstB: b, ConstC: c, Constant: true, D: d, X: x})
}

// Close releases the plan's workspace. The plan cannot be used after.
func (p *Plan[T]) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.solver == nil {
		return nil
	}
	err := p.solver.Close()
	p.solver = nil
	return err
}

func (p *Plan[T]) run(ctx context.Context, bt Batch[T]) error {
	if err := p.check(bt); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.solver == nil {
		return ErrClosed
	}
	return solveChecked(ctx, p.solver, p.spec.Check, p.spec.Len(), p.spec.G, &p.dcopy, bt, func(orig Batch[T]) ([]Status, error) {
		return checkBatch(p.spec, p.tol(), orig)
	})
}

// check validates lengths and, unless skipped, finiteness.
func (p *Plan[T]) check(bt Batch[T]) error { return checkInput(p.spec, bt, true, 1) }

// checkNRHS validates a number of right-hand sides.
func checkNRHS(spec Spec, nrhs int) error {
	if nrhs < 1 {
		return fmt.Errorf("%w: %d right-hand sides, need at least 1", ErrShape, nrhs)
	}
	if n := spec.Len(); nrhs > math.MaxInt/n {
		return fmt.Errorf("%w: %d right-hand sides of %d elements overflow an index", ErrShape, nrhs, n)
	}
	return nil
}

// checkInput validates lengths and, unless the spec skips it,
// finiteness: of the coefficients when coef (a is ignored by LDLT), and
// of nrhs batches of d (and the length of x) stored one after the other
// (Factors.SolveMany), nrhs validated by checkNRHS, or none when nrhs is
// 0.
func checkInput[T Scalar](spec Spec, bt Batch[T], coef bool, nrhs int) error {
	n := spec.Len()
	type arr struct {
		name string
		v    []T
		need int
	}
	var arrs []arr
	if coef && !bt.Constant {
		arrs = []arr{{"a", bt.A, n}, {"b", bt.B, n}, {"c", bt.C, n}}
		if spec.Algorithm == LDLT {
			arrs = arrs[1:] // a is ignored
		}
	}
	if nrhs > 0 {
		arrs = append(arrs, arr{"d", bt.D, nrhs * n}, arr{"x", bt.X, nrhs * n})
	}
	for _, a := range arrs {
		if len(a.v) < a.need {
			if a.need > n {
				return fmt.Errorf("%w: %s has %d elements, %d right-hand sides of the %d×%d batch need %d", ErrLength, a.name, len(a.v), nrhs, spec.G, spec.N, a.need)
			}
			return fmt.Errorf("%w: %s has %d elements, the %d×%d batch needs %d", ErrLength, a.name, len(a.v), spec.G, spec.N, n)
		}
	}
	if spec.SkipFiniteCheck {
		return nil
	}
	if coef && bt.Constant {
		for _, v := range [...]struct {
			name string
			v    T
		}{{"a", bt.ConstA}, {"b", bt.ConstB}, {"c", bt.ConstC}} {
			if v.name == "a" && spec.Algorithm == LDLT {
				continue // ignored
			}
			if !finiteScalar(v.v) {
				return fmt.Errorf("%w: constant coefficient %s = %v", ErrNonFinite, v.name, v.v)
			}
		}
	}
	for _, a := range arrs {
		if a.name == "x" {
			continue // output
		}
		cols := a.need / n
		for r := range cols {
			col := a.v[r*n : (r+1)*n]
			if g, i, ok := firstNonFinite(spec, col); ok {
				v := col[spec.Layout.Index(i, g)]
				if cols > 1 {
					return fmt.Errorf("%w: %s of right-hand side %d, system %d, row %d is %v", ErrNonFinite, a.name, r, g, i, v)
				}
				return fmt.Errorf("%w: %s of system %d, row %d is %v", ErrNonFinite, a.name, g, i, v)
			}
		}
	}
	return nil
}

// firstNonFinite scans the rows of the batch in v for NaN or ±Inf (in the
// real or the imaginary part of a complex value).
func firstNonFinite[T Scalar](spec Spec, v []T) (g, i int, found bool) {
	switch v := any(v).(type) {
	case []float32:
		return firstNonFiniteReal(spec, v)
	case []float64:
		return firstNonFiniteReal(spec, v)
	case []complex64:
		return firstNonFiniteComplex(spec, v)
	case []complex128:
		return firstNonFiniteComplex(spec, v)
	}
	panic("tridiag: unknown element type")
}

// firstNonFiniteReal is firstNonFinite for real elements.
func firstNonFiniteReal[T Float](spec Spec, v []T) (g, i int, found bool) {
	l := spec.Layout
	if l.IsContiguous(spec.N) || l.IsInterleaved(spec.G) {
		// Dense: scan linearly, then map the index back.
		for k, x := range v[:spec.Len()] {
			if !finite(x) {
				if l.ElemStride == 1 {
					return k / spec.N, k % spec.N, true
				}
				return k % spec.G, k / spec.G, true
			}
		}
		return 0, 0, false
	}
	for g := 0; g < spec.G; g++ {
		for i := 0; i < spec.N; i++ {
			if !finite(v[l.Index(i, g)]) {
				return g, i, true
			}
		}
	}
	return 0, 0, false
}

func finite[T Float](v T) bool {
	f := float64(v)
	return !math.IsNaN(f) && !math.IsInf(f, 0)
}

// finiteScalar reports whether v (both parts of a complex v) is finite.
func finiteScalar[T Scalar](v T) bool {
	switch v := any(v).(type) {
	case float32:
		return finite(v)
	case float64:
		return finite(v)
	case complex64:
		return tri.FiniteC(v)
	case complex128:
		return tri.FiniteC(v)
	}
	return false
}

// planSolver makes the solver of element type T on backend be of device
// dev: a complex one through ComplexBackend, which be may not implement
// (an error wrapping ErrOptions then names the device).
func planSolver[T Scalar](be Backend, dev Device, spec Spec) (Solver[T], error) {
	var s any
	var err error
	switch any(*new(T)).(type) {
	case float32:
		s, err = be.NewSolver32(spec)
	case float64:
		s, err = be.NewSolver64(spec)
	default:
		cb, ok := be.(ComplexBackend)
		if !ok {
			return nil, fmt.Errorf("%w: device %s solves no complex systems yet (%s plans need a backend that implements ComplexBackend; the CPU does)", ErrOptions, dev.Name(), typeName(*new(T)))
		}
		if _, c64 := any(*new(T)).(complex64); c64 {
			s, err = cb.NewSolverC64(spec)
		} else {
			s, err = cb.NewSolverC128(spec)
		}
	}
	if err != nil {
		return nil, err
	}
	return s.(Solver[T]), nil
}

// validate checks the options every plan takes, whatever its shape and
// device: known algorithm and pivoting, PivotAlways only with an
// algorithm that pivots, TPR's slice size, the segment rows and the
// tolerance. Errors wrap ErrOptions.
func (opts Options) validate() error {
	if opts.Algorithm < Auto || opts.Algorithm > LDLT {
		return fmt.Errorf("%w: unknown algorithm %d", ErrOptions, int(opts.Algorithm))
	}
	if opts.Pivoting < PivotAuto || opts.Pivoting > PivotNever {
		return fmt.Errorf("%w: unknown pivoting %d", ErrOptions, int(opts.Pivoting))
	}
	if opts.Pivoting == PivotAlways && opts.Algorithm != Auto && !opts.Algorithm.Pivots() {
		return fmt.Errorf("%w: pivoting %s with algorithm %s, which does not pivot (use %s, %s or %s)", ErrOptions, opts.Pivoting, opts.Algorithm, GTSV, PartitionPivot, Auto)
	}
	if s := opts.SliceSize; s != 0 && (s < 2 || s&(s-1) != 0) {
		return fmt.Errorf("%w: TPR slice size %d is not a power of two ≥ 2", ErrOptions, s)
	}
	if m := opts.SegmentRows; m < 0 || m%16 != 0 {
		return fmt.Errorf("%w: segment rows %d: want 0 (the device chooses) or a positive multiple of 16", ErrOptions, m)
	}
	if t := opts.Tol; !(t >= 0) || math.IsInf(t, 0) {
		return fmt.Errorf("%w: tolerance %g: want 0 (the default) or a finite value > 0", ErrOptions, t)
	}
	return nil
}

// solverOf makes the solver of element type T with new32 or new64.
func solverOf[T Float](new32 func() (Solver[float32], error), new64 func() (Solver[float64], error)) (Solver[T], error) {
	if _, f32 := any(*new(T)).(float32); f32 {
		s, err := new32()
		if err != nil {
			return nil, err
		}
		return any(s).(Solver[T]), nil
	}
	s, err := new64()
	if err != nil {
		return nil, err
	}
	return any(s).(Solver[T]), nil
}

// firstNonFiniteComplex is firstNonFinite for complex elements: NaN or
// ±Inf in either part.
func firstNonFiniteComplex[T Complex](spec Spec, v []T) (g, i int, found bool) {
	l := spec.Layout
	if l.IsContiguous(spec.N) || l.IsInterleaved(spec.G) {
		for k, x := range v[:spec.Len()] {
			if !tri.FiniteC(x) {
				if l.ElemStride == 1 {
					return k / spec.N, k % spec.N, true
				}
				return k % spec.G, k / spec.G, true
			}
		}
		return 0, 0, false
	}
	for g := 0; g < spec.G; g++ {
		for i := 0; i < spec.N; i++ {
			if !tri.FiniteC(v[l.Index(i, g)]) {
				return g, i, true
			}
		}
	}
	return 0, 0, false
}
