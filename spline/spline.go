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
// fitter for periodic fits). n must be at least 2.
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

// system returns the shape of kind's batch. The rows of curve k are its
// moments, read in
// place with a stride of one and N between curves: 0…N−2 (periodic, a
// cyclic system), 0…N−1 otherwise. A natural curve's end rows say
// M_0 = 0 and M_{N−1} = 0: solving them with the interior rows keeps the
// batch contiguous (no copies on the CPU) and changes no bit of the
// interior moments, since Thomas's elimination of a row (1, 0 | 0) leaves
// its neighbour as it was.
func (f *Fitter[T]) system(kind Kind) tridiag.Shape {
	l := tridiag.Strided(1, f.n)
	if kind == KindPeriodic {
		return tridiag.Shape{N: f.n - 1, G: f.count, Layout: l}
	}
	return tridiag.Shape{N: f.n, G: f.count, Layout: l}
}

func (f *Fitter[T]) plan(kind Kind) (*tridiag.Plan[T], error) {
	if p, ok := f.plans[kind]; ok {
		return p, nil
	}
	shape := f.system(kind)
	opts := f.opts
	opts.Cyclic = kind == KindPeriodic
	// Fit has checked the knots, the values and the right-hand sides.
	opts.SkipFiniteCheck = true
	p, err := tridiag.NewPlan[T](f.dev, shape, opts)
	if err != nil {
		return nil, err
	}
	f.plans[kind] = p
	return p, nil
}

// Fit fits the curves with values y (N·Count) at knots x (N shared, or
// N·Count) and end condition bc. The result keeps x and y (not copies).
//
// Bad input is refused with an error wrapping ErrInput that names the
// curve and the index into x or y: a NaN or infinite value, knot or end
// derivative; knots that do not increase strictly; knots spanning more
// than half the largest finite value of T (the diagonal of the moment
// system is up to twice the span); a periodic curve whose ends differ;
// second derivatives that overflow although the data are finite.
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
	case KindNatural, KindPeriodic:
	case KindClamped:
		for _, s := range []struct {
			name string
			v    []float64
		}{{"Start", bc.Start}, {"End", bc.End}} {
			if len(s.v) != 1 && len(s.v) != count {
				return nil, fmt.Errorf("%w: clamped end derivatives: %d values in %s for %d curves (want 1 or %d)", ErrInput, len(s.v), s.name, count, count)
			}
			for k, v := range s.v {
				if t := T(v); t-t != 0 {
					who := "shared by every curve"
					if len(s.v) == count {
						who = fmt.Sprintf("of curve %d", k)
					}
					return nil, fmt.Errorf("%w: clamped end derivative %s[%d] = %v, %s, is not finite in %s", ErrInput, s.name, k, v, who, typeName[T]())
				}
			}
		}
	default:
		return nil, fmt.Errorf("%w: unknown end condition %v", ErrInput, bc.Kind)
	}
	if err := checkData(cv); err != nil {
		return nil, err
	}
	if n == 2 && bc.Kind != KindClamped {
		// Natural: a straight line; periodic: a constant (y[1] = y[0]).
		// Both moments are zero.
		return cv, nil
	}
	shared := len(x) == n
	if shared && f.cpuWorkers() > 0 && (f.opts.Algorithm == tridiag.Auto && f.opts.Pivoting != tridiag.PivotAlways || f.opts.Algorithm == tridiag.Thomas) &&
		!f.opts.Check && f.system(bc.Kind).N >= 3 {
		if done, err := f.fitShared(ctx, cv, bc); done {
			if err != nil {
				return nil, err
			}
			return cv, nil
		}
	}
	if f.a == nil {
		f.a, f.b, f.c = make([]T, n*count), make([]T, n*count), make([]T, n*count)
	}
	var scaled []scaledCurve // curves whose right-hand sides were scaled down
	for k := range count {
		if shared && k > 0 {
			// Same knots, same matrix: copy curve 0's rows.
			copy(f.a[k*n:(k+1)*n], f.a[:n])
			copy(f.b[k*n:(k+1)*n], f.b[:n])
			copy(f.c[k*n:(k+1)*n], f.c[:n])
		} else {
			f.rows(cv.Knots(k), bc.Kind, f.a[k*n:(k+1)*n], f.b[k*n:(k+1)*n], f.c[k*n:(k+1)*n])
		}
		xk, yk, mk := cv.Knots(k), y[k*n:(k+1)*n], cv.M[k*n:(k+1)*n]
		if bad := rhs(xk, yk, bc, k, mk, 1); bad >= 0 {
			// A slope or a difference of slopes overflows: solve for the
			// moments of y·2^−e, with 2^e the curve's largest value or end
			// slope, and scale them back after the solve.
			e := scaleExponent(yk, bc, k)
			if e <= 0 {
				return nil, slopeError(cv, k, bad)
			}
			if bad = rhs(xk, yk, bc, k, mk, T(math.Ldexp(1, -e))); bad >= 0 {
				return nil, slopeError(cv, k, bad)
			}
			scaled = append(scaled, scaledCurve{k, e})
		}
	}
	p, err := f.plan(bc.Kind)
	if err != nil {
		return nil, err
	}
	if err := p.Solve(ctx, f.a, f.b, f.c, cv.M, cv.M); err != nil {
		var be *tridiag.BatchError
		if errors.As(err, &be) && len(be.Failed) > 0 {
			// The inputs are finite, so a failed system is one whose
			// moments overflow.
			f := be.Failed[0]
			return nil, fmt.Errorf("%w: curve %d: the second derivatives at its knots overflow: the values change too fast for the knot spacing (%d curve(s) failed)", ErrInput, f.System, len(be.Failed))
		}
		return nil, fmt.Errorf("spline: solving for the moments: %w", err)
	}
	if bc.Kind == KindPeriodic {
		for k := range count {
			cv.M[k*n+n-1] = cv.M[k*n]
		}
	}
	for _, s := range scaled {
		mk := cv.M[s.k*n : (s.k+1)*n]
		for i, v := range mk {
			mk[i] = T(math.Ldexp(float64(v), s.e))
			if math.IsInf(float64(mk[i]), 0) {
				return nil, fmt.Errorf("%w: curve %d: the second derivative at knot %d (x = %v) overflows: the values change too fast for the knot spacing", ErrInput, s.k, i, cv.Knots(s.k)[i])
			}
		}
	}
	return cv, nil
}

