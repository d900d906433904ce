package spline

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/bandsolve/bandsolve/tridiag"
)

// ErrDevice is wrapped by the error of NewEvaluator for a device that
// cannot evaluate splines.
var ErrDevice = errors.New("spline: device cannot evaluate splines")

// search returns the interval of t: the largest i ≤ len(x)−2 with
// x[i] ≤ t, or 0 when t < x[0] or t is NaN. (Branch-free forms of the
// loop measured slower: the load–compare chain of the levels is the
// cost, and a predicted branch overlaps it.)
func search[T tridiag.Float](x []T, t T) int {
	base, size := 0, len(x)-1 // the interval is in [base, base+size)
	for size > 1 {
		half := size >> 1
		if x[base+half] <= t {
			base += half
		}
		size -= half
	}
	return base
}

// hunt returns the interval of t like search, walking forward from
// interval lo, the interval of an earlier, smaller point: steps of 1, 2,
// 4, … and then a binary search, so that ascending points cost O(1) each
// where they are denser than the knots and O(log gap) where they are not.
// A point below x[lo] (points not ascending, or a periodic wrap) starts
// over with a binary search.
func hunt[T tridiag.Float](x []T, t T, lo int) int {
	if !(t >= x[lo]) {
		if lo == 0 {
			return 0
		}
		return search(x, t)
	}
	last := len(x) - 1
	hi, step := lo+1, 1
	for hi < last && x[hi] <= t {
		lo = hi
		hi += step
		step <<= 1
	}
	hi = min(hi, last)
	return lo + search(x[lo:hi+1], t)
}

// wrap maps t into [x0, xn] by whole periods xn − x0 (NaN stays NaN, ±Inf
// becomes NaN).
func wrap[T tridiag.Float](x0, xn, t T) T {
	if t >= x0 && t <= xn {
		return t
	}
	p := float64(xn) - float64(x0)
	var s float64
	if d := float64(t) - float64(x0); !math.IsInf(d, 0) || math.IsInf(float64(t), 0) {
		s = math.Mod(d, p)
	} else {
		s = 2 * math.Mod(float64(t)*0.5-float64(x0)*0.5, p*0.5)
	}
	if s < 0 {
		s += p
	}
	return T(float64(x0) + s)
}

// span is one interval [x0, x1] of a curve, h = x1 − x0, with what the
// weights of a point need. With a = (x1 − t)/h and b = (t − x0)/h:
//
//	S   = a·y_i + b·y_{i+1} + a(a²−1)·h²/6·M_i + b(b²−1)·h²/6·M_{i+1}
//	S′  = (y_{i+1} − y_i)/h + (1 − 3a²)·h/6·M_i + (3b² − 1)·h/6·M_{i+1}
//	S″  = a·M_i + b·M_{i+1}
//
// The h² is folded into the weights before they meet M, so that a
// product overflows only where the term itself does. a and b are
// (x1 − t)·(1/h) and (t − x0)·(1/h), one division per interval, set to 1
// exactly at the knots so that S is the data there.
type span[T tridiag.Float] struct {
	i                  int
	x0, x1, ih, h6, hs T // hs = h/6, h6 = h²/6
}

// at makes s interval i of the knots x, unless it is already.
func (s *span[T]) at(x []T, i int) {
	if i == s.i {
		return
	}
	s.i, s.x0, s.x1 = i, x[i], x[i+1]
	h := s.x1 - s.x0
	s.ih, s.h6, s.hs = 1/h, h*h/6, h/6
}

// guard follows at on knots that may be too close for the weights (see
// closeKnots): where h²/6 is below 2^−126, the smallest normal float32,
// it checks T's own bound.
func (s *span[T]) guard() {
	if s.h6 < 0x1p-126 {
		s.tiny()
	}
}

// closeKnots reports whether two neighbouring knots are closer than
// 2^−61, where h²/6 may be below 2^−126 and the spans need guard.
func closeKnots[T tridiag.Float](x []T) bool {
	for i := 1; i < len(x); i++ {
		if x[i]-x[i-1] < 0x1p-61 {
			return true
		}
	}
	return false
}

// tiny makes the weights of a span whose h²/6 or h/6 is below the
// smallest normal number of T NaN, so that its results are evaluated by
// carefulAt (see sixthSquare).
func (s *span[T]) tiny() {
	h := s.x1 - s.x0
	s.h6 = sixthSquare(h)
	if !(s.hs >= smallestNormal[T]()) {
		s.hs = T(math.NaN())
	}
}

