package tridiag

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/lapack/gonum"
)

// storedFactors factors the contiguous batch a, b, c with opts on the
// CPU and returns the stored factors of every system.
func storedFactors(t *testing.T, n, g int, opts Options, a, b, c []float64) []sysFactors[float64] {
	t.Helper()
	p, err := NewPlan[float64](NewCPU(2), Shape{N: n, G: g}, opts)
	require.NoError(t, err)
	defer p.Close()
	f, err := p.Factor(context.Background(), a, b, c)
	require.NoError(t, err)
	cf, ok := f.fs.(*cpuFactors[float64])
	require.True(t, ok)
	out := make([]sysFactors[float64], g)
	for k := range out {
		out[k] = cf.view(k, cf.kinds[k])
	}
	return out
}

// within reports whether x and y agree to k units in the last place.
func within(x, y float64, k int) bool {
	m := math.Max(math.Abs(x), math.Abs(y))
	return math.Abs(x-y) <= float64(k)*(math.Nextafter(m, math.Inf(1))-m)
}

// TestLDLTFactorsMatchDpttrf: the stored L·D·Lᵀ factors are those of
// gonum's Dpttrf (D's diagonal and L's sub-diagonal) to within a few
// ulps.
func TestLDLTFactorsMatchDpttrf(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 2, 3, 5, 64, 1000} {
		g := 3
		b, c := make([]float64, n*g), make([]float64, n*g)
		for k := range b {
			b[k], c[k] = 2+r.Float64(), r.Float64()*2-1
		}
		fs := storedFactors(t, n, g, Options{Algorithm: LDLT}, nil, b, c)
		for k, f := range fs {
			require.Equal(t, kindLDLT, f.kind)
			d := append([]float64(nil), b[k*n:(k+1)*n]...)
			e := append([]float64(nil), c[k*n:k*n+n-1]...)
			require.True(t, gonum.Implementation{}.Dpttrf(n, d, e))
			for i := range n {
				assert.True(t, within(d[i], f.f[0][i], 4), "N=%d system %d: d[%d] %v, Dpttrf %v", n, k, i, f.f[0][i], d[i])
				if i < n-1 {
					assert.True(t, within(e[i], f.f[1][i], 4), "N=%d system %d: l[%d] %v, Dpttrf %v", n, k, i, f.f[1][i], e[i])
				}
			}
		}
	}
}

// denseGEPP is Gaussian elimination with partial pivoting on the dense
// matrix of one system (rows i and i+1 swap when |A[i+1][i]| > |A[i][i]|,
// as gttrf chooses): U, the interchanges, and the solution of A·x = d.
func denseGEPP(a, b, c, d []float64) (u [][]float64, swap []bool, x []float64) {
	n := len(b)
	A := make([][]float64, n)
	for i := range A {
		A[i] = make([]float64, n)
		A[i][i] = b[i]
		if i > 0 {
			A[i][i-1] = a[i]
		}
		if i < n-1 {
			A[i][i+1] = c[i]
		}
	}
	x = append([]float64(nil), d...)
	swap = make([]bool, n)
	for k := 0; k < n-1; k++ {
		if math.Abs(A[k+1][k]) > math.Abs(A[k][k]) {
			A[k], A[k+1] = A[k+1], A[k]
			x[k], x[k+1] = x[k+1], x[k]
			swap[k] = true
		}
		for i := k + 1; i < n; i++ {
			if A[i][k] == 0 {
				continue
			}
			f := A[i][k] / A[k][k]
			for j := k; j < n; j++ {
				A[i][j] -= f * A[k][j]
			}
			x[i] -= f * x[k]
		}
	}
	for i := n - 1; i >= 0; i-- {
		s := x[i]
		for j := i + 1; j < n; j++ {
			s -= A[i][j] * x[j]
		}
		x[i] = s / A[i][i]
	}
	return A, swap, x
}

