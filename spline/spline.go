// Package spline fits interpolating cubic splines through many curves at
// once, with natural, clamped or periodic ends, by solving one batch of
// tridiagonal systems (package tridiag) for all the curves.
//
// A batch holds Count curves of N knots each. Curve k's values are
// y[k·N … k·N+N−1]; its knots are either shared by every curve (x has N
// entries) or its own (x has N·Count entries, laid out like y). Knots must
// be strictly increasing.
//
// The spline is stored by its second derivatives M at the knots (the
// "moments"): on [x_i, x_{i+1}], with h = x_{i+1} − x_i, A = (x_{i+1} − t)/h
// and B = (t − x_i)/h,
//
//	S(t) = A·y_i + B·y_{i+1} + ((A³ − A)·M_i + (B³ − B)·M_{i+1})·h²/6.
//
// Continuity of S′ at the interior knots gives, for each i,
//
//	h_{i−1}·M_{i−1} + 2(h_{i−1} + h_i)·M_i + h_i·M_{i+1} = 6(Δ_i − Δ_{i−1}),
//	Δ_i = (y_{i+1} − y_i)/h_i,
//
// a symmetric, strictly diagonally dominant tridiagonal system. The ends
// close it:
//
//   - Natural: M_0 = M_{N−1} = 0; the N−2 interior moments are solved for.
//   - Clamped(d0, dn): S′(x_0) = d0 and S′(x_{N−1}) = dn add the rows
//     2h_0·M_0 + h_0·M_1 = 6(Δ_0 − d0) and
//     h_{N−2}·M_{N−2} + 2h_{N−2}·M_{N−1} = 6(dn − Δ_{N−2}).
//     A clamped spline reproduces any cubic exactly.
//   - Periodic: the curve repeats with period x_{N−1} − x_0, so y_{N−1} must
//     equal y_0; M_{N−1} = M_0 and the N−1 moments M_0 … M_{N−2} satisfy a
//     cyclic system (tridiag.Options{Cyclic: true}).
//
// The interior and periodic systems are written straight into the moment
// array through a strided layout (system k, row i at k·N + 1 + i for the
// natural spline), so no copy is made.
package spline

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/bandsolve/bandsolve/tridiag"
)

// Kind is how the ends of a spline are closed.
type Kind int

const (
	// KindNatural has zero second derivative at both ends.
	KindNatural Kind = iota
	// KindClamped has given first derivatives at both ends.
	KindClamped
	// KindPeriodic repeats with period x[N−1] − x[0].
	KindPeriodic
)

