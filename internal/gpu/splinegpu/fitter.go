//go:build cuda

package splinegpu

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"unsafe"

	"gorgonia.org/cu"

	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/internal/gpu/kernels"
	"github.com/bandsolve/bandsolve/internal/gpu/tridiaggpu"
	"github.com/bandsolve/bandsolve/spline"
	"github.com/bandsolve/bandsolve/tridiag"
)

// RowsBlock is the widest block of the kernel that forms the moment
// systems (SPLINE_ROWS_MAX_BLOCK), one curve a block.
const RowsBlock = 256

// ErrFitterClosed is returned by the calls of a closed Fitter.
var ErrFitterClosed = errors.New("splinegpu: the fitter is closed")

// Fitter fits batches of Count curves of N knots whose knots and values
// are in device buffers, writing the moments to a device buffer: the
// curves it returns are ready for Evaluator.EvalDevice, with no copy to
// the host between the fit and the evaluation.
//
// A kernel forms each curve's moment system (rows and right-hand sides,
// package spline's operations in its order) and checks the data; the
// systems are solved in place by the GPU tridiagonal plans of the
// fitter's options, in the layout of spline.Fitter (one system a curve,
// its rows one apart, N between curves; periodic curves through the
// cyclic path); knots shared by every curve with equal spans give
// constant coefficients (a natural fit then solves its interior rows
// alone). With Options.Algorithm = tridiag.Thomas the moments are the CPU
// fit's (spline.FitBatch) bit for bit; with another algorithm they are
// the GPU algorithm's solution of the same systems.
//
// A curve the kernel flags (bad knots or values, periodic ends that
// differ, or a right-hand side that overflows, which the CPU solves for
// with its values scaled down) is finished on the host by package
// spline: its data are copied out and fitted there, and its moments
// copied back; bad input gives the CPU's error, naming the curve and the
// index into x or y. That costs nothing where no curve is flagged.
//
// A Fitter's calls run one at a time; it is safe for concurrent use.
type Fitter[T tridiag.Float] struct {
	dev      *cuda.Device
	opts     tridiag.Options
	n, count int
	knots    kernels.SplineFitKnots
	rows     kernels.SplineFitRows
	wrap     kernels.SplineFitWrap
	mu       sync.Mutex
	stream   *cuda.Stream
	plans    map[planKey]*tridiaggpu.Plan[T]
	// a, b, c hold the coefficients of non-constant systems (N·Count
	// each, made on first use); ends the clamped end derivatives.
	a, b, c *cuda.Buffer[T]
	ends    *cuda.Buffer[T]
	// flags: Count words, one for the batch, then two for the shared
	// knots' checks, kept zero between calls; h: the span of uniform
	// knots.
	flags  cu.DevicePtr
	h      cu.DevicePtr
	hflags []uint32
	closed bool
}

// planKey names the systems of one end condition: uniform for constant
// coefficients.
type planKey struct {
	kind    spline.Kind
	uniform bool
}

// NewFitter returns a fitter on dev for batches of count curves of n ≥ 2
// knots, whose systems are solved with opts (its Cyclic field is set by
// the fitter for periodic fits).
func NewFitter[T tridiag.Float](dev *cuda.Device, n, count int, opts tridiag.Options) (*Fitter[T], error) {
	if dev == nil {
		return nil, fmt.Errorf("%w: no device", spline.ErrDevice)
	}
	if n < 2 || count < 1 {
		return nil, fmt.Errorf("%w: %d curves of %d knots: need n ≥ 2 and at least one curve", spline.ErrInput, count, n)
	}
	if err := shape(n, count, 0); err != nil {
		return nil, err
	}
	f64 := elemSize[T]() == 8
	f := &Fitter[T]{dev: dev, opts: opts, n: n, count: count, plans: map[planKey]*tridiaggpu.Plan[T]{}}
	var err error
	if f.knots, err = kernels.SplineFitKnotsFor(f64); err != nil {
		return nil, err
	}
	if f.rows, err = kernels.SplineFitRowsFor(f64); err != nil {
		return nil, err
	}
	if f.wrap, err = kernels.SplineFitWrapFor(f64); err != nil {
		return nil, err
	}
	if f.stream, err = dev.NewStream(); err != nil {
		return nil, err
	}
	words := int64(count + 3)
	if err := dev.Enqueue(func() error {
		var err error
		if f.flags, err = cu.MemAlloc(4 * words); err != nil {
			return fmt.Errorf("splinegpu: allocating %d flag words: %w", words, err)
		}
		if f.h, err = cu.MemAlloc(8); err != nil {
			return fmt.Errorf("splinegpu: allocating the knot span: %w", err)
		}
		if err := cu.MemsetD32(f.flags, 0, words); err != nil {
			return fmt.Errorf("splinegpu: clearing the flag words: %w", err)
		}
		return nil
	}); err != nil {
		_ = f.Close()
		return nil, err
	}
	return f, nil
}

