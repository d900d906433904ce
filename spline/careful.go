package spline

import (
	"math"

	"github.com/bandsolve/bandsolve/tridiag"
)

// This file evaluates a spline where the direct formulas overflow: every
// quantity is carried as a mantissa and a binary exponent, so that no
// intermediate result overflows unless the answer does. The evaluators
// fall back to it for the results that come out NaN or ±Inf, which costs
// nothing where the direct result is finite.

// xf is the number m·2^e.
type xf struct {
	m float64
	e int
}

func split(v float64) xf {
	m, e := math.Frexp(v)
	return xf{m, e}
}

func (a xf) times(b xf) xf {
	m, e := math.Frexp(a.m * b.m)
	return xf{m, a.e + b.e + e}
}

func (a xf) scaled(e int) xf { return xf{a.m, a.e + e} }

// pow returns a^k for k ≥ 0.
func (a xf) pow(k int) xf {
	r := xf{0.5, 1}
	for range k {
		r = r.times(a)
	}
	return r
}

// acc is a running sum s·2^e of xf terms.
type acc struct {
	s float64
	e int
}

func (s *acc) add(t xf) {
	switch {
	case t.m == 0:
		return
	case s.s == 0:
		s.s, s.e = t.m, t.e
		return
	case t.e > s.e:
		s.s = math.Ldexp(s.s, s.e-t.e) + t.m
		s.e = t.e
	default:
		s.s += math.Ldexp(t.m, t.e-s.e)
	}
	m, e := math.Frexp(s.s)
	s.s, s.e = m, s.e+e
}

func (s acc) value() float64 { return math.Ldexp(s.s, s.e) }

// piece is the cubic of one interval [x0, x0+h] in the variable
// u = (t − x0)/h: (c[0] + c[1]·u + c[2]·u² + c[3]·u³)·2^e, with
// c[0] = y0, c[1] = y1 − y0 − 2m0 − m1, c[2] = 3m0, c[3] = m1 − m0 and
// m_i = M_i·h²/6, all scaled by the same power of two so that the
// largest is below 1.
type piece struct {
	x0 float64
	h  xf
	c  [4]float64
	e  int
}

func newPiece(x0, x1, y0, y1, m0, m1 float64) piece {
	h := split(x1 - x0)
	s := h.m * h.m / 6
	terms := [4]xf{split(y0), split(y1), split(m0 * s).scaled(2 * h.e), split(m1 * s).scaled(2 * h.e)}
	e, any := 0, false
	for _, t := range terms {
		if t.m != 0 && (!any || t.e > e) {
			e, any = t.e, true
		}
	}
	var v [4]float64
	for i, t := range terms {
		v[i] = math.Ldexp(t.m, t.e-e)
	}
	return piece{x0: x0, h: h, e: e, c: [4]float64{v[0], v[1] - v[0] - 2*v[2] - v[3], 3 * v[2], v[3] - v[2]}}
}

// pieceOf returns interval i of a curve.
func pieceOf[T tridiag.Float](x, y, m []T, i int) piece {
	return newPiece(float64(x[i]), float64(x[i+1]), float64(y[i]), float64(y[i+1]), float64(m[i]), float64(m[i+1]))
}

// u returns (t − x0)/h for a finite t.
func (p *piece) u(t float64) xf {
	d, de := t-p.x0, 0
	if math.IsInf(d, 0) {
		d, de = t*0.5-p.x0*0.5, 1
	}
	u := split(d)
	return split(u.m / p.h.m).scaled(u.e + de - p.h.e)
}

// falling returns k·(k−1)·…·(k−q+1).
func falling(k, q int) float64 {
	f := 1.0
	for i := range q {
		f *= float64(k - i)
	}
	return f
}

// at returns derivative q (0 … 3) of the cubic at t: the sum over k ≥ q
// of c_k·k!/(k−q)!·u^(k−q)/h^q. An infinite t gives the limit: ±Inf, or
// the constant where the derivative is constant.
func (p *piece) at(t float64, q int) float64 {
	ih := split(1 / p.h.m).scaled(-p.h.e).pow(q) // h^−q
	if math.IsNaN(t) {
		return math.NaN()
	}
	if math.IsInf(t, 0) {
		for k := 3; k > q; k-- {
			if c := p.c[k]; c != 0 {
				s := math.Copysign(1, c)
				if (k-q)%2 == 1 {
					s *= math.Copysign(1, t)
				}
				return math.Inf(int(s))
			}
		}
		return split(p.c[q] * falling(q, q)).times(ih).scaled(p.e).value()
	}
	u := p.u(t)
	var s acc
	for k := q; k < 4; k++ {
		s.add(split(p.c[k] * falling(k, q)).times(u.pow(k - q)).times(ih).scaled(p.e))
	}
	return s.value()
}

