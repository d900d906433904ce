//go:build cuda

package tridiaggpu

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"unsafe"

	"gorgonia.org/cu"

	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/internal/gpu/done"
	"github.com/bandsolve/bandsolve/internal/gpu/kernels"
	"github.com/bandsolve/bandsolve/tridiag"
)

// ErrBreakdown is the cause of each failed system of a GPU solve: a zero
// pivot or a non-finite result, which the kernels report alike. It is
// tridiag.ErrBreakdown and matches tridiag.ErrZeroPivot and
// tridiag.ErrNonFiniteResult.
var ErrBreakdown = tridiag.ErrBreakdown

// kernelPlan is one algorithm's launch sequence for a spec, made once per
// plan.
type kernelPlan interface {
	// workBytes is the device workspace the launches need.
	workBytes() int64
	// launch enqueues the solve on stream s; it runs on the device thread.
	launch(d *gpu, s cu.Stream, a *launchArgs) error
}

// launchArgs is what a kernelPlan's launch gets.
type launchArgs struct {
	spec          tridiag.Spec
	f64           bool
	a, b, c, d, x cu.DevicePtr // a, b, c are 0 when constant
	// check: Options.Check on a device-buffer solve; checkD is where d
	// is kept for it (d itself unless the solve is in place).
	check      bool
	checkD     cu.DevicePtr
	ca, cb, cc float64 // constant coefficients
	constant   bool
	work       cu.DevicePtr // workBytes() bytes
	// status holds G int32 codes (0 ok, row+1 where system g broke down),
	// then one int32 flag that any failing system sets to 1, then the
	// block counter of self-signalling kernels (kept 0 between solves).
	status cu.DevicePtr
	// word and seq: a kernel plan that signals completion itself writes
	// seq (with the flag in bit 0) to the mapped host word at its end;
	// word is 0 when it must not (timed runs, plans inside other plans).
	word cu.DevicePtr
	seq  uint32
}

// selfSignaler is a kernel plan whose single kernel writes the completion
// word itself (see block_done_signal in ptx/src/signal.cuh), saving the
// launch of signal_done on every call.
type selfSignaler interface {
	signalsItself() bool
}

// isConst is the kernels' int flag for constant coefficients.
func (l *launchArgs) isConst() int32 {
	if l.constant {
		return 1
	}
	return 0
}

// algorithmFactory builds a kernelPlan for a spec, or says why it cannot.
type algorithmFactory func(d *gpu, spec tridiag.Spec, f64 bool) (kernelPlan, error)

// algorithms holds the GPU algorithms; kernel files register themselves.
var algorithms = map[tridiag.Algorithm]algorithmFactory{}

// Plan solves batches of one shape on the GPU. Its arrays may stay in
// device memory across solves (SolveDevice); Solve copies host slices in
// and out. Solves of one plan run one at a time, on the plan's own stream
// or on one the caller gives it (SetStream).
type Plan[T tridiag.Float] struct {
	dev  *gpu
	spec tridiag.Spec
	algo tridiag.Algorithm // resolved (never Auto)
	// asked is the algorithm of the options (Auto unresolved): Factor
	// follows it, as the CPU's factorizations do.
	asked tridiag.Algorithm
	// many holds the factors of Plan.SolveMany's batches, made on first
	// use and refactored by each call.
	many interface{ Close() error }
	kp   kernelPlan
	// matvec is the product kernel of the plan's precision (MulAddDevice).
	matvec kernels.Matvec
	mu     sync.Mutex
	// stream is where the plan's work is queued: own, the stream the plan
	// made, or ext's, the caller's (SetStream).
	stream cu.Stream
	own    cu.Stream
	ext    *cuda.Stream
	work   cu.DevicePtr
	status cu.DevicePtr
	sig    *done.Signal // completion word polled by the host
	res    *resident    // the resident grid (SetResident), nil when solves launch
	codes  []int32
	// Options.Check on the device-buffer solves (check.go), made on first
	// use: the measures of every system (4 doubles: ‖d − A·x‖∞, ‖A‖∞,
	// ‖x‖∞, ‖d‖∞, then 2 a system: κ̂ and the singular flag), a copy of
	// d for an in-place solve, the condition estimate's workspace and
	// the measures on the host; for checks on the host, a CPU plan and
	// host copies of a, b, c, d and x.
	checkOut, dcopy, condWork cu.DevicePtr
	condSystems               int // systems that condWork holds
	backward                  kernels.TriBackward
	cond                      kernels.TriCond
	measures                  []float64
	hostCheck                 *tridiag.Plan[T]
	checkHost                 []T
	host                      staging[T] // the device copies of host solves' arrays
	closed                    bool
}

