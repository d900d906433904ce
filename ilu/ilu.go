package ilu

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/bandsolve/bandsolve/sparse"
	"github.com/bandsolve/bandsolve/tridiag"
)

var (
	// ErrZeroPivot is wrapped by the error of an ILU(0) factorization
	// that meets a zero (or non-finite) pivot uᵢᵢ; the error names row i.
	ErrZeroPivot = errors.New("ilu: zero pivot")
	// ErrNotPositive is wrapped by the error of an IC(0) factorization
	// whose pivot lᵢᵢ² = aᵢᵢ − Σₖ lᵢₖ² is not positive (or not finite): A
	// is not positive definite, or IC(0) breaks down on it; the error names
	// row i.
	ErrNotPositive = errors.New("ilu: non-positive pivot")
	// ErrMissingDiagonal is wrapped by the error about a row whose
	// diagonal entry is not stored: a zero-fill factorization cannot
	// create it.
	ErrMissingDiagonal = errors.New("ilu: missing diagonal entry")
	// ErrShape is sparse.ErrShape: it is wrapped by the errors about a
	// non-square matrix, inconsistent CSR arrays or a value slice of the
	// wrong length.
	ErrShape = sparse.ErrShape
	// ErrOption is wrapped by the error about an Options field out of
	// range.
	ErrOption = errors.New("ilu: invalid option")
)

// AutoShifts are the relative diagonal shifts that Options.AutoShift
// tries, in order, after the factorization with Options.Shift failed on a
// pivot.
var AutoShifts = [...]float64{1e-3, 1e-2, 1e-1}

// Kind names a factorization.
type Kind int

const (
	// KindILU0 is the incomplete LU factorization without fill.
	KindILU0 Kind = iota
	// KindIC0 is the incomplete Cholesky factorization without fill.
	KindIC0
)

// String returns "ILU(0)" or "IC(0)".
func (k Kind) String() string {
	if k == KindIC0 {
		return "IC(0)"
	}
	return "ILU(0)"
}

// minParallelRows is the number of rows of a level from which the
// factorization hands the level to the workers; narrower levels run on
// the calling goroutine.
var minParallelRows = 4096

// Options control ILU0 and IC0. The zero value factors A itself, with one
// worker per core.
type Options struct {
	// Shift ≥ 0 factors A + Shift·diag(A): every diagonal entry aᵢᵢ is
	// replaced by (1 + Shift)·aᵢᵢ before the factorization (a row with a
	// zero diagonal entry is not changed by it).
	Shift float64
	// AutoShift retries a factorization that fails on a pivot
	// (ErrZeroPivot, ErrNotPositive) with the relative shifts of
	// AutoShifts larger than Shift, in order, and keeps the first that
	// succeeds (Factors.Shift reports it). Without it the first failure
	// is returned.
	AutoShift bool
	// Workers is the number of goroutines that share the rows of a wide
	// level; 0 or less means tridiag.DefaultCPU().Workers(). The factors
	// do not depend on it, bit for bit.
	Workers int
}

// Factors are the incomplete factors of one matrix, with the analysis
// that Refactor reuses for another matrix of the same pattern.
type Factors struct {
	kind    Kind
	n       int
	nnzA    int     // stored entries of the factorized matrix
	opts    Options // as given
	workers int
	shift   float64 // the shift of the current values
	trying  float64 // the shift of the values being factored

	// The factors' pattern: A's (ILU(0)) or A's lower triangle (IC(0)),
	// columns ascending; diagPos[i] is the position of row i's diagonal
	// entry. src[p], for IC(0), is the position in A's values of entry p.
	rowPtr, col []int32
	diagPos     []int32
	src         []int32
	val         []float64

	// Level sets of the lower triangle of the pattern: the rows of level
	// l are order[levelPtr[l]:levelPtr[l+1]], ascending.
	order, levelPtr []int32

	// upperT caches Lᵀ for IC(0) (built by U, reset by Refactor).
	mu     sync.Mutex
	upperT *sparse.CSR
}

