package sparse

import (
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// logProduct is Σ log|a_{perm[j], j}| (−Inf when an entry is zero).
func logProduct(a *CSR, perm []int) float64 {
	s := 0.0
	for j, i := range perm {
		s += math.Log(math.Abs(a.At(i, j)))
	}
	return s
}

// bruteMaxLogProduct tries every permutation.
func bruteMaxLogProduct(a *CSR) float64 {
	n := a.N
	best := math.Inf(-1)
	perm := identity(n)
	var rec func(k int)
	rec = func(k int) {
		if k == n {
			best = math.Max(best, logProduct(a, perm))
			return
		}
		for i := k; i < n; i++ {
			perm[k], perm[i] = perm[i], perm[k]
			rec(k + 1)
			perm[k], perm[i] = perm[i], perm[k]
		}
	}
	rec(0)
	return best
}

// checkScaling checks the MC64 scaling property: matched entries ±1,
// others at most 1 in magnitude.
func checkScaling(t *testing.T, a *CSR, perm []int, rs, cs []float64) {
	t.Helper()
	matched := make([]int, a.N) // column matched to row i
	for j, i := range perm {
		matched[i] = j
	}
	for i := range a.N {
		for p := a.RowPtr[i]; p < a.RowPtr[i+1]; p++ {
			j := int(a.Col[p])
			s := math.Abs(rs[i] * a.Val[p] * cs[j])
			if matched[i] == j {
				require.InDelta(t, 1, s, 1e-9, "matched (%d, %d)", i, j)
			} else {
				require.LessOrEqual(t, s, 1+1e-9, "entry (%d, %d)", i, j)
			}
		}
	}
}

func TestMatchingBruteForce(t *testing.T) {
	rng := newRNG(11)
	for trial := range 300 {
		n := 1 + trial%7
		density := 0.3 + 0.7*rng.Float64()
		c := NewCOO(n, n, 0)
		// A hidden transversal keeps most matrices nonsingular; spread the
		// magnitudes over orders of magnitude so the product matters.
		sigma := rng.Perm(n)
		for i := range n {
			for j := range n {
				if j == sigma[i] || rng.Float64() < density {
					v := (2*rng.Float64() - 1) * math.Pow(10, 4*rng.Float64()-2)
					if v == 0 {
						v = 1
					}
					c.Add(i, j, v)
				}
			}
		}
		a := mustCSR(t, c)
		perm, rs, cs, err := MaxProductMatching(a)
		require.NoError(t, err, "trial %d", trial)
		require.NoError(t, CheckPerm(perm, n))
		got := logProduct(a, perm)
		want := bruteMaxLogProduct(a)
		require.InDelta(t, want, got, 1e-10*(1+math.Abs(want)), "trial %d, n=%d", trial, n)
		checkScaling(t, a, perm, rs, cs)
		// The permuted matrix has the matched entries on its diagonal.
		qa, err := a.Permute(perm, nil)
		require.NoError(t, err)
		for j := range n {
			require.NotZero(t, qa.At(j, j))
		}
	}
}

func TestMatchingRecoversDominantDiagonal(t *testing.T) {
	rng := newRNG(12)
	for _, n := range []int{1, 2, 37, 501, 2003} {
		a := RandomBanded(n, min(5, n-1), 0.6, 1.5, rng) // |a_ii| = 1.5·Σ|a_ij|
		q := rng.Perm(n)
		scr, err := a.Permute(q, nil) // rows scrambled
		require.NoError(t, err)
		perm, rs, cs, err := MaxProductMatching(scr)
		require.NoError(t, err)
		// Strict row dominance makes the identity the unique best matching
		// of a, so the matching of scr must undo q exactly: column j is
		// matched with the row of scr that holds a_jj, row q⁻¹[j].
		assert.Equal(t, InversePerm(q), perm, "n=%d", n)
		back, err := scr.Permute(perm, nil)
		require.NoError(t, err)
		assert.Equal(t, a, back)
		checkScaling(t, scr, perm, rs, cs)
	}
}

func TestMatchingRandomSparse(t *testing.T) {
	rng := newRNG(13)
	a := RandomSparse(3001, 6, rng)
	perm, rs, cs, err := MaxProductMatching(a)
	require.NoError(t, err)
	require.NoError(t, CheckPerm(perm, a.N))
	// The scaling property is an optimality certificate: all scaled
	// entries are ≤ 1 and the matched ones are 1, so no permutation has a
	// larger product.
	checkScaling(t, a, perm, rs, cs)
	// Local check of the same: exchanging the rows of two columns never
	// increases the product.
	best := logProduct(a, perm)
	swaps := 0
	colOf := InversePerm(perm) // column matched to each row
	at := a.Transpose()
	for j1 := range a.N {
		i1 := perm[j1]
		for p := at.RowPtr[j1]; p < at.RowPtr[j1+1]; p++ {
			i2 := int(at.Col[p])
			j2 := colOf[i2]
			if i2 == i1 || a.At(i1, j2) == 0 {
				continue
			}
			swaps++
			perm[j1], perm[j2] = i2, i1
			require.LessOrEqual(t, logProduct(a, perm), best+1e-9)
			perm[j1], perm[j2] = i1, i2
		}
	}
	t.Logf("%d two-column exchanges tried", swaps)
	require.Positive(t, swaps)
}

func TestMatchingSingular(t *testing.T) {
	// Rows 0 and 1 have entries only in column 0; column 2 is empty.
	c := NewCOO(4, 4, 0)
	c.Add(0, 0, 1)
	c.Add(1, 0, 2)
	c.Add(2, 1, 3)
	c.Add(3, 3, 1)
	c.Add(2, 3, 1)
	c.Add(3, 2, 0) // a stored zero does not count
	_, _, _, err := MaxProductMatching(mustCSR(t, c))
	require.ErrorIs(t, err, ErrStructurallySingular)
	var se *SingularError
	require.True(t, errors.As(err, &se))
	assert.Equal(t, 1, se.Unmatched)
	assert.Equal(t, 4, se.N)
	assert.Contains(t, err.Error(), "1 of 4 rows unmatched")

	// Two empty rows and columns.
	c = NewCOO(5, 5, 0)
	c.Add(0, 0, 1)
	c.Add(1, 2, 1)
	c.Add(4, 4, 1)
	_, _, _, err = MaxProductMatching(mustCSR(t, c))
	require.True(t, errors.As(err, &se))
	assert.Equal(t, 2, se.Unmatched)

	_, _, _, err = MaxProductMatching(mustCSR(t, NewCOO(2, 3, 0)))
	require.ErrorIs(t, err, ErrShape)
	// The empty matrix is trivially matched.
	perm, _, _, err := MaxProductMatching(mustCSR(t, NewCOO(0, 0, 0)))
	require.NoError(t, err)
	assert.Empty(t, perm)
}