// NewPlan makes a GPU plan for batches of the given shape on dev.
func NewPlan[T tridiag.Float](dev *cuda.Device, shape tridiag.Shape, opts tridiag.Options) (*Plan[T], error) {
	return newPlan[T](dev, shape, opts, config{})
}

// newPlan is NewPlan with the kernel switches cfg.
func newPlan[T tridiag.Float](dev *cuda.Device, shape tridiag.Shape, opts tridiag.Options, cfg config) (*Plan[T], error) {
	if dev == nil {
		return nil, fmt.Errorf("%w: a GPU plan needs a device (nil *cuda.Device)", tridiag.ErrOptions)
	}
	if err := shape.Validate(); err != nil {
		return nil, err
	}
	d := newGPU(dev, cfg)
	spec := tridiag.Spec{Shape: shape.Normalize(), Options: opts}
	f64 := elemSize[T]() == 8
	algo, kp, err := buildKernelPlan(d, spec, f64)
	if err != nil {
		return nil, err
	}
	spec.Algorithm = algo
	if spec.Cyclic {
		if kp, err = newCyclicPlan(d, spec, f64, kp); err != nil {
			return nil, err
		}
	}
	mv, err := kernels.MatvecFor(f64)
	if err != nil {
		return nil, err
	}
	p := &Plan[T]{dev: d, spec: spec, algo: algo, asked: opts.Algorithm, kp: kp, matvec: mv}
	if p.status, err = d.AllocBytes(int64(spec.G+2) * 4); err != nil {
		return nil, err
	}
	// The status codes are kept all zero between solves: a solve that
	// finds the flag set clears them again (checkStatus).
	if err = d.Enqueue(func() error { return cu.MemsetD32(p.status, 0, int64(spec.G+2)) }); err != nil {
		_ = p.Close()
		return nil, fmt.Errorf("cuda: clearing status: %w", err)
	}
	if err = d.Enqueue(func() error {
		var e error
		p.sig, e = done.NewSignal()
		return e
	}); err != nil {
		_ = p.Close()
		return nil, err
	}
	if wb := kp.workBytes(); wb > 0 {
		if p.work, err = d.AllocBytes(wb); err != nil {
			_ = p.Close()
			return nil, fmt.Errorf("cuda: %s workspace: %w", algo, err)
		}
	}
	if err = d.Enqueue(func() error {
		var e error
		p.own, e = cu.MakeStream(cu.DefaultStream)
		p.stream = p.own
		return e
	}); err != nil {
		_ = p.Close()
		return nil, fmt.Errorf("cuda: creating a stream: %w", err)
	}
	return p, nil
}

// Algorithm returns the algorithm the plan runs (Auto resolved).
func (p *Plan[T]) Algorithm() tridiag.Algorithm { return p.algo }

// describer is a kernel plan that can say how it runs.
type describer interface{ describe() string }

// Describe says how the plan runs: the algorithm and, where it has
// choices, the way it was launched (for the partition method: one block
// per system, or segments and passes).
func (p *Plan[T]) Describe() string {
	kp := p.kp
	if c, ok := kp.(*cyclicPlan); ok {
		kp = c.inner
	}
	if d, ok := kp.(describer); ok {
		return d.describe()
	}
	return p.algo.String()
}

// Shape returns the plan's shape.
func (p *Plan[T]) Shape() tridiag.Shape { return p.spec.Shape }

