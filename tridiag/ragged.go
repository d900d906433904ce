package tridiag

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sync"

	"github.com/bandsolve/bandsolve/internal/ragged"
)

// maxRaggedRows bounds the rows of a ragged batch, as Shape.Validate
// bounds the indices of a batch: 2^62, or what an int counts where that is
// less.
const maxRaggedRows = int(min(uint64(1)<<62, uint64(math.MaxInt)))

// RaggedSpec is what a device needs to build a solver of ragged batches:
// the systems' lengths and where they start, and the options.
type RaggedSpec struct {
	// Lengths are the rows of each system, each ≥ 1.
	Lengths []int
	// Offsets are the prefix sums of Lengths: system g occupies rows
	// Offsets[g] … Offsets[g+1]−1 of every array, and Offsets[len(Lengths)]
	// is the rows of the whole batch.
	Offsets []int
	Options
}

// RaggedBackend is implemented by the backends that solve ragged batches:
// batches whose systems have different lengths, stored one after another
// (see RaggedPlan). The CPU implements it; NewRaggedPlan refuses a device
// whose backend does not, with an error wrapping ErrOptions. The solvers
// it builds receive Batch values in the spec's arrangement, checked by
// RaggedPlan as NewPlan's solvers are by Plan, and report failures with
// SystemError.System the index g of the system and SystemError.Row its
// row within the system.
type RaggedBackend interface {
	// NewRaggedSolver32 and NewRaggedSolver64 build a solver for a
	// validated spec.
	NewRaggedSolver32(spec RaggedSpec) (Solver[float32], error)
	NewRaggedSolver64(spec RaggedSpec) (Solver[float64], error)
}

// RaggedPlan solves batches of systems of different lengths (neuron
// cables of different compartment counts, lines of an adaptive mesh),
// stored one after another: system g occupies rows off[g] … off[g]+len[g]−1
// of a, b, c, d and x, where len are the lengths the plan was made for and
// off, their prefix sums (off[0] = 0, off[g+1] = off[g] + len[g]), are
// what Offsets returns. Each system is solved as a Plan of its own length
// solves it: same algorithm and options, the same bits, and the same
// errors, with the system's index g in the batch and its row within the
// system. A RaggedPlan may be used from several goroutines, but its
// solves run one at a time.
type RaggedPlan[T Float] struct {
	spec   RaggedSpec
	dev    Device
	mu     sync.Mutex
	solver Solver[T]
	sched  ragged.Schedule // the accuracy check's tasks
	long   int             // the longest system's rows
	dcopy  []T             // Options.Check: d kept for an in-place solve
}

// NewRaggedPlan makes a plan for ragged batches of systems of the given
// lengths on dev (nil means the CPU device with one worker per core). The
// lengths must each be ≥ 1, and their sum below 2^62 (as Shape.Validate
// requires of a batch's indices); otherwise the error wraps ErrShape and
// names the system. Options are those of NewPlan, with
// NewPlan's rules; a device without ragged solvers (one whose backend is
// not a RaggedBackend: the GPU) is refused with an error wrapping
// ErrOptions that names it. A batch whose workspace does not fit the
// memory the process can have is refused with an error wrapping ErrMemory.
//
// On the CPU the device's workers share the systems by rows: the batch is
// cut into tasks of consecutive systems of about equal rows, the longest
// tasks handed out first.
func NewRaggedPlan[T Float](dev Device, lengths []int, opts Options) (*RaggedPlan[T], error) {
	if len(lengths) == 0 {
		return nil, fmt.Errorf("%w: a ragged batch of no systems: need at least one length", ErrShape)
	}
	lengths = append([]int(nil), lengths...)
	off, bad, ok := ragged.Offsets(lengths, 1, maxRaggedRows)
	if !ok {
		if lengths[bad] < 1 {
			return nil, fmt.Errorf("%w: system %d of the ragged batch has length %d, need ≥ 1", ErrShape, bad, lengths[bad])
		}
		return nil, fmt.Errorf("%w: systems 0…%d of the ragged batch hold %d rows or more: too large to index", ErrShape, bad, maxRaggedRows)
	}
	if err := opts.validate(); err != nil {
		return nil, err
	}
	if dev == nil {
		dev = DefaultCPU()
	}
	spec := RaggedSpec{Lengths: lengths, Offsets: off, Options: opts}
	be, err := BackendOf(dev)
	if err != nil {
		return nil, err
	}
	rb, ok := be.(RaggedBackend)
	if !ok {
		return nil, fmt.Errorf("tridiag: ragged batch of %d systems on %s: %w: the device has no solver of ragged batches (solve them on the CPU, or pad them to one length)", len(lengths), dev.Name(), ErrOptions)
	}
	s, err := solverOf[T](
		func() (Solver[float32], error) { return rb.NewRaggedSolver32(spec) },
		func() (Solver[float64], error) { return rb.NewRaggedSolver64(spec) })
	if err != nil {
		return nil, fmt.Errorf("tridiag: making %s plan for a ragged batch of %d systems on %s: %w", opts.Algorithm, len(lengths), dev.Name(), err)
	}
	total := off[len(lengths)]
	return &RaggedPlan[T]{
		spec: spec, dev: dev, solver: s, long: ragged.Longest(off),
		sched: ragged.NewSchedule(off, max(1, total/(4*runtime.GOMAXPROCS(0)))),
	}, nil
}

