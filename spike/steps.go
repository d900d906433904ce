package spike

import (
	"math"

	"github.com/bandsolve/bandsolve/banded"
)

// The steps of truncated SPIKE as separate functions over plain arrays,
// each one what a GPU kernel does for one partition or one interface. The
// band arrays are in the storage of package banded (a_ij at
// a[(K+i−j)·n + j], n the order of the band); K×K blocks are dense and
// column-major (entry (p, q) at [q·K + p]).

// scanFinite returns the first (in storage order) non-finite stored entry
// of the band as a *banded.RowError wrapping banded.ErrNonFinite, or nil.
func scanFinite[T Float](a []T, n, k int) error {
	for s := 0; s <= 2*k; s++ {
		d := s - k // a_ij with i = j + d
		j0, j1 := max(0, -d), min(n, n-d)
		for q, v := range a[s*n+j0 : s*n+j1] {
			if f := float64(v); math.IsNaN(f) || math.IsInf(f, 0) {
				j := j0 + q
				return &banded.RowError{Row: j + d, Col: j, Err: banded.ErrNonFinite}
			}
		}
	}
	return nil
}

// couplingB copies the coupling block B_i = A[r1−K:r1, r1:r1+K] (Fig. 1,
// Eq. 3a–3b) of the partition ending at row r1 into the K×K block out.
// B_i is lower triangular: a_{r1−K+p, r1+q} lies in the band iff q ≤ p.
func couplingB[T Float](a []T, n, k, r1 int, out []T) {
	clear(out)
	for q := 0; q < k; q++ {
		j := r1 + q
		for p := q; p < k; p++ {
			i := r1 - k + p
			out[q*k+p] = a[(k+i-j)*n+j]
		}
	}
}

// couplingC copies the coupling block C_i = A[r0:r0+K, r0−K:r0] (Fig. 1,
// Eq. 3b–3c) of the partition starting at row r0 into the K×K block out.
// C_i is upper triangular: a_{r0+p, r0−K+q} lies in the band iff p ≤ q.
func couplingC[T Float](a []T, n, k, r0 int, out []T) {
	clear(out)
	for q := 0; q < k; q++ {
		j := r0 - k + q
		for p := 0; p <= q; p++ {
			i := r0 + p
			out[q*k+p] = a[(k+i-j)*n+j]
		}
	}
}

// rightSpikeBottom turns v, holding B_i on entry, into V_i⁽ᵇ⁾, the bottom
// K×K block of the right spike V_i = A_i⁻¹·[0; …; 0; B_i] (Eq. 3a, 3b),
// using the LU factors of A_i = L_i·U_i left in lu by
// banded.FactorLURange for the partition ending at row r1. Since the
// right-hand side is zero above its last K rows, so is the forward sweep's
// result, and only the bottom K×K blocks L_bb, U_bb of the factors take
// part (§2.2):
//
//	V_i⁽ᵇ⁾ = U_bb⁻¹ · (L_bb⁻¹ · B_i).
func rightSpikeBottom[T Float](lu []T, n, k, r1 int, v []T) {
	base := r1 - k
	for c := 0; c < k; c++ {
		col := v[c*k : (c+1)*k]
		// Forward sweep with the unit lower L_bb: l_{base+t, base+j} is at
		// lu[(k+t−j)·n + base+j].
		for j := 0; j < k; j++ {
			x := col[j]
			if x == 0 {
				continue
			}
			for t := j + 1; t < k; t++ {
				col[t] -= lu[(k+t-j)*n+base+j] * x
			}
		}
		// Backward sweep with the upper U_bb.
		for j := k - 1; j >= 0; j-- {
			x := col[j] / lu[k*n+base+j]
			col[j] = x
			if x == 0 {
				continue
			}
			for t := 0; t < j; t++ {
				col[t] -= lu[(k+t-j)*n+base+j] * x
			}
		}
	}
}

// leftSpikeTop turns w, holding C_i on entry, into W_i⁽ᵗ⁾, the top K×K
// block of the left spike W_i = A_i⁻¹·[C_i; 0; …; 0] (Eq. 3b, 3c), using
// the UL factors Ã = Ũ·L̃ (Ũ unit upper, L̃ lower) left in ul by
// banded.FactorULRange for a block starting at row r0. The right-hand side
// is zero below its first K rows, so the backward sweep with Ũ keeps those
// rows zero and only the top K×K blocks Ũ_tt, L̃_tt take part (§2.2):
//
//	W_i⁽ᵗ⁾ = L̃_tt⁻¹ · (Ũ_tt⁻¹ · C_i).
//
// ul is the whole partition (exact W_i⁽ᵗ⁾) or only its top-left l×l block
// (Options.ULBlock; SPIKE::GPU's l = 2K, §4), which approximates it.
func leftSpikeTop[T Float](ul []T, n, k, r0 int, w []T) {
	for c := 0; c < k; c++ {
		col := w[c*k : (c+1)*k]
		// Backward sweep with the unit upper Ũ_tt: ũ_{r0+t, r0+j} is at
		// ul[(k+t−j)·n + r0+j].
		for j := k - 1; j >= 0; j-- {
			x := col[j]
			if x == 0 {
				continue
			}
			for t := 0; t < j; t++ {
				col[t] -= ul[(k+t-j)*n+r0+j] * x
			}
		}
		// Forward sweep with the lower L̃_tt.
		for j := 0; j < k; j++ {
			x := col[j] / ul[k*n+r0+j]
			col[j] = x
			if x == 0 {
				continue
			}
			for t := j + 1; t < k; t++ {
				col[t] -= ul[(k+t-j)*n+r0+j] * x
			}
		}
	}
}

