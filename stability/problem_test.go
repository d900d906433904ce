package stability

import (
	"math"
	"math/big"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/lapack/gonum"
)

// dgtsv solves the system in float64 with gonum's LAPACK Dgtsv.
func dgtsv[T float32 | float64](p Problem[T]) []float64 {
	n := p.N()
	dl := toF64(p.A[1:])
	d := toF64(p.B)
	du := toF64(p.C[:n-1])
	x := toF64(p.D)
	if !(gonum.Implementation{}).Dgtsv(n, 1, dl, d, du, x, 1) {
		panic("dgtsv: singular")
	}
	return x
}

// residual returns ||A·x - d||₂ / (||A||_F·||x||₂) in float64, A and d taken
// from p.
func residual[T float32 | float64](p Problem[T], x []float64) float64 {
	m := Matrix{A: toF64(p.A), B: toF64(p.B), C: toF64(p.C)}
	ax := m.MulVec(x)
	d := toF64(p.D)
	for i := range ax {
		ax[i] -= d[i]
	}
	return norm2(ax) / (norm2(append(append(append([]float64{}, m.A...), m.B...), m.C...)) * norm2(x))
}

func TestReferenceWellConditioned64(t *testing.T) {
	for _, ty := range []Type{6, 19, 18, 20, 2, 17} {
		for _, n := range []int{MinN, 3, 100, 1000} {
			p, err := NewProblem[float64](ty, n, 5)
			require.NoError(t, err, "type %d n %d", ty, n)
			require.Len(t, p.X, n)
			assert.Equal(t, ty, p.Type)
			assert.Less(t, residual(p, p.X), 4e-16, "type %d n %d", ty, n)
			assert.Less(t, RelError(dgtsv(p), p.X), 1e-13, "type %d n %d", ty, n)
			assert.Less(t, RelError(p.X, p.X0), 1e-14, "type %d n %d", ty, n)
			assert.GreaterOrEqual(t, p.RefBits, uint(2*MinRefBits))
		}
	}
}

func TestReferenceWellConditioned32(t *testing.T) {
	for _, ty := range []Type{6, 19, 18, 20, 7, 3} {
		for _, n := range []int{MinN, 100, 1000} {
			p, err := NewProblem[float32](ty, n, 5)
			require.NoError(t, err, "type %d n %d", ty, n)
			// Dgtsv in float64 on the float32 data solves the same
			// rounded system as the reference.
			assert.Less(t, RelError(dgtsv(p), p.X), 1e-12, "type %d n %d", ty, n)
			// The rounded right-hand side moves the solution by ~eps32·cond.
			e := RelError(p.X, p.X0)
			assert.Less(t, e, 1e-5, "type %d n %d", ty, n)
			assert.Greater(t, e, 0.0, "type %d n %d", ty, n)
		}
	}
}

// A pivoting float64 solve of the moderately conditioned random types is
// close to the reference.
func TestReferenceRandomTypes(t *testing.T) {
	for _, ty := range []Type{1, 4, 5} {
		p, err := NewProblem[float64](ty, 512, 1)
		require.NoError(t, err)
		assert.Less(t, RelError(dgtsv(p), p.X), 1e-8, "type %d", ty)
		assert.Less(t, residual(p, p.X), 1e-15, "type %d", ty)
	}
}

// The big.Float elimination solves the system to its working precision
// whatever the conditioning: check the residual in big arithmetic.
func TestGEPPResidualHighPrecision(t *testing.T) {
	for _, ty := range []Type{1, 5, 9, 12, 13, 14, 15, 16, TypeKS16, Type14T, Type16T} {
		const n = 64
		m, err := Generate(ty, n, 3)
		require.NoError(t, err)
		d := make([]float64, n)
		for i := range d {
			d[i] = math.Sin(float64(i + 1))
		}
		const prec = 1024
		x, ok := gepp(m.A, m.B, m.C, d, prec)
		require.True(t, ok, "type %d", ty)
		var r, t1, scale, absx big.Float
		maxRel := 0.0
		for i := range n {
			r.SetPrec(4 * prec).SetFloat64(-d[i])
			scale.SetPrec(4 * prec).SetFloat64(math.Abs(d[i]))
			for j, coef := range map[int]float64{i - 1: m.A[i], i: m.B[i], i + 1: m.C[i]} {
				if j < 0 || j >= n || coef == 0 {
					continue
				}
				t1.SetPrec(4 * prec).SetFloat64(coef)
				t1.Mul(&t1, &x[j])
				r.Add(&r, &t1)
				absx.SetPrec(4 * prec).Abs(&t1)
				scale.Add(&scale, &absx)
			}
			r.Quo(&r, &scale)
			v, _ := r.Float64()
			maxRel = math.Max(maxRel, math.Abs(v))
		}
		assert.Less(t, maxRel, math.Ldexp(1, -prec+40), "type %d", ty)
	}
}

