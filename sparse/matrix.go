package sparse

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sort"
	"sync"

	"gonum.org/v1/gonum/mat"

	"github.com/bandsolve/bandsolve/banded"
	"github.com/bandsolve/bandsolve/internal/memguard"
)

// ErrShape is wrapped by every error about sizes and indices: a negative
// order, an index outside the matrix, a vector or permutation of the wrong
// length, a matrix too large for int32 indices, a non-square matrix where
// a square one is needed.
var ErrShape = errors.New("sparse: bad shape")

// ErrMemory is wrapped by the errors of functions that refuse to allocate
// more than the process can have (physical memory, cgroup limit,
// RLIMIT_AS): ReadMatrixMarket for a declared entry count, ToCSR for the
// order of the matrix. It is the same value as npy.ErrMemory,
// banded.ErrMemory and tridiag.ErrMemory.
var ErrMemory = memguard.ErrTooLarge

// maxIndex is the largest order and nonzero count CSR can hold with int32
// indices.
const maxIndex = math.MaxInt32

// COO is an N×M sparse matrix in coordinate form: entry e is
// A[Row[e]][Col[e]] += Val[e]. Entries may come in any order and may repeat
// (repeats add up when converted to CSR). COO is the assembly and
// input/output format; compute on CSR.
type COO struct {
	N, M int // rows, columns
	Row  []int
	Col  []int
	Val  []float64
}

// NewCOO returns an empty N×M matrix with room for capacity entries.
func NewCOO(n, m, capacity int) *COO {
	capacity = max(capacity, 0)
	return &COO{N: n, M: m, Row: make([]int, 0, capacity), Col: make([]int, 0, capacity), Val: make([]float64, 0, capacity)}
}

// Add appends the entry (i, j, v); it does not check the indices (ToCSR and
// Check do).
func (c *COO) Add(i, j int, v float64) {
	c.Row = append(c.Row, i)
	c.Col = append(c.Col, j)
	c.Val = append(c.Val, v)
}

// NNZ is the number of stored entries, repeats included.
func (c *COO) NNZ() int { return len(c.Val) }

// Check reports an error wrapping ErrShape when the orders are negative or
// too large for int32 indices, the three slices differ in length, or an
// index lies outside the matrix.
func (c *COO) Check() error {
	if c.N < 0 || c.M < 0 || c.N > maxIndex || c.M > maxIndex {
		return fmt.Errorf("%w: order %d×%d", ErrShape, c.N, c.M)
	}
	if len(c.Row) != len(c.Val) || len(c.Col) != len(c.Val) {
		return fmt.Errorf("%w: COO slices of lengths %d, %d, %d", ErrShape, len(c.Row), len(c.Col), len(c.Val))
	}
	for e := range c.Val {
		if i, j := c.Row[e], c.Col[e]; i < 0 || i >= c.N || j < 0 || j >= c.M {
			return fmt.Errorf("%w: entry %d at (%d, %d) outside a %d×%d matrix", ErrShape, e, i, j, c.N, c.M)
		}
	}
	return nil
}

