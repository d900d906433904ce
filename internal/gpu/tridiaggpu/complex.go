//go:build cuda

package tridiaggpu

import (
	"context"
	"fmt"
	"sync"
	"time"
	"unsafe"

	"gorgonia.org/cu"

	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/internal/gpu/done"
	"github.com/bandsolve/bandsolve/internal/gpu/kernels"
	"github.com/bandsolve/bandsolve/tridiag"
)

// ComplexPlan solves batches of complex tridiagonal systems (complex64 or
// complex128) of one shape on the GPU: Thomas, GTSV (partial pivoting by
// Cabs1 = |re| + |im|, as LAPACK's cgtsv and zgtsv), one thread a system
// (ptx/src/complex.cuh); Partition, the partition method without
// pivoting, a thread a chunk of 16 rows and the block's systems in
// shared memory (ptx/src/cpart.cuh, for systems that fit a block: up to
// about 6800 rows in complex64, 3400 in complex128); and Auto. Auto runs
// the partition kernels with SolveBoundedC's growth test where
// complexAutoPartition says so (not cyclic; contiguous batches, or
// batches stored systems first of fewer than 2^16 systems), else Thomas
// with its growth test, one thread a system; the systems that fail the
// test or break down are solved again by GTSV (PivotNever: no test, GTSV
// only where the first solve breaks down; PivotAlways: GTSV). Every
// layout, constant coefficients and, but for Partition, cyclic systems
// (Sherman–Morrison). Its results are bit for bit those of the CPU's
// twins: the CPU's complex solver (tridiag.NewPlan[complex64] on the
// CPU) for Thomas, GTSV and Auto's thread a system, partition.SolveC for
// Partition, and partition.SolveBoundedC (SolveC under PivotNever) with
// tri.GTSVC for the systems it fails for Auto's partition kernels;
// breakdowns included: a failed system is listed in a
// *tridiag.BatchError at the twin's row (n−1 for a zero Sherman–Morrison
// denominator) and its rows hold NaN. Other algorithms are refused with
// tridiag.ErrOptions, as on the CPU. Its arrays may stay in device memory
// across solves (SolveDevice); Solve copies host slices in and out.
// Solves of one plan run one at a time.
type ComplexPlan[T tridiag.Complex] struct {
	dev     *gpu
	spec    tridiag.Spec
	algo    tridiag.Algorithm
	kernel  kernels.ComplexThomasLauncher
	bounded int32
	planes  int64
	// part is the launch of the partition kernels (Partition, and Auto
	// where complexAutoPartition chose them; nil otherwise), partK its
	// kernel; redoK and redo (G flags) are Auto's GTSV for the systems
	// the partition kernel flags.
	part   *cpartLaunch
	partK  kernels.CpartP
	redoK  kernels.ComplexRedo
	redo   cu.DevicePtr
	mu     sync.Mutex
	stream cu.Stream
	work   cu.DevicePtr
	status cu.DevicePtr
	sig    *done.Signal
	codes  []int32
	host   staging[T] // the device copies of host solves' arrays
	closed bool
}

// complexAlgorithm is the kernel of opts: Auto resolves to GTSV with
// PivotAlways, Partition is refused for cyclic systems, and algorithms
// other than Auto, Thomas, GTSV and Partition are refused.
func complexAlgorithm(opts tridiag.Options) (tridiag.Algorithm, error) {
	switch opts.Algorithm {
	case tridiag.Thomas, tridiag.GTSV:
		return opts.Algorithm, nil
	case tridiag.Partition:
		if opts.Cyclic {
			return 0, fmt.Errorf("%w: complex %s does not solve cyclic systems on the GPU (take %s, %s or %s)", tridiag.ErrOptions, opts.Algorithm, tridiag.Auto, tridiag.Thomas, tridiag.GTSV)
		}
		return opts.Algorithm, nil
	case tridiag.Auto:
		if opts.Pivoting == tridiag.PivotAlways {
			return tridiag.GTSV, nil
		}
		return tridiag.Auto, nil
	}
	return 0, fmt.Errorf("%w: %s does not solve complex systems on the GPU (complex plans take %s, %s, %s or %s)", tridiag.ErrOptions, opts.Algorithm, tridiag.Auto, tridiag.Thomas, tridiag.GTSV, tridiag.Partition)
}