// Device returns the fitter's device.
func (f *Fitter[T]) Device() *cuda.Device { return f.dev }

// Close releases the fitter's plans, device memory and stream.
func (f *Fitter[T]) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return nil
	}
	f.closed = true
	var err error
	for k, p := range f.plans {
		err = errors.Join(err, p.Close())
		delete(f.plans, k)
	}
	for _, b := range []**cuda.Buffer[T]{&f.a, &f.b, &f.c, &f.ends} {
		if *b != nil {
			_ = (*b).Free()
			*b = nil
		}
	}
	err = errors.Join(err, f.dev.Enqueue(func() error {
		for _, p := range []cu.DevicePtr{f.flags, f.h} {
			if p != 0 {
				_ = cu.MemFree(p)
			}
		}
		return nil
	}))
	if f.stream != nil {
		err = errors.Join(err, f.stream.Close())
	}
	return err
}

// system is the shape of the systems of key: the rows of curve k are its
// moments, one apart from k·N: 0…N−1 (natural with varying coefficients,
// clamped), 1…N−2 (natural with constant coefficients: its end moments
// are zero), 0…N−2 (periodic: a cyclic system).
func (f *Fitter[T]) system(key planKey) (shape tridiag.Shape, first int) {
	l := tridiag.Strided(1, f.n)
	switch {
	case key.kind == spline.KindPeriodic:
		return tridiag.Shape{N: f.n - 1, G: f.count, Layout: l}, 0
	case key.kind == spline.KindNatural && key.uniform:
		return tridiag.Shape{N: f.n - 2, G: f.count, Layout: l}, 1
	}
	return tridiag.Shape{N: f.n, G: f.count, Layout: l}, 0
}

// plan returns the plan of key, made on first use on the fitter's stream.
func (f *Fitter[T]) plan(key planKey) (*tridiaggpu.Plan[T], error) {
	if p, ok := f.plans[key]; ok {
		return p, nil
	}
	shape, _ := f.system(key)
	opts := f.opts
	opts.Cyclic = key.kind == spline.KindPeriodic
	// The fit's kernel has checked the knots, the values and the
	// right-hand sides of every curve it did not flag.
	opts.SkipFiniteCheck = true
	p, err := tridiaggpu.NewPlan[T](f.dev, shape, opts)
	if err != nil {
		return nil, err
	}
	if err := p.SetStream(f.stream); err != nil {
		_ = p.Close()
		return nil, err
	}
	f.plans[key] = p
	return p, nil
}

// Algorithm returns the tridiagonal algorithm the fits with end
// condition kind run (Auto resolved), for knots with unequal spans
// (uniform false) or shared knots with equal spans.
func (f *Fitter[T]) Algorithm(kind spline.Kind, uniform bool) (tridiag.Algorithm, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return 0, ErrFitterClosed
	}
	p, err := f.plan(planKey{kind, uniform && kind != spline.KindClamped})
	if err != nil {
		return 0, err
	}
	return p.Algorithm(), nil
}

