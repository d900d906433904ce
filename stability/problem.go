package stability

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
)

// ErrSingular is wrapped by the error NewProblem returns when the rounded
// matrix is exactly singular, such as gallery('clement', n, 0) and the
// zero-diagonal type 16 for odd n.
var ErrSingular = errors.New("stability: matrix is exactly singular")

// ErrIllConditioned is wrapped by the error NewProblem returns when the
// reference solution cannot be settled within MaxRefBits bits of precision,
// or when it does not fit in float64 (some component overflows).
var ErrIllConditioned = errors.New("stability: reference solution unresolvable")

// Precision bounds of the reference solve, in bits of mantissa.
const (
	// MinRefBits is the first precision the reference elimination uses.
	MinRefBits = 512
	// MaxRefBits is the largest precision the reference elimination tries.
	MaxRefBits = 1 << 15
)

// Problem is a tridiagonal system ready to solve in precision T. A, B, C
// (sub-, main and super-diagonal, A[0] = C[n-1] = 0) and the right-hand side
// D are the generated matrix and A·X0 rounded to T. X is the exact solution
// of the rounded system A_T·x = D, computed in high precision and rounded to
// float64; it differs from X0 by the effect of rounding D, which is large
// for the ill-conditioned types.
type Problem[T float32 | float64] struct {
	// Type is the matrix type the problem was generated from.
	Type Type
	// A, B, C are the sub-, main and super-diagonal rounded to T.
	A, B, C []T
	// D is the right-hand side A_T·X0, computed exactly and rounded to T.
	D []T
	// X is the exact solution of the rounded system, rounded to float64.
	X []float64
	// X0 is the vector drawn from U(-1,1) from which D was formed.
	X0 []float64
	// RefBits is the mantissa precision, in bits, of the elimination whose
	// result X is (it agreed with the run at half that precision).
	RefBits uint
}

// N returns the order of the system.
func (p Problem[T]) N() int { return len(p.B) }

// NewProblem builds a system of matrix type t and order n from seed: the
// matrix of Generate(t, n, seed) rounded to T, a vector X0 drawn from U(-1,1)
// (from a PCG source seeded by seed, independent of the matrix draws), the
// right-hand side D = A_T·X0 formed exactly with math/big.Rat and rounded to
// T, and the exact solution X of A_T·X = D.
//
// X comes from Gaussian elimination with partial pivoting in math/big.Float
// (O(n) for a tridiagonal matrix) at MinRefBits bits, then at twice the
// precision, and so on until two successive runs agree to better than
// 2^-60 relative in every component (or 2^-(bits/2) of the largest one);
// the second of the pair is rounded to float64. The error wraps ErrSingular
// when the rounded matrix is exactly singular (decided by its determinant
// modulo large primes, which is exact, or by an exactly zero pivot), and
// ErrIllConditioned when no agreement is reached by MaxRefBits or X
// overflows float64.
//
// Rounding to T is part of the problem: in float32 the 1e-50 entries of
// types 4 and 12 underflow to zero, and that rounded matrix is the one solved.
func NewProblem[T float32 | float64](t Type, n int, seed uint64) (Problem[T], error) {
	m, err := Generate(t, n, seed)
	if err != nil {
		return Problem[T]{}, err
	}
	rng := rand.New(rand.NewPCG(seed, vectorStream))
	x0 := make([]float64, n)
	for i := range x0 {
		x0[i] = uniform(rng)
	}
	p := Problem[T]{
		Type: t,
		A:    make([]T, n), B: make([]T, n), C: make([]T, n), D: make([]T, n),
		X0: x0,
	}
	// The rounded matrix, kept in float64 (exactly) for the exact work.
	a, b, c := make([]float64, n), make([]float64, n), make([]float64, n)
	for i := range n {
		p.A[i], p.B[i], p.C[i] = T(m.A[i]), T(m.B[i]), T(m.C[i])
		a[i], b[i], c[i] = float64(p.A[i]), float64(p.B[i]), float64(p.C[i])
	}
	d := exactProduct[T](a, b, c, x0)
	df := make([]float64, n)
	for i := range n {
		p.D[i] = d[i]
		df[i] = float64(d[i])
	}
	x, bitsUsed, err := referenceSolve(a, b, c, df)
	if err != nil {
		return Problem[T]{}, fmt.Errorf("type %s (%v), n = %d, seed %d: %w", t.Name(), t, n, seed, err)
	}
	p.X = x
	p.RefBits = bitsUsed
	return p, nil
}

