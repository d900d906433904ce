package sparse

import (
	"math"
	"os"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
)

// bruteDropOff tries every K from 0.
func bruteDropOff(a *CSR, delta float64) int {
	total := 0.0
	for _, v := range a.Val {
		total += v * v
	}
	for k := 0; ; k++ {
		s := 0.0
		for i := range a.N {
			for p := a.RowPtr[i]; p < a.RowPtr[i+1]; p++ {
				if d := i - int(a.Col[p]); d <= k && -d <= k {
					s += a.Val[p] * a.Val[p]
				}
			}
		}
		if s >= delta*total || k >= a.Bandwidth() {
			return k
		}
	}
}

func TestDropOff(t *testing.T) {
	rng := newRNG(31)
	for trial := range 40 {
		n := 5 + rng.IntN(80)
		a := mustCSR(t, randomCOO(n, n, 4*n, rng))
		for _, delta := range []float64{0.1, 0.5, 0.9, 0.99, 0.999999} {
			k := DropOff(a, delta)
			require.Equal(t, bruteDropOff(a, delta), k, "trial %d delta %g", trial, delta)
			// The kept fraction satisfies Eq. 13, one less does not.
			require.LessOrEqual(t, bandFraction(a, k), 1-delta+1e-12)
			if k > 0 {
				require.Greater(t, bandFraction(a, k-1), 1-delta-1e-12)
			}
		}
		assert.Equal(t, 0, DropOff(a, 0))
		assert.Equal(t, a.Bandwidth(), DropOff(a, 1))
	}
	// A banded matrix with tiny far entries: they are dropped.
	a := RandomBanded(200, 3, 1, 2, rng)
	c := a.ToCOO()
	c.Add(0, 150, 1e-9)
	c.Add(170, 2, -1e-9)
	b := mustCSR(t, c)
	assert.Equal(t, 168, b.Bandwidth())
	assert.Equal(t, 3, DropOff(b, 0.999999))
	assert.Equal(t, 0, DropOff(mustCSR(t, NewCOO(3, 3, 0)), 0.5))
}

func TestPartition(t *testing.T) {
	b, err := Partition(10, 3)
	require.NoError(t, err)
	assert.Equal(t, []int{0, 4, 7, 10}, b)
	b, err = Partition(7, 7)
	require.NoError(t, err)
	assert.Equal(t, []int{0, 1, 2, 3, 4, 5, 6, 7}, b)
	b, err = Partition(1003, 16) // 1003 = 16·62 + 11
	require.NoError(t, err)
	for s := range 16 {
		want := 62
		if s < 11 {
			want = 63
		}
		assert.Equal(t, want, b[s+1]-b[s])
	}
	_, err = Partition(5, 6)
	require.ErrorIs(t, err, ErrShape)
	_, err = Partition(5, 0)
	require.ErrorIs(t, err, ErrShape)
}

// blockScrambled builds a matrix whose diagonal blocks are banded
// (half-bandwidth k) but scrambled inside each block, with a few coupling
// entries between neighbouring blocks.
func blockScrambled(t *testing.T, n, p, k int) (*CSR, []int) {
	rng := newRNG(uint64(n + p + k))
	bounds, err := Partition(n, p)
	require.NoError(t, err)
	a := RandomBanded(n, k, 0.8, 1, rng)
	// Keep the block-diagonal part of a, then couple neighbours.
	c := NewCOO(n, n, 0)
	for s := range p {
		lo, hi := bounds[s], bounds[s+1]
		blk := a.subBlock(lo, hi)
		for i := range blk.N {
			for q := blk.RowPtr[i]; q < blk.RowPtr[i+1]; q++ {
				c.Add(lo+i, lo+int(blk.Col[q]), blk.Val[q])
			}
		}
		if s > 0 {
			c.Add(lo, lo-1, 0.1)
			c.Add(lo-1, lo, 0.1)
		}
	}
	// Scramble inside each block.
	perm := make([]int, 0, n)
	for s := range p {
		lo, hi := bounds[s], bounds[s+1]
		for _, x := range rng.Perm(hi - lo) {
			perm = append(perm, lo+x)
		}
	}
	b, err := mustCSR(t, c).Permute(perm, perm)
	require.NoError(t, err)
	return b, bounds
}