func (k Kind) String() string {
	switch k {
	case KindNatural:
		return "natural"
	case KindClamped:
		return "clamped"
	case KindPeriodic:
		return "periodic"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Boundary is the end condition of every curve of a fit.
type Boundary struct {
	Kind Kind
	// Start and End are the first derivatives at x[0] and x[N−1] of a
	// clamped spline: one value shared by every curve, or one per curve.
	Start, End []float64
}

// Natural is the natural end condition: S″ = 0 at both ends.
func Natural() Boundary { return Boundary{Kind: KindNatural} }

// Clamped fixes the first derivative of every curve: S′(x[0]) = d0 and
// S′(x[N−1]) = dn.
func Clamped(d0, dn float64) Boundary {
	return Boundary{Kind: KindClamped, Start: []float64{d0}, End: []float64{dn}}
}

// ClampedEach fixes the end derivatives of each curve: curve k has
// S′(x[0]) = d0[k] and S′(x[N−1]) = dn[k].
func ClampedEach(d0, dn []float64) Boundary {
	return Boundary{Kind: KindClamped, Start: d0, End: dn}
}

// Periodic is the periodic end condition: S, S′ and S″ match across the
// ends, and y[N−1] must equal y[0].
func Periodic() Boundary { return Boundary{Kind: KindPeriodic} }

// ErrInput is wrapped by the errors of fits given bad input.
var ErrInput = errors.New("spline: bad input")

// Curves is a batch of fitted cubic splines.
type Curves[T tridiag.Float] struct {
	N     int  // knots per curve
	Count int  // number of curves
	Kind  Kind // end condition they were fitted with
	// X holds the knots: N shared by every curve, or N·Count laid out
	// like Y. Y holds the values and M the second derivatives at the
	// knots, curve k at [k·N, k·N+N).
	X, Y, M []T
}

// Knots returns the knots of curve k.
func (c *Curves[T]) Knots(k int) []T {
	if len(c.X) == c.N {
		return c.X
	}
	return c.X[k*c.N : (k+1)*c.N]
}

// locate returns the interval i (x[i] ≤ t < x[i+1], clamped to the first
// and last intervals) and t, wrapped into the period for periodic curves.
func (c *Curves[T]) locate(x []T, t T) (int, T) {
	n := len(x)
	if c.Kind == KindPeriodic {
		p := float64(x[n-1] - x[0])
		s := math.Mod(float64(t-x[0]), p)
		if s < 0 {
			s += p
		}
		t = x[0] + T(s)
	}
	lo, hi := 0, n-1 // x[lo] ≤ t < x[hi] once t is inside
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if x[mid] <= t {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo, t
}

// Eval returns the value of curve k at t. Outside [x[0], x[N−1]] a natural
// or clamped curve continues the cubic of its end interval; a periodic
// curve repeats.
func (c *Curves[T]) Eval(k int, t T) T {
	x := c.Knots(k)
	y, m := c.Y[k*c.N:(k+1)*c.N], c.M[k*c.N:(k+1)*c.N]
	i, t := c.locate(x, t)
	h := x[i+1] - x[i]
	a := (x[i+1] - t) / h
	b := (t - x[i]) / h
	return a*y[i] + b*y[i+1] + ((a*a*a-a)*m[i]+(b*b*b-b)*m[i+1])*h*h/6
}

// Deriv returns the first derivative of curve k at t.
func (c *Curves[T]) Deriv(k int, t T) T {
	x := c.Knots(k)
	y, m := c.Y[k*c.N:(k+1)*c.N], c.M[k*c.N:(k+1)*c.N]
	i, t := c.locate(x, t)
	h := x[i+1] - x[i]
	a := (x[i+1] - t) / h
	b := (t - x[i]) / h
	return (y[i+1]-y[i])/h + ((1-3*a*a)*m[i]+(3*b*b-1)*m[i+1])*h/6
}

// EvalAll evaluates every curve at the points t: out[k·len(t) + j] is
// curve k at t[j]. out must hold Count·len(t) values.
func (c *Curves[T]) EvalAll(t, out []T) error {
	if len(out) < c.Count*len(t) {
		return fmt.Errorf("%w: out has %d values, %d curves at %d points need %d", ErrInput, len(out), c.Count, len(t), c.Count*len(t))
	}
	for k := range c.Count {
		o := out[k*len(t) : (k+1)*len(t)]
		for j, tj := range t {
			o[j] = c.Eval(k, tj)
		}
	}
	return nil
}

// Fitter fits batches of Count curves of N knots, reusing one tridiagonal
// plan per end condition (made on first use). Keep one for a pipeline that
// fits batches of the same size over and over. A Fitter is not safe for
// concurrent use.
type Fitter[T tridiag.Float] struct {
	dev      tridiag.Device
	opts     tridiag.Options
	n, count int
	plans    map[Kind]*tridiag.Plan[T]
	a, b, c  []T // coefficients, one row per knot: N·Count
}

// NewFitter returns a fitter for count curves of n knots whose systems are
// solved on dev (nil: the CPU) with opts (its Cyclic field is set by the
// fitter for periodic fits). n must be at least 2, and 3 for periodic
// curves.
func NewFitter[T tridiag.Float](dev tridiag.Device, n, count int, opts tridiag.Options) (*Fitter[T], error) {
	if n < 2 || count < 1 {
		return nil, fmt.Errorf("%w: %d curves of %d knots: need n ≥ 2 and at least one curve", ErrInput, count, n)
	}
	return &Fitter[T]{dev: dev, opts: opts, n: n, count: count, plans: map[Kind]*tridiag.Plan[T]{}}, nil
}

// Close releases the fitter's plans.
func (f *Fitter[T]) Close() error {
	var err error
	for k, p := range f.plans {
		err = errors.Join(err, p.Close())
		delete(f.plans, k)
	}
	return err
}

// system returns the shape of kind's batch and the offset of its first
// row in the per-knot arrays. The rows of curve k are its unknown moments:
// 1…N−2 (natural), 0…N−1 (clamped), 0…N−2 (periodic), all read in place
// with a stride of one and N between curves.
func (f *Fitter[T]) system(kind Kind) (tridiag.Shape, int) {
	l := tridiag.Strided(1, f.n)
	switch kind {
	case KindNatural:
		return tridiag.Shape{N: f.n - 2, G: f.count, Layout: l}, 1
	case KindPeriodic:
		return tridiag.Shape{N: f.n - 1, G: f.count, Layout: l}, 0
	}
	return tridiag.Shape{N: f.n, G: f.count, Layout: l}, 0
}

func (f *Fitter[T]) plan(kind Kind) (*tridiag.Plan[T], error) {
	if p, ok := f.plans[kind]; ok {
		return p, nil
	}
	shape, _ := f.system(kind)
	opts := f.opts
	opts.Cyclic = kind == KindPeriodic
	p, err := tridiag.NewPlan[T](f.dev, shape, opts)
	if err != nil {
		return nil, err
	}
	f.plans[kind] = p
	return p, nil
}

// Fit fits the curves with values y (N·Count) at knots x (N shared, or
// N·Count) and end condition bc. The result keeps x and y (not copies).
func (f *Fitter[T]) Fit(ctx context.Context, x, y []T, bc Boundary) (*Curves[T], error) {
	n, count := f.n, f.count
	if len(y) != n*count {
		return nil, fmt.Errorf("%w: y has %d values, %d curves of %d knots need %d", ErrInput, len(y), count, n, n*count)
	}
	if len(x) != n && len(x) != n*count {
		return nil, fmt.Errorf("%w: x has %d knots, want %d (shared) or %d (one set per curve)", ErrInput, len(x), n, n*count)
	}
	cv := &Curves[T]{N: n, Count: count, Kind: bc.Kind, X: x, Y: y, M: make([]T, n*count)}
	switch bc.Kind {
	case KindNatural:
	case KindClamped:
		for _, s := range [][]float64{bc.Start, bc.End} {
			if len(s) != 1 && len(s) != count {
				return nil, fmt.Errorf("%w: clamped end derivatives: %d values for %d curves (want 1 or %d)", ErrInput, len(s), count, count)
			}
		}
	case KindPeriodic:
		if n < 3 {
			return nil, fmt.Errorf("%w: a periodic spline needs 3 knots at least, have %d", ErrInput, n)
		}
	default:
		return nil, fmt.Errorf("%w: unknown end condition %v", ErrInput, bc.Kind)
	}
	for k := range count {
		if err := checkCurve(cv, k); err != nil {
			return nil, err
		}
	}
	if bc.Kind == KindNatural && n == 2 {
		return cv, nil // a straight line: both moments are zero
	}
	if f.a == nil {
		f.a, f.b, f.c = make([]T, n*count), make([]T, n*count), make([]T, n*count)
	}
	shared := len(x) == n
	for k := range count {
		if shared && k > 0 {
			// Same knots, same matrix: copy curve 0's rows.
			copy(f.a[k*n:(k+1)*n], f.a[:n])
			copy(f.b[k*n:(k+1)*n], f.b[:n])
			copy(f.c[k*n:(k+1)*n], f.c[:n])
		} else {
			f.rows(cv.Knots(k), bc.Kind, f.a[k*n:(k+1)*n], f.b[k*n:(k+1)*n], f.c[k*n:(k+1)*n])
		}
		rhs(cv.Knots(k), y[k*n:(k+1)*n], bc, k, cv.M[k*n:(k+1)*n])
	}
	p, err := f.plan(bc.Kind)
	if err != nil {
		return nil, err
	}
	_, off := f.system(bc.Kind)
	m := cv.M[off:]
	if err := p.Solve(ctx, f.a[off:], f.b[off:], f.c[off:], m, m); err != nil {
		return nil, fmt.Errorf("spline: solving for the moments: %w", err)
	}
	if bc.Kind == KindPeriodic {
		for k := range count {
			cv.M[k*n+n-1] = cv.M[k*n]
		}
	}
	return cv, nil
}

// checkCurve checks that curve k's knots increase and, for a periodic
// curve, that its ends match.
func checkCurve[T tridiag.Float](cv *Curves[T], k int) error {
	x := cv.Knots(k)
	for i := 1; i < len(x); i++ {
		if !(x[i] > x[i-1]) || math.IsInf(float64(x[i]-x[i-1]), 0) {
			return fmt.Errorf("%w: curve %d: knots x[%d] = %v and x[%d] = %v do not increase", ErrInput, k, i-1, x[i-1], i, x[i])
		}
	}
	if cv.Kind == KindPeriodic {
		y := cv.Y[k*cv.N : (k+1)*cv.N]
		scale := 1.0
		for _, v := range y {
			scale = max(scale, math.Abs(float64(v)))
		}
		eps := 0x1p-52
		if _, ok := any(y[0]).(float32); ok {
			eps = 0x1p-23
		}
		if d := math.Abs(float64(y[len(y)-1] - y[0])); d > 64*eps*scale {
			return fmt.Errorf("%w: periodic curve %d: y[0] = %v and y[N−1] = %v differ", ErrInput, k, y[0], y[len(y)-1])
		}
	}
	return nil
}

// rows fills one curve's tridiagonal rows, one per knot (rows the kind does
// not solve for are left as they are).
func (f *Fitter[T]) rows(x []T, kind Kind, a, b, c []T) {
	n := len(x)
	for i := 1; i < n-1; i++ {
		hl, hr := x[i]-x[i-1], x[i+1]-x[i]
		a[i], b[i], c[i] = hl, 2*(hl+hr), hr
	}
	switch kind {
	case KindNatural:
		a[1], c[n-2] = 0, 0 // unused: M_0 = M_{N−1} = 0
	case KindClamped:
		h0, hn := x[1]-x[0], x[n-1]-x[n-2]
		a[0], b[0], c[0] = 0, 2*h0, h0
		a[n-1], b[n-1], c[n-1] = hn, 2*hn, 0
	case KindPeriodic:
		// Row 0 wraps around: its left neighbour is M_{N−2} (the corner
		// a[0]), and row N−2's right neighbour is M_0 (the corner c[N−2]).
		hl, hr := x[n-1]-x[n-2], x[1]-x[0]
		a[0], b[0], c[0] = hl, 2*(hl+hr), hr
	}
}

// rhs writes one curve's right-hand sides 6(Δ_i − Δ_{i−1}) into d, one per
// knot, with the end rows of the kind.
func rhs[T tridiag.Float](x, y []T, bc Boundary, k int, d []T) {
	n := len(x)
	slope := func(i int) T { return (y[i+1] - y[i]) / (x[i+1] - x[i]) }
	for i := 1; i < n-1; i++ {
		d[i] = 6 * (slope(i) - slope(i-1))
	}
	switch bc.Kind {
	case KindClamped:
		d[0] = 6 * (slope(0) - T(pick(bc.Start, k)))
		d[n-1] = 6 * (T(pick(bc.End, k)) - slope(n-2))
	case KindPeriodic:
		d[0] = 6 * (slope(0) - slope(n-2))
	}
}

func pick(v []float64, k int) float64 {
	if len(v) == 1 {
		return v[0]
	}
	return v[k]
}

// FitBatch fits count = len(y)/n curves of n knots each on the CPU: y holds
// the values (curve k at y[k·n : k·n+n]) and x the knots, n shared by every
// curve or n·count. Use a Fitter to fit many batches, or on a GPU.
func FitBatch[T tridiag.Float](n int, x, y []T, bc Boundary) (*Curves[T], error) {
	if n < 2 || len(y) < n || len(y)%n != 0 {
		return nil, fmt.Errorf("%w: %d values are not whole curves of %d ≥ 2 knots", ErrInput, len(y), n)
	}
	f, err := NewFitter[T](nil, n, len(y)/n, tridiag.Options{})
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Fit(context.Background(), x, y, bc)
}