// exactProduct returns A·x formed exactly in rational arithmetic and rounded
// to the nearest T.
func exactProduct[T float32 | float64](a, b, c, x []float64) []T {
	n := len(b)
	xr := make([]big.Rat, n)
	for i := range n {
		xr[i].SetFloat64(x[i])
	}
	d := make([]T, n)
	var sum, term, coef big.Rat
	for i := range n {
		sum.SetFloat64(b[i])
		sum.Mul(&sum, &xr[i])
		if i > 0 && a[i] != 0 {
			coef.SetFloat64(a[i])
			term.Mul(&coef, &xr[i-1])
			sum.Add(&sum, &term)
		}
		if i < n-1 && c[i] != 0 {
			coef.SetFloat64(c[i])
			term.Mul(&coef, &xr[i+1])
			sum.Add(&sum, &term)
		}
		var v T
		switch any(v).(type) {
		case float32:
			f, _ := sum.Float32()
			v = T(f)
		default:
			f, _ := sum.Float64()
			v = T(f)
		}
		d[i] = v
	}
	return d
}

// referenceSolve returns the exact solution of the tridiagonal system
// (a, b, c)·x = d rounded to float64, and the precision that settled it.
func referenceSolve(a, b, c, d []float64) ([]float64, uint, error) {
	if exactlySingular(a, b, c) {
		return nil, 0, ErrSingular
	}
	prec := uint(MinRefBits)
	prev, ok := gepp(a, b, c, d, prec)
	for prec < MaxRefBits {
		next, okNext := gepp(a, b, c, d, 2*prec)
		if ok && okNext && agree(prev, next, prec) {
			x := make([]float64, len(next))
			for i := range next {
				x[i], _ = next[i].Float64()
				if math.IsInf(x[i], 0) {
					return nil, 0, fmt.Errorf("%w: component %d of the solution overflows float64", ErrIllConditioned, i)
				}
			}
			return x, 2 * prec, nil
		}
		prev, ok = next, okNext
		prec *= 2
	}
	if !ok {
		// The determinant test says the matrix is nonsingular, yet every
		// elimination met an exactly zero pivot.
		return nil, 0, fmt.Errorf("%w: zero pivot at %d bits", ErrSingular, prec)
	}
	return nil, 0, fmt.Errorf("%w: no agreement up to %d bits", ErrIllConditioned, MaxRefBits)
}

// agree reports whether the solutions x (computed at prec bits) and y (at
// 2·prec bits) agree: |x_i - y_i| <= 2^-60·|y_i| + 2^-(prec/2)·max|y| for all i.
func agree(x, y []big.Float, prec uint) bool {
	p := 2 * prec
	maxAbs := new(big.Float).SetPrec(p)
	var t big.Float
	t.SetPrec(p)
	for i := range y {
		t.Abs(&y[i])
		if t.Cmp(maxAbs) > 0 {
			maxAbs.Set(&t)
		}
	}
	floor := new(big.Float).SetPrec(p).SetMantExp(maxAbs, -int(prec/2))
	var diff, bound big.Float
	diff.SetPrec(p)
	bound.SetPrec(p)
	for i := range y {
		diff.Sub(&x[i], &y[i])
		diff.Abs(&diff)
		bound.Abs(&y[i])
		bound.SetMantExp(&bound, -60)
		bound.Add(&bound, floor)
		if diff.Cmp(&bound) > 0 {
			return false
		}
	}
	return true
}

