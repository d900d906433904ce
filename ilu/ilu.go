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

// Pattern is the analysis of a zero-fill factorization: the factors'
// pattern and the level sets that schedule its rows. It depends on the
// matrix's pattern only; a GPU factorization computes its values from it.
// Its slices must not be modified.
type Pattern struct {
	Kind Kind
	N    int
	// NNZA is the number of stored entries of the factorized matrix: the
	// length of the values that Load takes.
	NNZA int
	// RowPtr and Col are the factors' pattern: A's (ILU(0)) or A's lower
	// triangle (IC(0)), columns ascending; DiagPos[i] is the position of
	// row i's diagonal entry. Src[p], for IC(0), is the position in A's
	// values of entry p (nil for ILU(0), whose entries are A's).
	RowPtr, Col, DiagPos, Src []int32
	// Level sets of the lower triangle of the pattern: the rows of level
	// l are Order[LevelPtr[l]:LevelPtr[l+1]], ascending. Every row of a
	// level depends only on rows of lower levels.
	Order, LevelPtr []int32
}

// Factors are the incomplete factors of one matrix, with the analysis
// that Refactor reuses for another matrix of the same pattern.
type Factors struct {
	pat     *Pattern
	opts    Options // as given
	workers int
	shift   float64 // the shift of the current values
	trying  float64 // the shift of the values being factored
	val     []float64

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
	if err := opts.Check(kind); err != nil {
		return nil, err
	}
	pat, err := Analyze(a, kind)
	if err != nil {
		return nil, err
	}
	f := &Factors{pat: pat, opts: opts, workers: opts.Workers}
	if f.workers <= 0 {
		f.workers = tridiag.DefaultCPU().Workers()
	}
	f.val = make([]float64, len(pat.Col))
	if err := f.compute(a.Val); err != nil {
		return nil, err
	}
	return f, nil
}

// Check reports an Options field out of range for a factorization of
// the given kind (an error wrapping ErrOption).
func (opts Options) Check(kind Kind) error {
	if !(opts.Shift >= 0) || math.IsInf(opts.Shift, 0) {
		return fmt.Errorf("%w: %s: Shift = %g (want a finite value ≥ 0)", ErrOption, kind, opts.Shift)
	}
	return nil
}

// Analyze checks the square matrix a and computes the pattern and the
// level sets of its factorization of the given kind. The errors wrap
// ErrShape or ErrMissingDiagonal.
func Analyze(a *sparse.CSR, kind Kind) (*Pattern, error) {
	if a == nil {
		return nil, fmt.Errorf("%w: %s of a nil matrix", ErrShape, kind)
	}
	if err := a.Check(); err != nil {
		return nil, fmt.Errorf("ilu: %s: %w", kind, err)
	}
	if a.N != a.M {
		return nil, fmt.Errorf("%w: %s of a %d×%d matrix: the matrix must be square", ErrShape, kind, a.N, a.M)
	}
	f := &Pattern{Kind: kind, N: a.N, NNZA: a.NNZ()}
	if err := f.analyse(a); err != nil {
		return nil, err
	}
	return f, nil
}

// analyse copies the pattern, finds the diagonal entries and computes the
// level sets.
func (f *Pattern) analyse(a *sparse.CSR) error {
	n := f.N
	f.DiagPos = make([]int32, n)
	if f.Kind == KindILU0 {
		f.RowPtr = slices.Clone(a.RowPtr)
		f.Col = slices.Clone(a.Col)
	} else {
		f.RowPtr = make([]int32, n+1)
		for i := range n {
			for p := a.RowPtr[i]; p < a.RowPtr[i+1] && int(a.Col[p]) <= i; p++ {
				f.Col = append(f.Col, a.Col[p])
				f.Src = append(f.Src, p)
			}
			f.RowPtr[i+1] = int32(len(f.Col))
		}
	}
	for i := range n {
		cols := f.Col[f.RowPtr[i]:f.RowPtr[i+1]]
		p, ok := slices.BinarySearch(cols, int32(i))
		if !ok {
			return fmt.Errorf("%w: %s of the %d×%d matrix: row %d has no stored diagonal entry", ErrMissingDiagonal, f.Kind, n, n, i)
		}
		f.DiagPos[i] = f.RowPtr[i] + int32(p)
	}
	// Level of row i: one more than the deepest row k < i it holds.
	level := make([]int32, n)
	levels := int32(0)
	for i := range n {
		l := int32(0)
		for p := f.RowPtr[i]; p < f.DiagPos[i]; p++ {
			l = max(l, level[f.Col[p]]+1)
		}
		level[i] = l
		levels = max(levels, l+1)
	}
	f.LevelPtr = make([]int32, levels+1)
	for _, l := range level {
		f.LevelPtr[l+1]++
	}
	for l := range levels {
		f.LevelPtr[l+1] += f.LevelPtr[l]
	}
	next := slices.Clone(f.LevelPtr[:levels])
	f.Order = make([]int32, n)
	for i, l := range level {
		f.Order[next[l]] = int32(i)
		next[l]++
	}
	return nil
}