// sixthSquare returns h²/6, or NaN where it is below the smallest normal
// number of T: a weight c·h²/6 then loses digits, or all of them, which
// misses a term c·h²/6·M of the size of the values (M ~ y/h²). The NaN
// sends the result to the careful evaluation, which carries h apart
// from the moments.
func sixthSquare[T tridiag.Float](h T) T {
	h6 := h * h / 6
	// 2^−126, the smallest normal float32, keeps the test of T's own
	// bound off the common path.
	if h6 < 0x1p-126 && !(h6 >= smallestNormal[T]()) {
		return T(math.NaN())
	}
	return h6
}

// smallestNormal is the smallest positive normal number of T.
func smallestNormal[T tridiag.Float]() T {
	if isFloat32[T]() {
		return T(float32(0x1p-126))
	}
	return T(0x1p-1022)
}

// ab returns a and b at t.
func (s *span[T]) ab(t T) (a, b T) {
	a, b = (s.x1-t)*s.ih, (t-s.x0)*s.ih
	if t == s.x0 {
		a = 1
	} else if t == s.x1 {
		b = 1
	}
	return a, b
}

// valueWeights are the weights of y_i, y_{i+1}, M_i and M_{i+1} in S(t).
func (s *span[T]) valueWeights(t T) [4]T {
	a, b := s.ab(t)
	return [4]T{a, b, a * (a*a - 1) * s.h6, b * (b*b - 1) * s.h6}
}

// derivWeights are 1/h and the weights of M_i and M_{i+1} in S′(t).
func (s *span[T]) derivWeights(t T) [4]T {
	a, b := s.ab(t)
	return [4]T{s.ih, (1 - 3*a*a) * s.hs, (3*b*b - 1) * s.hs, 0}
}

// value is S from valueWeights; every evaluation path uses it, so that
// they agree bit for bit.
func value[T tridiag.Float](w *[4]T, y0, y1, m0, m1 T) T {
	return w[0]*y0 + w[1]*y1 + w[2]*m0 + w[3]*m1
}

// deriv is S′ from derivWeights.
func deriv[T tridiag.Float](w *[4]T, y0, y1, m0, m1 T) T {
	return (y1-y0)*w[0] + w[1]*m0 + w[2]*m1
}

// point is derivative q (0, 1, 2) of one curve at t.
func point[T tridiag.Float](x, y, m []T, periodic bool, t T, q int) T {
	n := len(x)
	if periodic {
		t = wrap(x[0], x[n-1], t)
	}
	i := search(x, t)
	s := span[T]{i: -1}
	s.at(x, i)
	s.guard()
	var v T
	switch q {
	case 0:
		w := s.valueWeights(t)
		v = value(&w, y[i], y[i+1], m[i], m[i+1])
	case 1:
		w := s.derivWeights(t)
		v = deriv(&w, y[i], y[i+1], m[i], m[i+1])
	default:
		a, b := s.ab(t)
		v = a*m[i] + b*m[i+1]
	}
	if v-v != 0 { // NaN or ±Inf: overflow, or t is NaN or infinite
		v = carefulAt(x, y, m, i, t, q)
	}
	return v
}

// curve returns the knots, values and moments of curve k.
func (c *Curves[T]) curve(k int) (x, y, m []T) {
	return c.Knots(k), c.Y[k*c.N : (k+1)*c.N], c.M[k*c.N : (k+1)*c.N]
}

// Eval returns the value of curve k at t. Outside [x[0], x[N−1]] a natural
// or clamped curve continues the cubic of its end interval; a periodic
// curve repeats. See the package documentation for NaN and infinite t.
func (c *Curves[T]) Eval(k int, t T) T {
	x, y, m := c.curve(k)
	return point(x, y, m, c.Kind == KindPeriodic, t, 0)
}

// Deriv returns the first derivative of curve k at t.
func (c *Curves[T]) Deriv(k int, t T) T {
	x, y, m := c.curve(k)
	return point(x, y, m, c.Kind == KindPeriodic, t, 1)
}

// Deriv2 returns the second derivative of curve k at t.
func (c *Curves[T]) Deriv2(k int, t T) T {
	x, y, m := c.curve(k)
	return point(x, y, m, c.Kind == KindPeriodic, t, 2)
}

