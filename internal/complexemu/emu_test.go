//go:build cudaemu

package complexemu

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/tridiag"
)

// sameBits reports whether x and y have the same parts bit for bit, any
// NaN matching any NaN.
func sameBits[T tridiag.Complex](x, y T) bool {
	same := func(a, b float64) bool {
		if a != a && b != b {
			return true
		}
		return math.Float64bits(a) == math.Float64bits(b)
	}
	p, q := complex128(x), complex128(y)
	return same(real(p), real(q)) && same(imag(p), imag(q))
}

// family fills row i of a system of family f (of 6): dominant by modulus,
// random (pivoting needed), the complex shifted Laplacian, damped and
// nearly undamped Helmholtz-like systems, and a system of huge and tiny
// entries whose divisions overflow and underflow (Go's scaled division).
func family(r *rand.Rand, f, i int) (a, b, c, d complex128) {
	rnd := func() complex128 { return complex(r.Float64()*2-1, r.Float64()*2-1) }
	d = rnd()
	switch f % 6 {
	case 0:
		return rnd(), rnd() + 4 + 1i, rnd(), d
	case 1:
		return rnd(), rnd(), rnd(), d
	case 2:
		return -1, complex(2, 0.5), -1, d
	case 3:
		k2 := 1.44 * (1 + 0.5*math.Sin(float64(i)))
		return -1, complex(2-k2, 0.2), -1, d
	case 4:
		k2 := 1 + 0.5*math.Sin(float64(i))
		return -1, complex(2-k2, 1e-3), -1, d
	}
	s := math.Pow(10, float64(r.IntN(18)-9))
	return rnd() * complex(s, 0), rnd() * complex(1/s, 0), rnd() * complex(s*s, 0), d * complex(1e20, 0)
}

// cpuSolve solves on the CPU, returning x and the failures as
// "system:row" (row n−1 for a failure without a row, as the kernels
// report the zero Sherman–Morrison denominator).
func cpuSolve[T tridiag.Complex](t *testing.T, l *Launch[T], opts tridiag.Options) ([]T, map[string]bool) {
	p, err := tridiag.NewPlan[T](tridiag.NewCPU(0), l.Shape, opts)
	require.NoError(t, err)
	defer p.Close()
	x := make([]T, len(l.D))
	if l.Constant {
		err = p.SolveConst(context.Background(), l.CA, l.CB, l.CC, l.D, x)
	} else {
		err = p.Solve(context.Background(), l.A, l.B, l.C, l.D, x)
	}
	fails := map[string]bool{}
	if err != nil {
		var be *tridiag.BatchError
		require.True(t, errors.As(err, &be), "%v", err)
		for _, f := range be.Failed {
			row := f.Row
			if row < 0 {
				row = l.Shape.N - 1
			}
			fails[fmt.Sprintf("%d:%d", f.System, row)] = true
		}
	}
	return x, fails
}

var options = map[string]tridiag.Options{
	"thomas":      {Algorithm: tridiag.Thomas},
	"gtsv":        {Algorithm: tridiag.GTSV},
	"auto":        {SkipFiniteCheck: true},
	"auto-never":  {Pivoting: tridiag.PivotNever, SkipFiniteCheck: true},
	"auto-always": {Pivoting: tridiag.PivotAlways},
}

// TestBitExact runs the kernels on the families, in every layout, with
// array and constant coefficients, cyclic or not, and requires the CPU's
// solutions bit for bit and its failures at the same systems and rows.
func TestBitExact(t *testing.T) {
	testBitExact[complex64](t)
	testBitExact[complex128](t)
}