func TestNewProblemDeterministic(t *testing.T) {
	a, err := NewProblem[float32](1, 300, 9)
	require.NoError(t, err)
	b, err := NewProblem[float32](1, 300, 9)
	require.NoError(t, err)
	assert.Equal(t, a, b)
	c, err := NewProblem[float32](1, 300, 10)
	require.NoError(t, err)
	assert.NotEqual(t, a.X, c.X)
	// X0 does not depend on the type.
	d, err := NewProblem[float32](6, 300, 9)
	require.NoError(t, err)
	assert.Equal(t, a.X0, d.X0)
}

func TestNewProblemRounding(t *testing.T) {
	m, err := Generate(12, 50, 4)
	require.NoError(t, err)
	p32, err := NewProblem[float32](12, 50, 4)
	require.NoError(t, err)
	p64, err := NewProblem[float64](12, 50, 4)
	require.NoError(t, err)
	for i := range 50 {
		assert.Equal(t, float32(m.B[i]), p32.B[i])
		assert.Equal(t, m.A[i], p64.A[i])
		assert.Zero(t, p32.A[i], "1e-50 underflows in float32")
	}
	// D is the exactly rounded product: within half an ulp of the float64
	// product of the rounded data (which has its own small error).
	ad := Matrix{A: toF64(p32.A), B: toF64(p32.B), C: toF64(p32.C)}.MulVec(p32.X0)
	for i := range ad {
		assert.InDelta(t, ad[i], float64(p32.D[i]), 1e-6*(math.Abs(ad[i])+1e-30))
	}
}

func TestNewProblemSingular(t *testing.T) {
	for _, n := range []int{3, 7, 101, 513} {
		_, err := NewProblem[float64](15, n, 1)
		require.ErrorIs(t, err, ErrSingular, "clement n=%d", n)
		_, err = NewProblem[float32](15, n, 1)
		require.ErrorIs(t, err, ErrSingular, "clement n=%d", n)
		_, err = NewProblem[float64](16, n, 1)
		require.ErrorIs(t, err, ErrSingular, "zero diagonal n=%d", n)
	}
	for _, n := range []int{2, 8, 100} {
		p, err := NewProblem[float64](15, n, 1)
		require.NoError(t, err, "clement n=%d", n)
		assert.Less(t, residual(p, p.X), 1e-15)
		_, err = NewProblem[float64](16, n, 1)
		require.NoError(t, err, "zero diagonal n=%d", n)
	}
}

func TestNewProblemInvalid(t *testing.T) {
	_, err := NewProblem[float64](0, 10, 1)
	require.ErrorIs(t, err, ErrInvalid)
	_, err = NewProblem[float32](1, 1, 1)
	require.ErrorIs(t, err, ErrInvalid)
}

func TestNewProblemAllTypes(t *testing.T) {
	for _, ty := range Types(true) {
		// n even: clement and the zero-diagonal type are nonsingular.
		p, err := NewProblem[float32](ty, 512, 2)
		require.NoError(t, err, "type %d", ty)
		for _, v := range p.X {
			require.False(t, math.IsNaN(v) || math.IsInf(v, 0))
		}
	}
}

func TestNewProblemLarge(t *testing.T) {
	for _, ty := range []Type{1, 12, 16, 21} {
		p, err := NewProblem[float64](ty, 4096, 1)
		require.NoError(t, err, "type %d", ty)
		require.Len(t, p.X, 4096)
	}
	// dorr(4096, 1e-4) in float64: the exact solution of the rounded system
	// exceeds the float64 range.
	_, err := NewProblem[float64](13, 4096, 1)
	require.ErrorIs(t, err, ErrIllConditioned)
}

func TestExactSingularity(t *testing.T) {
	for _, p := range detPrimes {
		assert.True(t, new(big.Int).SetUint64(p).ProbablyPrime(20), "%d", p)
		assert.Less(t, p, uint64(1)<<63)
	}
	// dyadicMod is a ring homomorphism on dyadic rationals.
	for _, p := range detPrimes {
		v := dyadicMod(3*math.Ldexp(1, -70), p)
		assert.Equal(t, uint64(3), mulMod(v, powMod(2, 70, p), p))
		assert.Equal(t, p-3, dyadicMod(-3, p))
		assert.Equal(t, powMod(2, 1000, p), dyadicMod(math.Ldexp(1, 1000), p))
	}
	// [[1, 2], [2, 4]] and [[2^-1000, 1], [1, 2^1000]] are singular;
	// [[1, 2], [2, 4+2^-50]] is not.
	assert.True(t, exactlySingular([]float64{0, 2}, []float64{1, 4}, []float64{2, 0}))
	assert.True(t, exactlySingular([]float64{0, 1}, []float64{math.Ldexp(1, -1000), math.Ldexp(1, 1000)}, []float64{1, 0}))
	assert.False(t, exactlySingular([]float64{0, 2}, []float64{1, 4 + math.Ldexp(1, -50)}, []float64{2, 0}))
	m, err := Generate(1, 1000, 1)
	require.NoError(t, err)
	assert.False(t, exactlySingular(m.A, m.B, m.C))
}
