package tri

import "math"

// Complex is the element type of the complex solvers: complex64 or
// complex128.
type Complex interface {
	complex64 | complex128
}

// Cabs1 is |re(v)| + |im(v)|, the modulus LAPACK's complex solvers
// (zgtsv, cgtsv) compare to choose pivots: it costs no square root and
// lies within a factor √2 of the true modulus |v| (|v| ≤ Cabs1(v) ≤
// √2·|v|). It is summed in float64.
func Cabs1[T Complex](v T) float64 {
	z := complex128(v)
	return math.Abs(real(z)) + math.Abs(imag(z))
}

// FiniteC reports whether both parts of v are finite.
func FiniteC[T Complex](v T) bool {
	z := complex128(v)
	r, i := real(z), imag(z)
	// x−x is 0 for finite x and NaN for NaN and ±Inf.
	return r-r == 0 && i-i == 0
}

// BadDivisorC reports whether v cannot be divided by: zero, or NaN or
// ±Inf in either part.
func BadDivisorC[T Complex](v T) bool { return v == 0 || !FiniteC(v) }

// ThomasC is Thomas for complex systems: Gaussian elimination without
// pivoting. work must have length ≥ n; x may alias d. It fails with a
// PivotError wrapping ErrZeroPivot at the first pivot that is zero or has
// a non-finite part.
func ThomasC[T Complex](a, b, c, d, x, work []T) error { return thomasC(a, b, c, d, x, work, false) }

// ThomasBoundedC is ThomasBounded for complex systems: the test of row i
// is Cabs1(a[i]·c[i−1]/u[i−1]) ≤ PivotGrowthBound·Cabs1(b[i]). Since
// Cabs1 lies within √2 of the modulus, a system that passes has
// |L|·|U| ≤ (1 + 2√2·τ)·|A| = (1+4√2)·|A| entry by entry in modulus, and
// so the componentwise backward stability of LU without pivoting (see
// ThomasBounded). Matrices diagonally dominant by modulus (by rows or
// columns) have |fill| ≤ |b[i]| and pass it with a factor √2 to spare.
// It returns a PivotError wrapping ErrPivotGrowth at the first row that
// fails the test, or ErrZeroPivot at a zero or non-finite pivot;
// otherwise x is bit for bit what ThomasC returns.
func ThomasBoundedC[T Complex](a, b, c, d, x, work []T) error {
	return thomasC(a, b, c, d, x, work, true)
}

func thomasC[T Complex](a, b, c, d, x, work []T, bounded bool) error {
	n := len(b)
	if n == 0 {
		return nil
	}
	cp := work[:n]
	piv := b[0]
	if BadDivisorC(piv) {
		return &PivotError{Row: 0, Err: ErrZeroPivot}
	}
	cp[0] = c[0] / piv
	x[0] = d[0] / piv
	for i := 1; i < n; i++ {
		f := T(a[i] * cp[i-1])
		if bounded && !(Cabs1(f) <= PivotGrowthBound*Cabs1(b[i])) {
			return &PivotError{Row: i, Err: ErrPivotGrowth}
		}
		piv = b[i] - f
		if BadDivisorC(piv) {
			return &PivotError{Row: i, Err: ErrZeroPivot}
		}
		if i < n-1 {
			cp[i] = c[i] / piv
		}
		x[i] = (d[i] - T(a[i]*x[i-1])) / piv
	}
	for i := n - 2; i >= 0; i-- {
		x[i] -= T(cp[i] * x[i+1])
	}
	return nil
}

// GTSVC solves one complex system by Gaussian elimination with partial
// pivoting, as LAPACK's zgtsv (cgtsv) does: at step i the row whose entry
// in column i has the larger Cabs1 = |re| + |im| becomes the pivot row
// (rows are kept on a tie), which may create fill in a second
// super-diagonal. The inputs are not modified; x may alias d. It fails
// with a PivotError wrapping ErrSingular when a pivot is exactly zero.
func GTSVC[T Complex](a, b, c, d, x []T, w *PivotWork[T]) error {
	n := len(b)
	if n == 0 {
		return nil
	}
	dl, dd, du, du2 := w.dl[:n], w.dd[:n], w.du[:n], w.du2[:n]
	copy(dd, b)
	for i := 0; i < n-1; i++ {
		dl[i] = a[i+1]
		du[i] = c[i]
		du2[i] = 0
	}
	du2[n-1], du[n-1], dl[n-1] = 0, 0, 0
	if &x[0] != &d[0] {
		copy(x, d)
	}
	for i := 0; i < n-1; i++ {
		if Cabs1(dd[i]) >= Cabs1(dl[i]) {
			if dd[i] == 0 {
				return &PivotError{Row: i, Err: ErrSingular}
			}
			f := dl[i] / dd[i]
			dd[i+1] -= T(f * du[i])
			x[i+1] -= T(f * x[i])
		} else {
			f := dd[i] / dl[i]
			dd[i] = dl[i]
			tmp := dd[i+1]
			dd[i+1] = du[i] - T(f*tmp)
			if i < n-2 {
				du2[i] = du[i+1]
				du[i+1] = -f * du2[i]
			}
			du[i] = tmp
			x[i], x[i+1] = x[i+1], x[i]-T(f*x[i+1])
		}
	}
	if dd[n-1] == 0 {
		return &PivotError{Row: n - 1, Err: ErrSingular}
	}
	x[n-1] /= dd[n-1]
	if n > 1 {
		x[n-2] = (x[n-2] - T(du[n-2]*x[n-1])) / dd[n-2]
	}
	for i := n - 3; i >= 0; i-- {
		x[i] = (x[i] - T(du[i]*x[i+1]) - T(du2[i]*x[i+2])) / dd[i]
	}
	return nil
}
