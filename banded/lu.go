package banded

import (
	"math"
)

// FactorOptions configure the factorizations without pivoting (LU and UL).
// The zero value boosts with the default tolerance.
type FactorOptions struct {
	// BoostTol sets diagonal boosting (PARDISO's strategy, used by
	// SPIKE::GPU, Li et al. 2014 §3): a pivot p with |p| < τ is replaced
	// by sign(p)·τ (+τ for p = 0), where
	//
	//	τ = BoostTol · ‖A_block‖_max,   ‖A_block‖_max = max |a_ij| over the block
	//
	// (the max-abs norm of the diagonal block being factored; 1 when the
	// block is all zeros). The factors are then those of A + δA with δA
	// diagonal and |δa_ii| ≤ τ, i.e. ‖δA‖ = O(u‖A‖) for the default.
	//
	// 0 means the default: the machine epsilon of the element type
	// (2⁻²³ for float32, 2⁻⁵² for float64). A negative value turns
	// boosting off: a zero pivot is then an error wrapping ErrZeroPivot.
	BoostTol float64
}

// Boosts reports the diagonal boosts made by a factorization.
type Boosts struct {
	// Rows are the absolute row indices whose pivot was boosted, in
	// increasing order (for UL too, although UL eliminates bottom-up).
	Rows []int
	// Tau is the threshold τ that was used (0 when boosting was off).
	Tau float64
}

// Count is the number of boosted pivots.
func (b Boosts) Count() int { return len(b.Rows) }