// ILU0 computes the incomplete LU factorization without fill of the square
// matrix a, on a's pattern: a unit lower triangular L and an upper
// triangular U with (L·U)ᵢⱼ = aᵢⱼ at every stored (i, j). Every diagonal
// entry must be stored. The errors wrap ErrShape, ErrMissingDiagonal,
// ErrZeroPivot (naming the row) or ErrOption.
func ILU0(a *sparse.CSR, opts Options) (*Factors, error) {
	return factor(a, opts, KindILU0)
}

// IC0 computes the incomplete Cholesky factorization without fill of the
// symmetric positive definite matrix a, of which only the lower triangle
// is read: a lower triangular L with positive diagonal, with the pattern
// of a's lower triangle, such that (L·Lᵀ)ᵢⱼ = aᵢⱼ at every stored (i, j)
// with j ≤ i. The errors wrap ErrShape, ErrMissingDiagonal,
// ErrNotPositive (naming the row) or ErrOption.
func IC0(a *sparse.CSR, opts Options) (*Factors, error) {
	return factor(a, opts, KindIC0)
}

// factor analyses a and computes the factors of the given kind.
func factor(a *sparse.CSR, opts Options, kind Kind) (*Factors, error) {
	if a == nil {
		return nil, fmt.Errorf("%w: %s of a nil matrix", ErrShape, kind)
	}
	if err := a.Check(); err != nil {
		return nil, fmt.Errorf("ilu: %s: %w", kind, err)
	}
	if a.N != a.M {
		return nil, fmt.Errorf("%w: %s of a %d×%d matrix: the matrix must be square", ErrShape, kind, a.N, a.M)
	}
	if !(opts.Shift >= 0) || math.IsInf(opts.Shift, 0) {
		return nil, fmt.Errorf("%w: %s: Shift = %g (want a finite value ≥ 0)", ErrOption, kind, opts.Shift)
	}
	f := &Factors{kind: kind, n: a.N, nnzA: a.NNZ(), opts: opts, workers: opts.Workers}
	if f.workers <= 0 {
		f.workers = tridiag.DefaultCPU().Workers()
	}
	if err := f.analyse(a); err != nil {
		return nil, err
	}
	if err := f.compute(a.Val); err != nil {
		return nil, err
	}
	return f, nil
}

// analyse copies the pattern, finds the diagonal entries and computes the
// level sets.
func (f *Factors) analyse(a *sparse.CSR) error {
	n := f.n
	f.diagPos = make([]int32, n)
	if f.kind == KindILU0 {
		f.rowPtr = slices.Clone(a.RowPtr)
		f.col = slices.Clone(a.Col)
	} else {
		f.rowPtr = make([]int32, n+1)
		for i := range n {
			for p := a.RowPtr[i]; p < a.RowPtr[i+1] && int(a.Col[p]) <= i; p++ {
				f.col = append(f.col, a.Col[p])
				f.src = append(f.src, p)
			}
			f.rowPtr[i+1] = int32(len(f.col))
		}
	}
	f.val = make([]float64, len(f.col))
	for i := range n {
		cols := f.col[f.rowPtr[i]:f.rowPtr[i+1]]
		p, ok := slices.BinarySearch(cols, int32(i))
		if !ok {
			return fmt.Errorf("%w: %s of the %d×%d matrix: row %d has no stored diagonal entry", ErrMissingDiagonal, f.kind, n, n, i)
		}
		f.diagPos[i] = f.rowPtr[i] + int32(p)
	}
	// Level of row i: one more than the deepest row k < i it holds.
	level := make([]int32, n)
	levels := int32(0)
	for i := range n {
		l := int32(0)
		for p := f.rowPtr[i]; p < f.diagPos[i]; p++ {
			l = max(l, level[f.col[p]]+1)
		}
		level[i] = l
		levels = max(levels, l+1)
	}
	f.levelPtr = make([]int32, levels+1)
	for _, l := range level {
		f.levelPtr[l+1]++
	}
	for l := range levels {
		f.levelPtr[l+1] += f.levelPtr[l]
	}
	next := slices.Clone(f.levelPtr[:levels])
	f.order = make([]int32, n)
	for i, l := range level {
		f.order[next[l]] = int32(i)
		next[l]++
	}
	return nil
}

