//go:build cuda

package splinegpu

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"unsafe"

	"gorgonia.org/cu"

	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/internal/gpu/kernels"
	"github.com/bandsolve/bandsolve/spline"
	"github.com/bandsolve/bandsolve/tridiag"
)

// Block is the number of threads of a block of the integration kernel
// (SPLINE_BLOCK), one curve each.
const Block = 256

// MaxEvalBlock is the widest block of the evaluation kernel
// (SPLINE_EVAL_MAX_BLOCK), one point each.
const MaxEvalBlock = 1024

// ErrClosed is returned by the calls of a closed Evaluator.
var ErrClosed = errors.New("splinegpu: the evaluator is closed")

// Curves is a batch of fitted curves in device memory, laid out as
// spline.Curves: N knots per curve, Count curves; X holds N knots shared
// by every curve (X.Len() == N) or N·Count, curve k's at [k·N, k·N+N); Y
// and M hold the values and second derivatives, curve k's at
// [k·N, k·N+N). The buffers may be longer than that.
type Curves[T tridiag.Float] struct {
	N, Count int
	Kind     spline.Kind
	X, Y, M  *cuda.Buffer[T]
}

// Points are the points of a device evaluation: P points shared by every
// curve, or with PerCurve P for each curve, curve k's at [k·P, k·P+P).
type Points[T tridiag.Float] struct {
	T        *cuda.Buffer[T]
	P        int
	PerCurve bool
}

// Out names the device buffers a device evaluation writes: Count·P
// values each, curve k's at [k·P, k·P+P); a nil buffer is not computed.
type Out[T tridiag.Float] struct {
	Value, Deriv, Deriv2 *cuda.Buffer[T]
}

// Evaluator evaluates and integrates batches of curves on one GPU. Its
// calls run one at a time, each on the evaluator's stream, and return when
// the results are complete.
type Evaluator[T tridiag.Float] struct {
	dev    *cuda.Device
	eval   kernels.SplineEval
	integ  kernels.SplineIntegrate
	mu     sync.Mutex
	stream cu.Stream
	flags  cu.DevicePtr // one word per curve and one for the batch, kept zero between calls
	nflags int          // words of flags
	hflags []uint32
	// Device copies of host-slice calls, grown to the largest batch.
	bufs   [8]*cuda.Buffer[T]
	closed bool
}

// The staging buffers of host-slice calls.
const (
	bufX = iota
	bufY
	bufM
	bufT
	bufV
	bufD
	bufD2
	bufLo // integration bounds: lo, then hi, then the integrals
)

// NewEvaluator makes an evaluator on dev.
func NewEvaluator[T tridiag.Float](dev *cuda.Device) (*Evaluator[T], error) {
	if dev == nil {
		return nil, fmt.Errorf("%w: no device", spline.ErrDevice)
	}
	f64 := elemSize[T]() == 8
	e := &Evaluator[T]{dev: dev}
	var err error
	if e.eval, err = kernels.SplineEvalFor(f64); err != nil {
		return nil, err
	}
	if e.integ, err = kernels.SplineIntegrateFor(f64); err != nil {
		return nil, err
	}
	if err := dev.Enqueue(func() error {
		var err error
		e.stream, err = cu.MakeStream(cu.DefaultStream)
		return err
	}); err != nil {
		return nil, fmt.Errorf("splinegpu: creating a stream: %w", err)
	}
	return e, nil
}

func elemSize[T tridiag.Float]() int64 {
	var v T
	return int64(unsafe.Sizeof(v))
}

// Device returns the evaluator's device.
func (e *Evaluator[T]) Device() *cuda.Device { return e.dev }

// Close frees the evaluator's device memory and stream.
func (e *Evaluator[T]) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil
	}
	e.closed = true
	for i, b := range e.bufs {
		if b != nil {
			_ = b.Free()
			e.bufs[i] = nil
		}
	}
	return e.dev.Enqueue(func() error {
		if e.flags != 0 {
			_ = cu.MemFree(e.flags)
		}
		if e.stream != (cu.Stream{}) {
			_ = e.stream.Destroy()
		}
		return nil
	})
}

