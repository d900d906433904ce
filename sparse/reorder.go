package sparse

import (
	"fmt"
)

// DropOff returns the smallest half-bandwidth K for which the entries with
// |i−j| ≤ K hold at least the fraction delta of the squared Frobenius norm
// of the square matrix A (Li et al. 2014, Eq. 13):
//
//	Σ_{|i−j|≤K} a_ij² ≥ δ·Σ a_ij².
//
// It takes O(nnz + N): one pass sums a_ij² per distance |i−j|, a second
// accumulates from the diagonal outwards. K never exceeds A.Bandwidth();
// delta ≥ 1 gives the bandwidth, delta ≤ 0 (or a zero matrix) gives 0.
func DropOff(a *CSR, delta float64) int {
	n := max(a.N, a.M)
	perDist := make([]float64, n+1)
	total := 0.0
	kmax := 0
	for i := range a.N {
		for p := a.RowPtr[i]; p < a.RowPtr[i+1]; p++ {
			d := i - int(a.Col[p])
			if d < 0 {
				d = -d
			}
			v := a.Val[p] * a.Val[p]
			perDist[d] += v
			total += v
			kmax = max(kmax, d)
		}
	}
	if delta <= 0 || total == 0 {
		return 0
	}
	if delta >= 1 {
		return kmax
	}
	target := delta * total
	sum := 0.0
	for k := 0; k < kmax; k++ {
		sum += perDist[k]
		if sum >= target {
			return k
		}
	}
	return kmax
}

// bandFraction returns the fraction of the squared Frobenius norm of A
// carried by the entries with |i−j| > k (zero for a zero matrix).
func bandFraction(a *CSR, k int) float64 {
	out, total := 0.0, 0.0
	for i := range a.N {
		for p := a.RowPtr[i]; p < a.RowPtr[i+1]; p++ {
			v := a.Val[p] * a.Val[p]
			total += v
			if d := i - int(a.Col[p]); d > k || -d > k {
				out += v
			}
		}
	}
	if total == 0 {
		return 0
	}
	return out / total
}

// Partition splits N rows into P near-equal contiguous partitions as
// truncated SPIKE does (Li et al. 2014, §4): the first N mod P partitions
// have ⌊N/P⌋+1 rows, the others ⌊N/P⌋. It returns the P+1 boundaries:
// partition s is rows bounds[s] to bounds[s+1]−1. It fails with ErrShape
// unless 1 ≤ P ≤ N.
func Partition(n, p int) ([]int, error) {
	if p < 1 || p > n {
		return nil, fmt.Errorf("%w: %d partitions of %d rows, want 1 ≤ P ≤ N", ErrShape, p, n)
	}
	q, r := n/p, n%p
	bounds := make([]int, p+1)
	for s := range p {
		size := q
		if s < r {
			size++
		}
		bounds[s+1] = bounds[s] + size
	}
	return bounds, nil
}

// checkBounds validates partition boundaries of an N-row matrix.
func checkBounds(bounds []int, n int) error {
	if len(bounds) < 2 || bounds[0] != 0 || bounds[len(bounds)-1] != n {
		return fmt.Errorf("%w: partition boundaries must run from 0 to N=%d", ErrShape, n)
	}
	for s := 1; s < len(bounds); s++ {
		if bounds[s] <= bounds[s-1] {
			return fmt.Errorf("%w: partition %d is empty or reversed (%d to %d)", ErrShape, s-1, bounds[s-1], bounds[s])
		}
	}
	return nil
}

// BlockBandwidths returns, for each diagonal block of the partition
// (bounds as from Partition), the half-bandwidth of that block alone: max
// |i−j| over the entries with i and j both in the block.
func BlockBandwidths(a *CSR, bounds []int) ([]int, error) {
	if err := checkBounds(bounds, a.N); err != nil {
		return nil, err
	}
	if a.N != a.M {
		return nil, fmt.Errorf("%w: block bandwidths of a non-square %d×%d matrix", ErrShape, a.N, a.M)
	}
	ks := make([]int, len(bounds)-1)
	for s := range ks {
		lo, hi := bounds[s], bounds[s+1]
		for i := lo; i < hi; i++ {
			for p := a.RowPtr[i]; p < a.RowPtr[i+1]; p++ {
				if j := int(a.Col[p]); j >= lo && j < hi {
					ks[s] = max(ks[s], i-j, j-i)
				}
			}
		}
	}
	return ks, nil
}

