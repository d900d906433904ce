package main

import (
	"math/cmplx"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/banded"
	"github.com/bandsolve/bandsolve/npy"
)

// complexGeneral is a random complex band with 3 added to the diagonal:
// well conditioned, not diagonally dominant (pivoting interchanges rows).
func complexGeneral(n, kl, ku int, rng *rand.Rand) *banded.General[complex128] {
	g, err := banded.NewGeneral[complex128](n, kl, ku)
	if err != nil {
		panic(err)
	}
	for i := 0; i < n; i++ {
		for j := max(0, i-kl); j <= min(n-1, i+ku); j++ {
			g.Set(i, j, complex(2*rng.Float64()-1, 2*rng.Float64()-1))
		}
		g.Set(i, i, g.At(i, i)+3)
	}
	return g
}

// bandsolve banded solves a complex .npy band (c16 and c8, (2K+1, N) or
// -kl/-ku) by LU with partial pivoting, writes x in the dtype of the
// input, and refuses other methods and a singular band naming its row.
func TestBandedNPYComplex(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(3, 4))
	n, kl, ku := 301, 2, 5
	g := complexGeneral(n, kl, ku, rng)
	want := make([]complex128, n)
	for i := range want {
		want[i] = complex(float64(i%5)-2, float64(i%3)-1)
	}
	b := make([]complex128, n)
	g.MulVec(want, b)
	abPath, bPath := filepath.Join(dir, "ab.npy"), filepath.Join(dir, "b.npy")
	require.NoError(t, npy.WriteFile(abPath, []int{kl + ku + 1, n}, g.Data))
	require.NoError(t, npy.WriteFile(bPath, []int{n}, b))
	cond, err := banded.CondEstGeneral(g)
	require.NoError(t, err)
	require.Less(t, cond, 1e4)

	xPath := filepath.Join(dir, "x.npy")
	code, out, errOut := runCmd(t, "banded", "-npy", abPath, "-kl", "2", "-ku", "5", "-rhs", bPath, "-o", xPath)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "complex128")
	assert.Contains(t, out, "KL                     2")
	h, err := npy.ReadFileHeader(xPath)
	require.NoError(t, err)
	assert.Equal(t, "<c16", h.DType)
	x, err := npy.ReadFile[complex128](xPath)
	require.NoError(t, err)
	for i := range want {
		require.LessOrEqual(t, cmplx.Abs(x.Data[i]-want[i]), 1e-14*cond, "row %d", i)
	}

	// complex64 data: solved and written as complex64; a manufactured b.
	g64 := banded.ConvertGeneralComplex[complex64](g)
	ab64 := filepath.Join(dir, "ab64.npy")
	require.NoError(t, npy.WriteFile(ab64, []int{kl + ku + 1, n}, g64.Data))
	x64Path := filepath.Join(dir, "x64.npy")
	code, out, errOut = runCmd(t, "banded", "-npy", ab64, "-kl", "2", "-ku", "5", "-o", x64Path)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "complex64")
	assert.Contains(t, out, "relative error")
	h, err = npy.ReadFileHeader(x64Path)
	require.NoError(t, err)
	assert.Equal(t, "<c8", h.DType)

	// A (2K+1, N) band with the right-hand side given as float64.
	sq := complexGeneral(40, 3, 3, rng)
	sqPath := filepath.Join(dir, "sq.npy")
	require.NoError(t, npy.WriteFile(sqPath, []int{7, 40}, sq.Data))
	rb := make([]float64, 40)
	for i := range rb {
		rb[i] = 1
	}
	rbPath := filepath.Join(dir, "rb.npy")
	require.NoError(t, npy.WriteFile(rbPath, []int{40}, rb))
	sqX := filepath.Join(dir, "sqx.npy")
	code, _, errOut = runCmd(t, "banded", "-npy", sqPath, "-rhs", rbPath, "-o", sqX)
	require.Equal(t, 0, code, errOut)
	xs, err := npy.ReadFile[complex128](sqX)
	require.NoError(t, err)
	y := make([]complex128, 40)
	sq.MulVec(xs.Data, y)
	for i := range y {
		require.InDelta(t, 0, cmplx.Abs(y[i]-1), 1e-10, "row %d", i)
	}

	// Other methods are refused.
	code, _, errOut = runCmd(t, "banded", "-npy", abPath, "-kl", "2", "-ku", "5", "-method", "direct")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "-method pivot only")

	// A singular band: the zero pivot column is named.
	for i := max(0, 17-ku); i <= min(n-1, 17+kl); i++ {
		g.Set(i, 17, 0)
	}
	singPath := filepath.Join(dir, "sing.npy")
	require.NoError(t, npy.WriteFile(singPath, []int{kl + ku + 1, n}, g.Data))
	code, _, errOut = runCmd(t, "banded", "-npy", singPath, "-kl", "2", "-ku", "5")
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "row 17")
}
