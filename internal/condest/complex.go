package condest

import "math/cmplx"

// InvNormInfC is InvNormInf for a complex matrix A of order n: an
// estimate (a lower bound) of ‖A⁻¹‖∞, the largest row sum of moduli, by
// the complex form of the Hager–Higham iteration as LAPACK's zlacn2 runs
// it on B = A⁻ᴴ (‖A⁻¹‖∞ = ‖A⁻ᴴ‖₁). solve overwrites v with A⁻¹·v and
// solveH with A⁻ᴴ·v (the conjugate transpose). Where a real estimate
// takes signs ±1, this one takes the unit-modulus values v[i]/|v[i]| (1
// where v[i] = 0). It returns +Inf when a solve gives a non-finite
// vector.
func InvNormInfC(n int, solve, solveH func(v []complex128)) float64 {
	if n <= 0 {
		return 0
	}
	x := make([]complex128, n)
	for i := range x {
		x[i] = complex(1/float64(n), 0)
	}
	solveH(x) // x = B·x
	if n == 1 {
		return finiteOrInf(cmplx.Abs(x[0]))
	}
	est := norm1C(x)
	if !isFinite(est) {
		return finiteOrInf(est)
	}
	unitC(x)
	solve(x) // z = Bᴴ·ξ
	j := argmaxAbsC(x)
	for iter := 2; ; iter++ {
		clear(x)
		x[j] = 1
		solveH(x)
		old := est
		est = norm1C(x)
		if !isFinite(est) {
			return finiteOrInf(est)
		}
		if est <= old {
			est = old
			break
		}
		unitC(x)
		solve(x)
		jlast := j
		j = argmaxAbsC(x)
		if cmplx.Abs(x[jlast]) == cmplx.Abs(x[j]) || iter >= maxIter {
			break
		}
	}
	for i := range x {
		s := 1.0
		if i%2 == 1 {
			s = -1
		}
		x[i] = complex(s*(1+float64(i)/float64(n-1)), 0)
	}
	solveH(x)
	if alt := 2 * norm1C(x) / float64(3*n); alt > est || !isFinite(alt) {
		est = alt
	}
	return finiteOrInf(est)
}

// unitC replaces every v[i] by v[i]/|v[i]| (1 where v[i] is 0).
func unitC(v []complex128) {
	for i, z := range v {
		if a := cmplx.Abs(z); a > 0 {
			v[i] = z / complex(a, 0)
		} else {
			v[i] = 1
		}
	}
}

func norm1C(v []complex128) float64 {
	var s float64
	for _, z := range v {
		s += cmplx.Abs(z)
	}
	return s
}

func argmaxAbsC(v []complex128) int {
	j, m := 0, -1.0
	for i, z := range v {
		if a := cmplx.Abs(z); a > m {
			j, m = i, a
		}
	}
	return j
}
