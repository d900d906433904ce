package stability

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
)

func TestRandsvdSigma(t *testing.T) {
	const n, kappa = 40, 1e15
	for mode := 1; mode <= 4; mode++ {
		s := randsvdSigma(n, kappa, mode)
		require.Len(t, s, n)
		assert.Equal(t, 1.0, s[0], "mode %d", mode)
		assert.Equal(t, 1/kappa, s[n-1], "mode %d", mode)
		assert.InDelta(t, kappa, s[0]/s[n-1], kappa*1e-12, "mode %d", mode)
		for i := 1; i < n; i++ {
			assert.LessOrEqual(t, s[i], s[i-1], "mode %d not sorted", mode)
		}
	}
	one := randsvdSigma(n, kappa, 1)
	assert.Equal(t, 1/kappa, one[1])
	small := randsvdSigma(n, kappa, 2)
	assert.Equal(t, 1.0, small[n-2])
	geo := randsvdSigma(n, kappa, 3)
	for i := 1; i < n; i++ {
		assert.InDelta(t, math.Pow(kappa, -1/float64(n-1)), geo[i]/geo[i-1], 1e-12)
	}
	ari := randsvdSigma(n, kappa, 4)
	for i := 2; i < n; i++ {
		assert.InDelta(t, ari[1]-ari[0], ari[i]-ari[i-1], 1e-14)
	}
}

func TestHaarOrthogonal(t *testing.T) {
	const n = 30
	q := haar(n, rand.New(rand.NewPCG(1, 2)))
	var p mat.Dense
	p.Mul(q.T(), q)
	for i := range n {
		for j := range n {
			want := 0.0
			if i == j {
				want = 1
			}
			assert.InDelta(t, want, p.At(i, j), 1e-13)
		}
	}
}

// The two-sided reduction keeps the singular values of any matrix.
func TestReduceTridiagKeepsSingularValues(t *testing.T) {
	const n = 30
	rng := rand.New(rand.NewPCG(4, 5))
	d := make([]float64, n*n)
	for i := range d {
		d[i] = rng.NormFloat64()
	}
	want := singularValues(mat.NewDense(n, n, append([]float64(nil), d...)))
	m := reduceTridiag(d, n)
	got := singularValues(dense(m))
	assert.InDeltaSlice(t, want, got, 1e-12*want[0])
}

func TestRandsvdTypes(t *testing.T) {
	const n = 40
	modes := map[Type]int{8: 2, 9: 3, 10: 1, 11: 4}
	for ty, mode := range modes {
		m, err := Generate(ty, n, 99)
		require.NoError(t, err)
		// Generate returns the band only; the singular values of that band
		// must be the prescribed ones, so nothing was lost outside it.
		got := singularValues(dense(m))
		want := randsvdSigma(n, 1e15, mode)
		for i := range n {
			assert.InDelta(t, want[i], got[i], 1e-10*want[0], "type %d sigma %d", ty, i)
		}
		// Condition number of the prescribed set is 1e15; the computed
		// smallest singular value is only accurate to about n·eps·sigma_max.
		assert.Greater(t, got[0]/got[n-1], 1e13, "type %d", ty)
		// Off-diagonals really are non-trivial (not a diagonal matrix).
		nz := 0
		for i := 1; i < n; i++ {
			if m.A[i] != 0 && m.C[i-1] != 0 {
				nz++
			}
		}
		assert.Equal(t, n-1, nz, "type %d", ty)
	}
}

func TestRandsvdTime512(t *testing.T) {
	if testing.Short() {
		t.Skip("timing")
	}
	start := time.Now()
	_, err := Generate(9, 512, 1)
	require.NoError(t, err)
	el := time.Since(start)
	t.Logf("randsvd n=512: %v", el)
	assert.Less(t, el, 10*time.Second)
}