// TestGTTRFMatchesDenseGEPP: the stored gttrf factors hold the U and the
// interchanges of a dense LU with partial pivoting (U's diagonal and two
// super-diagonals, zero above), and the factored solve its solution.
func TestGTTRFMatchesDenseGEPP(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{1, 2, 3, 5, 64, 300} {
		g := 4
		a, b, c, d := make([]float64, n*g), make([]float64, n*g), make([]float64, n*g), make([]float64, n*g)
		for k := range b {
			a[k], b[k], c[k], d[k] = r.Float64()*2-1, r.Float64()*2-1, r.Float64()*2-1, r.Float64()*2-1
		}
		fs := storedFactors(t, n, g, Options{Algorithm: GTSV}, a, b, c)
		for k, f := range fs {
			o := k * n
			require.Equal(t, kindGT, f.kind)
			u, swap, want := denseGEPP(a[o:o+n], b[o:o+n], c[o:o+n], d[o:o+n])
			for i := range n {
				assert.Equal(t, swap[i], f.ipiv[i] == 1, "N=%d system %d: interchange at %d", n, k, i)
				scale := math.Abs(u[i][i]) + 1
				assert.InDelta(t, u[i][i], f.f[1][i], 1e-13*scale, "N=%d system %d: U[%d][%d]", n, k, i, i)
				if i+1 < n {
					assert.InDelta(t, u[i][i+1], f.f[2][i], 1e-13*scale, "N=%d: U[%d][%d]", n, i, i+1)
				}
				if i+2 < n {
					assert.InDelta(t, u[i][i+2], f.f[3][i], 1e-13*scale, "N=%d: U[%d][%d]", n, i, i+2)
				}
				for j := i + 3; j < n; j++ {
					assert.Zero(t, u[i][j])
				}
			}
			x := make([]float64, n)
			f.solve(d[o:o+n], x, 1, 0, 1, nil)
			var num, den float64
			for i := range x {
				num = math.Max(num, math.Abs(x[i]-want[i]))
				den = math.Max(den, math.Abs(want[i]))
			}
			assert.LessOrEqual(t, num/den, 1e-10, "N=%d system %d", n, k)
		}
	}
}

// TestLUFactorsReproduceA: L·U built from the stored factors of Thomas
// (l, 1/u, c/u) gives back a, b and c to rounding, and the pivots are
// those of Thomas's sweep.
func TestLUFactorsReproduceA(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{1, 2, 3, 5, 64, 1000} {
		g := 3
		a, b, c := make([]float64, n*g), make([]float64, n*g), make([]float64, n*g)
		for k := range b {
			a[k], b[k], c[k] = r.Float64()*2-1, 4+r.Float64()*2-1, r.Float64()*2-1
		}
		fs := storedFactors(t, n, g, Options{Algorithm: Thomas}, a, b, c)
		for k, f := range fs {
			o := k * n
			require.Equal(t, kindLU, f.kind)
			l, rinv, cp := f.f[0], f.f[1], f.f[2]
			piv := b[o]
			for i := range n {
				u := 1 / rinv[i]
				if i > 0 {
					cpPrev := c[o+i-1] / piv
					piv = b[o+i] - float64(a[o+i]*cpPrev) // Thomas's operations, unfused
					um := 1 / rinv[i-1]
					assert.InDelta(t, a[o+i], l[i]*um, 1e-14, "N=%d: A[%d][%d]", n, i, i-1)
					assert.InDelta(t, b[o+i], l[i]*um*cp[i-1]+u, 1e-14, "N=%d: A[%d][%d]", n, i, i)
				} else {
					assert.InDelta(t, b[o], u, 1e-14)
				}
				assert.True(t, within(1/piv, rinv[i], 0), "N=%d: 1/u[%d] is 1 over Thomas's pivot", n, i)
				if i < n-1 {
					assert.InDelta(t, c[o+i], u*cp[i], 1e-14, "N=%d: A[%d][%d]", n, i, i+1)
				} else {
					assert.Zero(t, cp[i])
				}
			}
		}
	}
}