// SetStream makes the plan queue its work (solves, products, timings) on
// s, a stream of the plan's device made by other CUDA code in the
// device's primary context (cuda.WrapStream) or by Device.NewStream; nil
// returns the plan to its own stream. A solve on s runs after the work
// queued on s before it and before the work queued after it, so that the
// caller orders its own kernels and copies of the buffers with the
// solves; work of other streams on the buffers is the caller's to order
// (Solve and SolveConst wait for their own copies). Wait returns when the
// solve is done: the completion signal follows the solve on s; past a
// short poll it blocks in a synchronisation of s, which also waits for
// work queued on s after the solve. The plan first waits for the work it
// queued on its previous stream. s must stay valid until the plan is
// closed or given another stream; Close waits for s but does not destroy
// it. A resident plan (SetResident) takes its solves on its persistent
// grid, outside any stream: SetStream fails for it with
// tridiag.ErrOptions (SetResident(0) first).
func (p *Plan[T]) SetStream(s *cuda.Stream) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return tridiag.ErrClosed
	}
	if s != nil && s.Device() != p.dev.Device {
		return fmt.Errorf("%w: the stream belongs to another device than the plan's (%s)", tridiag.ErrOptions, p.dev.Name())
	}
	if p.res != nil {
		return fmt.Errorf("%w: the %s plan of N=%d G=%d is resident (SetResident): its solves run on a persistent grid, not on a stream", tridiag.ErrOptions, p.algo, p.spec.N, p.spec.G)
	}
	next := p.own
	if s != nil {
		next = s.Handle()
	}
	if err := p.dev.Enqueue(func() error { return p.stream.Synchronize() }); err != nil {
		return fmt.Errorf("cuda: %s: waiting for the plan's stream: %w", p.what(), err)
	}
	p.stream, p.ext = next, s
	return nil
}

// syncCopies waits for the copies of Solve and SolveConst (the legacy
// default stream's) when the plan runs on the caller's stream, which may
// not wait for them (a non-blocking stream); the plan's own stream does.
func (p *Plan[T]) syncCopies() error {
	p.mu.Lock()
	ext := p.ext != nil
	p.mu.Unlock()
	if !ext {
		return nil
	}
	return p.dev.Enqueue(func() error {
		if err := (cu.Stream{}).Synchronize(); err != nil {
			return fmt.Errorf("cuda: %s: waiting for the input copies: %w", p.what(), err)
		}
		return nil
	})
}

// SolveDevice solves the batch held in device buffers; x may be d. The
// call returns when the solve is done. Systems that broke down are listed
// in a *tridiag.BatchError and their rows hold NaN. An LDLT plan does not
// read a, which may then be nil.
func (p *Plan[T]) SolveDevice(ctx context.Context, a, b, c, d, x *cuda.Buffer[T]) error {
	if a == nil && p.algo == tridiag.LDLT {
		a = b
	}
	for _, bf := range []*cuda.Buffer[T]{a, b, c} {
		if bf == nil {
			return fmt.Errorf("%w: nil coefficient buffer", tridiag.ErrLength)
		}
	}
	return p.run(ctx, &launchArgs{a: a.Ptr(), b: b.Ptr(), c: c.Ptr(), check: p.spec.Check}, []*cuda.Buffer[T]{a, b, c, d, x})
}

// SolveDeviceConst solves the batch with constant coefficients a, b, c
// and right-hand sides in device buffer d.
func (p *Plan[T]) SolveDeviceConst(ctx context.Context, a, b, c T, d, x *cuda.Buffer[T]) error {
	return p.run(ctx, &launchArgs{ca: float64(a), cb: float64(b), cc: float64(c), constant: true, check: p.spec.Check}, []*cuda.Buffer[T]{d, x})
}

func (p *Plan[T]) run(ctx context.Context, la *launchArgs, bufs []*cuda.Buffer[T]) error {
	pend, err := p.start(ctx, la, bufs)
	if err != nil {
		return err
	}
	return pend.Wait()
}

// Pending is a solve that was started and not yet waited for.
type Pending struct {
	wait func() error
	done bool
}

// Wait blocks until the solve is complete and returns its result: nil, a
// *tridiag.BatchError listing the systems that broke down, or a driver
// error. Calls after the first return nil.
func (w *Pending) Wait() error {
	if w.done {
		return nil
	}
	w.done = true
	return w.wait()
}

// Start enqueues the solve of the batch held in device buffers on the
// plan's stream and returns at once, so that the host can work while the
// GPU solves. Until Wait returns, the buffers must not be changed and the
// plan's other solves wait.
func (p *Plan[T]) Start(ctx context.Context, a, b, c, d, x *cuda.Buffer[T]) (*Pending, error) {
	for _, bf := range []*cuda.Buffer[T]{a, b, c} {
		if bf == nil {
			return nil, fmt.Errorf("%w: nil coefficient buffer", tridiag.ErrLength)
		}
	}
	return p.start(ctx, &launchArgs{a: a.Ptr(), b: b.Ptr(), c: c.Ptr(), check: p.spec.Check}, []*cuda.Buffer[T]{a, b, c, d, x})
}