// FitDevice fits the curves with values y (N·Count) at knots x (N shared
// by every curve, or N·Count) held in device buffers, with end condition
// bc, and returns the curves with their moments in a new device buffer
// of N·Count elements, which the caller frees (the curves keep x and y,
// not copies). Bad input is refused with the CPU's error (spline.Fitter's
// Fit), wrapping spline.ErrInput.
func (f *Fitter[T]) FitDevice(ctx context.Context, x, y *cuda.Buffer[T], bc spline.Boundary) (*Curves[T], error) {
	m, err := cuda.Alloc[T](f.dev, f.n*f.count)
	if err != nil {
		return nil, err
	}
	cv, err := f.FitDeviceInto(ctx, x, y, m, bc)
	if err != nil {
		_ = m.Free()
		return nil, err
	}
	return cv, nil
}

// FitDeviceInto is FitDevice writing the moments to m (N·Count elements
// at least), for a pipeline that fits batches over and over into the
// same buffer. Whatever wrote x and y must be complete (as this
// package's and package cuda's copies are when they return). It returns
// when the moments are complete.
func (f *Fitter[T]) FitDeviceInto(ctx context.Context, x, y, m *cuda.Buffer[T], bc spline.Boundary) (*Curves[T], error) {
	n, count := f.n, f.count
	need := n * count
	switch {
	case y == nil || y.Len() < need:
		return nil, fmt.Errorf("%w: y has %d values, %d curves of %d knots need %d", spline.ErrInput, lenOf(y), count, n, need)
	case x == nil || x.Len() != n && x.Len() < need:
		return nil, fmt.Errorf("%w: x has %d knots, want %d (shared) or %d (one set per curve)", spline.ErrInput, lenOf(x), n, need)
	case m == nil || m.Len() < need:
		return nil, fmt.Errorf("%w: m has %d elements, %d curves of %d knots need %d", spline.ErrInput, lenOf(m), count, n, need)
	}
	ends, err := clampedEnds[T](bc, count)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return nil, ErrFitterClosed
	}
	cv := &Curves[T]{N: n, Count: count, Kind: bc.Kind, X: x, Y: y, M: m}
	shared := x.Len() == n
	uniform := false
	var h T
	if shared {
		var bad bool
		if bad, uniform, h, err = f.checkKnots(x); err != nil {
			return nil, err
		}
		if bad {
			if err := f.hostError(cv, bc); err != nil {
				return nil, err
			}
			return nil, fmt.Errorf("%w: the %d shared knots do not increase strictly, are not finite or span more than half the largest %s", spline.ErrInput, n, typeName[T]())
		}
	}
	key := planKey{kind: bc.Kind, uniform: uniform && bc.Kind != spline.KindClamped && n >= 3}
	zero := n == 2 && bc.Kind != spline.KindClamped // the CPU's early return: zero moments
	var p *tridiaggpu.Plan[T]
	if !zero {
		if p, err = f.plan(key); err != nil {
			return nil, err
		}
		if !key.uniform {
			if err := f.coefficients(); err != nil {
				return nil, err
			}
		}
	}
	if err := f.formRows(cv, bc, ends, key.uniform || zero); err != nil {
		return nil, err
	}
	var solveErr error
	if !zero {
		shape, first := f.system(key)
		d, err := m.Slice(first, shape.Len())
		if err != nil {
			return nil, err
		}
		if key.uniform {
			// Every row is (h, 2(h + h), h), as the CPU forms it.
			solveErr = p.SolveDeviceConst(ctx, h, 2*(h+h), h, d, d)
		} else {
			solveErr = p.SolveDevice(ctx, f.a, f.b, f.c, d, d)
		}
		var be *tridiag.BatchError
		if solveErr != nil && !errors.As(solveErr, &be) {
			return nil, fmt.Errorf("splinegpu: solving for the moments of %d curves of %d knots: %w", count, n, solveErr)
		}
	}
	wrap := cu.DevicePtr(0)
	if bc.Kind == spline.KindPeriodic && !zero {
		wrap = m.Ptr()
	}
	flagged, err := f.finish(wrap)
	if err != nil {
		return nil, err
	}
	if solveErr != nil {
		var be *tridiag.BatchError
		errors.As(solveErr, &be)
		for _, s := range be.Failed {
			if !contains(flagged, s.System) {
				// A curve the kernel passed whose moments overflow: the
				// CPU's error, or the GPU's where the CPU's solve does
				// not overflow.
				if err := f.hostError(cv, bc); err != nil {
					return nil, err
				}
				return nil, fmt.Errorf("%w: curve %d: the second derivatives at its knots overflow: the values change too fast for the knot spacing (%d curve(s) failed)", spline.ErrInput, s.System, len(be.Failed))
			}
		}
	}
	if len(flagged) > 0 {
		if err := f.fitOnHost(cv, bc, flagged); err != nil {
			return nil, err
		}
	}
	return cv, nil
}

