package krylov

import (
	"context"
	"math"
)

// bicgstab1 is plain, unpreconditioned BiCGStab (van der Vorst 1992), the
// ℓ = 1 method, written here only to show where ℓ = 2 matters. It returns
// the number of steps (two operator applications each) it needed to reach
// ‖b − A·x‖ ≤ tol·‖b‖ by its recursive residual, or maxIter, and whether it
// got there.
func bicgstab1(a hostOp, b []float64, tol float64, maxIter int) (int, bool) {
	ctx := context.Background()
	n := len(b)
	x := make([]float64, n)
	r := append([]float64(nil), b...)
	rt := append([]float64(nil), b...)
	p, v, s, t := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	nb := math.Sqrt(dot(b, b))
	rho, alpha, omega := 1.0, 1.0, 1.0
	for k := 0; k < maxIter; k++ {
		rho1 := dot(rt, r)
		if rho1 == 0 || omega == 0 {
			return k, false
		}
		beta := rho1 / rho * alpha / omega
		rho = rho1
		for i := range p {
			p[i] = r[i] + beta*(p[i]-omega*v[i])
		}
		_ = a.Apply(ctx, p, v)
		alpha = rho / dot(rt, v)
		for i := range s {
			s[i] = r[i] - alpha*v[i]
		}
		_ = a.Apply(ctx, s, t)
		omega = dot(t, s) / dot(t, t)
		for i := range x {
			x[i] += alpha*p[i] + omega*s[i]
			r[i] = s[i] - omega*t[i]
		}
		if res := math.Sqrt(dot(r, r)) / nb; res <= tol {
			return k + 1, true
		} else if math.IsNaN(res) {
			return k + 1, false
		}
	}
	return maxIter, false
}
