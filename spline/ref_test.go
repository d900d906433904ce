package spline_test

import (
	"math"
	"math/big"
)

// A slow reference in math/big (256-bit mantissas, an exponent range no
// float64 reaches): the moments from the dense moment system solved by
// Gaussian elimination, and the spline and its derivatives from the
// textbook formula, with no care for overflow because there is none.

const refPrec = 256

func bf(v float64) *big.Float { return new(big.Float).SetPrec(refPrec).SetFloat64(v) }

func bnew() *big.Float { return new(big.Float).SetPrec(refPrec) }

func badd(a, b *big.Float) *big.Float { return bnew().Add(a, b) }
func bsub(a, b *big.Float) *big.Float { return bnew().Sub(a, b) }
func bmul(a, b *big.Float) *big.Float { return bnew().Mul(a, b) }
func bquo(a, b *big.Float) *big.Float { return bnew().Quo(a, b) }
func bint(v int) *big.Float           { return bf(float64(v)) }

// refKind is the end condition of a reference fit.
type refKind int

const (
	refNatural refKind = iota
	refClamped
	refPeriodic
)

// refMoments returns the moments of one curve: rows i = 1 … n−2 are
// h_{i−1}M_{i−1} + 2(h_{i−1}+h_i)M_i + h_i M_{i+1} = 6(Δ_i − Δ_{i−1}), and
// the ends close the system as the package documents.
func refMoments(x, y []float64, kind refKind, d0, dn float64) []*big.Float {
	n := len(x)
	a := make([][]*big.Float, n) // n×(n+1) augmented
	for i := range a {
		a[i] = make([]*big.Float, n+1)
		for j := range a[i] {
			a[i][j] = bnew()
		}
	}
	h := func(i int) *big.Float { return bsub(bf(x[i+1]), bf(x[i])) }
	slope := func(i int) *big.Float { return bquo(bsub(bf(y[i+1]), bf(y[i])), h(i)) }
	six := bint(6)
	for i := 1; i < n-1; i++ {
		a[i][i-1] = h(i - 1)
		a[i][i] = bmul(bint(2), badd(h(i-1), h(i)))
		a[i][i+1] = h(i)
		a[i][n] = bmul(six, bsub(slope(i), slope(i-1)))
	}
	switch kind {
	case refNatural:
		a[0][0], a[n-1][n-1] = bint(1), bint(1)
	case refClamped:
		a[0][0], a[0][1] = bmul(bint(2), h(0)), h(0)
		a[0][n] = bmul(six, bsub(slope(0), bf(d0)))
		a[n-1][n-2], a[n-1][n-1] = h(n-2), bmul(bint(2), h(n-2))
		a[n-1][n] = bmul(six, bsub(bf(dn), slope(n-2)))
	case refPeriodic:
		// Row 0 couples M_{N−2}, M_0, M_1; the last row says M_{N−1} = M_0.
		a[0][n-2], a[0][0], a[0][1] = h(n-2), bmul(bint(2), badd(h(n-2), h(0))), h(0)
		a[0][n] = bmul(six, bsub(slope(0), slope(n-2)))
		a[n-1][n-1], a[n-1][0] = bint(1), bint(-1)
	}
	// Gaussian elimination with partial pivoting.
	for c := range n {
		p := c
		for r := c + 1; r < n; r++ {
			if bnew().Abs(a[r][c]).Cmp(bnew().Abs(a[p][c])) > 0 {
				p = r
			}
		}
		a[c], a[p] = a[p], a[c]
		for r := c + 1; r < n; r++ {
			if a[r][c].Sign() == 0 {
				continue
			}
			f := bquo(a[r][c], a[c][c])
			for j := c; j <= n; j++ {
				a[r][j] = bsub(a[r][j], bmul(f, a[c][j]))
			}
		}
	}
	m := make([]*big.Float, n)
	for i := n - 1; i >= 0; i-- {
		s := a[i][n]
		for j := i + 1; j < n; j++ {
			s = bsub(s, bmul(a[i][j], m[j]))
		}
		m[i] = bquo(s, a[i][i])
	}
	return m
}