// CheckSolvable reports whether c can be a nonsingular matrix, in time
// O(nnz) and memory O(N) that is only spent when there are at least N
// entries: it must be square with an entry in every row and every column.
// Otherwise the error wraps ErrShape (not square) or
// ErrStructurallySingular, and names the sizes or the first empty row or
// column. A 10⁹×10⁹ matrix with one entry is refused at once, before
// ToCSR allocates for 10⁹ rows.
func (c *COO) CheckSolvable() error {
	if c.N != c.M {
		return fmt.Errorf("%w: the matrix is %d×%d; a nonsingular matrix is square", ErrShape, c.N, c.M)
	}
	if err := c.Check(); err != nil {
		return err
	}
	n := c.N
	if nnz := c.NNZ(); nnz < n {
		return fmt.Errorf("%w: a %d×%d matrix with %d stored %s has an empty row (a nonsingular matrix has an entry in each of its %d rows)", ErrStructurallySingular, n, n, nnz, plural(nnz, "entry", "entries"), n)
	}
	rows, cols := make([]uint64, (n+63)/64), make([]uint64, (n+63)/64)
	for e := range c.Val {
		i, j := c.Row[e], c.Col[e]
		rows[i/64] |= 1 << (i % 64)
		cols[j/64] |= 1 << (j % 64)
	}
	for _, m := range []struct {
		name string
		bits []uint64
	}{{"row", rows}, {"column", cols}} {
		for w, b := range m.bits {
			if b == ^uint64(0) {
				continue
			}
			for k := range 64 {
				if i := 64*w + k; i < n && b&(1<<k) == 0 {
					return fmt.Errorf("%w: %s %d of the %d×%d matrix has no stored entry", ErrStructurallySingular, m.name, i+1, n, n)
				}
			}
		}
	}
	return nil
}

// csrBuildBytes is the memory ToCSR allocates for an N×M matrix with nnz
// entries: the column and row counts and cursors (int), the sort orders
// (int), and the CSR arrays (int32 row pointers and columns, float64
// values).
func csrBuildBytes(n, m, nnz int) uint64 {
	return memguard.Add(
		memguard.Bytes(8, m+1, 2), memguard.Bytes(8, n+1, 2), // colPtr, next; rowPtr, nextR
		memguard.Bytes(8, nnz, 2), // byCol, order
		memguard.Bytes(4, n+1),    // RowPtr
		memguard.Bytes(4+8, nnz),  // Col, Val
	)
}

// ToCSR converts to CSR: repeated entries are summed (a sum that cancels to
// zero stays as an explicit zero) and the columns of every row are sorted.
// It fails with ErrShape when Check does, or when the entries do not fit
// int32 indices, and with an error wrapping ErrMemory, before allocating,
// when the O(N + M + nnz) arrays it needs do not fit the memory the
// process can have.
func (c *COO) ToCSR() (*CSR, error) {
	if err := c.Check(); err != nil {
		return nil, err
	}
	if len(c.Val) > maxIndex {
		return nil, fmt.Errorf("%w: %d entries exceed int32 indices", ErrShape, len(c.Val))
	}
	if err := memguard.Check(fmt.Sprintf("sparse: converting a %d×%d matrix with %d entries to CSR", c.N, c.M, len(c.Val)),
		csrBuildBytes(c.N, c.M, len(c.Val))); err != nil {
		return nil, err
	}
	// Counting sort by column, then by row (stable): rows come out with
	// sorted columns and repeats next to each other.
	nnz := len(c.Val)
	colPtr := make([]int, c.M+1)
	for _, j := range c.Col {
		colPtr[j+1]++
	}
	for j := range c.M {
		colPtr[j+1] += colPtr[j]
	}
	byCol := make([]int, nnz)
	next := slices.Clone(colPtr[:c.M])
	for e, j := range c.Col {
		byCol[next[j]] = e
		next[j]++
	}
	rowPtr := make([]int, c.N+1)
	for _, i := range c.Row {
		rowPtr[i+1]++
	}
	for i := range c.N {
		rowPtr[i+1] += rowPtr[i]
	}
	order := make([]int, nnz)
	nextR := slices.Clone(rowPtr[:c.N])
	for _, e := range byCol {
		i := c.Row[e]
		order[nextR[i]] = e
		nextR[i]++
	}
	a := &CSR{N: c.N, M: c.M, RowPtr: make([]int32, c.N+1), Col: make([]int32, 0, nnz), Val: make([]float64, 0, nnz)}
	for i := range c.N {
		start := len(a.Col)
		for _, e := range order[rowPtr[i]:rowPtr[i+1]] {
			j := int32(c.Col[e])
			if len(a.Col) > start && a.Col[len(a.Col)-1] == j {
				a.Val[len(a.Val)-1] += c.Val[e]
				continue
			}
			a.Col = append(a.Col, j)
			a.Val = append(a.Val, c.Val[e])
		}
		a.RowPtr[i+1] = int32(len(a.Col))
	}
	return a, nil
}