// ensureFlags makes the flag words hold count+1 words, zero (device thread).
func (e *Evaluator[T]) ensureFlags(count int) error {
	if e.nflags >= count+1 {
		return nil
	}
	if e.flags != 0 {
		_ = cu.MemFree(e.flags)
		e.flags, e.nflags = 0, 0
	}
	n := max(count+1, 1024)
	p, err := cu.MemAlloc(4 * int64(n))
	if err != nil {
		return fmt.Errorf("splinegpu: allocating %d flag words: %w", n, err)
	}
	if err := cu.MemsetD32(p, 0, int64(n)); err != nil {
		_ = cu.MemFree(p)
		return fmt.Errorf("splinegpu: clearing the flag words: %w", err)
	}
	e.flags, e.nflags = p, n
	return nil
}

// readFlags waits for the stream and returns the curves the kernel
// flagged, clearing their words (device thread).
func (e *Evaluator[T]) readFlags(count int, what string) ([]int, error) {
	if err := e.stream.Synchronize(); err != nil {
		return nil, fmt.Errorf("splinegpu: %s of %d curves: %w", what, count, err)
	}
	var batch uint32
	if err := cu.MemcpyDtoH(unsafe.Pointer(&batch), e.flags+cu.DevicePtr(4*count), 4); err != nil {
		return nil, fmt.Errorf("splinegpu: reading the flags: %w", err)
	}
	if batch == 0 {
		return nil, nil
	}
	if cap(e.hflags) < count {
		e.hflags = make([]uint32, count)
	}
	h := e.hflags[:count]
	if count > 0 {
		if err := cu.MemcpyDtoH(unsafe.Pointer(&h[0]), e.flags, 4*int64(count)); err != nil {
			return nil, fmt.Errorf("splinegpu: reading the flags: %w", err)
		}
	}
	if err := cu.MemsetD32(e.flags, 0, int64(count+1)); err != nil {
		return nil, fmt.Errorf("splinegpu: clearing the flags: %w", err)
	}
	var ks []int
	for k, f := range h {
		if f != 0 {
			ks = append(ks, k)
		}
	}
	return ks, nil
}

// evalLaunch is one launch of the evaluation kernel.
type evalLaunch struct {
	x, y, m, t     cu.DevicePtr
	xs, ts         int64
	n, count, p    int
	periodic       bool
	val, der, der2 cu.DevicePtr
}

// evalThreads is the width of the evaluation kernel's blocks for p
// points: the widest block, or p rounded up to whole warps. The wider a
// block, the more points of a curve it evaluates for one read of the
// curve's values and moments from L2 (random points touch most of the
// curve's cache lines whatever their number).
func evalThreads(p int) int {
	return min(MaxEvalBlock, max(64, (p+31)/32*32))
}

// curvesPerBlock is the number of curves a block evaluates its points
// for: enough blocks for several waves over the GPU, and up to 64 curves
// over which a block's threads share the location and weights of their
// points.
func (e *Evaluator[T]) curvesPerBlock(count, p int) int {
	threads := evalThreads(p)
	bx := (p + threads - 1) / threads
	want := 8 * e.dev.Properties().SMs * (MaxEvalBlock / threads) // blocks
	cpk := count * bx / max(want, 1)
	return min(max(cpk, 1), 64, max(count, 1))
}

// launchEval queues the evaluation kernel on the stream (device thread).
func (e *Evaluator[T]) launchEval(l *evalLaunch) error {
	periodic := int32(0)
	if l.periodic {
		periodic = 1
	}
	cpk := e.curvesPerBlock(l.count, l.p)
	threads := evalThreads(l.p)
	gx := (l.p + threads - 1) / threads
	gy := min((l.count+cpk-1)/cpk, 65535)
	return e.eval.Launch(e.dev, cuda.Dim3{X: gx, Y: gy}, cuda.Dim3{X: threads}, 0, e.stream, &kernels.SplineEvalArgs{
		X: l.x, XS: l.xs, Y: l.y, M: l.m, T: l.t, TS: l.ts,
		N: int32(l.n), Count: int32(l.count), P: int32(l.p), Periodic: periodic, Cpk: int32(cpk),
		Val: l.val, Der: l.der, Der2: l.der2, Flags: e.flags,
	})
}

// integLaunch is one launch of the integration kernel.
type integLaunch struct {
	x, y, m  cu.DevicePtr
	xs       int64
	n, count int
	periodic bool
	lo, hi   cu.DevicePtr
	bs       int64
	out      cu.DevicePtr
}