// Lengths returns the rows of each system (a copy).
func (p *RaggedPlan[T]) Lengths() []int { return append([]int(nil), p.spec.Lengths...) }

// Offsets returns where the systems start (a copy): system g occupies
// rows Offsets()[g] … Offsets()[g+1]−1, and the last of the G+1 entries
// is Len().
func (p *RaggedPlan[T]) Offsets() []int { return append([]int(nil), p.spec.Offsets...) }

// Len returns the rows of the batch: the length every array must have at
// least.
func (p *RaggedPlan[T]) Len() int { return p.spec.Offsets[len(p.spec.Lengths)] }

// Options returns the plan's options.
func (p *RaggedPlan[T]) Options() Options { return p.spec.Options }

// Device returns the device the plan solves on.
func (p *RaggedPlan[T]) Device() Device { return p.dev }

// Describe says how the plan solves, as Plan.Describe does: the algorithm,
// with Auto resolved, and for Auto on the CPU after a solve for how many
// systems of the last solve GTSV did. After Close it names the algorithm
// of the options.
func (p *RaggedPlan[T]) Describe() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return describe(p.solver, p.spec.Algorithm)
}

// Solve solves the batch with coefficient arrays a, b, c and right-hand
// sides d, writing the solutions to x (x may be d). Every array must hold
// Len() elements at least. When some systems fail, the error is a
// *BatchError naming each system g and its row within the system, and
// the other systems' solutions are valid. With Options.Check the systems
// that fail the accuracy check are listed too, each with its Status.
func (p *RaggedPlan[T]) Solve(ctx context.Context, a, b, c, d, x []T) error {
	return p.run(ctx, Batch[T]{A: a, B: b, C: c, D: d, X: x})
}

// SolveConst solves the batch whose systems all have the same constant
// coefficients: a on the sub-diagonal, b on the diagonal, c on the
// super-diagonal (and in the corners when the plan is cyclic).
func (p *RaggedPlan[T]) SolveConst(ctx context.Context, a, b, c T, d, x []T) error {
	return p.run(ctx, Batch[T]{ConstA: a, ConstB: b, ConstC: c, Constant: true, D: d, X: x})
}

// Check measures the accuracy of the solutions x of the ragged batch with
// coefficients a, b, c and right-hand sides d, as Plan.Check does for a
// batch of one length: one Status per system, and a *BatchError listing
// the systems that fail (nil when none does). d must still hold the
// right-hand sides.
func (p *RaggedPlan[T]) Check(a, b, c, d, x []T) ([]Status, error) {
	bt := Batch[T]{A: a, B: b, C: c, D: d, X: x}
	if err := p.check(bt); err != nil {
		return nil, err
	}
	return p.checkBatch(bt)
}

// CheckConst is Check for a batch solved by SolveConst.
func (p *RaggedPlan[T]) CheckConst(a, b, c T, d, x []T) ([]Status, error) {
	bt := Batch[T]{ConstA: a, ConstB: b, ConstC: c, Constant: true, D: d, X: x}
	if err := p.check(bt); err != nil {
		return nil, err
	}
	return p.checkBatch(bt)
}

// Close releases the plan's workspace. The plan cannot be used after.
func (p *RaggedPlan[T]) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.solver == nil {
		return nil
	}
	err := p.solver.Close()
	p.solver = nil
	return err
}