// CSR is an N×M sparse matrix in compressed sparse row form: the entries of
// row i are Col[RowPtr[i]:RowPtr[i+1]] (strictly increasing) and the
// matching Val. Indices are int32 so a GPU kernel (or cuSPARSE) can use the
// arrays as they are; see the package comment. Stored zeros are allowed
// and count as structural nonzeros.
type CSR struct {
	N, M   int // rows, columns
	RowPtr []int32
	Col    []int32
	Val    []float64
}

// NNZ is the number of stored entries.
func (a *CSR) NNZ() int { return len(a.Val) }

// NormInf returns ‖A‖∞, the largest sum of a row's |entries|.
func (a *CSR) NormInf() float64 {
	var norm float64
	for i := 0; i < a.N; i++ {
		var s float64
		for _, v := range a.Val[a.RowPtr[i]:a.RowPtr[i+1]] {
			s += math.Abs(v)
		}
		norm = math.Max(norm, s)
	}
	return norm
}

// CSRArrays returns the order and the arrays of a, so that a is a
// krylov.CSRMatrix (for krylov.NewCSROperator).
func (a *CSR) CSRArrays() (rows, cols int, rowPtr, col []int32, val []float64) {
	return a.N, a.M, a.RowPtr, a.Col, a.Val
}

// Check reports an error wrapping ErrShape unless the structure is valid:
// len(RowPtr) = N+1, RowPtr starts at 0 and never decreases, ends at
// len(Col) = len(Val), and every row's columns are strictly increasing and
// inside [0, M).
func (a *CSR) Check() error {
	if a.N < 0 || a.M < 0 || a.N > maxIndex || a.M > maxIndex {
		return fmt.Errorf("%w: order %d×%d", ErrShape, a.N, a.M)
	}
	if len(a.RowPtr) != a.N+1 || a.RowPtr[0] != 0 || int(a.RowPtr[a.N]) != len(a.Col) || len(a.Col) != len(a.Val) {
		return fmt.Errorf("%w: CSR arrays inconsistent (N=%d, len(RowPtr)=%d, len(Col)=%d, len(Val)=%d)", ErrShape, a.N, len(a.RowPtr), len(a.Col), len(a.Val))
	}
	for i := range a.N {
		if a.RowPtr[i+1] < a.RowPtr[i] {
			return fmt.Errorf("%w: RowPtr decreases at row %d", ErrShape, i)
		}
		prev := int32(-1)
		for _, j := range a.Col[a.RowPtr[i]:a.RowPtr[i+1]] {
			if j <= prev || int(j) >= a.M {
				return fmt.Errorf("%w: row %d: column %d out of order or outside [0, %d)", ErrShape, i, j, a.M)
			}
			prev = j
		}
	}
	return nil
}

// Clone returns a deep copy.
func (a *CSR) Clone() *CSR {
	return &CSR{N: a.N, M: a.M, RowPtr: slices.Clone(a.RowPtr), Col: slices.Clone(a.Col), Val: slices.Clone(a.Val)}
}

// At returns a_ij (zero when not stored); it panics outside the matrix.
func (a *CSR) At(i, j int) float64 {
	if i < 0 || i >= a.N || j < 0 || j >= a.M {
		panic(fmt.Sprintf("sparse: At(%d, %d) outside a %d×%d matrix", i, j, a.N, a.M))
	}
	cols := a.Col[a.RowPtr[i]:a.RowPtr[i+1]]
	if p, ok := slices.BinarySearch(cols, int32(j)); ok {
		return a.Val[int(a.RowPtr[i])+p]
	}
	return 0
}