// NewComplexPlan makes a GPU plan for complex batches of the given shape
// on dev. Options.Check is refused (tridiag.ErrOptions): tridiag.NewPlan
// checks host solves itself.
func NewComplexPlan[T tridiag.Complex](dev *cuda.Device, shape tridiag.Shape, opts tridiag.Options) (*ComplexPlan[T], error) {
	if dev == nil {
		return nil, fmt.Errorf("%w: a GPU plan needs a device (nil *cuda.Device)", tridiag.ErrOptions)
	}
	if err := shape.Validate(); err != nil {
		return nil, err
	}
	if opts.Check {
		return nil, fmt.Errorf("%w: complex GPU plans do not check their device-buffer solves (tridiag.NewPlan checks host solves)", tridiag.ErrOptions)
	}
	algo, err := complexAlgorithm(opts)
	if err != nil {
		return nil, err
	}
	spec := tridiag.Spec{Shape: shape.Normalize(), Options: opts}
	spec.Algorithm = algo
	f64 := complexPartSize[T]() == 8
	p := &ComplexPlan[T]{dev: newGPU(dev, config{}), spec: spec, algo: algo}
	elem := 2 * complexPartSize[T]()
	if algo == tridiag.Partition || (algo == tridiag.Auto && complexAutoPartition(p.dev.props, spec, elem)) {
		l, err := cpartLaunchFor(p.dev.props, spec.N, spec.G, elem)
		if err != nil {
			return nil, err
		}
		p.part = &l
		if p.partK, err = kernels.CpartPFor(cpartChunk, f64); err != nil {
			return nil, err
		}
	}
	switch algo {
	case tridiag.Partition:
		p.planes = 0
	case tridiag.Thomas:
		p.planes = 2
		p.kernel, err = kernels.ComplexThomasFor(f64)
	case tridiag.GTSV:
		p.planes = 3
		p.kernel, err = kernels.ComplexGtsvFor(f64)
	default:
		p.planes = 3
		p.kernel, err = kernels.ComplexAutoFor(f64)
		if opts.Pivoting != tridiag.PivotNever {
			p.bounded = 1
		}
	}
	if err != nil {
		return nil, err
	}
	if spec.Cyclic {
		// z, the solution of Sherman–Morrison's second right-hand side,
		// is plane 3 for every algorithm (ptx/src/complex.cuh).
		p.planes = 4
	}
	if p.part != nil && algo == tridiag.Auto {
		if p.redoK, err = kernels.ComplexRedoFor(f64); err != nil {
			return nil, err
		}
		p.algo = tridiag.Partition
	}
	if p.status, err = dev.AllocBytes(int64(spec.G+1) * 4); err != nil {
		return nil, err
	}
	if p.planes > 0 {
		if p.work, err = dev.AllocBytes(p.planes * int64(spec.N) * int64(spec.G) * elem); err != nil {
			_ = p.Close()
			return nil, fmt.Errorf("cuda: complex %s workspace: %w", algo, err)
		}
	}
	if p.redoK != (kernels.ComplexRedo{}) {
		if p.redo, err = dev.AllocBytes(int64(spec.G) * 4); err != nil {
			_ = p.Close()
			return nil, fmt.Errorf("cuda: complex %s flags: %w", algo, err)
		}
	}
	if err = dev.Enqueue(func() error {
		if err := cu.MemsetD32(p.status, 0, int64(spec.G+1)); err != nil {
			return fmt.Errorf("cuda: clearing status: %w", err)
		}
		if p.redo != 0 {
			if err := cu.MemsetD32(p.redo, 0, int64(spec.G)); err != nil {
				return fmt.Errorf("cuda: clearing flags: %w", err)
			}
		}
		var e error
		if p.sig, e = done.NewSignal(); e != nil {
			return e
		}
		p.stream, e = cu.MakeStream(cu.DefaultStream)
		return e
	}); err != nil {
		_ = p.Close()
		return nil, err
	}
	return p, nil
}

// complexPartSize is the size in bytes of T's real part.
func complexPartSize[T tridiag.Complex]() int64 {
	var v T
	return int64(unsafe.Sizeof(v)) / 2
}

// Algorithm returns the algorithm the plan runs: Thomas, GTSV, Partition
// (also where Auto runs the partition kernels, with GTSV for the systems
// that fail its test) or Auto (Thomas with GTSV for the systems that
// fail its test).
func (p *ComplexPlan[T]) Algorithm() tridiag.Algorithm { return p.algo }