func TestBlockRCM(t *testing.T) {
	a, bounds := blockScrambled(t, 1201, 7, 4)
	before, err := BlockBandwidths(a, bounds)
	require.NoError(t, err)
	perm, ks, err := BlockRCM(a, bounds)
	require.NoError(t, err)
	require.NoError(t, CheckPerm(perm, a.N))
	t.Logf("per-block K before %v, after BlockRCM %v", before, ks)
	for s := range ks {
		assert.Greater(t, before[s], 50)
		assert.LessOrEqual(t, ks[s], 8)
		// The permutation maps each partition onto itself.
		for i := bounds[s]; i < bounds[s+1]; i++ {
			require.True(t, perm[i] >= bounds[s] && perm[i] < bounds[s+1])
		}
	}
	b, err := a.Permute(perm, perm)
	require.NoError(t, err)
	assert.Equal(t, a.NNZ(), b.NNZ(), "coupling entries are kept")
	got, err := BlockBandwidths(b, bounds)
	require.NoError(t, err)
	assert.Equal(t, ks, got)
	ck := couplingBandwidth(b, bounds)
	t.Logf("coupling half-bandwidth before %d, after %d", couplingBandwidth(a, bounds), ck)
	assert.LessOrEqual(t, ck, 2*slices.Max(ks))

	_, _, err = BlockRCM(a, []int{0, 5, 5, a.N})
	require.ErrorIs(t, err, ErrShape)
	_, _, err = BlockRCM(a, []int{0, 5})
	require.ErrorIs(t, err, ErrShape)
}

// solveReordered solves A x = b through the reordering: the reordered
// matrix goes to banded storage with its full bandwidth, is solved densely
// and the solution is mapped back.
func solveReordered(t *testing.T, r *Reordering, b []float64) []float64 {
	t.Helper()
	k := min(r.Matrix.Bandwidth(), r.N-1)
	band, dropped, err := ToBand[float64](r.Matrix, k)
	require.NoError(t, err)
	require.Zero(t, dropped)
	d := mat.NewDense(r.N, r.N, nil)
	for i := range r.N {
		for j := max(0, i-k); j <= min(r.N-1, i+k); j++ {
			d.Set(i, j, band.At(i, j))
		}
	}
	pb, err := r.PermuteVector(b)
	require.NoError(t, err)
	y := denseSolve(t, d, pb)
	x, err := r.UnpermuteVector(y)
	require.NoError(t, err)
	return x
}