// ToCOO converts to coordinate form, entries in row-major order.
func (a *CSR) ToCOO() *COO {
	c := NewCOO(a.N, a.M, a.NNZ())
	for i := range a.N {
		for p := a.RowPtr[i]; p < a.RowPtr[i+1]; p++ {
			c.Add(i, int(a.Col[p]), a.Val[p])
		}
	}
	return c
}

// Transpose returns Aᵀ (M×N) in CSR form, with sorted columns.
func (a *CSR) Transpose() *CSR {
	t := &CSR{N: a.M, M: a.N, RowPtr: make([]int32, a.M+1), Col: make([]int32, a.NNZ()), Val: make([]float64, a.NNZ())}
	for _, j := range a.Col {
		t.RowPtr[j+1]++
	}
	for j := range a.M {
		t.RowPtr[j+1] += t.RowPtr[j]
	}
	next := slices.Clone(t.RowPtr[:a.M])
	for i := range a.N {
		for p := a.RowPtr[i]; p < a.RowPtr[i+1]; p++ {
			j := a.Col[p]
			q := next[j]
			t.Col[q] = int32(i)
			t.Val[q] = a.Val[p]
			next[j]++
		}
	}
	return t
}

// parallelRows is the number of rows from which MulVec splits the work
// among goroutines.
const parallelRows = 1 << 14

// MulVec computes y = A·x; len(x) must be M and len(y) N, else it fails
// with ErrShape. Large matrices (N ≥ 16384) are split over GOMAXPROCS
// goroutines by rows; the result is the same bit for bit.
func (a *CSR) MulVec(x, y []float64) error {
	if len(x) != a.M || len(y) != a.N {
		return fmt.Errorf("%w: MulVec with len(x)=%d, len(y)=%d for a %d×%d matrix", ErrShape, len(x), len(y), a.N, a.M)
	}
	rows := func(r0, r1 int) {
		for i := r0; i < r1; i++ {
			s := 0.0
			for p := a.RowPtr[i]; p < a.RowPtr[i+1]; p++ {
				s += a.Val[p] * x[a.Col[p]]
			}
			y[i] = s
		}
	}
	workers := runtime.GOMAXPROCS(0)
	if a.N < parallelRows || workers < 2 {
		rows(0, a.N)
		return nil
	}
	chunks := 4 * workers
	var wg sync.WaitGroup
	for c := range chunks {
		r0, r1 := c*a.N/chunks, (c+1)*a.N/chunks
		wg.Add(1)
		go func() {
			defer wg.Done()
			rows(r0, r1)
		}()
	}
	wg.Wait()
	return nil
}

// ToFloat32 returns a float32 copy of Val (same order as Col), for FP32
// kernels that share RowPtr and Col.
func (a *CSR) ToFloat32() []float32 {
	v := make([]float32, len(a.Val))
	for p, x := range a.Val {
		v[p] = float32(x)
	}
	return v
}

// CheckPerm reports an error wrapping ErrShape unless p is a permutation of
// 0…n−1.
func CheckPerm(p []int, n int) error {
	if len(p) != n {
		return fmt.Errorf("%w: permutation of length %d, want %d", ErrShape, len(p), n)
	}
	seen := make([]bool, n)
	for i, v := range p {
		if v < 0 || v >= n || seen[v] {
			return fmt.Errorf("%w: not a permutation of 0…%d (p[%d]=%d)", ErrShape, n-1, i, v)
		}
		seen[v] = true
	}
	return nil
}

// InversePerm returns inv with inv[p[i]] = i: for a gather list
// (p[new] = old) it is the scatter list (inv[old] = new), and back.
func InversePerm(p []int) []int {
	inv := make([]int, len(p))
	for i, v := range p {
		inv[v] = i
	}
	return inv
}

// ComposePerm returns r with r[i] = p[q[i]]: permuting by p and then by q
// (both gather lists) is permuting by r.
func ComposePerm(p, q []int) []int {
	r := make([]int, len(q))
	for i, v := range q {
		r[i] = p[v]
	}
	return r
}

