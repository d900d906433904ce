package tri

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/lapack/gonum"
)

func randSystem(r *rand.Rand, n int, dom float64) (a, b, c, d []float64) {
	a, b, c, d = make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	for i := range n {
		a[i], b[i], c[i], d[i] = r.Float64()*2-1, r.Float64()*2-1+dom, r.Float64()*2-1, r.Float64()*2-1
	}
	a[0], c[n-1] = 0, 0
	return
}

// dgtsv solves with gonum's LAPACK Dgtsv, the oracle.
func dgtsv(a, b, c, d []float64) ([]float64, bool) {
	n := len(b)
	dl := append([]float64(nil), a[1:]...)
	du := append([]float64(nil), c[:n-1]...)
	dd := append([]float64(nil), b...)
	x := append([]float64(nil), d...)
	ok := gonum.Implementation{}.Dgtsv(n, 1, dl, dd, du, x, 1)
	return x, ok
}

func TestGTSVMatchesDgtsv(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 2, 3, 5, 17, 100, 1000} {
		for _, dom := range []float64{0, 4} {
			a, b, c, d := randSystem(r, n, dom)
			want, ok := dgtsv(a, b, c, d)
			require.True(t, ok)
			x := make([]float64, n)
			require.NoError(t, GTSV(a, b, c, d, x, NewPivotWork[float64](n)))
			assert.InDeltaSlice(t, want, x, 1e-9, "n=%d dom=%v", n, dom)
		}
	}
}

func TestGTSVZeroDiagonal(t *testing.T) {
	// b = 0 needs pivoting; Thomas breaks down at row 0, GTSV solves it.
	r := rand.New(rand.NewPCG(3, 4))
	n := 64
	a, _, c, d := randSystem(r, n, 0)
	b := make([]float64, n)
	want, ok := dgtsv(a, b, c, d)
	require.True(t, ok)
	x := make([]float64, n)
	require.NoError(t, GTSV(a, b, c, d, x, NewPivotWork[float64](n)))
	assert.InDeltaSlice(t, want, x, 1e-9)
	err := Thomas(a, b, c, d, x, make([]float64, n))
	var pe *PivotError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, 0, pe.Row)
	assert.True(t, errors.Is(err, ErrZeroPivot))
}

func TestGTSVSingular(t *testing.T) {
	// Rows 0 and 1 are both [1 1 0]: singular.
	a := []float64{0, 1, 1}
	b := []float64{1, 1, 2}
	c := []float64{1, 0, 0}
	d := []float64{1, 1, 1}
	x := make([]float64, 3)
	err := GTSV(a, b, c, d, x, NewPivotWork[float64](3))
	require.ErrorIs(t, err, ErrSingular)
}

func TestThomasMatchesDgtsv(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{1, 2, 3, 31, 500} {
		a, b, c, d := randSystem(r, n, 4)
		want, _ := dgtsv(a, b, c, d)
		x := make([]float64, n)
		require.NoError(t, Thomas(a, b, c, d, x, make([]float64, n)))
		assert.InDeltaSlice(t, want, x, 1e-12)
		// In place.
		require.NoError(t, Thomas(a, b, c, d, d, make([]float64, n)))
		assert.InDeltaSlice(t, want, d, 1e-12)
	}
}

func TestThomasZeroPivotRow(t *testing.T) {
	// Row 2's pivot is b2 - a2*c1/b1 = 1 - 1*1/1 = 0.
	a := []float64{0, 0, 1, 0}
	b := []float64{1, 1, 1, 1}
	c := []float64{0, 1, 0, 0}
	d := []float64{1, 1, 1, 1}
	err := Thomas(a, b, c, d, make([]float64, 4), make([]float64, 4))
	var pe *PivotError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, 2, pe.Row)
}