// Shifts returns the relative diagonal shifts that a factorization with
// opts tries, in order: Shift, then (with AutoShift) the AutoShifts larger
// than it.
func (opts Options) Shifts() []float64 {
	shifts := []float64{opts.Shift}
	if opts.AutoShift {
		for _, s := range AutoShifts {
			if s > opts.Shift {
				shifts = append(shifts, s)
			}
		}
	}
	return shifts
}

// TryShifts calls factor with the shifts of opts.Shifts() in order until
// one succeeds, and returns that shift. It stops at the first error that
// is not a pivot's (ErrZeroPivot, ErrNotPositive); after the last shift it
// returns the last pivot error. Devices other than the CPU factor through
// it, so that they try the same shifts.
func TryShifts(opts Options, factor func(shift float64) error) (float64, error) {
	shifts := opts.Shifts()
	var err error
	for _, s := range shifts {
		err = factor(s)
		if err == nil {
			return s, nil
		}
		if !errors.Is(err, ErrZeroPivot) && !errors.Is(err, ErrNotPositive) {
			return 0, err
		}
	}
	if len(shifts) > 1 {
		return 0, fmt.Errorf("%w (the largest of the shifts %v)", err, shifts)
	}
	return 0, err
}

// compute factors the matrix with values aval (in A's pattern), with the
// shifts that the options allow.
func (f *Factors) compute(aval []float64) error {
	s, err := TryShifts(f.opts, func(s float64) error { return f.computeShift(aval, s) })
	if err == nil {
		f.shift = s
	}
	return err
}

// Load sets dst, of one value per entry of the factors' pattern, to the
// values of A + shift·diag(A) for the matrix values aval (in A's
// pattern): the values that the factorization overwrites with the
// factors.
func (p *Pattern) Load(dst, aval []float64, shift float64) {
	if p.Src != nil {
		for k, q := range p.Src {
			dst[k] = aval[q]
		}
	} else {
		copy(dst, aval)
	}
	if shift != 0 {
		for _, d := range p.DiagPos {
			dst[d] *= 1 + shift
		}
	}
}

// PivotError is the error of the factorization of this pattern, of the
// matrix with the given shift, that fails at row i on the pivot v (uᵢᵢ
// for ILU(0), lᵢᵢ² for IC(0)): it wraps ErrZeroPivot or ErrNotPositive.
func (p *Pattern) PivotError(shift float64, i int, v float64) error {
	if p.Kind == KindIC0 {
		return fmt.Errorf("%w: IC(0) of the %d×%d matrix (shift %g): row %d: l[%d,%d]² = %.3g", ErrNotPositive, p.N, p.N, shift, i, i, i, v)
	}
	return fmt.Errorf("%w: ILU(0) of the %d×%d matrix (shift %g): row %d: pivot u[%d,%d] = %.3g", ErrZeroPivot, p.N, p.N, shift, i, i, i, v)
}