// launchIntegrate queues the integration kernel on the stream (device
// thread).
func (e *Evaluator[T]) launchIntegrate(l *integLaunch) error {
	gx := min((l.count+Block-1)/Block, 1<<20)
	periodic := int32(0)
	if l.periodic {
		periodic = 1
	}
	return e.integ.Launch(e.dev, cuda.Dim3{X: gx}, cuda.Dim3{X: Block}, 0, e.stream, &kernels.SplineIntegrateArgs{
		X: l.x, XS: l.xs, Y: l.y, M: l.m, N: int32(l.n), Count: int32(l.count), Periodic: periodic,
		Lower: l.lo, Upper: l.hi, BS: l.bs, Out: l.out, Flags: e.flags,
	})
}

// shape checks a batch of n knots, count curves and p points per curve
// against the kernels' int parameters.
func shape(n, count, p int) error {
	switch {
	case n < 2 || count < 0 || p < 0:
		return fmt.Errorf("%w: %d curves of %d knots at %d points: need n ≥ 2", spline.ErrInput, count, n, p)
	case n > math.MaxInt32 || count > math.MaxInt32 || p > math.MaxInt32:
		return fmt.Errorf("%w: %d curves of %d knots at %d points: the GPU takes at most %d of each", spline.ErrInput, count, n, p, math.MaxInt32)
	}
	return nil
}

// stage returns staging buffer i holding at least n elements.
func (e *Evaluator[T]) stage(i, n int) (*cuda.Buffer[T], error) {
	n = max(n, 1)
	if b := e.bufs[i]; b != nil && b.Len() >= n {
		return b, nil
	}
	if b := e.bufs[i]; b != nil {
		_ = b.Free()
		e.bufs[i] = nil
	}
	b, err := cuda.Alloc[T](e.dev, n)
	if err != nil {
		return nil, fmt.Errorf("splinegpu: staging %d elements: %w", n, err)
	}
	e.bufs[i] = b
	return b, nil
}

// upload stages host in buffer i.
func (e *Evaluator[T]) upload(i int, host []T) (*cuda.Buffer[T], error) {
	b, err := e.stage(i, len(host))
	if err != nil {
		return nil, err
	}
	return b, b.CopyFrom(host)
}

func ptrOf[T tridiag.Float](b *cuda.Buffer[T]) cu.DevicePtr {
	if b == nil {
		return 0
	}
	return b.Ptr()
}

// Eval evaluates the curves of cv at pts on the GPU, writing the
// quantities out names (host slices, as spline.Evaluator.Eval): the
// curves and points are copied to the device, evaluated in one launch,
// and the results copied back. It is the engine of spline.NewEvaluator on
// a *cuda.Device, which checks the shapes first.
func (e *Evaluator[T]) Eval(ctx context.Context, cv *spline.Curves[T], pts spline.Points[T], out spline.Out[T]) error {
	n, count := cv.N, cv.Count
	p := len(pts.T)
	if pts.PerCurve && count > 0 {
		p /= count
	}
	if err := shape(n, count, p); err != nil {
		return err
	}
	if count == 0 || p == 0 || (out.Value == nil && out.Deriv == nil && out.Deriv2 == nil) {
		return ctx.Err()
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return ErrClosed
	}
	l := &evalLaunch{n: n, count: count, p: p, periodic: cv.Kind == spline.KindPeriodic}
	bx, err := e.upload(bufX, cv.X)
	if err != nil {
		return err
	}
	by, err := e.upload(bufY, cv.Y[:n*count])
	if err != nil {
		return err
	}
	bm, err := e.upload(bufM, cv.M[:n*count])
	if err != nil {
		return err
	}
	bt, err := e.upload(bufT, pts.T)
	if err != nil {
		return err
	}
	l.x, l.y, l.m, l.t = bx.Ptr(), by.Ptr(), bm.Ptr(), bt.Ptr()
	if len(cv.X) != n {
		l.xs = int64(n)
	}
	if pts.PerCurve {
		l.ts = int64(p)
	}
	outs := [3][]T{out.Value, out.Deriv, out.Deriv2}
	var dev [3]*cuda.Buffer[T]
	for q, o := range outs {
		if o != nil {
			if dev[q], err = e.stage(bufV+q, count*p); err != nil {
				return err
			}
		}
	}
	l.val, l.der, l.der2 = ptrOf(dev[0]), ptrOf(dev[1]), ptrOf(dev[2])
	var flagged []int
	if err := e.dev.Enqueue(func() error {
		if err := e.ensureFlags(count); err != nil {
			return err
		}
		if err := e.launchEval(l); err != nil {
			_ = e.stream.Synchronize()
			return fmt.Errorf("splinegpu: evaluating %d curves of %d knots at %d points: %w", count, n, p, err)
		}
		var err error
		flagged, err = e.readFlags(count, "evaluating")
		return err
	}); err != nil {
		return err
	}
	for q, o := range outs {
		if o != nil {
			if err := dev[q].CopyTo(o[:count*p]); err != nil {
				return err
			}
		}
	}
	for _, k := range flagged {
		tk := pts.T
		if pts.PerCurve {
			tk = tk[k*p : (k+1)*p]
		}
		for q, o := range outs {
			if o != nil {
				finish(cv, k, q, tk, o[k*p:(k+1)*p])
			}
		}
	}
	return nil
}