// StartConst is Start for constant coefficients.
func (p *Plan[T]) StartConst(ctx context.Context, a, b, c T, d, x *cuda.Buffer[T]) (*Pending, error) {
	return p.start(ctx, &launchArgs{ca: float64(a), cb: float64(b), cc: float64(c), constant: true, check: p.spec.Check}, []*cuda.Buffer[T]{d, x})
}

// start checks the buffers, takes the plan's lock and enqueues the
// kernels; the returned Pending's Wait checks the status and unlocks.
func (p *Plan[T]) start(ctx context.Context, la *launchArgs, bufs []*cuda.Buffer[T]) (*Pending, error) {
	need := p.spec.Len()
	for _, bf := range bufs {
		if bf == nil || bf.Ptr() == 0 {
			return nil, fmt.Errorf("%w: nil or freed buffer", tridiag.ErrLength)
		}
		if bf.Len() < need {
			return nil, fmt.Errorf("%w: buffer of %d elements, the %d×%d batch needs %d", tridiag.ErrLength, bf.Len(), p.spec.G, p.spec.N, need)
		}
	}
	n := len(bufs)
	la.d, la.x = bufs[n-2].Ptr(), bufs[n-1].Ptr()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, tridiag.ErrClosed
	}
	la.spec, la.f64, la.work, la.status = p.spec, elemSize[T]() == 8, p.work, p.status
	var err error
	switch dl, direct := p.kp.(directLauncher); {
	case la.check:
		// The check reads d after the solve: an in-place solve's d is
		// copied first, on the plan's stream (never the resident grid's
		// mailbox, which is not ordered with it).
		err = p.dev.Enqueue(func() error {
			if err := p.keepD(la); err != nil {
				return err
			}
			return p.enqueue(la)
		})
	case p.res != nil:
		err = p.res.submit(la, p.sig.Next())
	case direct && !p.dev.cfg.noDirectLaunch:
		la.word, la.seq = p.sig.Word(), p.sig.Next()
		err = dl.LaunchDirect(p.dev, p.stream, la)
	default:
		err = p.dev.Enqueue(func() error { return p.enqueue(la) })
	}
	if err != nil {
		// Wait for what was enqueued before the failure.
		_ = p.dev.Enqueue(func() error { return p.stream.Synchronize() })
		p.mu.Unlock()
		return nil, err
	}
	return &Pending{wait: func() error { return p.waitSolve(la) }}, nil
}

// directLauncher is a self-signalling kernel plan whose single kernel can
// be launched with Device.LaunchDirect, outside Device.Enqueue.
type directLauncher interface {
	LaunchDirect(d *gpu, s cu.Stream, a *launchArgs) error
}

// enqueue launches the solve's kernels and the completion signal (device
// thread).
func (p *Plan[T]) enqueue(la *launchArgs) error {
	if ss, ok := p.kp.(selfSignaler); ok && ss.signalsItself() {
		la.word, la.seq = p.sig.Word(), p.sig.Next()
		return p.kp.launch(p.dev, p.stream, la)
	}
	if err := p.kp.launch(p.dev, p.stream, la); err != nil {
		return err
	}
	return p.sig.Enqueue(p.dev.Device, p.stream, p.flagPtr())
}

// waitSolve waits for the started solve la, checks its status (and, with
// la.check, its accuracy) and releases the plan's lock.
func (p *Plan[T]) waitSolve(la *launchArgs) error {
	defer p.mu.Unlock()
	err := p.waitStatus()
	if !la.check {
		return err
	}
	return p.checkDevice(la, err)
}