// couplingBandwidth is max |i−j| over the entries whose row and column lie
// in different partitions (0 when there are none).
func couplingBandwidth(a *CSR, bounds []int) int {
	k := 0
	s := 0
	for i := range a.N {
		for bounds[s+1] <= i {
			s++
		}
		lo, hi := bounds[s], bounds[s+1]
		for p := a.RowPtr[i]; p < a.RowPtr[i+1]; p++ {
			if j := int(a.Col[p]); j < lo || j >= hi {
				k = max(k, i-j, j-i)
			}
		}
	}
	return k
}

// BlockRCM is the second-stage reordering of Li et al. 2014, §3: RCM
// applied to each diagonal block of the partition separately (on the
// pattern of the block plus its transpose; entries that couple different
// blocks are ignored). A block whose bandwidth RCM does not reduce keeps
// its order. To keep the coupling near the corners where truncated SPIKE
// expects it, a block coupled to a later block is ordered from its last
// node with such a coupling entry (which the reversal puts at the end of
// the block) instead of from a pseudo-peripheral node; the nodes coupled
// to the previous block then tend to come first. It returns the combined symmetric permutation perm
// (gather list, perm[new] = old; it maps every partition onto itself) and
// the half-bandwidth of each diagonal block of A.Permute(perm, perm).
//
// The coupling entries are not dropped: they stay in the permuted matrix,
// moved with their rows and columns. Only the anchor above is guaranteed a
// corner position, so some coupling entries may move away from the
// corners and the bandwidth of the whole permuted matrix can grow. A caller that builds a block-banded preconditioner takes each
// diagonal block with its own half-bandwidth and decides what to keep of
// the coupling (Reordering reports the coupling bandwidth).
func BlockRCM(a *CSR, bounds []int) (perm []int, blockK []int, err error) {
	if a.N != a.M {
		return nil, nil, fmt.Errorf("%w: BlockRCM needs a square matrix, got %d×%d", ErrShape, a.N, a.M)
	}
	if err := checkBounds(bounds, a.N); err != nil {
		return nil, nil, err
	}
	perm = make([]int, 0, a.N)
	anchors := couplingAnchors(a, bounds)
	for s := 0; s+1 < len(bounds); s++ {
		lo, hi := bounds[s], bounds[s+1]
		blk := a.subBlock(lo, hi)
		anchor := -1
		if anchors[s] >= 0 {
			anchor = anchors[s] - lo
		}
		p := rcm(symmetricGraph(blk), anchor)
		if b, err := blk.Permute(p, p); err != nil || b.Bandwidth() >= blk.Bandwidth() {
			p = nil // RCM does not narrow this block: keep its order
		}
		for x := range hi - lo {
			if p != nil {
				x = p[x]
			}
			perm = append(perm, lo+x)
		}
	}
	b, err := a.Permute(perm, perm)
	if err != nil {
		return nil, nil, err
	}
	blockK, err = BlockBandwidths(b, bounds)
	return perm, blockK, err
}

// couplingAnchors returns, for each block of the partition, the last node
// of the block that has an entry (in its row or its column) coupling it to
// a later block, or −1 when there is none.
func couplingAnchors(a *CSR, bounds []int) []int {
	anchors := make([]int, len(bounds)-1)
	for s := range anchors {
		anchors[s] = -1
	}
	block := make([]int, a.N)
	for s := range anchors {
		for i := bounds[s]; i < bounds[s+1]; i++ {
			block[i] = s
		}
	}
	for i := range a.N {
		for p := a.RowPtr[i]; p < a.RowPtr[i+1]; p++ {
			j := int(a.Col[p])
			if block[i] != block[j] {
				lo := min(i, j) // blocks are contiguous: the earlier block
				anchors[block[lo]] = max(anchors[block[lo]], lo)
			}
		}
	}
	return anchors
}

// subBlock returns the diagonal block A[lo:hi, lo:hi].
func (a *CSR) subBlock(lo, hi int) *CSR {
	b := &CSR{N: hi - lo, M: hi - lo, RowPtr: make([]int32, hi-lo+1)}
	for i := lo; i < hi; i++ {
		for p := a.RowPtr[i]; p < a.RowPtr[i+1]; p++ {
			if j := int(a.Col[p]); j >= lo && j < hi {
				b.Col = append(b.Col, int32(j-lo))
				b.Val = append(b.Val, a.Val[p])
			}
		}
		b.RowPtr[i-lo+1] = int32(len(b.Col))
	}
	return b
}

