package spike

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/bandsolve/bandsolve/banded"
	"github.com/bandsolve/bandsolve/internal/registry"
	"github.com/bandsolve/bandsolve/tridiag"
)

// ErrNotFactored is returned by Plan.Solve before a successful Factor.
var ErrNotFactored = errors.New("spike: plan has no factorization")

// Spec is what a backend builds a SPIKE solver for: matrices of order N
// and half-bandwidth K, with the plan's options.
type Spec struct {
	N, K    int
	Options Options
}

// Solver is truncated SPIKE on a device other than the CPU: the
// partitions, factorization and solve of Factor and Factorization.Solve
// without refinement (Plan refines on the host as Options.Refine says).
type Solver[T Float] interface {
	// Factor factors A (of the spec's N and K).
	Factor(ctx context.Context, A *banded.Band[T]) error
	// Solve solves A·x = b with the last factorization (x may be b).
	Solve(ctx context.Context, b, x []T) error
	// Bounds are the partition bounds (P+1 of them).
	Bounds() []int
	// Boosts and ReducedBoosts are those of the last factorization, as
	// Factorization's.
	Boosts() []Boost
	ReducedBoosts() []int
	// Describe says how the device factors and solves.
	Describe() string
	Close() error
}

// Backend builds the SPIKE solvers of one kind of device. Its
// constructors refuse, with an error wrapping ErrOption that names the
// option and the device, the options the device cannot honour (Refine is
// Plan's, never the backend's).
type Backend interface {
	NewSolver32(spec Spec) (Solver[float32], error)
	NewSolver64(spec Spec) (Solver[float64], error)
}

var backends registry.Registry[Backend]

// RegisterBackend adds the SPIKE solvers of another kind of device: open
// returns the backend of dev, or false when dev is not of its kind. The
// GPU solvers register themselves when package
// github.com/bandsolve/bandsolve/gpu is imported.
func RegisterBackend(open func(dev tridiag.Device) (Backend, bool)) {
	backends.Add(func(dev any) (Backend, bool) {
		d, ok := dev.(tridiag.Device)
		if !ok {
			return nil, false
		}
		return open(d)
	})
}

// Plan is truncated SPIKE for band matrices of one order N and
// half-bandwidth K on a device: Factor a matrix, then Solve for as many
// right-hand sides as needed. On the CPU it is Factor and
// Factorization.Solve; on a GPU the same algorithm, kernel for kernel,
// with the same partitions for the same P and results bit for bit, the
// refinement of Options.Refine running on the host with the device's
// solves. Calls of one plan run one at a time.
type Plan[T Float] struct {
	dev    tridiag.Device
	n, k   int
	opts   Options
	bounds []int

	mu     sync.Mutex
	cpu    bool
	f      *Factorization[T] // the CPU's factorization
	solver Solver[T]         // another device's
	ready  bool              // a factorization succeeded
	a      *banded.Band[T]   // A for the host refinement of another device
	closed bool
}

// NewPlan makes a plan for band matrices of order n and half-bandwidth k
// on dev (nil: tridiag.DefaultCPU()). Options are Factor's, with
// Partitions = 0 choosing P for the device (ChoosePartitions on the CPU
// with its workers, the device's tuning on a GPU); Workers is the CPU's
// (0: the device's workers). Errors are Factor's for the shape and
// options (banded.ErrShape, ErrPartitions, ErrOption), plus the device's
// limits (a GPU needs 1 ≤ K ≤ tuning.SpikeMaxK), and an error wrapping
// ErrOption for a device without a SPIKE backend.
func NewPlan[T Float](dev tridiag.Device, n, k int, opts Options) (*Plan[T], error) {
	if dev == nil {
		dev = tridiag.DefaultCPU()
	}
	if err := checkOptions(n, k, opts); err != nil {
		return nil, err
	}
	p := &Plan[T]{dev: dev, n: n, k: k, opts: opts}
	if cpu, ok := dev.(*tridiag.CPU); ok {
		if p.opts.Workers == 0 {
			p.opts.Workers = cpu.Workers()
		}
		if p.opts.Partitions == 0 {
			p.opts.Partitions = ChoosePartitions(n, k, p.opts.Workers)
		}
		if err := CheckPartitions(n, k, p.opts.Partitions); err != nil {
			return nil, err
		}
		p.cpu, p.bounds = true, Partitions(n, p.opts.Partitions)
		return p, nil
	}
	be, ok := backends.Find(dev)
	if !ok {
		return nil, fmt.Errorf("%w: no SPIKE solver for device %s (%T): for a GPU, build with -tags cuda and import github.com/bandsolve/bandsolve/gpu", ErrOption, dev.Name(), dev)
	}
	var s any
	var err error
	var z T
	if _, ok := any(z).(float64); ok {
		s, err = be.NewSolver64(Spec{N: n, K: k, Options: opts})
	} else {
		s, err = be.NewSolver32(Spec{N: n, K: k, Options: opts})
	}
	if err != nil {
		return nil, err
	}
	p.solver = s.(Solver[T])
	p.bounds = p.solver.Bounds()
	return p, nil
}