func contains(ks []int, k int) bool {
	for _, v := range ks {
		if v == k {
			return true
		}
	}
	return false
}

// clampedEnds checks the end condition as the CPU does and returns the
// clamped end derivatives as T: Start then End, one each (shared) or
// count each, or nil for the other kinds.
func clampedEnds[T tridiag.Float](bc spline.Boundary, count int) ([]T, error) {
	switch bc.Kind {
	case spline.KindNatural, spline.KindPeriodic:
		return nil, nil
	case spline.KindClamped:
	default:
		return nil, fmt.Errorf("%w: unknown end condition %v", spline.ErrInput, bc.Kind)
	}
	for _, s := range []struct {
		name string
		v    []float64
	}{{"Start", bc.Start}, {"End", bc.End}} {
		if len(s.v) != 1 && len(s.v) != count {
			return nil, fmt.Errorf("%w: clamped end derivatives: %d values in %s for %d curves (want 1 or %d)", spline.ErrInput, len(s.v), s.name, count, count)
		}
		for k, v := range s.v {
			if t := T(v); t-t != 0 {
				who := "shared by every curve"
				if len(s.v) == count {
					who = fmt.Sprintf("of curve %d", k)
				}
				return nil, fmt.Errorf("%w: clamped end derivative %s[%d] = %v, %s, is not finite in %s", spline.ErrInput, s.name, k, v, who, typeName[T]())
			}
		}
	}
	per := len(bc.Start) == count && count > 1 || len(bc.End) == count && count > 1
	w := 1
	if per {
		w = count
	}
	ends := make([]T, 2*w)
	for k := range w {
		ends[k], ends[w+k] = T(pickF(bc.Start, k)), T(pickF(bc.End, k))
	}
	return ends, nil
}

func pickF(v []float64, k int) float64 {
	if len(v) == 1 {
		return v[0]
	}
	return v[k]
}

func typeName[T tridiag.Float]() string {
	if elemSize[T]() == 4 {
		return "float32"
	}
	return "float64"
}

// checkKnots checks the shared knots x on the device and reports whether
// they are bad (the CPU refuses them) or uniform (spans all equal), with
// the first span.
func (f *Fitter[T]) checkKnots(x *cuda.Buffer[T]) (bad, uniform bool, h T, err error) {
	info := f.flags + cu.DevicePtr(4*(f.count+1))
	var words [2]uint32
	n := f.n
	threads := 256
	grid := min((n+threads-1)/threads, 1024)
	err = f.dev.Enqueue(func() error {
		s := f.stream.Handle()
		if err := f.knots.Launch(f.dev, cuda.Dim3{X: grid}, cuda.Dim3{X: threads}, 0, s, &kernels.SplineFitKnotsArgs{
			X: x.Ptr(), N: int32(n), Info: info, H: f.h}); err != nil {
			_ = s.Synchronize()
			return fmt.Errorf("splinegpu: checking %d shared knots: %w", n, err)
		}
		if err := s.Synchronize(); err != nil {
			return fmt.Errorf("splinegpu: checking %d shared knots: %w", n, err)
		}
		if err := cu.MemcpyDtoH(unsafe.Pointer(&words[0]), info, 8); err != nil {
			return fmt.Errorf("splinegpu: reading the knots' checks: %w", err)
		}
		if err := cu.MemcpyDtoH(unsafe.Pointer(&h), f.h, elemSize[T]()); err != nil {
			return fmt.Errorf("splinegpu: reading the knots' span: %w", err)
		}
		return cu.MemsetD32(info, 0, 2)
	})
	return words[0] != 0, words[1] == 0, h, err
}