func testBitExact[T tridiag.Complex](t *testing.T) {
	for _, n := range []int{1, 2, 3, 4, 7, 64, 301} {
		for _, g := range []int{1, 13, 150} {
			layouts := map[string]tridiag.Layout{
				"contiguous":  tridiag.Contiguous(n),
				"interleaved": tridiag.Interleaved(g),
				"rows-gaps":   tridiag.Strided(g+3, 1),
				"sys-gaps":    tridiag.Strided(1, n+5),
			}
			for lname, lay := range layouts {
				shape := tridiag.Shape{N: n, G: g, Layout: lay}
				m := shape.Len()
				r := rand.New(rand.NewPCG(uint64(n), uint64(g)))
				a, b, c, d := make([]T, m), make([]T, m), make([]T, m), make([]T, m)
				for s := range g {
					for i := range n {
						k := lay.Index(i, s)
						va, vb, vc, vd := family(r, s, i)
						a[k], b[k], c[k], d[k] = T(va), T(vb), T(vc), T(vd)
					}
				}
				for oname, opts := range options {
					for _, cyclic := range []bool{false, true} {
						for _, constant := range []bool{false, true} {
							opts.Cyclic = cyclic
							alg := opts.Algorithm
							if alg == tridiag.Auto && opts.Pivoting == tridiag.PivotAlways {
								alg = tridiag.GTSV
							}
							l := &Launch[T]{Algorithm: alg, Shape: shape, Constant: constant, Cyclic: cyclic,
								Bounded: opts.Pivoting != tridiag.PivotNever, D: d, X: make([]T, m)}
							if constant {
								k := lay.Index(min(2, n-1), 0)
								l.CA, l.CB, l.CC = a[k], b[k], c[k]
							} else {
								l.A, l.B, l.C = a, b, c
							}
							name := fmt.Sprintf("%T/N=%d/G=%d/%s/%s/cyclic=%t/const=%t", T(0), n, g, lname, oname, cyclic, constant)
							want, fails := cpuSolve(t, l, opts)
							status := l.Run()
							got := map[string]bool{}
							for s, code := range status[:g] {
								if code != 0 {
									got[fmt.Sprintf("%d:%d", s, code-1)] = true
								}
							}
							require.Equal(t, fails, got, name)
							require.Equal(t, len(fails) > 0, status[g] != 0, name)
							for s := range g {
								for i := range n {
									k := lay.Index(i, s)
									if !sameBits(l.X[k], want[k]) {
										require.Failf(t, "not bit for bit", "%s: system %d row %d: %v, CPU %v", name, s, i, l.X[k], want[k])
									}
								}
							}
						}
					}
				}
			}
		}
	}
}

// TestDivision checks the kernels' complex division against Go's on
// operands with zeros, infinities, NaN, huge and tiny parts: a
// one-row system b·x = d is x = d/b.
func TestDivision(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	vals := []float64{0, math.Copysign(0, -1), 1, -2.5, 1e-310, 3e300, -7e-300, inf, -inf, nan, 1e308}
	var num, den []complex128
	for _, p := range vals {
		for _, q := range vals {
			num = append(num, complex(p, q))
			den = append(den, complex(q, p), complex(p, 1.5), complex(-0.5, q))
		}
	}
	for _, nv := range num {
		d := make([]complex128, len(den))
		b := make([]complex128, len(den))
		for i := range den {
			d[i], b[i] = nv, den[i]
		}
		zero := make([]complex128, len(den))
		l := &Launch[complex128]{Algorithm: tridiag.GTSV, Shape: tridiag.Shape{N: 1, G: len(den)},
			A: zero, B: b, C: zero, D: d, X: make([]complex128, len(den))}
		status := l.Run()
		for i := range den {
			if status[i] != 0 {
				// A zero divisor is a breakdown; non-finite quotients too.
				require.True(t, b[i] == 0 || !isFinite(nv/b[i]), "%v / %v", nv, b[i])
				continue
			}
			require.True(t, sameBits(l.X[i], nv/b[i]), "%v / %v = %v, Go %v", nv, b[i], l.X[i], nv/b[i])
		}
	}
}

func isFinite(v complex128) bool {
	return !math.IsInf(real(v), 0) && !math.IsNaN(real(v)) && !math.IsInf(imag(v), 0) && !math.IsNaN(imag(v))
}
