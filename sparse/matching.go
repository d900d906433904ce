package sparse

import (
	"errors"
	"fmt"
	"math"
)

// ErrStructurallySingular is wrapped by the error of MaxProductMatching
// when no permutation puts nonzero entries on the whole diagonal, and by
// (*COO).CheckSolvable for an empty row or column.
var ErrStructurallySingular = errors.New("sparse: matrix is structurally singular")

// SingularError reports a structurally singular matrix: a maximum matching
// of rows to columns through nonzero entries leaves Unmatched of the N rows
// (and as many columns) without a partner. It wraps
// ErrStructurallySingular.
type SingularError struct {
	Unmatched, N int
}

// Error names the number of unmatched rows.
func (e *SingularError) Error() string {
	return fmt.Sprintf("%v: %d of %d rows unmatched", ErrStructurallySingular, e.Unmatched, e.N)
}

// Unwrap returns ErrStructurallySingular.
func (e *SingularError) Unwrap() error { return ErrStructurallySingular }

// MaxProductMatching finds a row permutation Q that maximises the product
// of the magnitudes of the diagonal entries of QA, the idea of MC64's job 5
// (Duff & Koster). Each column j is matched with one row through the
// weights c_ij = log max_k|a_kj| − log|a_ij| ≥ 0; a minimum-cost perfect
// matching maximises Π|a_σ(j),j|. It is found by successive shortest
// augmenting paths (the Hungarian method for sparse matrices): a greedy
// matching on the entries of zero reduced cost, then for every unmatched
// column a Dijkstra search over reduced costs c_ij − u_i − v_j ≥ 0 for the
// nearest unmatched row, an augmentation along that path, and an update of
// the dual variables u (rows) and v (columns) that keeps all reduced costs
// non-negative and those of the matched entries zero.
//
// The results use the package's gather convention: rowPerm[j] is the
// (old) row matched to column j, so A.Permute(rowPerm, nil) has the matched
// entries on its diagonal. rowScale (indexed by old row) and colScale
// (indexed by column) come from the duals, rowScale[i] = exp(u_i) and
// colScale[j] = exp(v_j)/max_k|a_kj|: in diag(rowScale)·A·diag(colScale)
// the matched entries are ±1 and all others are at most 1 in magnitude (up
// to rounding). Their use is optional. For extremely badly scaled matrices
// (entries spanning more than ~600 orders of magnitude) the scalings can
// overflow.
//
// Stored zeros are treated as absent. A must be square (else ErrShape);
// if some column cannot be matched, the error is a *SingularError wrapping
// ErrStructurallySingular and the other results are nil.
func MaxProductMatching(a *CSR) (rowPerm []int, rowScale, colScale []float64, err error) {
	if a.N != a.M {
		return nil, nil, nil, fmt.Errorf("%w: matching needs a square matrix, got %d×%d", ErrShape, a.N, a.M)
	}
	n := a.N
	t := a.Transpose() // row j of t is column j of a
	inf := math.Inf(1)
	cost := make([]float64, t.NNZ())
	colMax := make([]float64, n)
	for j := range n {
		cm := 0.0
		for p := t.RowPtr[j]; p < t.RowPtr[j+1]; p++ {
			cm = max(cm, math.Abs(t.Val[p]))
		}
		colMax[j] = cm
		lcm := math.Log(cm)
		for p := t.RowPtr[j]; p < t.RowPtr[j+1]; p++ {
			if v := math.Abs(t.Val[p]); v != 0 {
				cost[p] = lcm - math.Log(v)
			} else {
				cost[p] = inf
			}
		}
	}

	// Initial duals: u_i = min_j c_ij, v_j = min_i (c_ij − u_i).
	u := make([]float64, n)
	v := make([]float64, n)
	for i := range u {
		u[i] = inf
	}
	for j := range n {
		for p := t.RowPtr[j]; p < t.RowPtr[j+1]; p++ {
			if i := t.Col[p]; cost[p] < u[i] {
				u[i] = cost[p]
			}
		}
	}
	for i := range u {
		if math.IsInf(u[i], 1) {
			u[i] = 0 // an empty row: it will stay unmatched
		}
	}
	for j := range n {
		v[j] = inf
		for p := t.RowPtr[j]; p < t.RowPtr[j+1]; p++ {
			if cost[p] < inf {
				v[j] = min(v[j], cost[p]-u[t.Col[p]])
			}
		}
		if math.IsInf(v[j], 1) {
			v[j] = 0 // an empty column
		}
	}
	red := func(p int32, j int) float64 {
		return max(0, (cost[p]-u[t.Col[p]])-v[j])
	}

	// Greedy matching on zero reduced costs.
	rowOfCol := make([]int, n)
	colOfRow := make([]int, n)
	for i := range colOfRow {
		colOfRow[i] = -1
		rowOfCol[i] = -1
	}
	for j := range n {
		for p := t.RowPtr[j]; p < t.RowPtr[j+1]; p++ {
			i := t.Col[p]
			if colOfRow[i] < 0 && cost[p] < inf && red(p, j) == 0 {
				colOfRow[i], rowOfCol[j] = j, int(i)
				break
			}
		}
	}
	// Augmenting paths of length two on zero reduced costs: unmatched
	// column j, tight (i, j) with i matched to j2, tight (k, j2) with k
	// free.
	for j := range n {
		if rowOfCol[j] >= 0 {
			continue
		}
	search:
		for p := t.RowPtr[j]; p < t.RowPtr[j+1]; p++ {
			i := int(t.Col[p])
			if cost[p] == inf || red(p, j) != 0 {
				continue
			}
			j2 := colOfRow[i]
			for q := t.RowPtr[j2]; q < t.RowPtr[j2+1]; q++ {
				k := int(t.Col[q])
				if colOfRow[k] < 0 && cost[q] < inf && red(q, j2) == 0 {
					colOfRow[k], rowOfCol[j2] = j2, k
					colOfRow[i], rowOfCol[j] = j, i
					break search
				}
			}
		}
	}

	// Shortest augmenting paths.
	d := make([]float64, n)
	for i := range d {
		d[i] = inf
	}
	pred := make([]int, n)
	final := make([]int, n) // stamp: row finalised in search number final[i]
	for i := range final {
		final[i] = -1
	}
	var touched, done []int
	var h distHeap
	unmatched := 0
	for j0 := range n {
		if rowOfCol[j0] >= 0 {
			continue
		}
		lsap, isap := inf, -1
		touched, done = touched[:0], done[:0]
		h = h[:0]
		relax := func(j int, dj float64) {
			for p := t.RowPtr[j]; p < t.RowPtr[j+1]; p++ {
				i := int(t.Col[p])
				if cost[p] == inf || final[i] == j0 {
					continue
				}
				dn := dj + red(p, j)
				if dn >= d[i] || dn >= lsap {
					continue
				}
				if math.IsInf(d[i], 1) {
					touched = append(touched, i)
				}
				d[i], pred[i] = dn, j
				if colOfRow[i] < 0 {
					lsap, isap = dn, i
				} else {
					h.push(dn, i)
				}
			}
		}
		relax(j0, 0)
		for len(h) > 0 {
			dist, i := h.pop()
			if dist != d[i] || final[i] == j0 {
				continue // stale
			}
			if dist >= lsap {
				break
			}
			final[i] = j0
			done = append(done, i)
			relax(colOfRow[i], dist)
		}
		if isap < 0 {
			unmatched++
		} else {
			// Dual update (before the matching changes): scanned column j
			// at distance dist_j gets v_j += L − dist_j, finalised row i
			// gets u_i −= L − d_i.
			v[j0] += lsap
			for _, i := range done {
				delta := lsap - d[i]
				v[colOfRow[i]] += delta
				u[i] -= delta
			}
			// Augment along pred from isap back to j0.
			for i := isap; ; {
				j := pred[i]
				prev := rowOfCol[j]
				rowOfCol[j], colOfRow[i] = i, j
				if j == j0 {
					break
				}
				i = prev
			}
		}
		for _, i := range touched {
			d[i] = inf
		}
	}
	if unmatched > 0 {
		return nil, nil, nil, &SingularError{Unmatched: unmatched, N: n}
	}
	rowScale = make([]float64, n)
	colScale = make([]float64, n)
	for i := range n {
		rowScale[i] = math.Exp(u[i])
	}
	for j := range n {
		colScale[j] = math.Exp(v[j]) / colMax[j]
	}
	return rowOfCol, rowScale, colScale, nil
}

// distHeap is a binary min-heap of (distance, row) pairs with lazy
// deletion: a row may appear several times; stale copies are skipped by
// the caller.
type distHeap []distItem

type distItem struct {
	d float64
	i int
}

func (h *distHeap) push(d float64, i int) {
	*h = append(*h, distItem{d, i})
	s := *h
	k := len(s) - 1
	for k > 0 {
		p := (k - 1) / 2
		if s[p].d <= s[k].d {
			break
		}
		s[p], s[k] = s[k], s[p]
		k = p
	}
}

func (h *distHeap) pop() (float64, int) {
	s := *h
	top := s[0]
	last := len(s) - 1
	s[0] = s[last]
	s = s[:last]
	k := 0
	for {
		l := 2*k + 1
		if l >= len(s) {
			break
		}
		m := l
		if r := l + 1; r < len(s) && s[r].d < s[l].d {
			m = r
		}
		if s[k].d <= s[m].d {
			break
		}
		s[k], s[m] = s[m], s[k]
		k = m
	}
	*h = s
	return top.d, top.i
}
