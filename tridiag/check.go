package tridiag

import (
	"errors"
	"math"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/bandsolve/bandsolve/internal/condest"
)

// Check measures the accuracy of the solutions x of the batch with
// coefficients a, b, c and right-hand sides d (the plan's shape, layout
// and cyclic setting), after a solve with this plan or any other: one
// Status per system, and a *BatchError listing the systems that fail the
// check (nil when none does). d must still hold the right-hand sides, so
// an in-place solve (x = d) needs a copy of d, or Options.Check, which
// keeps one. Check does not take the plan's lock: it reads the plan's
// settings only, and runs on the CPU whatever the plan's device. For an
// LDLT plan the matrix is the symmetric one LDLT solves: a is ignored
// (and may be nil) and taken to be c shifted, a[i] = c[i−1].
//
// For every system, in float64 whatever T:
//
//   - the normwise backward error η = ‖d − A·x‖∞ / (‖A‖∞·‖x‖∞ + ‖d‖∞),
//     +Inf when x is not finite;
//   - κ̂ = ‖A‖∞·est(‖A⁻¹‖∞), est the Hager–Higham estimate that LAPACK's
//     gtcon computes (package internal/condest): LU with partial
//     pivoting of A (gttrf) and at most eleven solves with A and Aᵀ
//     (gttrs), O(N) in all. For a cyclic system, A = T + u·vᵀ as in the
//     cyclic solve, and the solves with A and Aᵀ go through T's factors
//     by the Sherman–Morrison formula; an exactly zero Sherman–Morrison
//     denominator (a singular periodic matrix) gives κ̂ = +Inf.
//
// The verdict (Status.Flags): BackwardErrorTooLarge when η exceeds
// Options.Tol (0: DefaultTol[T](), 10³·ε), NonFinite when x is not
// finite, IllConditioned when κ̂·ε ≥ 1/2 (ε = Epsilon[T](): no digit of
// x can be trusted), and Singular when the pivoting factorization met an
// all-zero column (κ̂ = +Inf).
func (p *Plan[T]) Check(a, b, c, d, x []T) ([]Status, error) {
	bt := Batch[T]{A: a, B: b, C: c, D: d, X: x}
	if err := p.check(bt); err != nil {
		return nil, err
	}
	return checkBatch(p.spec, p.tol(), bt)
}

// CheckConst is Check for a batch solved by SolveConst: every row of
// every system has the coefficients a, b and c.
func (p *Plan[T]) CheckConst(a, b, c T, d, x []T) ([]Status, error) {
	bt := Batch[T]{ConstA: a, ConstB: b, ConstC: c, Constant: true, D: d, X: x}
	if err := p.check(bt); err != nil {
		return nil, err
	}
	return checkBatch(p.spec, p.tol(), bt)
}

// tol is the plan's backward error tolerance.
func (p *Plan[T]) tol() float64 { return specTol[T](p.spec) }

// specTol is the backward error tolerance of spec in precision T.
func specTol[T Scalar](spec Spec) float64 {
	if spec.Tol > 0 {
		return spec.Tol
	}
	return DefaultTol[T]()
}

// checkBatch checks every system of bt (lengths already validated) on
// GOMAXPROCS goroutines against the tolerance tol: in float64 for real
// T, in complex128 for complex T (checkComplex).
func checkBatch[T Scalar](spec Spec, tol float64, bt Batch[T]) ([]Status, error) {
	n := spec.N
	switch bt := any(bt).(type) {
	case Batch[float32]:
		return checkSystems(spec, tol, Epsilon[float32](), realCheck(spec, bt))
	case Batch[float64]:
		return checkSystems(spec, tol, Epsilon[float64](), realCheck(spec, bt))
	case Batch[complex64]:
		return checkSystems(spec, tol, Epsilon[complex64](), func() func(g int) Status {
			ck := newComplexChecker(n)
			return func(g int) Status { gatherComplex(ck, spec, bt, g); return ck.check(spec.Cyclic) }
		})
	case Batch[complex128]:
		return checkSystems(spec, tol, Epsilon[complex128](), func() func(g int) Status {
			ck := newComplexChecker(n)
			return func(g int) Status { gatherComplex(ck, spec, bt, g); return ck.check(spec.Cyclic) }
		})
	}
	panic("tridiag: unknown element type")
}