// scaledCurve is a curve whose moments were solved for with its values
// scaled by 2^−e.
type scaledCurve struct{ k, e int }

// scaleExponent returns the binary exponent of curve k's largest value or
// clamped end derivative.
func scaleExponent[T tridiag.Float](y []T, bc Boundary, k int) int {
	big := 0.0
	for _, v := range y {
		big = max(big, math.Abs(float64(v)))
	}
	if bc.Kind == KindClamped {
		big = max(big, math.Abs(pick(bc.Start, k)), math.Abs(pick(bc.End, k)))
	}
	_, e := math.Frexp(big)
	return e
}

// slopeError reports a curve whose slopes overflow in row i of its
// right-hand side (the slopes between knots i−1, i and i+1).
func slopeError[T tridiag.Float](cv *Curves[T], k, i int) error {
	x := cv.Knots(k)
	lo, hi := max(i-1, 0), min(i+1, cv.N-1)
	return fmt.Errorf("%w: curve %d: the slopes between knots %d and %d (x = %v … %v) overflow: the knots are too close for the values", ErrInput, k, lo, hi, x[lo], x[hi])
}

// checkData checks the knots (finite, strictly increasing, a span whose
// double is finite) and the values (finite and, for a periodic curve,
// equal ends). The errors name the curve and the index into x or y.
func checkData[T tridiag.Float](cv *Curves[T]) error {
	n := cv.N
	if len(cv.X) == n {
		if err := checkKnots(cv.X, "the shared knots", 0); err != nil {
			return err
		}
	}
	for k := range cv.Count {
		if len(cv.X) != n {
			if err := checkKnots(cv.Knots(k), fmt.Sprintf("curve %d", k), k*n); err != nil {
				return err
			}
		}
		y := cv.Y[k*n : (k+1)*n]
		for i, v := range y {
			if v-v != 0 { // NaN or ±Inf
				return fmt.Errorf("%w: curve %d: value %d, y[%d] = %v, is not finite", ErrInput, k, i, k*n+i, v)
			}
		}
		if cv.Kind == KindPeriodic {
			scale := 1.0
			for _, v := range y {
				scale = max(scale, math.Abs(float64(v)))
			}
			if d := math.Abs(float64(y[n-1]) - float64(y[0])); d > 64*epsilon[T]()*scale {
				return fmt.Errorf("%w: periodic curve %d: y[%d] = %v and y[%d] = %v (its first and last values) differ", ErrInput, k, k*n, y[0], k*n+n-1, y[n-1])
			}
		}
	}
	return nil
}

