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

// TestThomasBoundedMatchesThomas: on diagonally dominant and symmetric
// positive definite systems the test passes and the result is Thomas's,
// bit for bit, in place too.
func TestThomasBoundedMatchesThomas(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{1, 2, 3, 64, 1000} {
		dd := func() (a, b, c, d []float64) { return randSystem(r, n, 2) }
		spd := func() (a, b, c, d []float64) {
			// The Poisson matrix (−1, 2, −1): weakly dominant and SPD.
			a, b, c, d = randSystem(r, n, 0)
			for i := range n {
				a[i], b[i], c[i] = -1, 2, -1
			}
			a[0], c[n-1] = 0, 0
			return
		}
		for name, mk := range map[string]func() (a, b, c, d []float64){"dominant": dd, "poisson": spd} {
			a, b, c, d := mk()
			want := make([]float64, n)
			require.NoError(t, Thomas(a, b, c, d, want, make([]float64, n)))
			got := make([]float64, n)
			require.NoError(t, ThomasBounded(a, b, c, d, got, make([]float64, n)), "%s n=%d", name, n)
			assert.Equal(t, want, got, "%s n=%d", name, n)
			require.NoError(t, ThomasBounded(a, b, c, d, d, make([]float64, n)))
			assert.Equal(t, want, d, "%s n=%d in place", name, n)
		}
	}
}

// TestThomasBoundedRejectsGrowth: on tridiag(1, 1e−8, 1) the fill of row
// 1 is 1e8 times its diagonal, and on a zero diagonal it is unbounded;
// Thomas goes on through both without a zero pivot.
func TestThomasBoundedRejectsGrowth(t *testing.T) {
	n := 16
	for _, diag := range []float64{1e-8, 0.4} {
		a, b, c, d := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
		for i := range n {
			a[i], b[i], c[i], d[i] = 1, diag, 1, 1
		}
		err := ThomasBounded(a, b, c, d, make([]float64, n), make([]float64, n))
		var pe *PivotError
		require.ErrorAs(t, err, &pe, "diag %g", diag)
		assert.ErrorIs(t, err, ErrPivotGrowth)
		assert.Equal(t, 1, pe.Row)
		require.NoError(t, Thomas(a, b, c, d, make([]float64, n), make([]float64, n)), "Thomas does not notice (diag %g)", diag)
	}
	// Pivots 1, 0.5, −1: row 2's fill 1·1/0.5 = 2 is allowed against
	// |b[2]| = 1, row 3's 1·1/1 = 1 is not against |b[3]| = 0.4.
	a := []float64{0, 0.5, 1, 1}
	b := []float64{1, 1, 1, 0.4}
	c := []float64{1, 1, 1, 0}
	d := []float64{1, 1, 1, 1}
	err := ThomasBounded(a, b, c, d, make([]float64, 4), make([]float64, 4))
	var pe *PivotError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, 3, pe.Row)
	// A zero pivot within the bound is a zero pivot.
	a = []float64{0, 1, 0}
	b = []float64{1, 1, 1}
	c = []float64{1, 0, 0}
	err = ThomasBounded(a, b, c, []float64{1, 1, 1}, make([]float64, 3), make([]float64, 3))
	require.ErrorAs(t, err, &pe)
	assert.ErrorIs(t, err, ErrZeroPivot)
	assert.Equal(t, 1, pe.Row)
}
