package tridiag

import (
	"math"
	"math/cmplx"

	"github.com/bandsolve/bandsolve/internal/condest"
	"github.com/bandsolve/bandsolve/tridiag/internal/tri"
)

// complexChecker is one goroutine's complex128 scratch for checking
// complex systems of n rows: the complex form of checker. Norms are
// those of the moduli: ‖v‖∞ = max |v[i]|, ‖A‖∞ = max over rows of
// |a[i]| + |b[i]| + |c[i]|.
type complexChecker struct {
	n               int
	a, b, c, d, x   []complex128
	dl, dd, du, du2 []complex128
	swap            []bool
	u, v, z, zt     []complex128
}

func newComplexChecker(n int) *complexChecker {
	buf := make([]complex128, 13*n)
	k := &complexChecker{n: n, swap: make([]bool, n)}
	for i, p := range []*[]complex128{&k.a, &k.b, &k.c, &k.d, &k.x, &k.dl, &k.dd, &k.du, &k.du2, &k.u, &k.v, &k.z, &k.zt} {
		*p = buf[i*n : (i+1)*n : (i+1)*n]
	}
	return k
}

// gatherComplex copies system g of bt into k, in complex128.
func gatherComplex[T Complex](k *complexChecker, spec Spec, bt Batch[T], g int) {
	l := spec.Layout
	for i := 0; i < k.n; i++ {
		j := l.Index(i, g)
		if bt.Constant {
			k.a[i], k.b[i], k.c[i] = complex128(bt.ConstA), complex128(bt.ConstB), complex128(bt.ConstC)
		} else {
			k.a[i], k.b[i], k.c[i] = complex128(bt.A[j]), complex128(bt.B[j]), complex128(bt.C[j])
		}
		k.d[i], k.x[i] = complex128(bt.D[j]), complex128(bt.X[j])
	}
}

// check measures the backward error and κ̂ of the system in k, as
// checkSystem does for a real one.
func (k *complexChecker) check(cyclic bool) Status {
	cyclic = foldCorners(k.a, k.b, k.c, k.n, cyclic)
	return checkStatus(backwardErrorComplex(k.a, k.b, k.c, k.d, k.x, cyclic), k.cond, cyclic)
}

// backwardErrorComplex is backwardError for a complex system, with the
// moduli of the entries.
func backwardErrorComplex(a, b, c, d, x []complex128, cyclic bool) float64 {
	n := len(b)
	var rn, an, xn, dn float64
	for i := 0; i < n; i++ {
		xi := x[i]
		if !tri.FiniteC(xi) {
			return math.Inf(1)
		}
		r := d[i] - b[i]*xi
		if i > 0 {
			r -= a[i] * x[i-1]
		} else if cyclic {
			r -= a[i] * x[n-1]
		}
		if i < n-1 {
			r -= c[i] * x[i+1]
		} else if cyclic {
			r -= c[i] * x[0]
		}
		rn = max(rn, cmplx.Abs(r))
		an = max(an, cmplx.Abs(a[i])+cmplx.Abs(b[i])+cmplx.Abs(c[i]))
		xn = max(xn, cmplx.Abs(xi))
		dn = max(dn, cmplx.Abs(d[i]))
	}
	return NormwiseBackwardError(rn, an, xn, dn)
}