// extractBlock copies the diagonal block A[r0:r1, r0:r1] of the band (a,
// n, k) into dst, the storage of a band of order m = r1−r0 and
// half-bandwidth k (len(dst) ≥ (2k+1)·m; the entries outside the block's
// band are zeroed). It is the input of the UL factorization of step 3,
// which must not overwrite the LU factors of the same block.
func extractBlock[T Float](a []T, n, k, r0, r1 int, dst []T) {
	m := r1 - r0
	dst = dst[:(2*k+1)*m]
	for s := 0; s <= 2*k; s++ {
		d := s - k
		j0, j1 := max(0, -d), min(m, m-d)
		out := dst[s*m : (s+1)*m]
		clear(out[:max(j0, 0)])
		if j1 > j0 {
			copy(out[j0:j1], a[s*n+r0+j0:s*n+r0+j1])
		}
		clear(out[max(j1, j0):])
	}
}

// reducedMatrix forms R̄_i = I − W_{i+1}⁽ᵗ⁾·V_i⁽ᵇ⁾ (Eq. 11a), the K×K matrix
// of the truncated reduced system at the interface between partitions i
// and i+1, in r.
func reducedMatrix[T Float](w, v []T, k int, r []T) {
	clear(r[:k*k])
	for c := 0; c < k; c++ {
		r[c*k+c] = 1
	}
	for c := 0; c < k; c++ {
		subMatVec(w, k, v[c*k:(c+1)*k], r[c*k:(c+1)*k])
	}
}

// reducedSolve does Eq. 11b and 11c at one interface: with gb = g_i⁽ᵇ⁾ and
// gt = g_{i+1}⁽ᵗ⁾ (the last K entries of partition i and the first K of
// partition i+1 of g = D⁻¹b), it solves
//
//	R̄_i · x_{i+1}⁽ᵗ⁾ = g_{i+1}⁽ᵗ⁾ − W_{i+1}⁽ᵗ⁾·g_i⁽ᵇ⁾      (11b)
//
// with the factors of R̄_i (rf, piv), then computes
//
//	x_i⁽ᵇ⁾ = g_i⁽ᵇ⁾ − V_i⁽ᵇ⁾·x_{i+1}⁽ᵗ⁾                      (11c)
//
// into xt and xb.
func reducedSolve[T Float](w, v, rf []T, piv []int, k int, gb, gt, xt, xb []T) {
	copy(xt, gt)
	subMatVec(w, k, gb, xt)
	denseLUSolve(rf, k, piv, xt)
	copy(xb, gb)
	subMatVec(v, k, xt, xb)
}

// purify removes from the right-hand side rhs of the partition [r0, r1)
// the influence of its neighbours (Eq. 12):
//
//	b̃_i = b_i − [C_i·x_{i−1}⁽ᵇ⁾; 0; …; 0] − [0; …; 0; B_i·x_{i+1}⁽ᵗ⁾],
//
// reading C_i and B_i from the band (a, n, k), which Factor leaves holding
// the original coupling entries outside the diagonal blocks. xbPrev
// (x_{i−1}⁽ᵇ⁾) is nil for the first partition, xtNext (x_{i+1}⁽ᵗ⁾) nil for
// the last.
func purify[T Float](a []T, n, k, r0, r1 int, xbPrev, xtNext, rhs []T) {
	m := r1 - r0
	if xbPrev != nil { // C_i = A[r0:r0+K, r0−K:r0], upper triangular
		for q := 0; q < k; q++ {
			x := xbPrev[q]
			if x == 0 {
				continue
			}
			j := r0 - k + q
			for p := 0; p <= q; p++ {
				rhs[p] -= a[(k+p+r0-j)*n+j] * x
			}
		}
	}
	if xtNext != nil { // B_i = A[r1−K:r1, r1:r1+K], lower triangular
		for q := 0; q < k; q++ {
			x := xtNext[q]
			if x == 0 {
				continue
			}
			j := r1 + q
			for p := q; p < k; p++ {
				i := r1 - k + p
				rhs[m-k+p] -= a[(k+i-j)*n+j] * x
			}
		}
	}
}