// Integral returns the integral of curve k from a to b (negative when
// b < a): beyond the knots a natural or clamped curve continues its end
// cubics and a periodic curve repeats.
func (c *Curves[T]) Integral(k int, a, b T) T {
	x, y, m := c.curve(k)
	return integrate(x, y, m, c.Kind == KindPeriodic, a, b)
}

// EvalAll evaluates every curve at the points t on the CPU:
// out[k·len(t) + j] is curve k at t[j]. out must hold Count·len(t)
// values. It is Evaluator.Eval with SharedPoints(t).
func (c *Curves[T]) EvalAll(t, out []T) error {
	e, err := NewEvaluator[T](nil)
	if err != nil {
		return err
	}
	return e.Eval(context.Background(), c, SharedPoints(t), Out[T]{Value: out})
}

// Points are the points of a batch evaluation: P points at which every
// curve is evaluated, or P points for each curve.
type Points[T tridiag.Float] struct {
	// T holds the points: P shared by every curve or, when PerCurve is
	// set, Count·P with curve k's at T[k·P : (k+1)·P].
	T        []T
	PerCurve bool
}

// SharedPoints returns points at which every curve is evaluated.
func SharedPoints[T tridiag.Float](t []T) Points[T] { return Points[T]{T: t} }

// CurvePoints returns points for each curve: curve k's are
// t[k·P : (k+1)·P], P = len(t)/Count.
func CurvePoints[T tridiag.Float](t []T) Points[T] { return Points[T]{T: t, PerCurve: true} }

// Out names the quantities a batch evaluation writes. Each non-nil slice
// receives Count·P values, curve k's at [k·P, (k+1)·P), the j-th at the
// curve's j-th point; a nil slice is not computed. The slices are the
// caller's, written in place, so that a pipeline can reuse them.
type Out[T tridiag.Float] struct {
	Value  []T // S(t)
	Deriv  []T // S′(t)
	Deriv2 []T // S″(t)
}

// Evaluator evaluates and integrates batches of fitted curves on one
// device. The CPU device runs on all its workers: each worker takes a
// block of curves at a time (or of points, with fewer than four curves per
// worker). An Evaluator may be used from several goroutines; its calls run
// one at a time, reusing its scratch space.
type Evaluator[T tridiag.Float] struct {
	cpu *tridiag.CPU
	dev tridiag.Device // the device of eng
	eng Engine[T]      // another device's evaluator, or nil on the CPU
	mu  sync.Mutex

	// Scratch for points shared by every curve: the interval of each
	// point, the point (wrapped into the period of periodic curves), the
	// weights of the quantities when the knots are shared too, and the
	// order of the points when they are not ascending.
	idx    []int32
	tw     []T
	wv, wd [][4]T
	w2     [][2]T
	perm   []int32
}

// NewEvaluator returns an evaluator on dev: nil means the CPU device with
// one worker per core (tridiag.DefaultCPU), a *tridiag.CPU its workers, a
// GPU (a *cuda.Device, in a program built with the cuda tag that imports
// package github.com/bandsolve/bandsolve/gpu) that GPU: one launch per
// batch, results the CPU's bit for bit. Devices without a registered
// backend are refused with an error wrapping ErrDevice.
func NewEvaluator[T tridiag.Float](dev tridiag.Device) (*Evaluator[T], error) {
	switch d := dev.(type) {
	case nil:
		return &Evaluator[T]{cpu: tridiag.DefaultCPU()}, nil
	case *tridiag.CPU:
		if d == nil {
			d = tridiag.DefaultCPU()
		}
		return &Evaluator[T]{cpu: d}, nil
	}
	eng, ok, err := newEngine[T](dev)
	if !ok {
		return nil, fmt.Errorf("%w: %s (evaluate on the CPU: NewEvaluator(nil); for a GPU, build with -tags cuda and import github.com/bandsolve/bandsolve/gpu)", ErrDevice, dev.Name())
	}
	if err != nil {
		return nil, fmt.Errorf("spline: evaluator on %s: %w", dev.Name(), err)
	}
	return &Evaluator[T]{dev: dev, eng: eng}, nil
}

// Device returns the device the evaluator runs on.
func (e *Evaluator[T]) Device() tridiag.Device {
	if e.eng != nil {
		return e.dev
	}
	return e.cpu
}