// gepp solves the tridiagonal system (a, b, c)·x = d by Gaussian elimination
// with partial pivoting (the row interchanges of LAPACK's dgtsv, which fill
// in a second super-diagonal) in big.Float arithmetic at prec bits. ok is
// false when a pivot is exactly zero.
func gepp(a, b, c, d []float64, prec uint) (x []big.Float, ok bool) {
	n := len(b)
	bb := make([]big.Float, n)  // diagonal of U
	cc := make([]big.Float, n)  // first super-diagonal of U
	du2 := make([]big.Float, n) // second super-diagonal of U (fill-in)
	dd := make([]big.Float, n)  // right-hand side
	for i := range n {
		bb[i].SetPrec(prec).SetFloat64(b[i])
		cc[i].SetPrec(prec).SetFloat64(c[i])
		du2[i].SetPrec(prec)
		dd[i].SetPrec(prec).SetFloat64(d[i])
	}
	var sub, l, t, absB, absS big.Float
	for _, f := range []*big.Float{&sub, &l, &t, &absB, &absS} {
		f.SetPrec(prec)
	}
	for k := 0; k < n-1; k++ {
		// Row k holds (bb[k], cc[k]) in columns k, k+1; row k+1 holds
		// (sub, bb[k+1], cc[k+1]) in columns k, k+1, k+2.
		sub.SetFloat64(a[k+1])
		absB.Abs(&bb[k])
		absS.Abs(&sub)
		if absB.Cmp(&absS) >= 0 {
			if bb[k].Sign() == 0 {
				return nil, false
			}
			if sub.Sign() == 0 {
				continue
			}
			l.Quo(&sub, &bb[k])
			t.Mul(&l, &cc[k])
			bb[k+1].Sub(&bb[k+1], &t)
			t.Mul(&l, &dd[k])
			dd[k+1].Sub(&dd[k+1], &t)
			continue
		}
		// Interchange rows k and k+1, then eliminate.
		l.Quo(&bb[k], &sub)
		bb[k].Set(&sub)
		t.Set(&bb[k+1])               // old diagonal of row k+1
		bb[k+1].Mul(&l, &t)           // l·b_{k+1}
		bb[k+1].Sub(&cc[k], &bb[k+1]) // c_k - l·b_{k+1}
		cc[k].Set(&t)
		if k < n-2 {
			du2[k].Set(&cc[k+1])
			cc[k+1].Mul(&l, &cc[k+1])
			cc[k+1].Neg(&cc[k+1])
		}
		t.Set(&dd[k])
		dd[k].Set(&dd[k+1])
		dd[k+1].Mul(&l, &dd[k+1])
		dd[k+1].Sub(&t, &dd[k+1])
	}
	if bb[n-1].Sign() == 0 {
		return nil, false
	}
	x = make([]big.Float, n)
	for k := n - 1; k >= 0; k-- {
		x[k].SetPrec(prec).Set(&dd[k])
		if k+1 < n {
			t.Mul(&cc[k], &x[k+1])
			x[k].Sub(&x[k], &t)
		}
		if k+2 < n {
			t.Mul(&du2[k], &x[k+2])
			x[k].Sub(&x[k], &t)
		}
		x[k].Quo(&x[k], &bb[k])
	}
	return x, true
}

// RelError returns ||xhat - x||₂ / ||x||₂ computed in float64 (with scaling,
// so it neither overflows nor underflows needlessly). It returns NaN when
// xhat or x holds a NaN or an infinity (a failed solve), 0 when both are
// zero, and +Inf when x is zero and xhat is not. It panics when the lengths
// differ.
func RelError[T float32 | float64](xhat []T, x []float64) float64 {
	if len(xhat) != len(x) {
		panic(fmt.Sprintf("stability: RelError lengths %d and %d", len(xhat), len(x)))
	}
	diff := make([]float64, len(x))
	for i := range x {
		v := float64(xhat[i])
		if math.IsNaN(v) || math.IsInf(v, 0) || math.IsNaN(x[i]) || math.IsInf(x[i], 0) {
			return math.NaN()
		}
		diff[i] = v - x[i]
	}
	num, den := norm2(diff), norm2(x)
	if den == 0 {
		if num == 0 {
			return 0
		}
		return math.Inf(1)
	}
	return num / den
}

// norm2 returns the Euclidean norm of v, scaled to avoid overflow and
// underflow. The difference of two finite float64 values may overflow;
// such an entry counts as +Inf.
func norm2(v []float64) float64 {
	scale, ssq := 0.0, 1.0
	for _, e := range v {
		if e == 0 {
			continue
		}
		if math.IsInf(e, 0) {
			return math.Inf(1)
		}
		ae := math.Abs(e)
		if ae > scale {
			ssq = 1 + ssq*(scale/ae)*(scale/ae)
			scale = ae
		} else {
			ssq += (ae / scale) * (ae / scale)
		}
	}
	return scale * math.Sqrt(ssq)
}
