package sparse

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func rcmPermute(t *testing.T, a *CSR) (*CSR, []int) {
	t.Helper()
	p, err := RCM(a)
	require.NoError(t, err)
	require.NoError(t, CheckPerm(p, a.N))
	b, err := a.Permute(p, p)
	require.NoError(t, err)
	return b, p
}

func TestRCMScrambledBanded(t *testing.T) {
	rng := newRNG(21)
	for _, c := range []struct {
		n, k int
		fill float64
	}{{301, 3, 1}, {997, 5, 0.7}, {1500, 12, 0.5}} {
		a := RandomBanded(c.n, c.k, c.fill, 1, rng)
		scr, _ := ScrambleSymmetric(a, rng)
		before := scr.Bandwidth()
		b, _ := rcmPermute(t, scr)
		after := b.Bandwidth()
		t.Logf("banded N=%d K=%d fill=%.1f: scrambled K=%d, after RCM K=%d", c.n, c.k, c.fill, before, after)
		assert.Greater(t, before, c.n/2)
		assert.LessOrEqual(t, after, 2*c.k, "RCM should recover a band close to K=%d", c.k)
	}
}

func TestRCMGrid(t *testing.T) {
	rng := newRNG(22)
	for _, m := range []int{13, 30, 47} {
		a := ConvectionDiffusion2D(m, 1, 2)
		assert.Equal(t, m, a.Bandwidth())
		scr, _ := ScrambleSymmetric(a, rng)
		b, _ := rcmPermute(t, scr)
		t.Logf("%d×%d grid: scrambled K=%d, after RCM K=%d", m, m, scr.Bandwidth(), b.Bandwidth())
		assert.LessOrEqual(t, b.Bandwidth(), m+1)
		assert.GreaterOrEqual(t, b.Bandwidth(), m-1)
	}
}

func TestRCMComponentsAndEdges(t *testing.T) {
	// Two scrambled paths and isolated nodes: each component contiguous,
	// bandwidth 1.
	c := NewCOO(11, 11, 0)
	for i := range 11 {
		c.Add(i, i, 1)
	}
	for _, path := range [][]int{{7, 2, 9, 4}, {0, 5, 10, 3, 8}} {
		for k := 1; k < len(path); k++ {
			c.Add(path[k-1], path[k], 1) // unsymmetric: only one direction
		}
	}
	a := mustCSR(t, c)
	b, p := rcmPermute(t, a)
	assert.Equal(t, 1, b.Bandwidth())
	// Deterministic.
	p2, _ := RCM(a)
	assert.Equal(t, p, p2)

	// Pseudo-peripheral start: a path numbered from its middle still gets
	// bandwidth 1 (starting at the middle would give 2).
	c = NewCOO(9, 9, 0)
	order := []int{8, 6, 4, 2, 0, 1, 3, 5, 7}
	for k := 1; k < 9; k++ {
		c.Add(order[k-1], order[k], 1)
		c.Add(order[k], order[k-1], 1)
	}
	b, _ = rcmPermute(t, mustCSR(t, c))
	assert.Equal(t, 1, b.Bandwidth())

	p, err := RCM(mustCSR(t, NewCOO(0, 0, 0)))
	require.NoError(t, err)
	assert.Empty(t, p)
	_, err = RCM(mustCSR(t, NewCOO(2, 3, 0)))
	require.ErrorIs(t, err, ErrShape)
}

func TestSymmetricGraph(t *testing.T) {
	a := mustCSR(t, randomCOO(40, 40, 200, newRNG(23)))
	g := symmetricGraph(a)
	for i := range 40 {
		var want []int32
		for j := range 40 {
			if j != i && (a.hasEntry(i, j) || a.hasEntry(j, i)) {
				want = append(want, int32(j))
			}
		}
		assert.Equal(t, want, append([]int32(nil), g.nbrs(i)...), "row %d", i)
	}
}

func (a *CSR) hasEntry(i, j int) bool {
	for p := a.RowPtr[i]; p < a.RowPtr[i+1]; p++ {
		if int(a.Col[p]) == j {
			return true
		}
	}
	return false
}