// Close releases the evaluator's scratch space (on a GPU, its device
// memory).
func (e *Evaluator[T]) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.idx, e.tw, e.wv, e.wd, e.w2, e.perm = nil, nil, nil, nil, nil, nil
	if e.eng != nil {
		err := e.eng.Close()
		e.eng = nil
		return err
	}
	return nil
}

// closed is the error of a call on a closed evaluator of another device.
func (e *Evaluator[T]) closed() error {
	return fmt.Errorf("%w: the evaluator on %s is closed", ErrDevice, e.dev.Name())
}

// check validates the shape of a batch of curves.
func (c *Curves[T]) check() error {
	if c == nil {
		return fmt.Errorf("%w: no curves", ErrInput)
	}
	n, count := c.N, c.Count
	switch {
	case n < 2 || count < 0:
		return fmt.Errorf("%w: %d curves of %d knots: need n ≥ 2", ErrInput, count, n)
	case n > math.MaxInt32:
		return fmt.Errorf("%w: %d knots per curve: at most %d can be evaluated", ErrInput, n, math.MaxInt32)
	case len(c.Y) != n*count || len(c.M) != n*count:
		return fmt.Errorf("%w: %d curves of %d knots need %d values and moments, have %d and %d", ErrInput, count, n, n*count, len(c.Y), len(c.M))
	case len(c.X) != n && len(c.X) != n*count:
		return fmt.Errorf("%w: x has %d knots, want %d (shared) or %d (one set per curve)", ErrInput, len(c.X), n, n*count)
	}
	return nil
}