// refAt returns derivative q (0, 1, 2) at t of the spline with knots x,
// values y and moments m (t already wrapped for a periodic curve), and
// the sum of the magnitudes of its terms, the scale of its rounding
// error.
func refAt(x, y []float64, m []*big.Float, t float64, q int) (v, scale *big.Float) {
	n := len(x)
	i := 0
	for i < n-2 && x[i+1] <= t {
		i++
	}
	x0, x1 := bf(x[i]), bf(x[i+1])
	h := bsub(x1, x0)
	tt := bf(t)
	a := bquo(bsub(x1, tt), h)
	b := bquo(bsub(tt, x0), h)
	one, three, six := bint(1), bint(3), bint(6)
	var terms []*big.Float
	switch q {
	case 0:
		h26 := bquo(bmul(h, h), six)
		terms = []*big.Float{
			bmul(a, bf(y[i])), bmul(b, bf(y[i+1])),
			bmul(bmul(bsub(bmul(a, bmul(a, a)), a), m[i]), h26),
			bmul(bmul(bsub(bmul(b, bmul(b, b)), b), m[i+1]), h26),
		}
	case 1:
		h6 := bquo(h, six)
		terms = []*big.Float{
			bquo(bf(y[i+1]), h), bquo(bf(-y[i]), h),
			bmul(bmul(bsub(one, bmul(three, bmul(a, a))), m[i]), h6),
			bmul(bmul(bsub(bmul(three, bmul(b, b)), one), m[i+1]), h6),
		}
	default:
		terms = []*big.Float{bmul(a, m[i]), bmul(b, m[i+1])}
	}
	v, scale = bnew(), bnew()
	for _, t := range terms {
		v = badd(v, t)
		scale = badd(scale, bnew().Abs(t))
	}
	return v, scale
}

// closeTo reports whether got is the float nearest to ref within tol
// relative to scale, or ±Inf where ref is beyond the range of float64.
func closeTo(got float64, ref, scale *big.Float, tol float64) bool {
	r, _ := ref.Float64()
	if math.IsInf(r, 0) {
		return got == r
	}
	if math.IsNaN(got) || math.IsInf(got, 0) {
		return false
	}
	d := bsub(bf(got), ref)
	lim := bmul(scale, bf(tol))
	return bnew().Abs(d).Cmp(lim) <= 0
}

// refIntegral returns ∫_a^b (x[0] ≤ a ≤ b ≤ x[N−1]) of the spline: on
// each interval, with u = (t − x_i)/h and m_i = M_i·h²/6, the
// antiderivative is h·(y_i(u − u²/2) + y_{i+1}u²/2 + m_i(−u⁴/4 + u³ − u²) +
// m_{i+1}(u⁴/4 − u²/2)).
func refIntegral(x, y []float64, m []*big.Float, a, b float64) float64 {
	s := bnew()
	for i := 0; i < len(x)-1; i++ {
		l, r := max(a, x[i]), min(b, x[i+1])
		if l >= r {
			continue
		}
		h := bsub(bf(x[i+1]), bf(x[i]))
		h26 := bquo(bmul(h, h), bint(6))
		mi, mj := bmul(m[i], h26), bmul(m[i+1], h26)
		g := func(t float64) *big.Float {
			u := bquo(bsub(bf(t), bf(x[i])), h)
			u2 := bmul(u, u)
			u3, u4 := bmul(u2, u), bmul(u2, u2)
			half, quarter := bquo(bint(1), bint(2)), bquo(bint(1), bint(4))
			v := bmul(bf(y[i]), bsub(u, bmul(half, u2)))
			v = badd(v, bmul(bf(y[i+1]), bmul(half, u2)))
			v = badd(v, bmul(mi, bsub(bsub(u3, bmul(quarter, u4)), u2)))
			v = badd(v, bmul(mj, bsub(bmul(quarter, u4), bmul(half, u2))))
			return bmul(h, v)
		}
		s = badd(s, bsub(g(r), g(l)))
	}
	v, _ := s.Float64()
	return v
}