// waitStatus waits for the started solve and returns its failures.
func (p *Plan[T]) waitStatus() error {
	var failed bool
	var err error
	if p.res != nil {
		failed, err = p.res.wait(p.sig, p.what)
		p.res.touch()
	} else {
		failed, err = p.sig.Wait(p.dev.Device, p.stream, p.what)
	}
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

// what names the plan's solve in errors.
func (p *Plan[T]) what() string {
	return fmt.Sprintf("%s solve of N=%d G=%d", p.algo, p.spec.N, p.spec.G)
}

// flagPtr is the device address of the status flag (after the G codes).
func (p *Plan[T]) flagPtr() cu.DevicePtr { return p.status + cu.DevicePtr(4*p.spec.G) }

// checkStatus waits for the enqueued solves and reads the status flag with
// a copy and a stream synchronisation (the path of timed runs); when the
// flag is set it returns the failures (device thread).
func (p *Plan[T]) checkStatus() (*tridiag.BatchError, error) {
	var flag int32
	if err := cu.MemcpyDtoH(unsafe.Pointer(&flag), p.flagPtr(), 4); err != nil {
		return nil, fmt.Errorf("cuda: %s: reading status: %w", p.what(), err)
	}
	if flag == 0 {
		return nil, nil
	}
	return p.failures()
}

// failures reads every system's status code after a solve that set the
// flag, clears the codes for the next solve and lists the failed systems
// (device thread).
func (p *Plan[T]) failures() (*tridiag.BatchError, error) {
	if p.codes == nil {
		p.codes = make([]int32, p.spec.G)
	}
	if err := cu.MemcpyDtoH(unsafe.Pointer(&p.codes[0]), p.status, int64(4*p.spec.G)); err != nil {
		return nil, fmt.Errorf("cuda: reading status: %w", err)
	}
	if err := cu.MemsetD32(p.status, 0, int64(p.spec.G+1)); err != nil {
		return nil, fmt.Errorf("cuda: clearing status: %w", err)
	}
	// A resident grid is not ordered after the memset.
	if err := p.dev.SyncLegacyStream(); err != nil {
		return nil, err
	}
	be := &tridiag.BatchError{G: p.spec.G}
	cause := ErrBreakdown
	if p.algo == tridiag.LDLT {
		cause = errLDLTBreakdown
	}
	for g, code := range p.codes {
		if code != 0 {
			be.Failed = append(be.Failed, tridiag.SystemError{System: g, Row: int(code) - 1, Err: cause})
		}
	}
	return be, nil
}

// Solve copies host slices to the device, solves, and copies x back (the
// elements of x between the layout's rows are kept). An LDLT plan does not
// read a, which may then be nil.
func (p *Plan[T]) Solve(ctx context.Context, a, b, c, d, x []T) error {
	if err := p.stageIn(true, a, b, c, d, x); err != nil {
		return err
	}
	h := &p.host
	return h.out(p.SolveDevice(ctx, h.a, h.b, h.c, h.d, h.x), x)
}

// SolveConst is Solve for constant coefficients.
func (p *Plan[T]) SolveConst(ctx context.Context, a, b, c T, d, x []T) error {
	if err := p.stageIn(false, nil, nil, nil, d, x); err != nil {
		return err
	}
	return p.host.out(p.SolveDeviceConst(ctx, a, b, c, p.host.d, p.host.x), x)
}

// stageIn copies a host solve's arrays to the staging buffers and waits
// for the copies.
func (p *Plan[T]) stageIn(coeffs bool, a, b, c, d, x []T) error {
	if err := p.host.in(p.dev.Device, p.spec, coeffs, p.algo == tridiag.LDLT, a, b, c, d, x); err != nil {
		return err
	}
	return p.syncCopies()
}

func isBatch(err error) bool {
	var be *tridiag.BatchError
	return errors.As(err, &be)
}

// Close frees the plan's device memory.
func (p *Plan[T]) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil
	}
	p.closed = true
	if p.res != nil {
		_ = p.res.close()
		p.res = nil
	}
	p.host.free()
	if p.many != nil {
		_ = p.many.Close()
		p.many = nil
	}
	if p.hostCheck != nil {
		_ = p.hostCheck.Close()
		p.hostCheck, p.checkHost = nil, nil
	}
	return p.dev.Enqueue(func() error {
		// A self-signalling kernel may still be retiring its last block
		// after the host saw its completion word.
		if p.ext != nil || p.stream != (cu.Stream{}) {
			_ = p.stream.Synchronize()
		}
		if p.work != 0 {
			_ = cu.MemFree(p.work)
		}
		for _, m := range []cu.DevicePtr{p.status, p.checkOut, p.dcopy, p.condWork} {
			if m != 0 {
				_ = cu.MemFree(m)
			}
		}
		if p.own != (cu.Stream{}) {
			_ = p.own.Destroy()
		}
		p.sig.Free()
		return nil
	})
}