// checkKnots checks one set of knots; off is the index of x[0] in the
// caller's array.
func checkKnots[T tridiag.Float](x []T, who string, off int) error {
	for i, v := range x {
		if v-v != 0 {
			return fmt.Errorf("%w: %s: knot %d, x[%d] = %v, is not finite", ErrInput, who, i, off+i, v)
		}
		if i > 0 && !(v > x[i-1]) {
			return fmt.Errorf("%w: %s: knots %d and %d (x[%d] = %v, x[%d] = %v) do not increase", ErrInput, who, i-1, i, off+i-1, x[i-1], off+i, v)
		}
	}
	n := len(x)
	if span := x[n-1] - x[0]; !(span <= maxFloat[T]()/2) {
		return fmt.Errorf("%w: %s: knots 0 and %d (x[%d] = %v, x[%d] = %v) span more than %.3g, half the largest %s", ErrInput, who, n-1, off, x[0], off+n-1, x[n-1], float64(maxFloat[T]()/2), typeName[T]())
	}
	return nil
}

func maxFloat[T tridiag.Float]() T {
	if isFloat32[T]() {
		return T(float32(math.MaxFloat32))
	}
	m := math.MaxFloat64
	return T(m)
}

func epsilon[T tridiag.Float]() float64 {
	if isFloat32[T]() {
		return 0x1p-23
	}
	return 0x1p-52
}

func isFloat32[T tridiag.Float]() bool {
	_, ok := any(T(0)).(float32)
	return ok
}

func typeName[T tridiag.Float]() string {
	if isFloat32[T]() {
		return "float32"
	}
	return "float64"
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
		// M_0 = M_{N−1} = 0, uncoupled from the interior.
		a[0], b[0], c[0] = 0, 1, 0
		a[n-1], b[n-1], c[n-1] = 0, 1, 0
		a[1], c[n-2] = 0, 0
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

// rhs writes one curve's right-hand sides 6(Δ_i − Δ_{i−1}) of the values
// y·s into d, one per knot, with the end rows of the kind. It returns −1,
// or the first row that is not finite.
func rhs[T tridiag.Float](x, y []T, bc Boundary, k int, d []T, s T) int {
	n := len(x)
	slope := func(i int) T { return (y[i+1]*s - y[i]*s) / (x[i+1] - x[i]) }
	prev := slope(0)
	for i := 1; i < n-1; i++ {
		next := slope(i)
		d[i] = 6 * (next - prev)
		prev = next
	}
	lo, hi := 1, n-2 // the rows the kind solves for
	switch bc.Kind {
	case KindNatural:
		d[0], d[n-1] = 0, 0
	case KindClamped:
		d[0] = 6 * (slope(0) - T(pick(bc.Start, k))*s)
		d[n-1] = 6 * (T(pick(bc.End, k))*s - slope(n-2))
		lo, hi = 0, n-1
	case KindPeriodic:
		d[0] = 6 * (slope(0) - slope(n-2))
		lo = 0
	}
	for i := lo; i <= hi; i++ {
		if d[i]-d[i] != 0 {
			return i
		}
	}
	return -1
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