func (a xf) value() float64 { return math.Ldexp(a.m, a.e) }

// integral adds ∫ from x0 + u1·h to x0 + u2·h of the cubic to s:
// h·Σ c_k·(u2^(k+1) − u1^(k+1))/(k+1).
func (p *piece) integral(s *acc, u1, u2 xf) {
	for k := range 4 {
		c := split(p.c[k] / float64(k+1)).times(p.h).scaled(p.e)
		s.add(c.times(u2.pow(k + 1)))
		s.add(xf{-c.m, c.e}.times(u1.pow(k + 1)))
	}
}

// tail returns ∫ of the cubic from its interval to −∞ (dir −1: the
// integral from −∞ to x0) or to +∞ (dir +1: from x0 + h to +∞), where it
// diverges: ±Inf, or 0 for the zero polynomial.
func (p *piece) tail(dir float64) float64 {
	for k := 3; k >= 0; k-- {
		if c := p.c[k]; c != 0 {
			// ∫ c·u^k grows like c·u^(k+1)/(k+1); from −∞ the sign of
			// u^(k+1) is (−1)^(k+1), and the integral is minus that limit.
			s := math.Copysign(1, c)
			if dir < 0 && k%2 == 1 {
				s = -s
			}
			return math.Inf(int(s))
		}
	}
	return 0
}

// carefulAt is derivative q of interval i at t (wrapped into the period
// for a periodic curve), without overflow where the result is finite.
// At a knot the value is the data exactly.
func carefulAt[T tridiag.Float](x, y, m []T, i int, t T, q int) T {
	if q == 0 {
		switch t {
		case x[i]:
			return y[i]
		case x[i+1]:
			return y[i+1]
		}
	}
	p := pieceOf(x, y, m, i)
	return T(p.at(float64(t), q))
}

// carefulRange is ∫_a^b of a natural or clamped curve (the end cubics
// continued), for a ≤ b, without overflow where the result is finite.
func carefulRange[T tridiag.Float](x, y, m []T, a, b float64) float64 {
	n := len(x)
	inf := 0.0
	if math.IsInf(a, -1) {
		p := pieceOf(x, y, m, 0)
		inf += p.tail(-1)
		a = float64(x[0])
	}
	if math.IsInf(b, 1) {
		p := pieceOf(x, y, m, n-2)
		inf += p.tail(1)
		b = float64(x[n-1])
	}
	if inf != 0 || math.IsNaN(inf) {
		return inf
	}
	sign := 1.0
	if a > b {
		a, b, sign = b, a, -1
	}
	var s acc
	carefulSum(&s, x, y, m, a, b)
	return sign * s.value()
}

// carefulSum adds ∫_a^b (finite a ≤ b) to s.
func carefulSum[T tridiag.Float](s *acc, x, y, m []T, a, b float64) {
	ia, ib := search(x, T(a)), search(x, T(b))
	zero, one := xf{}, xf{0.5, 1}
	for i := ia; i <= ib; i++ {
		p := pieceOf(x, y, m, i)
		u1, u2 := zero, one
		if i == ia {
			u1 = p.u(a)
		}
		if i == ib {
			u2 = p.u(b)
		}
		p.integral(s, u1, u2)
	}
}

// carefulPeriodic is ∫_a^b (a ≤ b, finite) of a periodic curve without
// overflow where the result is finite.
func carefulPeriodic[T tridiag.Float](x, y, m []T, a, b float64) float64 {
	n := len(x)
	x0, xn := float64(x[0]), float64(x[n-1])
	per := xn - x0
	var s acc
	periods, left := periods(a, b, per)
	if periods > 0 {
		var full acc
		carefulSum(&full, x, y, m, x0, xn)
		s.add(split(full.s).scaled(full.e).times(split(periods)))
	}
	wa := wrap(x0, xn, a)
	if wb := wa + left; wb <= xn {
		carefulSum(&s, x, y, m, wa, wb)
	} else {
		carefulSum(&s, x, y, m, wa, xn)
		carefulSum(&s, x, y, m, x0, x0+(wb-xn))
	}
	return s.value()
}

// periods splits b − a ≥ 0 into whole periods and the rest, without
// overflow in b − a.
func periods(a, b, per float64) (whole, left float64) {
	if d := b - a; !math.IsInf(d, 0) {
		left = math.Mod(d, per)
		return math.Round((d - left) / per), left
	}
	d := b*0.5 - a*0.5 // (b − a)/2
	left = 2 * math.Mod(d, per*0.5)
	return math.Round((d - left*0.5) / per * 2), left
}