// computeShift loads the values of A + shift·diag(A) and factors them
// level by level.
func (f *Factors) computeShift(aval []float64, shift float64) error {
	f.trying = shift
	f.pat.Load(f.val, aval, shift)
	row := f.iluRow
	if f.pat.Kind == KindIC0 {
		row = f.icRow
	}
	pos := make([][]int32, f.workers)
	for w := range pos {
		pos[w] = make([]int32, f.pat.N)
		for i := range pos[w] {
			pos[w][i] = -1
		}
	}
	for l := range len(f.pat.LevelPtr) - 1 {
		rows := f.pat.Order[f.pat.LevelPtr[l]:f.pat.LevelPtr[l+1]]
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
	lo, hi, d := f.pat.RowPtr[i], f.pat.RowPtr[i+1], f.pat.DiagPos[i]
	for p := lo; p < hi; p++ {
		pos[f.pat.Col[p]] = p
	}
	val := f.val
	for p := lo; p < d; p++ {
		k := f.pat.Col[p]
		dk, end := f.pat.DiagPos[k], f.pat.RowPtr[k+1]
		lik := val[p] / val[dk]
		val[p] = lik
		for q := dk + 1; q < end; q++ {
			if t := pos[f.pat.Col[q]]; t >= 0 {
				val[t] -= lik * val[q]
			}
		}
	}
	for p := lo; p < hi; p++ {
		pos[f.pat.Col[p]] = -1
	}
	if u := val[d]; u == 0 || math.IsNaN(u) || math.IsInf(u, 0) {
		return f.pat.PivotError(f.trying, i, u)
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
	lo, d := f.pat.RowPtr[i], f.pat.DiagPos[i]
	for p := lo; p < d; p++ {
		pos[f.pat.Col[p]] = p
	}
	val := f.val
	for p := lo; p < d; p++ {
		j := f.pat.Col[p]
		s := val[p]
		dj := f.pat.DiagPos[j]
		for q := f.pat.RowPtr[j]; q < dj; q++ {
			if t := pos[f.pat.Col[q]]; t >= 0 {
				s -= val[t] * val[q]
			}
		}
		val[p] = s / val[dj]
	}
	s := val[d]
	for p := lo; p < d; p++ {
		s -= val[p] * val[p]
		pos[f.pat.Col[p]] = -1
	}
	if !(s > 0) || math.IsInf(s, 0) {
		return f.pat.PivotError(f.trying, i, s)
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
	if len(val) != f.pat.NNZA {
		return fmt.Errorf("%w: %s refactor of the %d×%d matrix with %d values for %d entries", ErrShape, f.pat.Kind, f.pat.N, f.pat.N, len(val), f.pat.NNZA)
	}
	f.mu.Lock()
	f.upperT = nil
	f.mu.Unlock()
	return f.compute(val)
}

// Pattern returns the analysis the factors were computed on.
func (f *Factors) Pattern() *Pattern { return f.pat }

// Kind returns KindILU0 or KindIC0.
func (f *Factors) Kind() Kind { return f.pat.Kind }

// N returns the order of the matrix.
func (f *Factors) N() int { return f.pat.N }

// Shift returns the relative diagonal shift of the current factors: the
// factors are those of A + Shift()·diag(A).
func (f *Factors) Shift() float64 { return f.shift }

// Levels returns the number of level sets of the lower triangle of the
// pattern: the length of the factorization's critical path in rows, and
// the number of levels of the lower triangular solve.
func (f *Factors) Levels() int { return len(f.pat.LevelPtr) - 1 }

// LU returns the factors in the factorized matrix's pattern (ILU(0): L's
// strict lower triangle and U, csrilu02's layout; IC(0): L). The matrix
// shares its arrays with f: Refactor changes its values, and it must not
// be modified.
func (f *Factors) LU() *sparse.CSR {
	return &sparse.CSR{N: f.pat.N, M: f.pat.N, RowPtr: f.pat.RowPtr, Col: f.pat.Col, Val: f.val}
}

// L returns the lower triangular factor as its own matrix: for ILU(0)
// unit lower triangular with the ones stored, for IC(0) L itself.
func (f *Factors) L() *sparse.CSR {
	if f.pat.Kind == KindIC0 {
		return f.LU().Clone()
	}
	l := &sparse.CSR{N: f.pat.N, M: f.pat.N, RowPtr: make([]int32, f.pat.N+1)}
	for i := range f.pat.N {
		for p := f.pat.RowPtr[i]; p < f.pat.DiagPos[i]; p++ {
			l.Col = append(l.Col, f.pat.Col[p])
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
	if f.pat.Kind == KindIC0 {
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.upperT == nil {
			f.upperT = f.LU().Transpose()
		}
		return f.upperT
	}
	u := &sparse.CSR{N: f.pat.N, M: f.pat.N, RowPtr: make([]int32, f.pat.N+1)}
	for i := range f.pat.N {
		for p := f.pat.DiagPos[i]; p < f.pat.RowPtr[i+1]; p++ {
			u.Col = append(u.Col, f.pat.Col[p])
			u.Val = append(u.Val, f.val[p])
		}
		u.RowPtr[i+1] = int32(len(u.Col))
	}
	return u
}
