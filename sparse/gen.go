package sparse

import (
	"math/rand/v2"
)

// RandomPerm returns a uniformly random permutation of 0…n−1.
func RandomPerm(n int, rng *rand.Rand) []int {
	return rng.Perm(n)
}

// RandomBanded returns an N×N sparse matrix of half-bandwidth exactly K
// (for N > K ≥ 1) with a given degree of diagonal dominance d ≥ 0 (Li et
// al. 2014, footnote 2): every off-diagonal position with |i−j| ≤ K holds a
// value from U(−1, 1) with probability fill (the positions (0, K) and
// (K, 0) always do, so the bandwidth is K), and the diagonal is
// ±d·Σ_{j≠i}|a_ij| with a random sign (1 for a row with no off-diagonal
// entry). So |a_ii| = d·Σ_{j≠i}|a_ij|: diagonally dominant for d ≥ 1.
// The work is O(N·K).
func RandomBanded(n, k int, fill, d float64, rng *rand.Rand) *CSR {
	k = min(k, n-1)
	a := &CSR{N: n, M: n, RowPtr: make([]int32, n+1)}
	for i := range n {
		diag := len(a.Col)
		off := 0.0
		for j := max(0, i-k); j <= min(n-1, i+k); j++ {
			if j == i {
				a.Col = append(a.Col, int32(j))
				a.Val = append(a.Val, 0)
				diag = len(a.Col) - 1
				continue
			}
			force := k > 0 && ((i == 0 && j == k) || (i == k && j == 0))
			if force || rng.Float64() < fill {
				v := 2*rng.Float64() - 1
				if v == 0 {
					v = 0.5
				}
				a.Col = append(a.Col, int32(j))
				a.Val = append(a.Val, v)
				off += abs(v)
			}
		}
		dv := d * off
		if off == 0 {
			dv = 1
		}
		if rng.IntN(2) == 0 {
			dv = -dv
		}
		a.Val[diag] = dv
		a.RowPtr[i+1] = int32(len(a.Col))
	}
	return a
}

// RandomSparse returns an N×N unsymmetric sparse matrix with about perRow
// entries per row at random columns, values from U(−1, 1), plus one entry
// per row on a hidden random transversal (row i, column σ(i)) of magnitude
// in [1, 2), so it is structurally nonsingular and its maximum-product
// matching is non-trivial. Repeated positions are summed.
func RandomSparse(n, perRow int, rng *rand.Rand) *CSR {
	c := NewCOO(n, n, n*(perRow+1))
	sigma := rng.Perm(n)
	for i := range n {
		s := 1.0
		if rng.IntN(2) == 0 {
			s = -1
		}
		c.Add(i, sigma[i], s*(1+rng.Float64()))
		for range perRow - 1 {
			c.Add(i, rng.IntN(n), 2*rng.Float64()-1)
		}
	}
	a, err := c.ToCSR()
	if err != nil {
		panic(err) // indices are in range by construction
	}
	return a
}

// ScrambleSymmetric applies a random symmetric permutation to the square
// matrix A (scattering its band) and returns the permuted matrix
// A.Permute(perm, perm) and perm (gather list).
func ScrambleSymmetric(a *CSR, rng *rand.Rand) (*CSR, []int) {
	perm := rng.Perm(a.N)
	b, err := a.Permute(perm, perm)
	if err != nil {
		panic(err) // a permutation of the right length by construction
	}
	return b, perm
}

// ConvectionDiffusion2D returns the 5-point finite-difference operator of
// −Δu + bx·∂u/∂x + by·∂u/∂y on the unit square with zero Dirichlet
// boundary values, on an m×m grid of interior points (h = 1/(m+1)),
// multiplied by h²: diagonal 4, west and east neighbours −1 ∓ bx·h/2,
// south and north neighbours −1 ∓ by·h/2 (central differences for the
// convection, which makes the matrix unsymmetric when bx or by is not
// zero). Unknown (x_i, y_j) is row i + m·j, so the half-bandwidth is m.
// With bx = by = 0 it is the 2-D Laplacian.
func ConvectionDiffusion2D(m int, bx, by float64) *CSR {
	n := m * m
	h := 1 / float64(m+1)
	cx, cy := bx*h/2, by*h/2
	a := &CSR{N: n, M: n, RowPtr: make([]int32, n+1), Col: make([]int32, 0, 5*n), Val: make([]float64, 0, 5*n)}
	add := func(j int, v float64) {
		a.Col = append(a.Col, int32(j))
		a.Val = append(a.Val, v)
	}
	for y := range m {
		for x := range m {
			r := x + m*y
			if y > 0 {
				add(r-m, -1-cy)
			}
			if x > 0 {
				add(r-1, -1-cx)
			}
			add(r, 4)
			if x < m-1 {
				add(r+1, -1+cx)
			}
			if y < m-1 {
				add(r+m, -1+cy)
			}
			a.RowPtr[r+1] = int32(len(a.Col))
		}
	}
	return a
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
