package spline

import (
	"context"
	"fmt"
	"math"
	"sync"

	"github.com/bandsolve/bandsolve/tridiag"
)

// factored is the moment matrix of a fit whose curves share their knots,
// factored once for all of them on the CPU: Thomas's pivots and
// multipliers and, for a periodic fit, the Sherman–Morrison correction.
// Its arithmetic is tridiag's Thomas and cyclic solvers' operation for
// operation, so that a curve comes out bit for bit as tridiag would solve
// it alone.
type factored[T tridiag.Float] struct {
	a, piv, cp []T
	cyclic     bool
	ag, den    T   // α/γ and 1 + z_0 + (α/γ)·z_{n−1}
	z          []T // solution for the correction vector (γ, 0, …, 0, β)
}

// factor factors the system with rows a, b, c (overwritten), or returns
// nil where a pivot or the Sherman–Morrison denominator is zero or not
// finite (the caller then leaves the batch to tridiag, which reports it).
func factor[T tridiag.Float](a, b, c []T, cyclic bool) *factored[T] {
	n := len(b)
	f := &factored[T]{a: a, piv: make([]T, n), cp: make([]T, n), cyclic: cyclic}
	var alpha, beta, gamma T
	if cyclic {
		alpha, beta = a[0], c[n-1]
		gamma = -b[0]
		if gamma == 0 {
			gamma = -1
		}
		a[0], c[n-1] = 0, 0
		b[0] -= gamma
		b[n-1] -= T(alpha/gamma) * beta
	}
	bad := func(v T) bool { return v == 0 || v-v != 0 }
	f.piv[0] = b[0]
	if bad(f.piv[0]) {
		return nil
	}
	f.cp[0] = c[0] / f.piv[0]
	for i := 1; i < n; i++ {
		f.piv[i] = b[i] - T(a[i]*f.cp[i-1])
		if bad(f.piv[i]) {
			return nil
		}
		if i < n-1 {
			f.cp[i] = c[i] / f.piv[i]
		}
	}
	if cyclic {
		f.z = make([]T, n)
		f.z[0], f.z[n-1] = gamma, beta
		f.cyclic = false
		f.solve(f.z)
		f.cyclic = true
		f.ag = alpha / gamma
		f.den = 1 + f.z[0] + T(f.ag*f.z[n-1])
		if bad(f.den) {
			return nil
		}
	}
	return f
}

// solve solves for the right-hand side d in place and reports whether the
// solution is finite.
func (f *factored[T]) solve(d []T) bool {
	n := len(f.piv)
	a, piv, cp := f.a[:n], f.piv, f.cp[:n]
	d = d[:n]
	d[0] /= piv[0]
	for i := 1; i < n; i++ {
		d[i] = (d[i] - T(a[i]*d[i-1])) / piv[i]
	}
	for i := n - 2; i >= 0; i-- {
		d[i] -= T(cp[i] * d[i+1])
	}
	if f.cyclic {
		z := f.z[:n]
		vy := d[0] + T(f.ag*d[n-1])
		s := vy / f.den
		for i := range d {
			d[i] -= T(s * z[i])
		}
	}
	ok := true
	for _, v := range d {
		if v-v != 0 {
			ok = false
		}
	}
	return ok
}

// cpuWorkers returns the workers of the fitter's device when it is the
// CPU, else 0.
func (f *Fitter[T]) cpuWorkers() int {
	switch d := f.dev.(type) {
	case nil:
		return tridiag.DefaultCPU().Workers()
	case *tridiag.CPU:
		if d == nil {
			return tridiag.DefaultCPU().Workers()
		}
		return d.Workers()
	}
	return 0
}

// fitShared fits curves that share their knots on the CPU with one
// factorization of the moment matrix: each curve's right-hand side,
// forward and backward substitution (and periodic correction) run
// back to back on its own row of M, in parallel over the curves. It
// returns false, having done nothing, where the matrix cannot be factored
// without pivoting.
func (f *Fitter[T]) fitShared(ctx context.Context, cv *Curves[T], bc Boundary) (bool, error) {
	n := f.n
	ns := f.system(bc.Kind).N
	a, b, c := make([]T, n), make([]T, n), make([]T, n)
	f.rows(cv.X, bc.Kind, a, b, c)
	fac := factor(a[:ns], b[:ns], c[:ns], bc.Kind == KindPeriodic)
	if fac == nil {
		return false, nil
	}
	var mu sync.Mutex
	firstK, firstErr := cv.Count, error(nil)
	fail := func(k int, err error) {
		mu.Lock()
		defer mu.Unlock()
		if k < firstK {
			firstK, firstErr = k, err
		}
	}
	err := parallel(ctx, f.cpuWorkers(), cv.Count, max(1, 16384/n), func(lo, hi int) {
		for k := lo; k < hi; k++ {
			if err := fitOne(fac, cv, bc, k, ns); err != nil {
				fail(k, err)
			}
		}
	})
	if err != nil {
		return true, err
	}
	return true, firstErr
}

// fitOne fits curve k with the shared factorization.
func fitOne[T tridiag.Float](fac *factored[T], cv *Curves[T], bc Boundary, k, ns int) error {
	n := cv.N
	x, y, m := cv.X, cv.Y[k*n:(k+1)*n], cv.M[k*n:(k+1)*n]
	e := 0
	if bad := rhs(x, y, bc, k, m, 1); bad >= 0 {
		// As in Fit: solve for y·2^−e and scale back.
		if e = scaleExponent(y, bc, k); e <= 0 {
			return slopeError(cv, k, bad)
		}
		if bad = rhs(x, y, bc, k, m, T(math.Ldexp(1, -e))); bad >= 0 {
			return slopeError(cv, k, bad)
		}
	}
	if !fac.solve(m[:ns]) {
		return fmt.Errorf("%w: curve %d: the second derivatives at its knots overflow: the values change too fast for the knot spacing", ErrInput, k)
	}
	if bc.Kind == KindPeriodic {
		m[n-1] = m[0]
	}
	if e != 0 {
		for i, v := range m {
			m[i] = T(math.Ldexp(float64(v), e))
			if math.IsInf(float64(m[i]), 0) {
				return fmt.Errorf("%w: curve %d: the second derivative at knot %d (x = %v) overflows: the values change too fast for the knot spacing", ErrInput, k, i, x[i])
			}
		}
	}
	return nil
}