// realCheck returns the maker of one goroutine's measure of a real
// system of bt.
func realCheck[T Float](spec Spec, bt Batch[T]) func() func(g int) Status {
	return func() func(g int) Status {
		ck := newChecker(spec.N)
		return func(g int) Status {
			gather(ck, spec, bt, g)
			return checkSystem(ck, spec.Cyclic)
		}
	}
}

// checkSystems measures every system g of the batch of spec with the
// functions newMeasure makes, one a goroutine, judges each against tol
// and eps, and lists the failed systems in a *BatchError.
func checkSystems(spec Spec, tol, eps float64, newMeasure func() func(g int) Status) ([]Status, error) {
	G := spec.G
	st := make([]Status, G)
	workers := max(1, min(runtime.GOMAXPROCS(0), G))
	chunk := max(1, min(256, G/(4*workers)))
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			measure := newMeasure()
			for {
				g0 := int(next.Add(int64(chunk))) - chunk
				if g0 >= G {
					return
				}
				for g := g0; g < min(G, g0+chunk); g++ {
					st[g] = measure(g)
					st[g].Judge(tol, eps)
				}
			}
		}()
	}
	wg.Wait()
	var failed []SystemError
	for g, s := range st {
		if s.Failed() {
			failed = append(failed, SystemError{System: g, Row: -1, Err: s.Err(tol), Status: s})
		}
	}
	if len(failed) > 0 {
		return st, &BatchError{G: G, Failed: failed}
	}
	return st, nil
}

// mergeCheck combines a solve's failures (be, possibly nil) with the
// check's: the systems that broke down keep their error and get the
// check's measures and the flags of their error; the systems that only
// fail the check are added.
func mergeCheck(G int, be *BatchError, st []Status, checkErr error) error {
	var failed []SystemError
	seen := map[int]bool{}
	if be != nil {
		for _, f := range be.Failed {
			f.Status = st[f.System]
			f.Status.Flags |= FlagsOf(f.Err)
			failed = append(failed, f)
			seen[f.System] = true
		}
	}
	var ce *BatchError
	if errors.As(checkErr, &ce) {
		for _, f := range ce.Failed {
			if !seen[f.System] {
				failed = append(failed, f)
			}
		}
	}
	if len(failed) == 0 {
		return nil
	}
	sort.Slice(failed, func(i, j int) bool { return failed[i].System < failed[j].System })
	return &BatchError{G: G, Failed: failed}
}

// checker is one goroutine's float64 scratch for checking systems of n
// rows.
type checker struct {
	n             int
	a, b, c, d, x []float64
	// LU with partial pivoting of T (gttrf): multipliers dl, the upper
	// factor's diagonals dd, du, du2, and swap[i] when rows i and i+1
	// were interchanged at step i.
	dl, dd, du, du2 []float64
	swap            []bool
	// Sherman–Morrison: u, v and z = T⁻¹u, zt = T⁻ᵀv.
	u, v, z, zt []float64
}

func newChecker(n int) *checker {
	buf := make([]float64, 13*n)
	k := &checker{n: n, swap: make([]bool, n)}
	for i, p := range []*[]float64{&k.a, &k.b, &k.c, &k.d, &k.x, &k.dl, &k.dd, &k.du, &k.du2, &k.u, &k.v, &k.z, &k.zt} {
		*p = buf[i*n : (i+1)*n : (i+1)*n]
	}
	return k
}

// gather copies system g of bt into k, in float64. For LDLT the
// sub-diagonal is the super-diagonal shifted (symmetrize), as the solve
// reads it.
func gather[T Float](k *checker, spec Spec, bt Batch[T], g int) {
	l := spec.Layout
	spd := spec.Algorithm == LDLT
	for i := 0; i < k.n; i++ {
		j := l.Index(i, g)
		switch {
		case bt.Constant:
			k.a[i], k.b[i], k.c[i] = float64(bt.ConstA), float64(bt.ConstB), float64(bt.ConstC)
		case spd:
			k.b[i], k.c[i] = float64(bt.B[j]), float64(bt.C[j])
		default:
			k.a[i], k.b[i], k.c[i] = float64(bt.A[j]), float64(bt.B[j]), float64(bt.C[j])
		}
		k.d[i], k.x[i] = float64(bt.D[j]), float64(bt.X[j])
	}
	if spd {
		symmetrize(k.a, k.c)
	}
}