// cond returns κ̂∞ of the system in k, and whether A was found singular,
// as checker.cond does, with the complex estimator and A⁻ᴴ for A⁻ᵀ.
func (k *complexChecker) cond(cyclic bool) (float64, bool) {
	n := k.n
	var an float64
	for i := range k.b {
		an = max(an, cmplx.Abs(k.a[i])+cmplx.Abs(k.b[i])+cmplx.Abs(k.c[i]))
	}
	if an == 0 {
		return math.Inf(1), true
	}
	if math.IsNaN(an) || math.IsInf(an, 0) {
		return math.Inf(1), false
	}
	if !cyclic {
		if !k.factor(0, 0) {
			return math.Inf(1), true
		}
		solve := func(w []complex128) { k.solveT0(w, false) }
		solveH := func(w []complex128) { k.solveT0(w, true) }
		return an * condest.InvNormInfC(n, solve, solveH), false
	}
	// A = T + u·vᵀ (see solveCyclic), so Aᴴ = Tᴴ + v̄·uᴴ.
	alpha, beta := k.a[0], k.c[n-1]
	for _, gamma := range []complex128{-k.b[0], complex(-an, 0), k.b[0] + complex(an, 0), complex(0.5*an, 0)} {
		if gamma == 0 {
			continue
		}
		if !k.factor(gamma, alpha/gamma*beta) {
			continue
		}
		u, v, z, zt := k.u, k.v, k.z, k.zt
		clear(u)
		clear(v)
		u[0], u[n-1] = gamma, beta
		v[0], v[n-1] = 1, alpha/gamma
		copy(z, u)
		k.solveT0(z, false) // z = T⁻¹u
		for i := range zt {
			zt[i] = cmplx.Conj(v[i])
		}
		k.solveT0(zt, true) // zt = T⁻ᴴv̄
		den := 1 + dot(v, z)
		denH := 1 + dotH(u, zt)
		if den == 0 || !tri.FiniteC(den) || denH == 0 || !tri.FiniteC(denH) {
			return math.Inf(1), den == 0 || denH == 0
		}
		solveA := func(w []complex128) {
			k.solveT0(w, false)
			subScaled(w, z, dot(v, w)/den)
		}
		solveAH := func(w []complex128) {
			k.solveT0(w, true)
			subScaled(w, zt, dotH(u, w)/denH)
		}
		return an * condest.InvNormInfC(n, solveA, solveAH), false
	}
	return math.Inf(1), true
}

// dotH is Σ conj(x[i])·y[i].
func dotH(x, y []complex128) complex128 {
	var s complex128
	for i := range x {
		s += cmplx.Conj(x[i]) * y[i]
	}
	return s
}

// factor is checker.factor for complex T: LU with partial pivoting by
// Cabs1 (zgttrf) of the tridiagonal part, with gamma subtracted from
// b[0] and delta from b[n−1]; false when a pivot is exactly zero.
func (k *complexChecker) factor(gamma, delta complex128) bool {
	return gttrf(k.a[:k.n], k.b[:k.n], k.c[:k.n], gamma, delta, k.dl, k.dd, k.du, k.du2, k.swap, tri.Cabs1[complex128])
}

// solveT0 applies the inverse of the factored T (zgtts2), or of its
// conjugate transpose when herm.
func (k *complexChecker) solveT0(w []complex128, herm bool) {
	n := k.n
	dl, dd, du, du2 := k.dl, k.dd, k.du, k.du2
	if !herm {
		for i := 0; i < n-1; i++ {
			if !k.swap[i] {
				w[i+1] -= dl[i] * w[i]
			} else {
				t := w[i]
				w[i] = w[i+1]
				w[i+1] = t - dl[i]*w[i]
			}
		}
		w[n-1] /= dd[n-1]
		if n > 1 {
			w[n-2] = (w[n-2] - du[n-2]*w[n-1]) / dd[n-2]
		}
		for i := n - 3; i >= 0; i-- {
			w[i] = (w[i] - du[i]*w[i+1] - du2[i]*w[i+2]) / dd[i]
		}
		return
	}
	cj := cmplx.Conj
	w[0] /= cj(dd[0])
	if n > 1 {
		w[1] = (w[1] - cj(du[0])*w[0]) / cj(dd[1])
	}
	for i := 2; i < n; i++ {
		w[i] = (w[i] - cj(du[i-1])*w[i-1] - cj(du2[i-2])*w[i-2]) / cj(dd[i])
	}
	for i := n - 2; i >= 0; i-- {
		if !k.swap[i] {
			w[i] -= cj(dl[i]) * w[i+1]
		} else {
			t := w[i+1]
			w[i+1] = w[i] - cj(dl[i])*t
			w[i] = t
		}
	}
}