// checkOptions checks the shape and options as Factor does.
func checkOptions(n, k int, opts Options) error {
	if err := banded.CheckShape(n, k); err != nil {
		return err
	}
	switch {
	case opts.Partitions < 0:
		return fmt.Errorf("%w: Partitions=%d, want ≥ 0", ErrOption, opts.Partitions)
	case opts.ULBlock < 0:
		return fmt.Errorf("%w: ULBlock=%d, want 0 (whole partition) or l > K", ErrOption, opts.ULBlock)
	case opts.ULBlock > 0 && opts.ULBlock <= k:
		return fmt.Errorf("%w: ULBlock=%d must exceed K=%d (or be 0 for the whole partition)", ErrOption, opts.ULBlock, k)
	case opts.Method != Truncated && opts.Method != BlockJacobi:
		return fmt.Errorf("%w: unknown method %d", ErrOption, int(opts.Method))
	case opts.Workers < 0:
		return fmt.Errorf("%w: Workers=%d, want ≥ 0", ErrOption, opts.Workers)
	}
	if err := opts.Refine.Check(); err != nil {
		return fmt.Errorf("%w: Refine: %v", ErrOption, err)
	}
	return nil
}

// N is the order of the matrices.
func (p *Plan[T]) N() int { return p.n }

// K is the half-bandwidth.
func (p *Plan[T]) K() int { return p.k }

// P is the number of partitions.
func (p *Plan[T]) P() int { return len(p.bounds) - 1 }

// Bounds returns a copy of the partition bounds: partition i is rows
// [Bounds()[i], Bounds()[i+1]), as Partitions(N, P).
func (p *Plan[T]) Bounds() []int { return append([]int(nil), p.bounds...) }

// Method is Options.Method.
func (p *Plan[T]) Method() Method { return p.opts.Method }

// Device is the device the plan runs on.
func (p *Plan[T]) Device() tridiag.Device { return p.dev }

// Boosts returns the partitions where the last factorization boosted a
// pivot (nil when none was), as Factorization.Boosts.
func (p *Plan[T]) Boosts() []Boost {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case !p.ready:
		return nil
	case p.cpu:
		return p.f.Boosts()
	}
	return p.solver.Boosts()
}

// BoostCount is the number of boosted pivots of the last factorization
// (LU and UL).
func (p *Plan[T]) BoostCount() int {
	c := 0
	for _, b := range p.Boosts() {
		c += b.LU.Count() + b.UL.Count()
	}
	return c
}

// ReducedBoosts returns the interfaces whose reduced matrix R̄_i was
// exactly singular and got a boosted pivot in the last factorization.
func (p *Plan[T]) ReducedBoosts() []int {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case !p.ready:
		return nil
	case p.cpu:
		return p.f.ReducedBoosts()
	}
	return p.solver.ReducedBoosts()
}

// Describe says how the plan runs, e.g. "cpu (…): truncated SPIKE, P=8,
// 8 workers".
func (p *Plan[T]) Describe() string {
	what := fmt.Sprintf("%v SPIKE, P=%d", p.opts.Method, p.P())
	if p.opts.ULBlock > 0 {
		what += fmt.Sprintf(", UL blocks of %d rows", p.opts.ULBlock)
	}
	if p.cpu {
		return fmt.Sprintf("%s: %s, %d workers", p.dev.Name(), what, p.opts.Workers)
	}
	return fmt.Sprintf("%s: %s", p.solver.Describe(), what)
}

// Factor computes the factorization of A (of the plan's N and K), leaving
// A unchanged. Errors are Factor's; after one the plan has no
// factorization.
func (p *Plan[T]) Factor(ctx context.Context, A *banded.Band[T]) error {
	if A == nil {
		return fmt.Errorf("%w: nil band matrix", banded.ErrShape)
	}
	if A.N != p.n || A.K != p.k || len(A.Data) != (2*A.K+1)*A.N {
		return fmt.Errorf("%w: band N=%d K=%d len(Data)=%d, plan N=%d K=%d", banded.ErrShape, A.N, A.K, len(A.Data), p.n, p.k)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return tridiag.ErrClosed
	}
	p.ready, p.f, p.a = false, nil, nil
	if p.cpu {
		f, err := Factor(A, p.opts)
		if err != nil {
			return err
		}
		p.f, p.ready = f, true
		return nil
	}
	if err := p.solver.Factor(ctx, A); err != nil {
		return err
	}
	p.ready = true
	switch p.opts.Refine.Mode { // as Factorization's keepA
	case banded.RefineAlways:
		p.a = A.Clone()
	case banded.RefineBoosted:
		if len(p.solver.Boosts()) > 0 || len(p.solver.ReducedBoosts()) > 0 {
			p.a = A.Clone()
		}
	}
	return nil
}

// Solve solves A·x = b with the factorization (len(b) = len(x) = N; x may
// be b, other overlaps are not allowed; b is otherwise unchanged), and
// refines x as Options.Refine says. Errors are Factorization.Solve's, and
// ErrNotFactored before a successful Factor.
func (p *Plan[T]) Solve(ctx context.Context, b, x []T) error {
	if len(b) != p.n || len(x) != p.n {
		return fmt.Errorf("%w: Solve with len(b)=%d, len(x)=%d for N=%d", banded.ErrShape, len(b), len(x), p.n)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.closed:
		return tridiag.ErrClosed
	case !p.ready:
		return ErrNotFactored
	case p.cpu:
		return p.f.Solve(b, x)
	case p.a == nil:
		return p.solver.Solve(ctx, b, x)
	}
	b0 := b
	if &x[0] == &b[0] {
		b0 = append([]T(nil), b...)
	}
	if err := p.solver.Solve(ctx, b0, x); err != nil {
		return err
	}
	_, err := banded.Refine(p.a, func(r []T) error { return p.solver.Solve(ctx, r, r) }, b0, x, p.opts.Refine)
	return err
}

// Close releases the plan's device resources.
func (p *Plan[T]) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil
	}
	p.closed = true
	p.f, p.a = nil, nil
	if p.solver != nil {
		return p.solver.Close()
	}
	return nil
}