func TestReorderRoundTrip(t *testing.T) {
	rng := newRNG(32)
	base := RandomBanded(311, 4, 0.7, 0.8, rng)
	scr, _ := ScrambleSymmetric(base, rng)
	a, err := scr.Permute(rng.Perm(scr.N), nil) // and rows scrambled
	require.NoError(t, err)
	xTrue := randVec(a.N, rng)
	b := make([]float64, a.N)
	require.NoError(t, a.MulVec(xTrue, b))
	for _, opts := range []ReorderOptions{
		{},
		{Matching: true},
		{RCM: true},
		{Matching: true, RCM: true},
		{Matching: true, Scale: true, RCM: true},
		{Matching: true, RCM: true, Delta: 0.99, Partitions: 5},
		{Matching: true, Scale: true, RCM: true, Delta: 0.999, Partitions: 4, SecondRCM: true},
		{RCM: true, SecondRCM: true},
	} {
		r, err := Reorder(a, opts)
		require.NoError(t, err, "%+v", opts)
		require.NoError(t, r.Matrix.Check())
		require.NoError(t, r.Kept.Check())
		// Matrix is A under the documented convention.
		for i := range a.N {
			for p := r.Matrix.RowPtr[i]; p < r.Matrix.RowPtr[i+1]; p++ {
				j := int(r.Matrix.Col[p])
				want := a.At(r.RowPerm[i], r.ColPerm[j])
				if opts.Scale {
					want *= r.RowScale[r.RowPerm[i]] * r.ColScale[r.ColPerm[j]]
				}
				require.InDelta(t, want, r.Matrix.Val[p], 1e-13*math.Abs(want))
			}
		}
		assert.Equal(t, a.NNZ(), r.Matrix.NNZ())
		x := solveReordered(t, r, b)
		assert.Less(t, relResidual(t, a, x, b), 1e-12, "%+v", opts)
		t.Logf("%+v: K original %d, matching %d, RCM %d, drop-off %d (dropped %.2g), final %d, blocks %v, coupling %d",
			opts, r.KOriginal, r.KMatching, r.KRCM, r.KDropOff, r.DroppedFraction, r.KFinal, r.BlockK, r.CouplingK)
	}
	_, err = Reorder(a, ReorderOptions{Delta: 1})
	require.ErrorIs(t, err, ErrShape)
	_, err = Reorder(a, ReorderOptions{Scale: true})
	require.ErrorIs(t, err, ErrShape)
	_, err = Reorder(a, ReorderOptions{Partitions: a.N + 1})
	require.ErrorIs(t, err, ErrShape)
	_, err = Reorder(mustCSR(t, NewCOO(3, 4, 0)), ReorderOptions{})
	require.ErrorIs(t, err, ErrShape)
	r, _ := Reorder(a, ReorderOptions{})
	_, err = r.PermuteVector(make([]float64, 3))
	require.ErrorIs(t, err, ErrShape)
	_, err = r.UnpermuteVector(make([]float64, 3))
	require.ErrorIs(t, err, ErrShape)
}

func TestReorderStages(t *testing.T) {
	rng := newRNG(33)
	// A diagonally dominant banded matrix, scrambled symmetrically and then
	// by rows: the matching restores a dominant diagonal, RCM the band.
	base := RandomBanded(1009, 6, 0.6, 1.2, rng)
	scr, _ := ScrambleSymmetric(base, rng)
	a, err := scr.Permute(rng.Perm(scr.N), nil)
	require.NoError(t, err)
	r, err := Reorder(a, ReorderOptions{Matching: true, RCM: true, Delta: 0.95, Partitions: 8, SecondRCM: true})
	require.NoError(t, err)
	t.Logf("scrambled banded N=1009 K=6: original %d, after matching %d, after RCM %d, after drop-off %d (dropped %.3f), final %d, blocks %v, coupling %d",
		r.KOriginal, r.KMatching, r.KRCM, r.KDropOff, r.DroppedFraction, r.KFinal, r.BlockK, r.CouplingK)
	assert.Greater(t, r.KOriginal, 900)
	assert.LessOrEqual(t, r.KRCM, 12)
	assert.LessOrEqual(t, r.KDropOff, r.KRCM)
	assert.LessOrEqual(t, r.DroppedFraction, 0.05+1e-12)
	// Dominance recovered: every diagonal entry dominates its row.
	for i := range r.N {
		off := 0.0
		for p := r.Matrix.RowPtr[i]; p < r.Matrix.RowPtr[i+1]; p++ {
			if int(r.Matrix.Col[p]) != i {
				off += math.Abs(r.Matrix.Val[p])
			}
		}
		require.GreaterOrEqual(t, math.Abs(r.Matrix.At(i, i)), 1.2*off*(1-1e-12))
	}
	require.Len(t, r.BlockK, 8)
	for _, k := range r.BlockK {
		assert.LessOrEqual(t, k, r.KDropOff)
	}
	// Kept is Matrix less the dropped entries, with the same permutation.
	assert.Less(t, r.Kept.NNZ(), r.Matrix.NNZ())
	for i := range r.N {
		for p := r.Kept.RowPtr[i]; p < r.Kept.RowPtr[i+1]; p++ {
			require.Equal(t, r.Matrix.At(i, int(r.Kept.Col[p])), r.Kept.Val[p])
		}
	}
}