// PermuteVec returns v' with v'[i] = v[perm[i]] (gather).
func PermuteVec(v []float64, perm []int) []float64 {
	out := make([]float64, len(perm))
	for i, p := range perm {
		out[i] = v[p]
	}
	return out
}

// Permute returns B = P_r·A·P_cᵀ with
//
//	B[i][j] = A[rowPerm[i]][colPerm[j]],
//
// that is rowPerm[i] is the old index of new row i and colPerm[j] the old
// index of new column j (gather lists, see the package comment). A nil
// permutation stands for the identity. It fails with ErrShape when a
// permutation has the wrong length or is not a permutation.
func (a *CSR) Permute(rowPerm, colPerm []int) (*CSR, error) {
	if rowPerm != nil {
		if err := CheckPerm(rowPerm, a.N); err != nil {
			return nil, fmt.Errorf("row permutation: %w", err)
		}
	}
	var colInv []int
	if colPerm != nil {
		if err := CheckPerm(colPerm, a.M); err != nil {
			return nil, fmt.Errorf("column permutation: %w", err)
		}
		colInv = InversePerm(colPerm)
	}
	b := &CSR{N: a.N, M: a.M, RowPtr: make([]int32, a.N+1), Col: make([]int32, 0, a.NNZ()), Val: make([]float64, 0, a.NNZ())}
	for i := range a.N {
		old := i
		if rowPerm != nil {
			old = rowPerm[i]
		}
		start := len(b.Col)
		for p := a.RowPtr[old]; p < a.RowPtr[old+1]; p++ {
			j := a.Col[p]
			if colInv != nil {
				j = int32(colInv[j])
			}
			b.Col = append(b.Col, j)
			b.Val = append(b.Val, a.Val[p])
		}
		if colInv != nil {
			sortRow(b.Col[start:], b.Val[start:])
		}
		b.RowPtr[i+1] = int32(len(b.Col))
	}
	return b, nil
}

// rowSorter sorts one row's columns with its values.
type rowSorter struct {
	c []int32
	v []float64
}

func (r rowSorter) Len() int           { return len(r.c) }
func (r rowSorter) Less(i, j int) bool { return r.c[i] < r.c[j] }
func (r rowSorter) Swap(i, j int) {
	r.c[i], r.c[j] = r.c[j], r.c[i]
	r.v[i], r.v[j] = r.v[j], r.v[i]
}

// sortRow sorts cols ascending, moving vals along: insertion sort for the
// short rows of typical sparse matrices.
func sortRow(cols []int32, vals []float64) {
	if len(cols) > 32 {
		sort.Sort(rowSorter{cols, vals})
		return
	}
	for i := 1; i < len(cols); i++ {
		c, v := cols[i], vals[i]
		k := i - 1
		for k >= 0 && cols[k] > c {
			cols[k+1], vals[k+1] = cols[k], vals[k]
			k--
		}
		cols[k+1], vals[k+1] = c, v
	}
}

// Bandwidth is the half-bandwidth max |i−j| over the stored entries (zero
// for an empty or diagonal matrix). Stored zeros count.
func (a *CSR) Bandwidth() int {
	kl, ku := a.LowerUpper()
	return max(kl, ku)
}

// LowerUpper returns the lower and upper bandwidths: max(i−j) and max(j−i)
// over the stored entries, each at least zero.
func (a *CSR) LowerUpper() (kl, ku int) {
	for i := range a.N {
		r0, r1 := a.RowPtr[i], a.RowPtr[i+1]
		if r0 == r1 {
			continue
		}
		kl = max(kl, i-int(a.Col[r0]))
		ku = max(ku, int(a.Col[r1-1])-i)
	}
	return kl, ku
}

// DropOutsideBand returns a copy of A that keeps only the entries with
// |i−j| ≤ k.
func (a *CSR) DropOutsideBand(k int) *CSR {
	return a.filter(func(i, j int) bool { return i-j <= k && j-i <= k })
}