// checkSystem measures the backward error and κ̂ of the system in k.
func checkSystem(k *checker, cyclic bool) Status {
	cyclic = foldCorners(k.a, k.b, k.c, k.n, cyclic)
	return checkStatus(backwardError(k.a, k.b, k.c, k.d, k.x, cyclic), k.cond, cyclic)
}

// foldCorners prepares the n-row system (a, b, c) for the check: the
// corners of a periodic system of one or two rows fold onto the diagonal
// or the off-diagonals, as the cyclic solve does, and a system that is
// not periodic (any more) gets a[0] = c[n−1] = 0. It returns whether the
// system is still periodic.
func foldCorners[E float64 | complex128](a, b, c []E, n int, cyclic bool) bool {
	if cyclic && n <= 2 {
		if n == 1 {
			b[0] += a[0] + c[0]
		} else {
			c[0] += a[0]
			a[1] += c[1]
		}
		cyclic = false
	}
	if !cyclic {
		a[0], c[n-1] = 0, 0
	}
	return cyclic
}

// checkStatus is the Status of a system with backward error be and the
// condition estimate of cond.
func checkStatus(be float64, cond func(cyclic bool) (float64, bool), cyclic bool) Status {
	var s Status
	s.BackwardError = be
	if math.IsInf(be, 0) || math.IsNaN(be) {
		s.Flags |= NonFinite
	}
	var singular bool
	s.Cond, singular = cond(cyclic)
	if singular {
		s.Flags |= Singular
	}
	return s
}

// backwardError is ‖d − A·x‖∞ / (‖A‖∞·‖x‖∞ + ‖d‖∞) for the system with
// rows a[i]·x[i−1] + b[i]·x[i] + c[i]·x[i+1] (indices modulo n when
// cyclic; a[0] and c[n−1] are zero otherwise).
func backwardError(a, b, c, d, x []float64, cyclic bool) float64 {
	n := len(b)
	var rn, an, xn, dn float64
	for i := 0; i < n; i++ {
		xi := x[i]
		if math.IsNaN(xi) || math.IsInf(xi, 0) {
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
		rn = max(rn, math.Abs(r))
		an = max(an, math.Abs(a[i])+math.Abs(b[i])+math.Abs(c[i]))
		xn = max(xn, math.Abs(xi))
		dn = max(dn, math.Abs(d[i]))
	}
	return NormwiseBackwardError(rn, an, xn, dn)
}

// normInf is ‖A‖∞ of the system in k (corners included when cyclic; for
// n ≤ 2 they were folded already).
func (k *checker) normInf() float64 {
	var an float64
	for i := range k.b {
		an = max(an, math.Abs(k.a[i])+math.Abs(k.b[i])+math.Abs(k.c[i]))
	}
	return an
}

// cond returns κ̂∞ of the system in k, and whether A was found singular.
func (k *checker) cond(cyclic bool) (float64, bool) {
	n := k.n
	an := k.normInf()
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
		est := condest.InvNormInf(n, k.solve, k.solveT)
		return an * est, false
	}
	// A = T + u·vᵀ with u = (γ, 0, …, 0, β), v = (1, 0, …, 0, α/γ) and T
	// the matrix without corners whose ends are b[0] − γ and
	// b[n−1] − αβ/γ (see solveCyclic). γ = −b[0] first, as the solve does;
	// another γ where that T is singular (T depends on γ, A does not).
	alpha, beta := k.a[0], k.c[n-1]
	for _, gamma := range []float64{-k.b[0], -an, k.b[0] + an, 0.5 * an} {
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
		k.solveT0(z, false)
		copy(zt, v)
		k.solveT0(zt, true)
		den := 1 + dot(v, z)
		if den == 0 || math.IsNaN(den) || math.IsInf(den, 0) {
			return math.Inf(1), den == 0
		}
		solveA := func(w []float64) {
			k.solveT0(w, false)
			subScaled(w, z, dot(v, w)/den)
		}
		solveAT := func(w []float64) {
			k.solveT0(w, true)
			subScaled(w, zt, dot(u, w)/den)
		}
		return an * condest.InvNormInf(n, solveA, solveAT), false
	}
	return math.Inf(1), true
}

// dot is Σ x[i]·y[i] (no conjugation).
func dot[E float64 | complex128](x, y []E) E {
	var s E
	for i := range x {
		s += x[i] * y[i]
	}
	return s
}