// coefficients makes the coefficient buffers.
func (f *Fitter[T]) coefficients() error {
	if f.a != nil {
		return nil
	}
	var err error
	for _, b := range []**cuda.Buffer[T]{&f.a, &f.b, &f.c} {
		if *b, err = cuda.Alloc[T](f.dev, f.n*f.count); err != nil {
			return fmt.Errorf("splinegpu: the moment systems' coefficients: %w", err)
		}
	}
	return nil
}

// formRows launches the kernel that forms the right-hand sides into
// cv.M, the coefficients unless constant, and checks the data.
func (f *Fitter[T]) formRows(cv *Curves[T], bc spline.Boundary, ends []T, constant bool) error {
	args := &kernels.SplineFitRowsArgs{X: cv.X.Ptr(), Y: cv.Y.Ptr(), N: int32(f.n), Count: int32(f.count),
		Kind: int32(bc.Kind), D: cv.M.Ptr(), Flags: f.flags}
	if cv.X.Len() != f.n {
		args.XS = int64(f.n)
	}
	if !constant {
		args.A, args.B, args.C = f.a.Ptr(), f.b.Ptr(), f.c.Ptr()
	}
	if ends != nil {
		if f.ends == nil || f.ends.Len() < len(ends) {
			if f.ends != nil {
				_ = f.ends.Free()
				f.ends = nil
			}
			var err error
			if f.ends, err = cuda.Alloc[T](f.dev, max(len(ends), 2)); err != nil {
				return err
			}
		}
		if err := f.ends.CopyFrom(ends); err != nil {
			return err
		}
		w := len(ends) / 2
		args.D0 = f.ends.Ptr()
		args.DN = f.ends.Ptr() + cu.DevicePtr(int64(w)*elemSize[T]())
		if w > 1 {
			args.SS = 1
		}
	}
	threads := min(RowsBlock, max(32, (f.n+31)/32*32))
	grid := min(f.count, 1<<20)
	return f.dev.Enqueue(func() error {
		if err := f.rows.Launch(f.dev, cuda.Dim3{X: grid}, cuda.Dim3{X: threads}, 0, f.stream.Handle(), args); err != nil {
			_ = f.stream.Handle().Synchronize()
			return fmt.Errorf("splinegpu: forming the moment systems of %d curves of %d knots: %w", f.count, f.n, err)
		}
		return nil
	})
}

// finish sets the last moment of each periodic curve of the moments at
// wrap (0: none) to its first, waits for the stream and returns the
// curves the kernel flagged, clearing their words.
func (f *Fitter[T]) finish(wrap cu.DevicePtr) ([]int, error) {
	count := f.count
	var flagged []int
	err := f.dev.Enqueue(func() error {
		s := f.stream.Handle()
		if wrap != 0 {
			threads := 256
			if err := f.wrap.Launch(f.dev, cuda.Dim3{X: min((count+threads-1)/threads, 1<<20)}, cuda.Dim3{X: threads}, 0, s,
				&kernels.SplineFitWrapArgs{M: wrap, N: int32(f.n), Count: int32(count)}); err != nil {
				_ = s.Synchronize()
				return fmt.Errorf("splinegpu: the periodic curves' last moments: %w", err)
			}
		}
		if err := s.Synchronize(); err != nil {
			return fmt.Errorf("splinegpu: fitting %d curves of %d knots: %w", count, f.n, err)
		}
		var batch uint32
		if err := cu.MemcpyDtoH(unsafe.Pointer(&batch), f.flags+cu.DevicePtr(4*count), 4); err != nil {
			return fmt.Errorf("splinegpu: reading the flags: %w", err)
		}
		if batch == 0 {
			return nil
		}
		if cap(f.hflags) < count {
			f.hflags = make([]uint32, count)
		}
		h := f.hflags[:count]
		if err := cu.MemcpyDtoH(unsafe.Pointer(&h[0]), f.flags, 4*int64(count)); err != nil {
			return fmt.Errorf("splinegpu: reading the flags: %w", err)
		}
		if err := cu.MemsetD32(f.flags, 0, int64(count+1)); err != nil {
			return fmt.Errorf("splinegpu: clearing the flags: %w", err)
		}
		for k, v := range h {
			if v != 0 {
				flagged = append(flagged, k)
			}
		}
		return nil
	})
	return flagged, err
}