// Shape returns the plan's shape.
func (p *ComplexPlan[T]) Shape() tridiag.Shape { return p.spec.Shape }

// Describe says how the plan runs.
func (p *ComplexPlan[T]) Describe() string {
	if l := p.part; l != nil {
		s := fmt.Sprintf("partition: a thread a chunk of %d rows, %d systems a block in shared memory", cpartChunk, l.spb)
		switch {
		case p.redo == 0:
			return s
		case p.bounded == 0:
			return s + "; gtsv for the systems where it breaks down"
		}
		return s + "; gtsv for the systems that fail its pivot growth test or break down"
	}
	switch {
	case p.algo != tridiag.Auto:
		return fmt.Sprintf("%s, one thread a system", p.algo)
	case p.bounded == 0:
		return "thomas, gtsv for the systems where thomas breaks down; one thread a system"
	}
	return "thomas, gtsv for the systems that fail its pivot growth test or break down; one thread a system"
}

// SolveDevice solves the batch held in device buffers; x may be d. The
// call returns when the solve is done. Systems that broke down are listed
// in a *tridiag.BatchError and their rows hold NaN.
func (p *ComplexPlan[T]) SolveDevice(ctx context.Context, a, b, c, d, x *cuda.Buffer[T]) error {
	for _, bf := range []*cuda.Buffer[T]{a, b, c} {
		if bf == nil {
			return fmt.Errorf("%w: nil coefficient buffer", tridiag.ErrLength)
		}
	}
	return p.run(ctx, []*cuda.Buffer[T]{a, b, c, d, x}, false, 0, 0, 0)
}

// SolveDeviceConst solves the batch with constant coefficients a, b, c
// (and corners, when cyclic) and right-hand sides in device buffer d.
func (p *ComplexPlan[T]) SolveDeviceConst(ctx context.Context, a, b, c T, d, x *cuda.Buffer[T]) error {
	return p.run(ctx, []*cuda.Buffer[T]{d, x}, true, a, b, c)
}

func (p *ComplexPlan[T]) run(ctx context.Context, bufs []*cuda.Buffer[T], constant bool, ca, cb, cc T) error {
	args, err := p.args(ctx, bufs, constant, ca, cb, cc)
	if err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return tridiag.ErrClosed
	}
	if err := p.dev.Enqueue(func() error {
		if err := p.launch(args); err != nil {
			return err
		}
		return p.sig.Enqueue(p.dev.Device, p.stream, p.status+cu.DevicePtr(4*p.spec.G))
	}); err != nil {
		_ = p.dev.Enqueue(func() error { return p.stream.Synchronize() })
		return err
	}
	failed, err := p.sig.Wait(p.dev.Device, p.stream, p.what)
	if err != nil || !failed {
		return err
	}
	var be *tridiag.BatchError
	if err := p.dev.Enqueue(func() error {
		var err error
		be, err = p.failures()
		return err
	}); err != nil {
		return err
	}
	return be
}