// subScaled sets w −= f·z: the Sherman–Morrison correction of a solve
// with T into a solve with A.
func subScaled[E float64 | complex128](w, z []E, f E) {
	for i := range w {
		w[i] -= f * z[i]
	}
}

// factor computes the LU factorization with partial pivoting (LAPACK
// gttrf) of the tridiagonal part of the system in k, with gamma
// subtracted from b[0] and delta from b[n−1]. It reports false when a
// pivot is exactly zero (T singular).
func (k *checker) factor(gamma, delta float64) bool {
	return gttrf(k.a[:k.n], k.b[:k.n], k.c[:k.n], gamma, delta, k.dl, k.dd, k.du, k.du2, k.swap, math.Abs)
}

// gttrf factors the tridiagonal matrix (a, b, c) of order n = len(b),
// with gamma subtracted from b[0] and delta from b[n−1], by LU with
// partial pivoting (LAPACK gttrf; rows compared by abs): dl, dd, du, du2
// and swap receive the factors. It reports false when a pivot is exactly
// zero.
func gttrf[E float64 | complex128](a, b, c []E, gamma, delta E, dl, dd, du, du2 []E, swap []bool, abs func(E) float64) bool {
	n := len(b)
	copy(dd, b)
	dd[0] -= gamma
	dd[n-1] -= delta
	for i := 0; i < n-1; i++ {
		dl[i], du[i], du2[i] = a[i+1], c[i], 0
	}
	for i := 0; i < n-1; i++ {
		if abs(dd[i]) >= abs(dl[i]) {
			swap[i] = false
			if dd[i] != 0 {
				f := dl[i] / dd[i]
				dl[i] = f
				dd[i+1] -= f * du[i]
			}
		} else {
			swap[i] = true
			f := dd[i] / dl[i]
			dd[i] = dl[i]
			dl[i] = f
			t := du[i]
			du[i] = dd[i+1]
			dd[i+1] = t - f*dd[i+1]
			if i < n-2 {
				du2[i] = du[i+1]
				du[i+1] = -f * du[i+1]
			}
		}
	}
	for _, p := range dd[:n] {
		if p == 0 {
			return false
		}
	}
	return true
}

// solve overwrites w with A⁻¹·w for a non-cyclic system.
func (k *checker) solve(w []float64) { k.solveT0(w, false) }

// solveT overwrites w with A⁻ᵀ·w for a non-cyclic system.
func (k *checker) solveT(w []float64) { k.solveT0(w, true) }

// solveT0 applies the inverse of the factored T (LAPACK gtts2), or of
// its transpose when trans.
func (k *checker) solveT0(w []float64, trans bool) {
	n := k.n
	dl, dd, du, du2 := k.dl, k.dd, k.du, k.du2
	if !trans {
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
	w[0] /= dd[0]
	if n > 1 {
		w[1] = (w[1] - du[0]*w[0]) / dd[1]
	}
	for i := 2; i < n; i++ {
		w[i] = (w[i] - du[i-1]*w[i-1] - du2[i-2]*w[i-2]) / dd[i]
	}
	for i := n - 2; i >= 0; i-- {
		if !k.swap[i] {
			w[i] -= dl[i] * w[i+1]
		} else {
			t := w[i+1]
			w[i+1] = w[i] - dl[i]*t
			w[i] = t
		}
	}
}

// MergeChecks is the verdict of a check whose measures were taken
// elsewhere, as a GPU plan takes them on the device for solves whose data
// stay there: st[g] holds system g's BackwardError, its Cond (0 when not
// estimated) and the flags found while measuring (Singular). Each system
// is judged against the tolerance tol and ε = eps, and the returned error
// lists the systems that fail it together with the solve's own failures
// solveErr (a *BatchError, or nil; those keep their error and get the
// measures). Any other solveErr is returned as it is.
func MergeChecks(solveErr error, st []Status, tol, eps float64) ([]Status, error) {
	var be *BatchError
	if solveErr != nil && !errors.As(solveErr, &be) {
		return nil, solveErr
	}
	var failed []SystemError
	for g := range st {
		st[g].Judge(tol, eps)
		if st[g].Failed() {
			failed = append(failed, SystemError{System: g, Row: -1, Err: st[g].Err(tol), Status: st[g]})
		}
	}
	var checkErr error
	if len(failed) > 0 {
		checkErr = &BatchError{G: len(st), Failed: failed}
	}
	return st, mergeCheck(len(st), be, st, checkErr)
}