// ReorderOptions selects the stages of Reorder.
type ReorderOptions struct {
	// Matching applies MaxProductMatching: a row permutation Q that puts
	// a maximum-product transversal on the diagonal.
	Matching bool
	// Scale (with Matching) also applies the matching's row and column
	// scalings, so the reordered matrix has ±1 on the diagonal and entries
	// of magnitude at most 1 elsewhere. PermuteVector and UnpermuteVector
	// then include the scalings.
	Scale bool
	// RCM applies reverse Cuthill–McKee to the pattern of QA + (QA)ᵀ,
	// symmetrically (rows and columns alike), so the diagonal stays.
	RCM bool
	// Delta, in (0, 1), is the fraction of the squared Frobenius norm the
	// band must keep (Eq. 13); 0 keeps everything.
	Delta float64
	// Partitions is the number P of diagonal blocks for the second stage
	// and the per-block statistics; 0 means no partition (or one block
	// when SecondRCM is set).
	Partitions int
	// SecondRCM applies RCM within each diagonal block (BlockRCM) after
	// the drop-off.
	SecondRCM bool
}

// Reordering is the result of Reorder. With gather lists RowPerm and
// ColPerm (RowPerm[i] is the original row that becomes row i, ColPerm[j]
// the original column that becomes column j) and, when scaling, the
// original-index scalings Dr and Dc,
//
//	Matrix[i][j] = Dr[RowPerm[i]] · A[RowPerm[i]][ColPerm[j]] · Dc[ColPerm[j]].
//
// Solving Matrix·y = PermuteVector(b) and taking x = UnpermuteVector(y)
// solves A·x = b.
type Reordering struct {
	N       int
	RowPerm []int // gather: row i of Matrix is row RowPerm[i] of A
	ColPerm []int // gather: column j of Matrix is column ColPerm[j] of A
	// RowScale and ColScale (indexed by original row and column) are the
	// scalings applied; nil when Scale was off.
	RowScale, ColScale []float64

	// Matrix is the reordered (and scaled) matrix with every entry of A.
	Matrix *CSR
	// Kept is Matrix without the entries dropped by Eq. 13 (the same
	// pointer as Matrix when Delta is 0): the matrix a banded or
	// block-banded preconditioner approximates.
	Kept *CSR

	// Half-bandwidths after each stage: of A, of QA after the matching,
	// after RCM, after the drop-off (the K of Eq. 13, equal to KRCM when
	// Delta is 0), and of Kept at the end (after the second stage, which
	// can move coupling entries away from the diagonal).
	KOriginal, KMatching, KRCM, KDropOff, KFinal int
	// DroppedFraction is the fraction of the squared Frobenius norm of the
	// (scaled) matrix that the drop-off removed (at most 1 − Delta).
	DroppedFraction float64

	// Bounds are the partition boundaries (nil when Partitions is 0 and
	// SecondRCM is off); BlockK[s] is the half-bandwidth of diagonal block
	// s of Kept, and CouplingK the largest |i−j| of an entry of Kept that
	// couples two different blocks.
	Bounds    []int
	BlockK    []int
	CouplingK int
}