// hostError fits the whole batch on the host with package spline and
// returns its error: the CPU's error for bad input, or nil where the CPU
// fits the batch.
func (f *Fitter[T]) hostError(cv *Curves[T], bc spline.Boundary) error {
	n, count := f.n, f.count
	nx := n
	if cv.X.Len() != n {
		nx = n * count
	}
	x, err := copyOut(cv.X, 0, nx)
	if err != nil {
		return fmt.Errorf("splinegpu: copying the knots out: %w", err)
	}
	y, err := copyOut(cv.Y, 0, n*count)
	if err != nil {
		return fmt.Errorf("splinegpu: copying the values out: %w", err)
	}
	_, err = spline.FitBatch(n, x, y, bc)
	return err
}

// fitOnHost fits the curves ks of cv (in increasing order) on the host
// with package spline, as a batch of their own, and copies their moments
// into cv.M. A curve the CPU refuses gives the CPU's error for the whole
// batch.
func (f *Fitter[T]) fitOnHost(cv *Curves[T], bc spline.Boundary, ks []int) error {
	n := f.n
	shared := cv.X.Len() == n
	// Many curves: one copy of the whole batch; else one a curve.
	whole := len(ks)*8 > f.count
	var allX, allY []T
	var err error
	if whole {
		nx := n
		if !shared {
			nx = n * f.count
		}
		if allX, err = copyOut(cv.X, 0, nx); err != nil {
			return fmt.Errorf("splinegpu: copying the knots out: %w", err)
		}
		if allY, err = copyOut(cv.Y, 0, n*f.count); err != nil {
			return fmt.Errorf("splinegpu: copying the values out: %w", err)
		}
	}
	part := func(all []T, b *cuda.Buffer[T], off int) ([]T, error) {
		if whole {
			return all[off : off+n], nil
		}
		return copyOut(b, off, n)
	}
	var hx []T
	hy := make([]T, 0, len(ks)*n)
	if shared {
		if hx, err = part(allX, cv.X, 0); err != nil {
			return fmt.Errorf("splinegpu: copying the knots out: %w", err)
		}
	}
	for _, k := range ks {
		if !shared {
			xk, err := part(allX, cv.X, k*n)
			if err != nil {
				return fmt.Errorf("splinegpu: copying the knots of curve %d out: %w", k, err)
			}
			hx = append(hx, xk...)
		}
		yk, err := part(allY, cv.Y, k*n)
		if err != nil {
			return fmt.Errorf("splinegpu: copying the values of curve %d out: %w", k, err)
		}
		hy = append(hy, yk...)
	}
	sub := bc
	if bc.Kind == spline.KindClamped {
		sub.Start, sub.End = pickEach(bc.Start, ks), pickEach(bc.End, ks)
	}
	hc, err := spline.FitBatch(n, hx, hy, sub)
	if err != nil {
		if full := f.hostError(cv, bc); full != nil {
			return full
		}
		return err
	}
	for i, k := range ks {
		row, err := cv.M.Slice(k*n, n)
		if err != nil {
			return err
		}
		if err := row.CopyFrom(hc.M[i*n : (i+1)*n]); err != nil {
			return fmt.Errorf("splinegpu: copying the moments of curve %d in: %w", k, err)
		}
	}
	return nil
}

// pickEach returns the values of curves ks: v itself when it is shared.
func pickEach(v []float64, ks []int) []float64 {
	if len(v) == 1 {
		return v
	}
	out := make([]float64, len(ks))
	for i, k := range ks {
		out[i] = v[k]
	}
	return out
}