// finish replaces the NaN and infinite results in row (curve k's
// derivative q at the points t) with the CPU's: the careful evaluation
// where the direct formulas overflow, or the limit at an infinite point.
func finish[T tridiag.Float](cv *spline.Curves[T], k, q int, t, row []T) {
	for j, v := range row {
		if v-v == 0 {
			continue
		}
		switch q {
		case 0:
			row[j] = cv.Eval(k, t[j])
		case 1:
			row[j] = cv.Deriv(k, t[j])
		default:
			row[j] = cv.Deriv2(k, t[j])
		}
	}
}

// Integrate writes to out[k] the integral of curve k of cv from a to b
// (host slices, one bound shared by every curve or Count, as
// spline.Evaluator.Integrate), in one launch.
func (e *Evaluator[T]) Integrate(ctx context.Context, cv *spline.Curves[T], a, b, out []T) error {
	n, count := cv.N, cv.Count
	if err := shape(n, count, 0); err != nil {
		return err
	}
	for _, v := range [][]T{a, b} {
		if len(v) != 1 && len(v) != count {
			return fmt.Errorf("%w: %d lower and %d upper integration bounds for %d curves (want 1 or %d each)", spline.ErrInput, len(a), len(b), count, count)
		}
	}
	if len(out) < count {
		return fmt.Errorf("%w: out has %d values for %d curves", spline.ErrInput, len(out), count)
	}
	if count == 0 {
		return ctx.Err()
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return ErrClosed
	}
	// The bounds as one array of count values each when either varies.
	var bounds []T
	bs := int64(0)
	if len(a) == 1 && len(b) == 1 {
		bounds = []T{a[0], b[0]}
	} else {
		bounds = make([]T, 2*count)
		for k := range count {
			bounds[k], bounds[count+k] = pick(a, k), pick(b, k)
		}
		bs = 1
	}
	bx, err := e.upload(bufX, cv.X)
	if err != nil {
		return err
	}
	by, err := e.upload(bufY, cv.Y[:n*count])
	if err != nil {
		return err
	}
	bm, err := e.upload(bufM, cv.M[:n*count])
	if err != nil {
		return err
	}
	blo, err := e.stage(bufLo, len(bounds)+count)
	if err != nil {
		return err
	}
	if err := blo.CopyFrom(bounds); err != nil {
		return err
	}
	half := int64(len(bounds) / 2)
	l := &integLaunch{x: bx.Ptr(), y: by.Ptr(), m: bm.Ptr(), n: n, count: count, periodic: cv.Kind == spline.KindPeriodic,
		lo: blo.Ptr(), hi: blo.Ptr() + cu.DevicePtr(half*elemSize[T]()), bs: bs,
		out: blo.Ptr() + cu.DevicePtr(int64(len(bounds))*elemSize[T]())}
	if len(cv.X) != n {
		l.xs = int64(n)
	}
	var flagged []int
	if err := e.dev.Enqueue(func() error {
		if err := e.ensureFlags(count); err != nil {
			return err
		}
		if err := e.launchIntegrate(l); err != nil {
			_ = e.stream.Synchronize()
			return fmt.Errorf("splinegpu: integrating %d curves of %d knots: %w", count, n, err)
		}
		var err error
		flagged, err = e.readFlags(count, "integrating")
		return err
	}); err != nil {
		return err
	}
	res, err := blo.Slice(len(bounds), count)
	if err != nil {
		return err
	}
	if err := res.CopyTo(out[:count]); err != nil {
		return err
	}
	for _, k := range flagged {
		out[k] = cv.Integral(k, pick(a, k), pick(b, k))
	}
	return nil
}