// args checks the buffers of a solve (coefficients first unless constant,
// then d and x) and fills the kernel's arguments.
func (p *ComplexPlan[T]) args(ctx context.Context, bufs []*cuda.Buffer[T], constant bool, ca, cb, cc T) (*kernels.ComplexThomasArgs, error) {
	need := p.spec.Len()
	for _, bf := range bufs {
		if bf == nil || bf.Ptr() == 0 {
			return nil, fmt.Errorf("%w: nil or freed buffer", tridiag.ErrLength)
		}
		if bf.Len() < need {
			return nil, fmt.Errorf("%w: buffer of %d elements, the %d×%d batch needs %d", tridiag.ErrLength, bf.Len(), p.spec.G, p.spec.N, need)
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	sp := p.spec
	args := &kernels.ComplexThomasArgs{N: int32(sp.N), G: int32(sp.G),
		ES: int64(sp.Layout.ElemStride), BS: int64(sp.Layout.BatchStride), Work: p.work, Status: p.status,
		Bounded: p.bounded}
	n := len(bufs)
	args.D, args.X = bufs[n-2].Ptr(), bufs[n-1].Ptr()
	if constant {
		args.IsConst = 1
		z := [3]complex128{complex128(ca), complex128(cb), complex128(cc)}
		args.CAReal, args.CAImag = real(z[0]), imag(z[0])
		args.CBReal, args.CBImag = real(z[1]), imag(z[1])
		args.CCReal, args.CCImag = real(z[2]), imag(z[2])
	} else {
		args.A, args.B, args.C = bufs[0].Ptr(), bufs[1].Ptr(), bufs[2].Ptr()
	}
	if sp.Cyclic {
		args.Cyclic = 1
	}
	return args, nil
}

// launch queues the solve's kernels on the plan's stream (device
// thread): the kernel of a thread a system, or the partition kernel and,
// for Auto, the GTSV solve of the systems it flagged.
func (p *ComplexPlan[T]) launch(args *kernels.ComplexThomasArgs) error {
	const block = perSystemBlock
	grid := cuda.Dim3{X: (p.spec.G + block - 1) / block}
	l := p.part
	if l == nil {
		return p.kernel.Launch(p.dev.Device, grid, cuda.Dim3{X: block}, 0, p.stream, args)
	}
	pa := kernels.CpartPArgs{A: args.A, B: args.B, C: args.C, D: args.D, X: args.X, N: args.N, G: args.G,
		ES: args.ES, BS: args.BS, CAReal: args.CAReal, CAImag: args.CAImag, CBReal: args.CBReal, CBImag: args.CBImag,
		CCReal: args.CCReal, CCImag: args.CCImag, IsConst: args.IsConst, Bounded: p.bounded, Redo: p.redo,
		Status: args.Status, Spb: int32(l.spb), Tps: int32(l.tps)}
	if err := p.partK.Launch(p.dev.Device, cuda.Dim3{X: l.blocks}, cuda.Dim3{X: l.spb * l.tps}, l.shared, p.stream, &pa); err != nil {
		return err
	}
	if p.redo == 0 {
		return nil
	}
	ra := kernels.ComplexRedoArgs{A: args.A, B: args.B, C: args.C, D: args.D, X: args.X, Work: p.work, N: args.N,
		G: args.G, ES: args.ES, BS: args.BS, CAReal: args.CAReal, CAImag: args.CAImag, CBReal: args.CBReal,
		CBImag: args.CBImag, CCReal: args.CCReal, CCImag: args.CCImag, IsConst: args.IsConst, Redo: p.redo,
		Status: args.Status}
	return p.redoK.Launch(p.dev.Device, grid, cuda.Dim3{X: block}, 0, p.stream, &ra)
}

// Time measures the plan's solve of the batch held in device buffers (x
// apart from d, which the solves do not change) with timer: warmup
// untimed solves, then reps timed ones, on the plan's stream. The
// solves' breakdowns are cleared, not reported.
func (p *ComplexPlan[T]) Time(ctx context.Context, timer cuda.Timer, a, b, c, d, x *cuda.Buffer[T], warmup, reps int) ([]time.Duration, error) {
	return p.time(ctx, timer, []*cuda.Buffer[T]{a, b, c, d, x}, false, 0, 0, 0, warmup, reps)
}

// TimeConst is Time for solves with the constant coefficients ca, cb
// and cc.
func (p *ComplexPlan[T]) TimeConst(ctx context.Context, timer cuda.Timer, ca, cb, cc T, d, x *cuda.Buffer[T], warmup, reps int) ([]time.Duration, error) {
	return p.time(ctx, timer, []*cuda.Buffer[T]{d, x}, true, ca, cb, cc, warmup, reps)
}

func (p *ComplexPlan[T]) time(ctx context.Context, timer cuda.Timer, bufs []*cuda.Buffer[T], constant bool, ca, cb, cc T, warmup, reps int) ([]time.Duration, error) {
	if timer == nil {
		return nil, fmt.Errorf("%w: nil timer", tridiag.ErrOptions)
	}
	args, err := p.args(ctx, bufs, constant, ca, cb, cc)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, tridiag.ErrClosed
	}
	var ts []time.Duration
	err = p.dev.Enqueue(func() error {
		var err error
		if ts, err = timer(p.stream, warmup, reps, nil, func() error { return p.launch(args) }); err != nil {
			return err
		}
		if err := cu.MemsetD32(p.status, 0, int64(p.spec.G+1)); err != nil {
			return err
		}
		return p.dev.SyncLegacyStream()
	})
	return ts, err
}

// what names the plan's solve in errors.
func (p *ComplexPlan[T]) what() string {
	return fmt.Sprintf("complex %s solve of N=%d G=%d", p.algo, p.spec.N, p.spec.G)
}

// failures reads the status codes after a solve that set the flag, clears
// them and lists the failed systems (device thread).
func (p *ComplexPlan[T]) failures() (*tridiag.BatchError, error) {
	if p.codes == nil {
		p.codes = make([]int32, p.spec.G)
	}
	if err := cu.MemcpyDtoH(unsafe.Pointer(&p.codes[0]), p.status, int64(4*p.spec.G)); err != nil {
		return nil, fmt.Errorf("cuda: %s: reading status: %w", p.what(), err)
	}
	if err := cu.MemsetD32(p.status, 0, int64(p.spec.G+1)); err != nil {
		return nil, fmt.Errorf("cuda: %s: clearing status: %w", p.what(), err)
	}
	if err := p.dev.SyncLegacyStream(); err != nil {
		return nil, err
	}
	be := &tridiag.BatchError{G: p.spec.G}
	for g, code := range p.codes {
		if code != 0 {
			be.Failed = append(be.Failed, tridiag.SystemError{System: g, Row: int(code) - 1, Err: ErrBreakdown})
		}
	}
	return be, nil
}

// Solve copies host slices to the device, solves, and copies x back (also
// when some systems fail: their rows hold NaN; the elements of x between
// the layout's rows are kept).
func (p *ComplexPlan[T]) Solve(ctx context.Context, a, b, c, d, x []T) error {
	if err := p.stageIn(true, a, b, c, d, x); err != nil {
		return err
	}
	h := &p.host
	return h.out(p.SolveDevice(ctx, h.a, h.b, h.c, h.d, h.x), x)
}

// SolveConst is Solve for constant coefficients.
func (p *ComplexPlan[T]) SolveConst(ctx context.Context, a, b, c T, d, x []T) error {
	if err := p.stageIn(false, nil, nil, nil, d, x); err != nil {
		return err
	}
	return p.host.out(p.SolveDeviceConst(ctx, a, b, c, p.host.d, p.host.x), x)
}

// stageIn copies a host solve's arrays to the staging buffers.
func (p *ComplexPlan[T]) stageIn(coeffs bool, a, b, c, d, x []T) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return tridiag.ErrClosed
	}
	return p.host.in(p.dev.Device, p.spec, coeffs, false, a, b, c, d, x)
}