// filter returns a copy of A that keeps the entries for which keep is true.
func (a *CSR) filter(keep func(i, j int) bool) *CSR {
	b := &CSR{N: a.N, M: a.M, RowPtr: make([]int32, a.N+1)}
	for i := range a.N {
		for p := a.RowPtr[i]; p < a.RowPtr[i+1]; p++ {
			if keep(i, int(a.Col[p])) {
				b.Col = append(b.Col, a.Col[p])
				b.Val = append(b.Val, a.Val[p])
			}
		}
		b.RowPtr[i+1] = int32(len(b.Col))
	}
	return b
}

// ToBand converts a square A to banded storage of half-bandwidth k,
// dropping the entries with |i−j| > k, and also returns the number of
// entries dropped. k must satisfy banded.CheckShape (0 ≤ k < N); a
// non-square matrix fails with ErrShape.
func ToBand[T banded.Float](a *CSR, k int) (*banded.Band[T], int, error) {
	if a.N != a.M {
		return nil, 0, fmt.Errorf("%w: ToBand of a non-square %d×%d matrix", ErrShape, a.N, a.M)
	}
	b, err := banded.New[T](a.N, k)
	if err != nil {
		return nil, 0, err
	}
	dropped := 0
	for i := range a.N {
		for p := a.RowPtr[i]; p < a.RowPtr[i+1]; p++ {
			j := int(a.Col[p])
			if !b.InBand(i, j) {
				dropped++
				continue
			}
			b.Set(i, j, T(a.Val[p]))
		}
	}
	return b, dropped, nil
}

// Dense returns A as a dense gonum matrix (for tests and small problems).
// It panics for an empty matrix, as gonum does.
func (a *CSR) Dense() *mat.Dense {
	d := mat.NewDense(a.N, a.M, nil)
	for i := range a.N {
		for p := a.RowPtr[i]; p < a.RowPtr[i+1]; p++ {
			d.Set(i, int(a.Col[p]), d.At(i, int(a.Col[p]))+a.Val[p])
		}
	}
	return d
}

// FromDense returns the nonzero entries of a dense matrix as CSR.
func FromDense(d mat.Matrix) *CSR {
	r, c := d.Dims()
	a := &CSR{N: r, M: c, RowPtr: make([]int32, r+1)}
	for i := range r {
		for j := range c {
			if v := d.At(i, j); v != 0 {
				a.Col = append(a.Col, int32(j))
				a.Val = append(a.Val, v)
			}
		}
		a.RowPtr[i+1] = int32(len(a.Col))
	}
	return a
}

// FromBand converts a band matrix to CSR, keeping its nonzero entries
// (exact zeros inside the band are not stored). The indices are int32, so
// N·(2K+1) must fit in an int32; a larger band fails with ErrShape.
func FromBand[T banded.Float](b *banded.Band[T]) (*CSR, error) {
	if b == nil {
		return nil, fmt.Errorf("%w: FromBand of a nil band", ErrShape)
	}
	if int64(b.N)*int64(2*b.K+1) > math.MaxInt32 {
		return nil, fmt.Errorf("%w: FromBand of a band N=%d K=%d: up to %d entries, more than int32 indices hold", ErrShape, b.N, b.K, int64(b.N)*int64(2*b.K+1))
	}
	a := &CSR{N: b.N, M: b.N, RowPtr: make([]int32, b.N+1)}
	for i := range b.N {
		for j := max(0, i-b.K); j <= min(b.N-1, i+b.K); j++ {
			if v := b.At(i, j); v != 0 {
				a.Col = append(a.Col, int32(j))
				a.Val = append(a.Val, float64(v))
			}
		}
		a.RowPtr[i+1] = int32(len(a.Col))
	}
	return a, nil
}

// plural returns one when n is 1, else many.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