// Reorder runs the preprocessing of truncated SPIKE as a preconditioner
// (Li et al. 2014, §3) on the square matrix A, in this order: the
// maximum-product matching (row permutation Q, optional scaling), RCM on
// QA + (QA)ᵀ applied to rows and columns, the drop-off of Eq. 13, and the
// second-stage RCM inside each of the P diagonal blocks. Each stage is
// optional. It fails with ErrShape for a non-square matrix or bad options,
// and with a *SingularError when the matching finds A structurally
// singular.
func Reorder(a *CSR, opts ReorderOptions) (*Reordering, error) {
	if a.N != a.M {
		return nil, fmt.Errorf("%w: Reorder needs a square matrix, got %d×%d", ErrShape, a.N, a.M)
	}
	if opts.Delta < 0 || opts.Delta >= 1 {
		return nil, fmt.Errorf("%w: Delta=%g, want 0 (no drop-off) or in (0, 1)", ErrShape, opts.Delta)
	}
	if opts.Scale && !opts.Matching {
		return nil, fmt.Errorf("%w: Scale needs Matching", ErrShape)
	}
	n := a.N
	r := &Reordering{N: n, KOriginal: a.Bandwidth()}
	parts := opts.Partitions
	if parts == 0 && opts.SecondRCM {
		parts = 1
	}
	if parts != 0 {
		b, err := Partition(n, parts)
		if err != nil {
			return nil, err
		}
		r.Bounds = b
	}
	ident := make([]int, n)
	for i := range ident {
		ident[i] = i
	}
	rowPerm, colPerm := ident, ident
	cur := a
	if opts.Matching {
		q, rs, cs, err := MaxProductMatching(a)
		if err != nil {
			return nil, err
		}
		if opts.Scale {
			r.RowScale, r.ColScale = rs, cs
			cur = a.Clone()
			cur.scale(rs, cs)
		}
		rowPerm = q
		if cur, err = cur.Permute(q, nil); err != nil {
			return nil, err
		}
	}
	r.KMatching = cur.Bandwidth()
	if opts.RCM {
		p, err := RCM(cur)
		if err != nil {
			return nil, err
		}
		if cur, err = cur.Permute(p, p); err != nil {
			return nil, err
		}
		rowPerm, colPerm = ComposePerm(rowPerm, p), ComposePerm(colPerm, p)
	}
	r.KRCM = cur.Bandwidth()
	kept := cur
	r.KDropOff = r.KRCM
	if opts.Delta > 0 {
		r.KDropOff = DropOff(cur, opts.Delta)
		r.DroppedFraction = bandFraction(cur, r.KDropOff)
		kept = cur.DropOutsideBand(r.KDropOff)
	}
	if opts.SecondRCM {
		p, _, err := BlockRCM(kept, r.Bounds)
		if err != nil {
			return nil, err
		}
		if cur, err = cur.Permute(p, p); err != nil {
			return nil, err
		}
		if opts.Delta > 0 {
			if kept, err = kept.Permute(p, p); err != nil {
				return nil, err
			}
		} else {
			kept = cur
		}
		rowPerm, colPerm = ComposePerm(rowPerm, p), ComposePerm(colPerm, p)
	}
	r.Matrix, r.Kept = cur, kept
	r.RowPerm, r.ColPerm = rowPerm, colPerm
	r.KFinal = kept.Bandwidth()
	if r.Bounds != nil {
		var err error
		if r.BlockK, err = BlockBandwidths(kept, r.Bounds); err != nil {
			return nil, err
		}
		r.CouplingK = couplingBandwidth(kept, r.Bounds)
	}
	return r, nil
}

// scale multiplies a_ij by rs[i]·cs[j] in place.
func (a *CSR) scale(rs, cs []float64) {
	for i := range a.N {
		for p := a.RowPtr[i]; p < a.RowPtr[i+1]; p++ {
			a.Val[p] *= rs[i] * cs[a.Col[p]]
		}
	}
}

// PermuteVector maps a right-hand side b of A·x = b into the reordered
// space: b'[i] = Dr[RowPerm[i]]·b[RowPerm[i]] (Dr = 1 without scaling).
// len(b) must be N (else ErrShape).
func (r *Reordering) PermuteVector(b []float64) ([]float64, error) {
	if len(b) != r.N {
		return nil, fmt.Errorf("%w: vector of length %d, want %d", ErrShape, len(b), r.N)
	}
	out := make([]float64, r.N)
	for i, p := range r.RowPerm {
		out[i] = b[p]
		if r.RowScale != nil {
			out[i] *= r.RowScale[p]
		}
	}
	return out, nil
}

// UnpermuteVector maps a solution y of Matrix·y = PermuteVector(b) back to
// the solution of A·x = b: x[ColPerm[j]] = Dc[ColPerm[j]]·y[j] (Dc = 1
// without scaling). len(y) must be N (else ErrShape).
func (r *Reordering) UnpermuteVector(y []float64) ([]float64, error) {
	if len(y) != r.N {
		return nil, fmt.Errorf("%w: vector of length %d, want %d", ErrShape, len(y), r.N)
	}
	x := make([]float64, r.N)
	for j, p := range r.ColPerm {
		x[p] = y[j]
		if r.ColScale != nil {
			x[p] *= r.ColScale[p]
		}
	}
	return x, nil
}