// Close frees the plan's device memory.
func (p *ComplexPlan[T]) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil
	}
	p.closed = true
	p.host.free()
	return p.dev.Enqueue(func() error {
		if p.stream != (cu.Stream{}) {
			_ = p.stream.Synchronize()
			_ = p.stream.Destroy()
		}
		for _, m := range []cu.DevicePtr{p.work, p.status, p.redo} {
			if m != 0 {
				_ = cu.MemFree(m)
			}
		}
		if p.sig != nil {
			p.sig.Free()
		}
		return nil
	})
}

// NewSolverC64 is a GPU plan for complex64 host slices.
func (b backend) NewSolverC64(spec tridiag.Spec) (tridiag.Solver[complex64], error) {
	return newComplexHostSolver[complex64](b.d, spec)
}

// NewSolverC128 is a GPU plan for complex128 host slices.
func (b backend) NewSolverC128(spec tridiag.Spec) (tridiag.Solver[complex128], error) {
	return newComplexHostSolver[complex128](b.d, spec)
}

func newComplexHostSolver[T tridiag.Complex](d *cuda.Device, spec tridiag.Spec) (tridiag.Solver[T], error) {
	opts := spec.Options
	opts.Check = false // tridiag.Plan checks host solves
	p, err := NewComplexPlan[T](d, spec.Shape, opts)
	if err != nil {
		return nil, err
	}
	return complexHostSolver[T]{p}, nil
}

// complexHostSolver solves host slices with a complex plan
// (tridiag.Solver).
type complexHostSolver[T tridiag.Complex] struct{ p *ComplexPlan[T] }

func (h complexHostSolver[T]) Solve(ctx context.Context, b tridiag.Batch[T]) error {
	if b.Constant {
		return h.p.SolveConst(ctx, b.ConstA, b.ConstB, b.ConstC, b.D, b.X)
	}
	return h.p.Solve(ctx, b.A, b.B, b.C, b.D, b.X)
}

func (h complexHostSolver[T]) Close() error { return h.p.Close() }

// Describe says how the plan runs (ComplexPlan.Describe).
func (h complexHostSolver[T]) Describe() string { return h.p.Describe() }

var (
	_ tridiag.ComplexBackend = backend{}
	_ tridiag.Describer      = complexHostSolver[complex64]{}
)