// Eval evaluates every curve of cv at pts, writing the quantities that out
// names. Natural and clamped curves continue their end cubics beyond the
// knots; periodic curves repeat.
//
// Points shared by every curve are located among shared knots once, and
// the weights of each point are computed once for all the curves. With
// knots per curve, shared points that are not ascending are sorted once
// and every curve walks its knots in that order. Ascending points (found
// in one pass) are located by a walk over the knots instead of a binary
// search per point.
func (e *Evaluator[T]) Eval(ctx context.Context, cv *Curves[T], pts Points[T], out Out[T]) error {
	if err := cv.check(); err != nil {
		return err
	}
	count := cv.Count
	p := len(pts.T)
	if pts.PerCurve {
		if (count == 0 && p != 0) || (count != 0 && p%count != 0) {
			return fmt.Errorf("%w: %d points are not the same number for each of %d curves", ErrInput, p, count)
		}
		if count != 0 {
			p /= count
		}
	}
	if p > math.MaxInt32 {
		return fmt.Errorf("%w: %d points per curve: at most %d", ErrInput, p, math.MaxInt32)
	}
	for _, o := range []struct {
		name string
		v    []T
	}{{"Value", out.Value}, {"Deriv", out.Deriv}, {"Deriv2", out.Deriv2}} {
		if o.v != nil && len(o.v) < count*p {
			return fmt.Errorf("%w: out.%s has %d values, %d curves at %d points need %d", ErrInput, o.name, len(o.v), count, p, count*p)
		}
	}
	if count == 0 || p == 0 || (out.Value == nil && out.Deriv == nil && out.Deriv2 == nil) {
		return ctx.Err()
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.dev != nil {
		if e.eng == nil {
			return e.closed()
		}
		return e.eng.Eval(ctx, cv, pts, out)
	}
	j := &job[T]{cv: cv, t: pts.T, perCurve: pts.PerCurve, p: p, out: out, periodic: cv.Kind == KindPeriodic}
	sharedKnots := len(cv.X) == cv.N
	workers := e.cpu.Workers()
	switch {
	case !pts.PerCurve && sharedKnots:
		if err := e.prepare(ctx, j); err != nil {
			return err
		}
	case !pts.PerCurve:
		j.sorted = slices.IsSortedFunc(pts.T, cmp.Compare[T])
		if !j.sorted && count >= 4 {
			e.perm = grow(e.perm, p)
			for i := range e.perm {
				e.perm[i] = int32(i)
			}
			t := pts.T
			slices.SortFunc(e.perm, func(a, b int32) int { return cmp.Compare(t[a], t[b]) })
			j.perm = e.perm
		}
	}
	// Units of work: a curve, or with fewer curves than 4 per worker a
	// block of a curve's points.
	pb := 1
	if count < 4*workers {
		pb = max(1, min((4*workers+count-1)/count, p/2048))
	}
	bs := (p + pb - 1) / pb
	grain := max(1, 32768/bs)
	block := j.generic
	if !pts.PerCurve && sharedKnots {
		block = j.shared
	}
	return parallel(ctx, workers, count*pb, grain, func(lo, hi int) {
		for u := lo; u < hi; u++ {
			k, b := u/pb, u%pb
			block(k, b*bs, min(p, (b+1)*bs))
		}
	})
}

// Integrate writes to out[k] the integral of curve k from a to b, each
// one value shared by every curve or Count values (curve k's at index
// k). Beyond the knots natural and clamped curves continue their end
// cubics and periodic curves repeat.
func (e *Evaluator[T]) Integrate(ctx context.Context, cv *Curves[T], a, b, out []T) error {
	if err := cv.check(); err != nil {
		return err
	}
	count := cv.Count
	for _, s := range []struct {
		name string
		v    []T
	}{{"a", a}, {"b", b}} {
		if len(s.v) != 1 && len(s.v) != count {
			return fmt.Errorf("%w: %d integration bounds in %s for %d curves (want 1 or %d)", ErrInput, len(s.v), s.name, count, count)
		}
	}
	if len(out) < count {
		return fmt.Errorf("%w: out has %d values for %d curves", ErrInput, len(out), count)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.dev != nil {
		if e.eng == nil {
			return e.closed()
		}
		if count == 0 {
			return ctx.Err()
		}
		return e.eng.Integrate(ctx, cv, a, b, out[:count])
	}
	periodic := cv.Kind == KindPeriodic
	pickT := func(v []T, k int) T {
		if len(v) == 1 {
			return v[0]
		}
		return v[k]
	}
	return parallel(ctx, e.cpu.Workers(), count, max(1, 65536/cv.N), func(lo, hi int) {
		for k := lo; k < hi; k++ {
			x, y, m := cv.curve(k)
			out[k] = integrate(x, y, m, periodic, pickT(a, k), pickT(b, k))
		}
	})
}

// parallel runs work over [0, units) in claims of grain units on up to
// workers goroutines, and stops claiming when ctx is done.
func parallel(ctx context.Context, workers, units, grain int, work func(lo, hi int)) error {
	var next atomic.Int64
	body := func() {
		for ctx.Err() == nil {
			lo := int(next.Add(int64(grain))) - grain
			if lo >= units {
				return
			}
			work(lo, min(lo+grain, units))
		}
	}
	if w := min(workers, (units+grain-1)/grain); w <= 1 {
		body()
	} else {
		var wg sync.WaitGroup
		wg.Add(w)
		for range w {
			go func() {
				defer wg.Done()
				body()
			}()
		}
		wg.Wait()
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("spline: evaluation stopped: %w", err)
	}
	return nil
}

func grow[E any](s []E, n int) []E {
	if cap(s) < n {
		return make([]E, n)
	}
	return s[:n]
}

// job is one batch evaluation.
type job[T tridiag.Float] struct {
	cv       *Curves[T]
	t        []T
	perCurve bool
	p        int
	out      Out[T]
	periodic bool
	sorted   bool    // shared points ascending
	perm     []int32 // shared points in ascending order, or nil

	// Shared knots and shared points: see Evaluator.
	idx    []int32
	tw     []T
	wv, wd [][4]T
	w2     [][2]T
}

// prepare locates the shared points among the shared knots and computes
// their weights, in parallel over blocks of points.
func (e *Evaluator[T]) prepare(ctx context.Context, j *job[T]) error {
	p, x, t := j.p, j.cv.X, j.t
	n := len(x)
	e.idx, e.tw = grow(e.idx, p), grow(e.tw, p)
	j.idx, j.tw = e.idx, e.tw
	if j.out.Value != nil {
		e.wv = grow(e.wv, p)
		j.wv = e.wv
	}
	if j.out.Deriv != nil {
		e.wd = grow(e.wd, p)
		j.wd = e.wd
	}
	if j.out.Deriv2 != nil {
		e.w2 = grow(e.w2, p)
		j.w2 = e.w2
	}
	sorted := slices.IsSortedFunc(t, cmp.Compare[T])
	const bs = 4096
	return parallel(ctx, e.cpu.Workers(), (p+bs-1)/bs, 1, func(lo, hi int) {
		for b := lo; b < hi; b++ {
			i := 0
			sp := span[T]{i: -1}
			close := closeKnots(x)
			for q := b * bs; q < min(p, (b+1)*bs); q++ {
				tq := t[q]
				if j.periodic {
					tq = wrap(x[0], x[n-1], tq)
				}
				if sorted {
					i = hunt(x, tq, i)
				} else {
					i = search(x, tq)
				}
				j.idx[q], j.tw[q] = int32(i), tq
				sp.at(x, i)
				if close {
					sp.guard()
				}
				if j.wv != nil {
					j.wv[q] = sp.valueWeights(tq)
				}
				if j.wd != nil {
					j.wd[q] = sp.derivWeights(tq)
				}
				if j.w2 != nil {
					a, b := sp.ab(tq)
					j.w2[q] = [2]T{a, b}
				}
			}
		}
	})
}

// shared evaluates curve k at shared points j0 … j1−1, located among
// shared knots by prepare.
func (j *job[T]) shared(k, j0, j1 int) {
	x, y, m := j.cv.curve(k)
	idx := j.idx[j0:j1]
	row := k*j.p + j0
	fix := func(o []T, q int) {
		for jj, v := range o {
			if v-v != 0 {
				o[jj] = carefulAt(x, y, m, int(idx[jj]), j.tw[j0+jj], q)
			}
		}
	}
	if j.out.Value != nil {
		o := j.out.Value[row : row+len(idx)]
		if sharedValue(y, m, idx, j.wv[j0:j1], o) {
			fix(o, 0)
		}
	}
	if j.out.Deriv != nil {
		o := j.out.Deriv[row : row+len(idx)]
		if sharedDeriv(y, m, idx, j.wd[j0:j1], o) {
			fix(o, 1)
		}
	}
	if j.out.Deriv2 != nil {
		o := j.out.Deriv2[row : row+len(idx)]
		if sharedDeriv2(m, idx, j.w2[j0:j1], o) {
			fix(o, 2)
		}
	}
}

// sharedValue writes S at the located points to o and reports whether
// any result is NaN or infinite.
func sharedValue[T tridiag.Float](y, m []T, idx []int32, w [][4]T, o []T) (bad bool) {
	w, o = w[:len(idx)], o[:len(idx)]
	for q, i := range idx {
		yy, mm := y[i:i+2], m[i:i+2]
		v := value(&w[q], yy[0], yy[1], mm[0], mm[1])
		o[q] = v
		if v-v != 0 {
			bad = true
		}
	}
	return bad
}

// sharedDeriv writes S′ at the located points to o, like sharedValue.
func sharedDeriv[T tridiag.Float](y, m []T, idx []int32, w [][4]T, o []T) (bad bool) {
	w, o = w[:len(idx)], o[:len(idx)]
	for q, i := range idx {
		yy, mm := y[i:i+2], m[i:i+2]
		v := deriv(&w[q], yy[0], yy[1], mm[0], mm[1])
		o[q] = v
		if v-v != 0 {
			bad = true
		}
	}
	return bad
}

// sharedDeriv2 writes S″ at the located points to o, like sharedValue.
func sharedDeriv2[T tridiag.Float](m []T, idx []int32, w [][2]T, o []T) (bad bool) {
	w, o = w[:len(idx)], o[:len(idx)]
	for q, i := range idx {
		mm, ww := m[i:i+2], &w[q]
		v := ww[0]*mm[0] + ww[1]*mm[1]
		o[q] = v
		if v-v != 0 {
			bad = true
		}
	}
	return bad
}

// generic evaluates curve k at its points j0 … j1−1 (in the order of perm
// when set), locating each among the curve's knots.
func (j *job[T]) generic(k, j0, j1 int) {
	x, y, m := j.cv.curve(k)
	n := len(x)
	t, perm, sorted := j.t, j.perm, j.sorted
	if j.perCurve {
		t = t[k*j.p : (k+1)*j.p]
		sorted = slices.IsSortedFunc(t[j0:j1], cmp.Compare[T])
	}
	walk := sorted || perm != nil
	val, der, der2 := j.out.Value, j.out.Deriv, j.out.Deriv2
	row := k * j.p
	lo := 0
	sp := span[T]{i: -1}
	close := closeKnots(x)
	for jj := j0; jj < j1; jj++ {
		q := jj
		if perm != nil {
			q = int(perm[jj])
		}
		tq := t[q]
		if j.periodic {
			tq = wrap(x[0], x[n-1], tq)
		}
		var i int
		if walk {
			i = hunt(x, tq, lo)
			lo = i
		} else {
			i = search(x, tq)
		}
		sp.at(x, i)
		if close {
			sp.guard()
		}
		y0, y1, m0, m1 := y[i], y[i+1], m[i], m[i+1]
		if val != nil {
			w := sp.valueWeights(tq)
			v := value(&w, y0, y1, m0, m1)
			if v-v != 0 {
				v = carefulAt(x, y, m, i, tq, 0)
			}
			val[row+q] = v
		}
		if der != nil {
			w := sp.derivWeights(tq)
			v := deriv(&w, y0, y1, m0, m1)
			if v-v != 0 {
				v = carefulAt(x, y, m, i, tq, 1)
			}
			der[row+q] = v
		}
		if der2 != nil {
			a, b := sp.ab(tq)
			v := a*m0 + b*m1
			if v-v != 0 {
				v = carefulAt(x, y, m, i, tq, 2)
			}
			der2[row+q] = v
		}
	}
}

// integrate is ∫_a^b of one curve.
func integrate[T tridiag.Float](x, y, m []T, periodic bool, a, b T) T {
	if a == b {
		return 0
	}
	if a != a || b != b {
		return T(math.NaN())
	}
	sign := T(1)
	if a > b {
		a, b, sign = b, a, -1
	}
	var v T
	if periodic {
		v = integratePeriodic(x, y, m, a, b)
	} else {
		v = integrateRange(x, y, m, a, b)
	}
	if v-v != 0 { // overflow, or an infinite bound
		switch {
		case !periodic:
			v = T(carefulRange(x, y, m, float64(a), float64(b)))
		case math.IsInf(float64(a), 0) || math.IsInf(float64(b), 0):
			v = T(math.NaN())
		default:
			v = T(carefulPeriodic(x, y, m, float64(a), float64(b)))
		}
	}
	return sign * v
}

// integrateRange is ∫_a^b (a ≤ b) of a natural or clamped curve.
func integrateRange[T tridiag.Float](x, y, m []T, a, b T) T {
	ia, ib := search(x, a), search(x, b)
	if ia == ib {
		return partial(x, y, m, ia, a, b)
	}
	s := partial(x, y, m, ia, a, x[ia+1])
	for i := ia + 1; i < ib; i++ {
		h := x[i+1] - x[i]
		h6 := sixthSquare(h)
		s += h * ((y[i]+y[i+1])/2 - (m[i]*h6+m[i+1]*h6)/4)
	}
	return s + partial(x, y, m, ib, x[ib], b)
}

// partial is ∫_a^b of the cubic of interval i: with u = (t − x_i)/h and
// m_i = M_i·h²/6 it is h·(P(u_b) − P(u_a)), P(u) = y_i·u + c1·u²/2 +
// c2·u³/3 + c3·u⁴/4, c1 = y_{i+1} − y_i − 2m_i − m_{i+1}, c2 = 3m_i,
// c3 = m_{i+1} − m_i.
func partial[T tridiag.Float](x, y, m []T, i int, a, b T) T {
	h := x[i+1] - x[i]
	h6 := sixthSquare(h)
	mi, mj := m[i]*h6, m[i+1]*h6
	y0 := y[i]
	c1, c2, c3 := y[i+1]-y0-2*mi-mj, 3*mi, mj-mi
	at := func(u T) T { return u * (y0 + u*(c1/2+u*(c2/3+u*(c3/4)))) }
	return h * (at((b-x[i])/h) - at((a-x[i])/h))
}

// integratePeriodic is ∫_a^b (a ≤ b) of a periodic curve: whole periods
// times the integral over one, and the rest from a wrapped into the
// period.
func integratePeriodic[T tridiag.Float](x, y, m []T, a, b T) T {
	n := len(x)
	x0, xn := x[0], x[n-1]
	whole, left := periods(float64(a), float64(b), float64(xn)-float64(x0))
	var s T
	if whole > 0 {
		s = T(whole) * integrateRange(x, y, m, x0, xn)
	}
	wa := wrap(x0, xn, a)
	if wb := float64(wa) + left; wb <= float64(xn) {
		s += integrateRange(x, y, m, wa, T(wb))
	} else {
		s += integrateRange(x, y, m, wa, xn) + integrateRange(x, y, m, x0, T(float64(x0)+(wb-float64(xn))))
	}
	return s
}