// compute factors the matrix with values aval (in A's pattern), with the
// shifts that the options allow.
func (f *Factors) compute(aval []float64) error {
	shifts := []float64{f.opts.Shift}
	if f.opts.AutoShift {
		for _, s := range AutoShifts {
			if s > f.opts.Shift {
				shifts = append(shifts, s)
			}
		}
	}
	var err error
	for _, s := range shifts {
		err = f.computeShift(aval, s)
		if err == nil {
			f.shift = s
			return nil
		}
		if !errors.Is(err, ErrZeroPivot) && !errors.Is(err, ErrNotPositive) {
			return err
		}
	}
	if len(shifts) > 1 {
		return fmt.Errorf("%w (the largest of the shifts %v)", err, shifts)
	}
	return err
}

// computeShift loads the values of A + shift·diag(A) and factors them
// level by level.
func (f *Factors) computeShift(aval []float64, shift float64) error {
	f.trying = shift
	if f.src != nil {
		for p, q := range f.src {
			f.val[p] = aval[q]
		}
	} else {
		copy(f.val, aval)
	}
	if shift != 0 {
		for _, d := range f.diagPos {
			f.val[d] *= 1 + shift
		}
	}
	row := f.iluRow
	if f.kind == KindIC0 {
		row = f.icRow
	}
	pos := make([][]int32, f.workers)
	for w := range pos {
		pos[w] = make([]int32, f.n)
		for i := range pos[w] {
			pos[w][i] = -1
		}
	}
	for l := range len(f.levelPtr) - 1 {
		rows := f.order[f.levelPtr[l]:f.levelPtr[l+1]]
		if f.workers == 1 || len(rows) < minParallelRows {
			for _, i := range rows {
				if err := row(int(i), pos[0]); err != nil {
					return err
				}
			}
			continue
		}
		// The rows of a level are independent: split them into one
		// contiguous chunk per worker; report the lowest failing row.
		errs := make([]error, f.workers)
		var wg sync.WaitGroup
		for w := range f.workers {
			lo, hi := w*len(rows)/f.workers, (w+1)*len(rows)/f.workers
			wg.Add(1)
			go func() {
				defer wg.Done()
				for _, i := range rows[lo:hi] {
					if err := row(int(i), pos[w]); err != nil {
						errs[w] = err
						return
					}
				}
			}()
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// iluRow computes row i of L and U (IKJ form): for every k < i in the row,
// in ascending order, lᵢₖ = aᵢₖ/uₖₖ and aᵢⱼ −= lᵢₖ·uₖⱼ for the j > k that
// both row i and row k of U hold. pos maps a column to its position in
// row i (−1 elsewhere) and is restored before returning.
func (f *Factors) iluRow(i int, pos []int32) error {
	lo, hi, d := f.rowPtr[i], f.rowPtr[i+1], f.diagPos[i]
	for p := lo; p < hi; p++ {
		pos[f.col[p]] = p
	}
	val := f.val
	for p := lo; p < d; p++ {
		k := f.col[p]
		dk, end := f.diagPos[k], f.rowPtr[k+1]
		lik := val[p] / val[dk]
		val[p] = lik
		for q := dk + 1; q < end; q++ {
			if t := pos[f.col[q]]; t >= 0 {
				val[t] -= lik * val[q]
			}
		}
	}
	for p := lo; p < hi; p++ {
		pos[f.col[p]] = -1
	}
	if u := val[d]; u == 0 || math.IsNaN(u) || math.IsInf(u, 0) {
		return fmt.Errorf("%w: ILU(0) of the %d×%d matrix (shift %g): row %d: pivot u[%d,%d] = %.3g", ErrZeroPivot, f.n, f.n, f.trying, i, i, i, u)
	}
	return nil
}

// icRow computes row i of L (the lower pattern, diagonal last): for every
// j < i in the row, in ascending order,
//
//	lᵢⱼ = (aᵢⱼ − Σₖ lᵢₖ·lⱼₖ)/lⱼⱼ   (k < j held by both rows)
//
// and then lᵢᵢ = √(aᵢᵢ − Σₖ lᵢₖ²).
func (f *Factors) icRow(i int, pos []int32) error {
	lo, d := f.rowPtr[i], f.diagPos[i]
	for p := lo; p < d; p++ {
		pos[f.col[p]] = p
	}
	val := f.val
	for p := lo; p < d; p++ {
		j := f.col[p]
		s := val[p]
		dj := f.diagPos[j]
		for q := f.rowPtr[j]; q < dj; q++ {
			if t := pos[f.col[q]]; t >= 0 {
				s -= val[t] * val[q]
			}
		}
		val[p] = s / val[dj]
	}
	s := val[d]
	for p := lo; p < d; p++ {
		s -= val[p] * val[p]
		pos[f.col[p]] = -1
	}
	if !(s > 0) || math.IsInf(s, 0) {
		return fmt.Errorf("%w: IC(0) of the %d×%d matrix (shift %g): row %d: l[%d,%d]² = %.3g", ErrNotPositive, f.n, f.n, f.trying, i, i, i, s)
	}
	val[d] = math.Sqrt(s)
	return nil
}

// Refactor recomputes the factors for the matrix with the analysed pattern
// and the values val (in that matrix's order, len(val) = its stored
// entries), with the options given at the first factorization (the shift
// starts again from Options.Shift). Preconditioners made earlier keep the
// values they were made with. On error the factors are unusable until a
// Refactor succeeds.
func (f *Factors) Refactor(val []float64) error {
	if len(val) != f.nnzA {
		return fmt.Errorf("%w: %s refactor of the %d×%d matrix with %d values for %d entries", ErrShape, f.kind, f.n, f.n, len(val), f.nnzA)
	}
	f.mu.Lock()
	f.upperT = nil
	f.mu.Unlock()
	return f.compute(val)
}

// Kind returns KindILU0 or KindIC0.
func (f *Factors) Kind() Kind { return f.kind }

// N returns the order of the matrix.
func (f *Factors) N() int { return f.n }

// Shift returns the relative diagonal shift of the current factors: the
// factors are those of A + Shift()·diag(A).
func (f *Factors) Shift() float64 { return f.shift }

// Levels returns the number of level sets of the lower triangle of the
// pattern: the length of the factorization's critical path in rows, and
// the number of levels of the lower triangular solve.
func (f *Factors) Levels() int { return len(f.levelPtr) - 1 }

// LU returns the factors in the factorized matrix's pattern (ILU(0): L's
// strict lower triangle and U, csrilu02's layout; IC(0): L). The matrix
// shares its arrays with f: Refactor changes its values, and it must not
// be modified.
func (f *Factors) LU() *sparse.CSR {
	return &sparse.CSR{N: f.n, M: f.n, RowPtr: f.rowPtr, Col: f.col, Val: f.val}
}

// L returns the lower triangular factor as its own matrix: for ILU(0)
// unit lower triangular with the ones stored, for IC(0) L itself.
func (f *Factors) L() *sparse.CSR {
	if f.kind == KindIC0 {
		return f.LU().Clone()
	}
	l := &sparse.CSR{N: f.n, M: f.n, RowPtr: make([]int32, f.n+1)}
	for i := range f.n {
		for p := f.rowPtr[i]; p < f.diagPos[i]; p++ {
			l.Col = append(l.Col, f.col[p])
			l.Val = append(l.Val, f.val[p])
		}
		l.Col = append(l.Col, int32(i))
		l.Val = append(l.Val, 1)
		l.RowPtr[i+1] = int32(len(l.Col))
	}
	return l
}

// U returns the upper triangular factor as its own matrix: U for ILU(0),
// Lᵀ for IC(0) (computed once per factorization and shared by later calls;
// it must not be modified).
func (f *Factors) U() *sparse.CSR {
	if f.kind == KindIC0 {
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.upperT == nil {
			f.upperT = f.LU().Transpose()
		}
		return f.upperT
	}
	u := &sparse.CSR{N: f.n, M: f.n, RowPtr: make([]int32, f.n+1)}
	for i := range f.n {
		for p := f.diagPos[i]; p < f.rowPtr[i+1]; p++ {
			u.Col = append(u.Col, f.col[p])
			u.Val = append(u.Val, f.val[p])
		}
		u.RowPtr[i+1] = int32(len(u.Col))
	}
	return u
}