// Boosted reports whether the pivot of row r was boosted.
func (b Boosts) Boosted(r int) bool {
	lo, hi := 0, len(b.Rows)
	for lo < hi {
		mid := (lo + hi) / 2
		if b.Rows[mid] < r {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo < len(b.Rows) && b.Rows[lo] == r
}

// epsilon is the machine epsilon of T.
func epsilon[T Float]() float64 {
	var z T
	if _, ok := any(z).(float32); ok {
		return 0x1p-23
	}
	return 0x1p-52
}

func isFinite[T Float](v T) bool {
	f := float64(v)
	return !math.IsNaN(f) && !math.IsInf(f, 0)
}

// scanBlock checks that every stored entry of the diagonal block
// A[r0:r1, r0:r1] is finite and returns its max-abs norm.
func scanBlock[T Float](m *Band[T], r0, r1 int) (float64, error) {
	n, k := m.N, m.K
	var mx float64
	for s := 0; s <= 2*k; s++ { // storage column s holds a_ij with i−j = s−K
		d := s - k
		j0, j1 := max(r0, r0-d), min(r1, r1-d) // r0 ≤ j < r1 and r0 ≤ j+d < r1
		if j0 >= j1 {
			continue
		}
		col := m.Data[s*n+j0 : s*n+j1]
		for q, v := range col {
			f := math.Abs(float64(v))
			if !(f <= math.MaxFloat64) { // NaN or Inf
				j := j0 + q
				return 0, &RowError{Row: j + d, Col: j, Err: ErrNonFinite}
			}
			if f > mx {
				mx = f
			}
		}
	}
	return mx, nil
}

// boostTau returns τ for the block, 0 when boosting is off.
func boostTau[T Float](norm float64, opt FactorOptions) float64 {
	tol := opt.BoostTol
	switch {
	case tol < 0:
		return 0
	case tol == 0:
		tol = epsilon[T]()
	}
	if norm == 0 {
		norm = 1
	}
	return tol * norm
}

// pivotAt checks (and boosts) the pivot p of row r.
func pivotAt[T Float](p T, tau float64, boost bool, r int, b *Boosts) (T, error) {
	if !isFinite(p) {
		return p, &RowError{Row: r, Col: r, Err: ErrNonFinite}
	}
	if boost {
		if math.Abs(float64(p)) < tau {
			t := T(tau)
			if t == 0 { // τ underflowed in T
				t = T(math.SmallestNonzeroFloat32)
			}
			if p < 0 {
				t = -t
			}
			b.Rows = append(b.Rows, r)
			return t, nil
		}
		return p, nil
	}
	if p == 0 {
		return p, &RowError{Row: r, Col: r, Err: ErrZeroPivot}
	}
	return p, nil
}

// rank1 subtracts c·rᵀ from the h×w window whose top-left entry is a_{o,o}
// of a matrix stored like Band with its diagonal in storage column dc:
// a_{o+qi, o+qj} −= c[qi]·r[qj] for qi < h, qj < w, where a_ij is at
// a[(dc+i−j)·n + j]. It walks the window diagonal by diagonal, so each
// inner loop runs over contiguous storage.
func rank1[T Float](a []T, n, dc, o, h, w int, c, r []T) {
	for d := -(w - 1); d <= h-1; d++ { // d = qi − qj
		q0, q1 := max(0, -d), min(w, h-d) // qj range
		base := (dc+d)*n + o
		row := a[base+q0 : base+q1]
		cs := c[q0+d : q1+d]
		rs := r[q0:q1]
		axpyNeg(row, cs, rs)
	}
}

// axpyNeg does y[q] −= c[q]·r[q] (each product rounded before the
// subtraction, as the no-FMA GPU kernels do), unrolled by four.
func axpyNeg[T Float](y, c, r []T) {
	n := len(y)
	c, r = c[:n], r[:n]
	q := 0
	for ; q+4 <= n; q += 4 {
		yy, cc, rr := y[q:q+4:q+4], c[q:q+4:q+4], r[q:q+4:q+4]
		y0 := yy[0] - T(cc[0]*rr[0])
		y1 := yy[1] - T(cc[1]*rr[1])
		y2 := yy[2] - T(cc[2]*rr[2])
		y3 := yy[3] - T(cc[3]*rr[3])
		yy[0], yy[1], yy[2], yy[3] = y0, y1, y2, y3
	}
	for ; q < n; q++ {
		y[q] -= T(c[q] * r[q])
	}
}

// rank2 is rank1 with two updates fused in one pass over the window:
// a −= c1·r1ᵀ, then a −= c2·r2ᵀ, each entry rounded exactly as two
// successive rank1 calls would, so results are bit-identical to them.
func rank2[T Scalar](a []T, n, dc, o, h, w int, c1, r1, c2, r2 []T) {
	for d := -(w - 1); d <= h-1; d++ {
		q0, q1 := max(0, -d), min(w, h-d)
		base := (dc+d)*n + o
		axpy2Neg(a[base+q0:base+q1], c1[q0+d:q1+d], r1[q0:q1], c2[q0+d:q1+d], r2[q0:q1])
	}
}

// axpy2Neg does y[q] = (y[q] − c1[q]·r1[q]) − c2[q]·r2[q], products rounded.
func axpy2Neg[T Scalar](y, c1, r1, c2, r2 []T) {
	n := len(y)
	c1, r1, c2, r2 = c1[:n], r1[:n], c2[:n], r2[:n]
	q := 0
	for ; q+2 <= n; q += 2 {
		yy := y[q : q+2 : q+2]
		a1, b1 := c1[q:q+2:q+2], r1[q:q+2:q+2]
		a2, b2 := c2[q:q+2:q+2], r2[q:q+2:q+2]
		y0 := yy[0] - T(a1[0]*b1[0])
		y1 := yy[1] - T(a1[1]*b1[1])
		yy[0] = y0 - T(a2[0]*b2[0])
		yy[1] = y1 - T(a2[1]*b2[1])
	}
	for ; q < n; q++ {
		y[q] = (y[q] - T(c1[q]*r1[q])) - T(c2[q]*r2[q])
	}
}

// FactorLURange factors the diagonal block A[r0:r1, r0:r1] of m in place
// as L·U without pivoting, boosting small pivots as opt says. L is unit
// lower triangular: its multipliers l_ij (i > j) overwrite a_ij in the
// sub-diagonal storage columns K+1…2K. U is upper triangular: u_ij (i ≤ j)
// overwrites a_ij in the diagonal and super-diagonal storage columns 0…K
// (with any boosted pivot in place of the original diagonal entry).
// Entries coupling the block to rows or columns outside it are untouched.
//
// It returns the boosted rows (absolute indices). Errors: ErrShape for a
// bad m or range; a *RowError wrapping ErrNonFinite naming the row and
// column of a NaN/Inf entry of the block (checked before anything is
// written) or of a pivot that overflowed; a *RowError wrapping
// ErrZeroPivot naming the row when boosting is off and a pivot is zero.
// After a pivot error the block is partly factored.
func FactorLURange[T Float](m *Band[T], r0, r1 int, opt FactorOptions) (Boosts, error) {
	var b Boosts
	if err := checkRange(m, r0, r1); err != nil {
		return b, err
	}
	norm, err := scanBlock(m, r0, r1)
	if err != nil {
		return b, err
	}
	tau := boostTau[T](norm, opt)
	b.Tau = tau
	boost := opt.BoostTol >= 0
	n, k, a := m.N, m.K, m.Data
	// Steps go in pairs j, j+1: step j's update is applied to row and
	// column j+1 first (they make step j+1's pivot, multipliers and U
	// row), then both updates to the rest of the window in one pass. The
	// rounding is that of one step at a time.
	c1, u1 := make([]T, k+1), make([]T, k+1) // index w1 stays 0 (padding)
	c2, u2 := make([]T, k), make([]T, k)
	for j := r0; j < r1; {
		p, err := pivotAt(a[k*n+j], tau, boost, j, &b)
		if err != nil {
			return b, err
		}
		a[k*n+j] = p
		w1 := min(k, r1-1-j)
		for t := 1; t <= w1; t++ {
			li := (k+t)*n + j // a_{j+t, j}
			l := a[li] / p
			a[li] = l
			c1[t-1] = l
			u1[t-1] = a[(k-t)*n+j+t] // u_{j, j+t}
		}
		if w1 == 0 { // K = 0, or j = r1−1
			j++
			continue
		}
		c1[w1], u1[w1] = 0, 0
		// step j on row j+1 (columns j+1 … j+w1) and column j+1 (rows j+2 … j+w1)
		for s := 0; s < w1; s++ {
			a[(k-s)*n+j+1+s] -= T(c1[0] * u1[s])
		}
		for s := 1; s < w1; s++ {
			a[(k+s)*n+j+1] -= T(c1[s] * u1[0])
		}
		j1 := j + 1
		p, err = pivotAt(a[k*n+j1], tau, boost, j1, &b)
		if err != nil {
			return b, err
		}
		a[k*n+j1] = p
		w2 := min(k, r1-1-j1)
		for t := 1; t <= w2; t++ {
			li := (k+t)*n + j1
			l := a[li] / p
			a[li] = l
			c2[t-1] = l
			u2[t-1] = a[(k-t)*n+j1+t]
		}
		if w2 > 0 {
			rank2(a, n, k, j+2, w2, w2, c1[1:1+w2], u1[1:1+w2], c2, u2)
		}
		j += 2
	}
	return b, nil
}

// FactorLU factors all of m in place (FactorLURange over [0, N)).
func FactorLU[T Float](m *Band[T], opt FactorOptions) (Boosts, error) {
	if m == nil {
		return Boosts{}, shapeErr("nil band matrix")
	}
	return FactorLURange(m, 0, m.N, opt)
}

// FactorULRange factors the diagonal block A[r0:r1, r0:r1] of m in place
// as U·L without pivoting, eliminating from the bottom-right corner up and
// to the left, with boosting as opt says. U is unit upper triangular: its
// multipliers u_ij (i < j) overwrite a_ij in the super-diagonal storage
// columns 0…K−1. L is lower triangular: l_ij (i ≥ j) overwrites a_ij in the
// diagonal and sub-diagonal storage columns K…2K (boosted pivots included).
//
// (UL)⁻¹ applied to a vector whose nonzeros are in its first l entries
// has first l entries that need only the top-left l×l parts of U and L:
// after FactorULRange(m, r0, r1), SolveULRange(m, r0, r0+l, v) returns
// exactly (bit for bit) the first l entries of A_block⁻¹·[v; 0]. That is how
// SPIKE gets the top block of the left spike, W⁽ᵗ⁾ (Li et al. 2014 §2.2).
// Likewise, after FactorLURange(m, r0, r1), SolveLURange(m, r1−l, r1, v)
// returns the last l entries of A_block⁻¹·[0; v] (the bottom block of the
// right spike, V⁽ᵇ⁾). Those top-left parts of the factors still depend on
// the whole block (UL eliminates from the bottom up): factoring only the
// top-left l×l block, as SPIKE::GPU does with l = 2K, gives the spike of
// the truncated block, an approximation (see package spike). Boosts and
// errors are as for FactorLURange.
func FactorULRange[T Float](m *Band[T], r0, r1 int, opt FactorOptions) (Boosts, error) {
	var b Boosts
	if err := checkRange(m, r0, r1); err != nil {
		return b, err
	}
	norm, err := scanBlock(m, r0, r1)
	if err != nil {
		return b, err
	}
	tau := boostTau[T](norm, opt)
	b.Tau = tau
	boost := opt.BoostTol >= 0
	n, k, a := m.N, m.K, m.Data
	// Steps go in pairs j, j−1, as in FactorLURange.
	c1, l1 := make([]T, k+1), make([]T, k+1) // index 0 stays 0 (padding); step j at 1+q
	c2, l2 := make([]T, k), make([]T, k)
	for j := r1 - 1; j >= r0; {
		p, err := pivotAt(a[k*n+j], tau, boost, j, &b)
		if err != nil {
			reverse(b.Rows)
			return b, err
		}
		a[k*n+j] = p
		w1 := min(k, j-r0)
		o1 := j - w1 // step j's window is rows/columns o1 … j−1
		for q := 0; q < w1; q++ {
			t := w1 - q
			ui := (k-t)*n + j // a_{j−t, j} = a_{o1+q, j}
			u := a[ui] / p
			a[ui] = u
			c1[1+q] = u
			l1[1+q] = a[(k+t)*n+o1+q] // l_{j, j−t}
		}
		if w1 == 0 { // K = 0, or j = r0
			j--
			continue
		}
		// step j on row j−1 (columns o1 … j−1) and column j−1 (rows o1 … j−2)
		j1 := j - 1
		cr, lr := c1[w1], l1[w1] // u_{j−1, j}, l_{j, j−1}
		for s := 0; s < w1; s++ {
			a[(k+j1-o1-s)*n+o1+s] -= T(cr * l1[1+s])
		}
		for s := 0; s < w1-1; s++ {
			a[(k+o1+s-j1)*n+j1] -= T(c1[1+s] * lr)
		}
		p, err = pivotAt(a[k*n+j1], tau, boost, j1, &b)
		if err != nil {
			reverse(b.Rows)
			return b, err
		}
		a[k*n+j1] = p
		w2 := min(k, j1-r0)
		o2 := j1 - w2
		for q := 0; q < w2; q++ {
			t := w2 - q
			ui := (k-t)*n + j1
			u := a[ui] / p
			a[ui] = u
			c2[q] = u
			l2[q] = a[(k+t)*n+o2+q]
		}
		if w2 > 0 {
			rank2(a, n, k, o2, w2, w2, c1[w1-w2:w1], l1[w1-w2:w1], c2, l2)
		}
		j -= 2
	}
	reverse(b.Rows)
	return b, nil
}

// FactorUL factors all of m in place (FactorULRange over [0, N)).
func FactorUL[T Float](m *Band[T], opt FactorOptions) (Boosts, error) {
	if m == nil {
		return Boosts{}, shapeErr("nil band matrix")
	}
	return FactorULRange(m, 0, m.N, opt)
}

func reverse(s []int) {
	for i, j := 0, len(s)-1; i < j; i, j = i+1, j-1 {
		s[i], s[j] = s[j], s[i]
	}
}

// forward solves with the lower triangle of the block: x_i = (b_i −
// Σ_{j<i} a_ij x_j) / (a_ii or 1 when unit), column by column.
func forward[T Float](a []T, n, k, r0, r1 int, b []T, unit bool) {
	for j := r0; j < r1; j++ {
		x := b[j-r0]
		if !unit {
			x /= a[k*n+j]
			b[j-r0] = x
		}
		w := min(k, r1-1-j)
		for t := 1; t <= w; t++ {
			b[j+t-r0] -= T(a[(k+t)*n+j] * x)
		}
	}
}

// backward solves with the upper triangle of the block, column by column
// from the last.
func backward[T Float](a []T, n, k, r0, r1 int, b []T, unit bool) {
	for j := r1 - 1; j >= r0; j-- {
		x := b[j-r0]
		if !unit {
			x /= a[k*n+j]
			b[j-r0] = x
		}
		w := min(k, j-r0)
		for t := 1; t <= w; t++ {
			b[j-t-r0] -= T(a[(k-t)*n+j] * x)
		}
	}
}

func checkRHS[T Float](m *Band[T], r0, r1 int, b []T, nrhs int) {
	if err := checkRange(m, r0, r1); err != nil {
		panic(err)
	}
	if nrhs < 0 || len(b) != (r1-r0)*nrhs {
		panic(shapeErr("right-hand side of length %d, want (r1−r0)·nrhs = %d·%d", len(b), r1-r0, nrhs))
	}
}

// SolveLURange solves A[r0:r1, r0:r1]·x = b in place with the factors left
// in m by FactorLURange over the same range (forward sweep with L, then
// backward with U). len(b) must be r1−r0; b[i] is row r0+i. It panics with
// an error wrapping ErrShape on bad sizes.
func SolveLURange[T Float](m *Band[T], r0, r1 int, b []T) {
	checkRHS(m, r0, r1, b, 1)
	forward(m.Data, m.N, m.K, r0, r1, b, true)
	backward(m.Data, m.N, m.K, r0, r1, b, false)
}

// SolveLURangeMulti solves for nrhs right-hand sides at once: b holds them
// column-major with leading dimension r1−r0 (column c is
// b[c·(r1−r0) : (c+1)·(r1−r0)]), overwritten by the solutions.
func SolveLURangeMulti[T Float](m *Band[T], r0, r1 int, b []T, nrhs int) {
	checkRHS(m, r0, r1, b, nrhs)
	ld := r1 - r0
	for c := 0; c < nrhs; c++ {
		col := b[c*ld : (c+1)*ld]
		forward(m.Data, m.N, m.K, r0, r1, col, true)
		backward(m.Data, m.N, m.K, r0, r1, col, false)
	}
}

// SolveLU solves A·x = b in place with the factors of FactorLU.
func SolveLU[T Float](m *Band[T], b []T) { SolveLURange(m, 0, m.N, b) }

// SolveULRange solves A[r0:r1, r0:r1]·x = b in place with the factors left
// in m by FactorULRange over the same range (backward sweep with the unit
// U, then forward with L). Sizes as for SolveLURange.
func SolveULRange[T Float](m *Band[T], r0, r1 int, b []T) {
	checkRHS(m, r0, r1, b, 1)
	backward(m.Data, m.N, m.K, r0, r1, b, true)
	forward(m.Data, m.N, m.K, r0, r1, b, false)
}

// SolveULRangeMulti is SolveULRange for nrhs right-hand sides stored
// column-major with leading dimension r1−r0.
func SolveULRangeMulti[T Float](m *Band[T], r0, r1 int, b []T, nrhs int) {
	checkRHS(m, r0, r1, b, nrhs)
	ld := r1 - r0
	for c := 0; c < nrhs; c++ {
		col := b[c*ld : (c+1)*ld]
		backward(m.Data, m.N, m.K, r0, r1, col, true)
		forward(m.Data, m.N, m.K, r0, r1, col, false)
	}
}

// SolveUL solves A·x = b in place with the factors of FactorUL.
func SolveUL[T Float](m *Band[T], b []T) { SolveULRange(m, 0, m.N, b) }