func (p *RaggedPlan[T]) run(ctx context.Context, bt Batch[T]) error {
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
	return solveChecked(ctx, p.solver, p.spec.Check, p.Len(), len(p.spec.Lengths), &p.dcopy, bt, p.checkBatch)
}

// check validates lengths and, unless skipped, finiteness.
func (p *RaggedPlan[T]) check(bt Batch[T]) error {
	n := p.Len()
	type arr struct {
		name string
		v    []T
	}
	arrs := []arr{{"d", bt.D}, {"x", bt.X}}
	if !bt.Constant {
		arrs = append([]arr{{"a", bt.A}, {"b", bt.B}, {"c", bt.C}}, arrs...)
	}
	for _, a := range arrs {
		if len(a.v) < n {
			return fmt.Errorf("%w: %s has %d elements, the ragged batch of %d systems needs %d", ErrLength, a.name, len(a.v), len(p.spec.Lengths), n)
		}
	}
	if p.spec.SkipFiniteCheck {
		return nil
	}
	if bt.Constant {
		for _, v := range [...]struct {
			name string
			v    T
		}{{"a", bt.ConstA}, {"b", bt.ConstB}, {"c", bt.ConstC}} {
			if !finite(v.v) {
				return fmt.Errorf("%w: constant coefficient %s = %v", ErrNonFinite, v.name, v.v)
			}
		}
	}
	for _, a := range arrs[:len(arrs)-1] { // x is output
		for k, v := range a.v[:n] {
			if !finite(v) {
				g, i := ragged.Locate(p.spec.Offsets, k)
				return fmt.Errorf("%w: %s of system %d, row %d is %v", ErrNonFinite, a.name, g, i, v)
			}
		}
	}
	return nil
}

// tol is the plan's backward error tolerance.
func (p *RaggedPlan[T]) tol() float64 {
	if p.spec.Tol > 0 {
		return p.spec.Tol
	}
	return DefaultTol[T]()
}

// checkBatch checks every system of bt (lengths already validated) on
// GOMAXPROCS goroutines, each system as Plan.Check checks a system of its
// length.
func (p *RaggedPlan[T]) checkBatch(bt Batch[T]) ([]Status, error) {
	G := len(p.spec.Lengths)
	tol, eps := p.tol(), Epsilon[T]()
	st := make([]Status, G)
	workers := max(1, min(runtime.GOMAXPROCS(0), G))
	full := make([]*checker, workers)
	views := make([]checker, workers)
	p.sched.Run(context.Background(), workers, func(w, g int) {
		if full[w] == nil {
			full[w] = newChecker(p.long)
		}
		o, n := p.spec.Offsets[g], p.spec.Lengths[g]
		ck := &views[w]
		fitChecker(ck, full[w], n)
		gather(ck, oneSystem(n), systemOf(bt, o, n), 0)
		st[g] = checkSystem(ck, p.spec.Cyclic)
		st[g].Judge(tol, eps)
	})
	var failed []SystemError
	for g, s := range st {
		if s.Failed() {
			failed = append(failed, SystemError{System: g, Row: -1, Err: s.Err(tol), Status: s})
		}
	}
	if len(failed) > 0 {
		return st, &BatchError{G: G, Failed: failed}
	}
	return st, nil
}

// fitChecker makes view the scratch of full for one system of n rows
// (n ≤ full.n).
func fitChecker(view, full *checker, n int) {
	*view = *full
	view.n = n
	view.a, view.b, view.c, view.d, view.x = full.a[:n], full.b[:n], full.c[:n], full.d[:n], full.x[:n]
	view.dl, view.dd, view.du, view.du2 = full.dl[:n], full.dd[:n], full.du[:n], full.du2[:n]
	view.swap = full.swap[:n]
	view.u, view.v, view.z, view.zt = full.u[:n], full.v[:n], full.z[:n], full.zt[:n]
}

// oneSystem is the spec of a contiguous batch of one system of n rows.
func oneSystem(n int) Spec { return Spec{Shape: Shape{N: n, G: 1, Layout: Contiguous(n)}} }

// systemOf returns the system of n rows at row o of the ragged batch bt,
// as a batch of that one system.
func systemOf[T Float](bt Batch[T], o, n int) Batch[T] {
	s := bt
	s.D, s.X = bt.D[o:o+n], bt.X[o:o+n]
	if !bt.Constant {
		s.A, s.B, s.C = bt.A[o:o+n], bt.B[o:o+n], bt.C[o:o+n]
	}
	return s
}