func pick[T tridiag.Float](v []T, k int) T {
	if len(v) == 1 {
		return v[0]
	}
	return v[k]
}

// checkDevice checks device-resident curves and their points.
func checkDevice[T tridiag.Float](cv *Curves[T], p int, perCurve bool, t *cuda.Buffer[T]) error {
	if cv == nil {
		return fmt.Errorf("%w: no curves", spline.ErrInput)
	}
	n, count := cv.N, cv.Count
	if err := shape(n, count, p); err != nil {
		return err
	}
	need := int64(n) * int64(count)
	for _, b := range []struct {
		name string
		buf  *cuda.Buffer[T]
	}{{"Y", cv.Y}, {"M", cv.M}} {
		if b.buf == nil || int64(b.buf.Len()) < need {
			return fmt.Errorf("%w: %d curves of %d knots need %d elements in %s, have %d", spline.ErrInput, count, n, need, b.name, lenOf(b.buf))
		}
	}
	if cv.X == nil || (cv.X.Len() != n && int64(cv.X.Len()) < need) {
		return fmt.Errorf("%w: X has %d knots, want %d (shared) or %d (one set per curve)", spline.ErrInput, lenOf(cv.X), n, need)
	}
	if t != nil {
		want := int64(p)
		if perCurve {
			want *= int64(count)
		}
		if int64(t.Len()) < want {
			return fmt.Errorf("%w: the points buffer has %d elements, %d are needed", spline.ErrInput, t.Len(), want)
		}
	}
	return nil
}

func lenOf[T tridiag.Float](b *cuda.Buffer[T]) int {
	if b == nil {
		return 0
	}
	return b.Len()
}

// EvalDevice evaluates the device-resident curves cv at the points pts,
// writing the quantities out names to device buffers, in one launch. The
// results the CPU computes with its careful evaluation (see the package
// documentation) are finished on the host: the rows of the flagged curves
// are copied out, completed and copied back, which costs nothing when no
// curve is flagged. It returns when the results are complete.
func (e *Evaluator[T]) EvalDevice(ctx context.Context, cv *Curves[T], pts Points[T], out Out[T]) error {
	if pts.T == nil && pts.P > 0 {
		return fmt.Errorf("%w: no points buffer", spline.ErrInput)
	}
	if err := checkDevice(cv, pts.P, pts.PerCurve, pts.T); err != nil {
		return err
	}
	count, p := cv.Count, pts.P
	outs := [3]*cuda.Buffer[T]{out.Value, out.Deriv, out.Deriv2}
	some := false
	for q, o := range outs {
		if o == nil {
			continue
		}
		some = true
		if int64(o.Len()) < int64(count)*int64(p) {
			return fmt.Errorf("%w: output %d has %d elements, %d curves at %d points need %d", spline.ErrInput, q, o.Len(), count, p, int64(count)*int64(p))
		}
	}
	if count == 0 || p == 0 || !some {
		return ctx.Err()
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return ErrClosed
	}
	l := &evalLaunch{x: cv.X.Ptr(), y: cv.Y.Ptr(), m: cv.M.Ptr(), t: pts.T.Ptr(), n: cv.N, count: count, p: p,
		periodic: cv.Kind == spline.KindPeriodic, val: ptrOf(out.Value), der: ptrOf(out.Deriv), der2: ptrOf(out.Deriv2)}
	if cv.X.Len() != cv.N {
		l.xs = int64(cv.N)
	}
	if pts.PerCurve {
		l.ts = int64(p)
	}
	var flagged []int
	if err := e.dev.Enqueue(func() error {
		if err := e.ensureFlags(count); err != nil {
			return err
		}
		if err := e.launchEval(l); err != nil {
			_ = e.stream.Synchronize()
			return fmt.Errorf("splinegpu: evaluating %d curves of %d knots at %d points: %w", count, cv.N, p, err)
		}
		var err error
		flagged, err = e.readFlags(count, "evaluating")
		return err
	}); err != nil {
		return err
	}
	if len(flagged) == 0 {
		return nil
	}
	var shared []T // shared points, read once
	for _, k := range flagged {
		one, err := download(cv, k)
		if err != nil {
			return err
		}
		var t []T
		switch {
		case !pts.PerCurve && shared != nil:
			t = shared
		default:
			off := 0
			if pts.PerCurve {
				off = k * p
			}
			if t, err = copyOut(pts.T, off, p); err != nil {
				return err
			}
			if !pts.PerCurve {
				shared = t
			}
		}
		for q, o := range outs {
			if o == nil {
				continue
			}
			row, err := o.Slice(k*p, p)
			if err != nil {
				return err
			}
			h := make([]T, p)
			if err := row.CopyTo(h); err != nil {
				return err
			}
			finish(one, 0, q, t, h)
			if err := row.CopyFrom(h); err != nil {
				return err
			}
		}
	}
	return nil
}