func TestReorderTestdata(t *testing.T) {
	f, err := os.Open("testdata/convdiff20-scrambled.mtx")
	require.NoError(t, err)
	defer f.Close()
	c, err := ReadMatrixMarket(f)
	require.NoError(t, err)
	a := mustCSR(t, c)
	r, err := Reorder(a, ReorderOptions{Matching: true, RCM: true})
	require.NoError(t, err)
	t.Logf("convdiff20-scrambled: K %d → matching %d → RCM %d", r.KOriginal, r.KMatching, r.KRCM)
	assert.Greater(t, r.KOriginal, 300)
	assert.LessOrEqual(t, r.KRCM, 21)
}

func TestGenerators(t *testing.T) {
	rng := newRNG(34)
	for _, d := range []float64{0.3, 1, 2.5} {
		a := RandomBanded(257, 9, 0.4, d, rng)
		require.NoError(t, a.Check())
		assert.Equal(t, 9, a.Bandwidth())
		for i := range a.N {
			off := 0.0
			for p := a.RowPtr[i]; p < a.RowPtr[i+1]; p++ {
				if int(a.Col[p]) != i {
					off += math.Abs(a.Val[p])
				}
			}
			if off > 0 {
				require.InDelta(t, d*off, math.Abs(a.At(i, i)), 1e-12*off)
			}
		}
	}
	s := RandomSparse(1000, 10, rng)
	require.NoError(t, s.Check())
	assert.InDelta(t, 10, float64(s.NNZ())/1000, 0.1)

	cd := ConvectionDiffusion2D(7, 3, 0)
	require.NoError(t, cd.Check())
	assert.Equal(t, 49, cd.N)
	assert.Equal(t, 7*7*5-4*7, cd.NNZ())
	assert.Equal(t, 7, cd.Bandwidth())
	h := 1.0 / 8
	assert.Equal(t, 4.0, cd.At(10, 10))
	assert.InDelta(t, -1+3*h/2, cd.At(10, 11), 1e-15)
	assert.InDelta(t, -1-3*h/2, cd.At(10, 9), 1e-15)
	assert.Equal(t, -1.0, cd.At(10, 17))
	assert.Equal(t, 0.0, cd.At(13, 14)) // end of a grid line
	assert.NotEqual(t, cd.At(10, 11), cd.At(11, 10), "unsymmetric")
	lap := ConvectionDiffusion2D(6, 0, 0)
	requireDenseEqual(t, lap.Dense(), lap.Transpose().Dense(), 0)
}

// TestSecondStageSparseBand is the situation of Li et al. Fig. 2: after
// the first stage the band is wide but sparse. A 40×40 grid in natural
// order has K = 40; cut into 8 blocks of 5 grid lines, each block alone is
// a 5×40 grid whose RCM bandwidth is about 5.
func TestSecondStageSparseBand(t *testing.T) {
	a := ConvectionDiffusion2D(40, 10, 5)
	r, err := Reorder(a, ReorderOptions{Partitions: 8, SecondRCM: true})
	require.NoError(t, err)
	t.Logf("40×40 grid, P=8: K %d, per-block K after the second stage %v, coupling K %d", r.KRCM, r.BlockK, r.CouplingK)
	assert.Equal(t, 40, r.KRCM)
	for _, k := range r.BlockK {
		assert.LessOrEqual(t, k, 7)
	}
	x := randVec(a.N, newRNG(35))
	b := make([]float64, a.N)
	require.NoError(t, a.MulVec(x, b))
	assert.Less(t, relResidual(t, a, solveReordered(t, r, b), b), 1e-12)
}