// copyOut copies n elements of b from off to the host.
func copyOut[T tridiag.Float](b *cuda.Buffer[T], off, n int) ([]T, error) {
	v, err := b.Slice(off, n)
	if err != nil {
		return nil, err
	}
	h := make([]T, n)
	return h, v.CopyTo(h)
}

// download copies curve k of cv to the host as a batch of one curve.
func download[T tridiag.Float](cv *Curves[T], k int) (*spline.Curves[T], error) {
	n := cv.N
	xoff := 0
	if cv.X.Len() != n {
		xoff = k * n
	}
	x, err := copyOut(cv.X, xoff, n)
	if err != nil {
		return nil, fmt.Errorf("splinegpu: copying the knots of curve %d: %w", k, err)
	}
	y, err := copyOut(cv.Y, k*n, n)
	if err != nil {
		return nil, fmt.Errorf("splinegpu: copying the values of curve %d: %w", k, err)
	}
	m, err := copyOut(cv.M, k*n, n)
	if err != nil {
		return nil, fmt.Errorf("splinegpu: copying the moments of curve %d: %w", k, err)
	}
	return &spline.Curves[T]{N: n, Count: 1, Kind: cv.Kind, X: x, Y: y, M: m}, nil
}

// IntegrateDevice writes to out[k] the integral of device-resident curve
// k of cv from a to b: one bound shared by every curve (a buffer of one
// element) or Count. The integrals the CPU computes with its careful
// evaluation are finished on the host. It returns when they are complete.
func (e *Evaluator[T]) IntegrateDevice(ctx context.Context, cv *Curves[T], a, b, out *cuda.Buffer[T]) error {
	if err := checkDevice(cv, 0, false, nil); err != nil {
		return err
	}
	count := cv.Count
	// Both bounds are shared (one element each) or both per curve.
	okBound := func(v *cuda.Buffer[T]) bool { return v != nil && (v.Len() == 1 || v.Len() >= count) }
	if !okBound(a) || !okBound(b) || (count > 1 && (a.Len() == 1) != (b.Len() == 1)) {
		return fmt.Errorf("%w: integration bounds of %d and %d elements for %d curves (want 1 each, or %d each)", spline.ErrInput, lenOf(a), lenOf(b), count, count)
	}
	if out == nil || out.Len() < count {
		return fmt.Errorf("%w: out has %d elements for %d curves", spline.ErrInput, lenOf(out), count)
	}
	if count == 0 {
		return ctx.Err()
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return ErrClosed
	}
	bs := int64(1)
	if a.Len() == 1 && b.Len() == 1 {
		bs = 0
	}
	l := &integLaunch{x: cv.X.Ptr(), y: cv.Y.Ptr(), m: cv.M.Ptr(), n: cv.N, count: count, periodic: cv.Kind == spline.KindPeriodic,
		lo: a.Ptr(), hi: b.Ptr(), bs: bs, out: out.Ptr()}
	if cv.X.Len() != cv.N {
		l.xs = int64(cv.N)
	}
	var flagged []int
	if err := e.dev.Enqueue(func() error {
		if err := e.ensureFlags(count); err != nil {
			return err
		}
		if err := e.launchIntegrate(l); err != nil {
			_ = e.stream.Synchronize()
			return fmt.Errorf("splinegpu: integrating %d curves of %d knots: %w", count, cv.N, err)
		}
		var err error
		flagged, err = e.readFlags(count, "integrating")
		return err
	}); err != nil {
		return err
	}
	for _, k := range flagged {
		one, err := download(cv, k)
		if err != nil {
			return err
		}
		off := k
		if bs == 0 {
			off = 0
		}
		lo, err := copyOut(a, off, 1)
		if err != nil {
			return err
		}
		hi, err := copyOut(b, off, 1)
		if err != nil {
			return err
		}
		v, err := out.Slice(k, 1)
		if err != nil {
			return err
		}
		if err := v.CopyFrom([]T{one.Integral(0, lo[0], hi[0])}); err != nil {
			return err
		}
	}
	return nil
}
