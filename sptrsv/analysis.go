package sptrsv

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/bandsolve/bandsolve/sparse"
	"github.com/bandsolve/bandsolve/tridiag"
)

// ErrNotTriangular is wrapped by the error of Analyze when the matrix has
// an entry on the other side of the diagonal than the requested triangle
// (and Options.Part is WholeMatrix).
var ErrNotTriangular = errors.New("sptrsv: wrong triangle")

// ErrSingular is wrapped by the error of Analyze when a row of a triangle
// with a non-unit diagonal has a zero or missing diagonal entry.
var ErrSingular = errors.New("sptrsv: singular triangle")

// ErrShape is sparse.ErrShape: it is wrapped by the errors about sizes (a
// non-square matrix, vectors of the wrong length) and by those of
// sparse.CSR.Check.
var ErrShape = sparse.ErrShape

// Triangle says which triangle of the matrix is solved with.
type Triangle int

const (
	// Lower is the lower triangle: row i depends on the rows j < i.
	Lower Triangle = iota
	// Upper is the upper triangle: row i depends on the rows j > i.
	Upper
)

// String returns "lower" or "upper".
func (t Triangle) String() string {
	if t == Upper {
		return "upper"
	}
	return "lower"
}

// Part says which entries of the matrix form the triangle.
type Part int

const (
	// WholeMatrix takes every stored entry: the matrix must be triangular
	// in the requested sense, and an entry on the other side of the
	// diagonal is refused with ErrNotTriangular.
	WholeMatrix Part = iota
	// TrianglePart takes the requested triangle of a general matrix,
	// diagonal included, and leaves out the entries of the other side
	// (tril(A) or triu(A)).
	TrianglePart
)

// DefaultSerialLevelRows is the number of rows below which the level-set
// solve does a level on the calling goroutine without handing it to the
// workers. See Options.SerialLevelRows for the benchmark that sets it.
const DefaultSerialLevelRows = 4096

// Options describe the triangle to solve with and how to solve in
// parallel. The zero value is a lower triangle with a stored, non-unit
// diagonal, the whole matrix, and one worker per core.
type Options struct {
	// Triangle is Lower or Upper.
	Triangle Triangle
	// UnitDiagonal takes every diagonal entry as one: stored diagonal
	// entries are left out, and a missing one is no error.
	UnitDiagonal bool
	// Part is WholeMatrix (the matrix must be triangular) or TrianglePart
	// (take the triangle of a general matrix).
	Part Part
	// Workers is the number of goroutines of the parallel solves; 0 or
	// less means tridiag.DefaultCPU().Workers() (one per core).
	Workers int
	// SerialLevelRows: the level-set solve does a level of fewer rows on
	// the calling goroutine, without waking the workers; 0 means
	// DefaultSerialLevelRows, a negative value hands every level to the
	// workers. The default comes from
	//
	//	go test ./sptrsv/ -run '^$' -bench LevelThreshold
	//
	// which solves triangles of 2¹⁸ rows whose levels all have one width,
	// each level done by the calling goroutine or by the workers. On two
	// cores (AMD EPYC, one of them shared) waking the workers costs about
	// 1 µs per level: at width 256 the workers take 3.2 ms against 2.2 ms
	// serially, at 2048 3.2 against 2.7 ms, at 4096 2.8 against 2.8 ms, and
	// at 16384 2.3 against 2.7 ms; the workers pay from about 4096 rows.
	SerialLevelRows int
}

// Stats are the level statistics of a triangle, the columns of Liu et
// al.'s Table 3 and the rows per level of Naumov's analysis.
type Stats struct {
	N      int // order
	NNZ    int // entries of the triangle, the stored diagonal included
	Levels int // level sets: the length of the longest dependency chain
	// MaxRowsPerLevel, MinRowsPerLevel and MeanRowsPerLevel (N/Levels)
	// describe the parallelism of one level.
	MaxRowsPerLevel  int
	MinRowsPerLevel  int
	MeanRowsPerLevel float64
}

// Analysis is the structure of one triangle, its level sets and its
// in-degrees, computed once by Analyze and reused by every solve with the
// same matrix. It is read-only after Analyze: concurrent solves with one
// Analysis are safe.
type Analysis struct {
	n        int
	triangle Triangle
	unit     bool
	workers  int
	serial   int

	// The triangle in CSR, columns ascending in every row; diagPos[i] is
	// the position of row i's diagonal entry in col/val, or -1 when it is
	// not stored (unit diagonal).
	rowPtr  []int32
	col     []int32
	val     []float64
	diagPos []int32
	// diag[i] is the divisor of row i: its diagonal entry, or 1 with a
	// unit diagonal.
	diag []float64

	// Level sets (Naumov): level[i] is row i's level (0-based), perm the
	// rows sorted by level (ascending row order inside a level), and
	// levelPtr[l]:levelPtr[l+1] the rows of level l within perm.
	level    []int32
	perm     []int32
	levelPtr []int32

	// The schedule of Solve: segment s is order[segPtr[s]:segPtr[s+1]],
	// either one wide level (wide[s], its rows in perm's order, solved by
	// the workers) or a run of consecutive narrow levels, solved by the
	// calling goroutine with its rows in the order of the dependencies
	// (ascending for Lower, descending for Upper), which keeps the
	// accesses to x in the matrix's order.
	order  []int32
	segPtr []int32
	wide   []bool

	// Synchronization-free (Liu): the off-diagonal entries of the
	// triangle in CSC (cscRow ascending in every column), and the
	// in-degree of every row, its off-diagonal entries.
	cscPtr   []int32
	cscRow   []int32
	cscVal   []float64
	inDegree []int32

	// val32, diag32 and cscVal32 are float32 copies of val, diag and
	// cscVal, made by the first float32 solve.
	once32                  sync.Once
	val32, diag32, cscVal32 []float32
}

// Float is the element type of the solves.
type Float interface{ ~float32 | ~float64 }

// isFloat32 reports whether T is a float32 type.
func isFloat32[T Float]() bool {
	var zero T
	_, ok := any(zero).(float32)
	return ok
}

// toFloat32 rounds v to float32.
func toFloat32(v []float64) []float32 {
	w := make([]float32, len(v))
	for k, f := range v {
		w[k] = float32(f)
	}
	return w
}

// float32Values makes the float32 copies of the values once.
func (an *Analysis) float32Values() {
	an.once32.Do(func() {
		an.val32 = toFloat32(an.val)
		an.diag32 = toFloat32(an.diag)
		an.cscVal32 = toFloat32(an.cscVal)
	})
}

// values returns the triangle's values and divisors in precision T.
func values[T Float](an *Analysis) (val, diag []T) {
	if isFloat32[T]() {
		an.float32Values()
		return any(an.val32).([]T), any(an.diag32).([]T)
	}
	return any(an.val).([]T), any(an.diag).([]T)
}

// cscValues returns the off-diagonal values in CSC (those of the
// synchronization-free solve) in precision T.
func cscValues[T Float](an *Analysis) []T {
	if isFloat32[T]() {
		an.float32Values()
		return any(an.cscVal32).([]T)
	}
	return any(an.cscVal).([]T)
}

// Analyze checks a, extracts the requested triangle and computes its level
// sets and in-degrees. The errors name the row (0-based): ErrShape for a
// non-square matrix or inconsistent CSR arrays, ErrNotTriangular for an
// entry (i, j) on the wrong side of the diagonal, ErrSingular for a zero
// or missing diagonal entry in a non-unit triangle.
func Analyze(a *sparse.CSR, opts Options) (*Analysis, error) {
	if a == nil {
		return nil, fmt.Errorf("%w: nil matrix", ErrShape)
	}
	if err := a.Check(); err != nil {
		return nil, fmt.Errorf("sptrsv: %w", err)
	}
	if a.N != a.M {
		return nil, fmt.Errorf("%w: the matrix is %d×%d; a triangular solve needs a square one", ErrShape, a.N, a.M)
	}
	if opts.Triangle != Lower && opts.Triangle != Upper {
		return nil, fmt.Errorf("sptrsv: unknown triangle %d", int(opts.Triangle))
	}
	if opts.Part != WholeMatrix && opts.Part != TrianglePart {
		return nil, fmt.Errorf("sptrsv: unknown part %d", int(opts.Part))
	}
	n := a.N
	an := &Analysis{n: n, triangle: opts.Triangle, unit: opts.UnitDiagonal}
	an.workers = opts.Workers
	if an.workers <= 0 {
		an.workers = tridiag.DefaultCPU().Workers()
	}
	an.serial = opts.SerialLevelRows
	if an.serial == 0 {
		an.serial = DefaultSerialLevelRows
	}
	if err := an.extract(a, opts.Part); err != nil {
		return nil, err
	}
	an.levels()
	an.schedule()
	an.transpose()
	return an, nil
}

// inTriangle reports whether column j of row i lies strictly inside the
// triangle (off the diagonal).
func (an *Analysis) inTriangle(i, j int) bool {
	if an.triangle == Lower {
		return j < i
	}
	return j > i
}

// extract copies the triangle of a into an's CSR arrays and checks it.
func (an *Analysis) extract(a *sparse.CSR, part Part) error {
	n := an.n
	an.rowPtr = make([]int32, n+1)
	an.diagPos = make([]int32, n)
	an.diag = make([]float64, n)
	nnz := 0
	for i := range n {
		for k := a.RowPtr[i]; k < a.RowPtr[i+1]; k++ {
			j := int(a.Col[k])
			switch {
			case j == i:
				if !an.unit {
					nnz++
				}
			case an.inTriangle(i, j):
				nnz++
			case part == WholeMatrix:
				return fmt.Errorf("%w: not %s triangular: entry (%d, %d)", ErrNotTriangular, an.triangle, i, j)
			}
		}
	}
	an.col = make([]int32, 0, nnz)
	an.val = make([]float64, 0, nnz)
	for i := range n {
		an.diagPos[i] = -1
		an.diag[i] = 1
		for k := a.RowPtr[i]; k < a.RowPtr[i+1]; k++ {
			j := int(a.Col[k])
			if j == i {
				if an.unit {
					continue
				}
				an.diagPos[i] = int32(len(an.col))
				an.diag[i] = a.Val[k]
			} else if !an.inTriangle(i, j) {
				continue
			}
			an.col = append(an.col, a.Col[k])
			an.val = append(an.val, a.Val[k])
		}
		an.rowPtr[i+1] = int32(len(an.col))
		if !an.unit {
			if an.diagPos[i] < 0 {
				return fmt.Errorf("%w: row %d has no diagonal entry", ErrSingular, i)
			}
			if an.diag[i] == 0 {
				return fmt.Errorf("%w: row %d has a zero diagonal entry", ErrSingular, i)
			}
		}
	}
	return nil
}

// levels computes the level sets after Naumov: the level of row i is one
// more than the largest level of the rows it depends on (0 when it
// depends on none), found in one pass in the order of the dependencies;
// the rows are then sorted by level with a counting sort.
func (an *Analysis) levels() {
	n := an.n
	an.level = make([]int32, n)
	nLevels := int32(0)
	visit := func(i int) {
		l := int32(0)
		for k := an.rowPtr[i]; k < an.rowPtr[i+1]; k++ {
			if j := int(an.col[k]); j != i {
				l = max(l, an.level[j]+1)
			}
		}
		an.level[i] = l
		nLevels = max(nLevels, l+1)
	}
	if an.triangle == Lower {
		for i := range n {
			visit(i)
		}
	} else {
		for i := n - 1; i >= 0; i-- {
			visit(i)
		}
	}
	an.levelPtr = make([]int32, nLevels+1)
	for _, l := range an.level {
		an.levelPtr[l+1]++
	}
	for l := range nLevels {
		an.levelPtr[l+1] += an.levelPtr[l]
	}
	next := make([]int32, nLevels)
	copy(next, an.levelPtr[:nLevels])
	an.perm = make([]int32, n)
	for i, l := range an.level {
		an.perm[next[l]] = int32(i)
		next[l]++
	}
}

// schedule splits the levels into the segments of Solve: every level of
// at least an.serial rows (with more than one worker) is a segment of its
// own, and every run of narrower levels between them is one segment.
func (an *Analysis) schedule() {
	an.order = make([]int32, 0, an.n)
	an.segPtr = []int32{0}
	var run []int32
	flush := func() {
		if len(run) == 0 {
			return
		}
		slices.Sort(run)
		if an.triangle == Upper {
			slices.Reverse(run)
		}
		an.order = append(an.order, run...)
		an.segPtr = append(an.segPtr, int32(len(an.order)))
		an.wide = append(an.wide, false)
		run = run[:0]
	}
	for l := range an.Levels() {
		rows := an.perm[an.levelPtr[l]:an.levelPtr[l+1]]
		if an.workers > 1 && len(rows) >= an.serial {
			flush()
			an.order = append(an.order, rows...)
			an.segPtr = append(an.segPtr, int32(len(an.order)))
			an.wide = append(an.wide, true)
		} else {
			run = append(run, rows...)
		}
	}
	flush()
}

// transpose builds the CSC of the off-diagonal entries and the in-degrees
// after Liu et al.: the in-degree of a row is its count of off-diagonal
// entries (its own worker's, no atomics); the column counts are the
// out-degrees, counted with atomic additions over the entries, split
// among the workers as the GPU's threads split them.
func (an *Analysis) transpose() {
	n := an.n
	an.inDegree = make([]int32, n)
	outDegree := make([]int32, n+1)
	w := max(1, min(an.workers, runtime.GOMAXPROCS(0), n/4096))
	var wg sync.WaitGroup
	for t := range w {
		lo, hi := t*n/w, (t+1)*n/w
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := lo; i < hi; i++ {
				for k := an.rowPtr[i]; k < an.rowPtr[i+1]; k++ {
					if j := an.col[k]; int(j) != i {
						an.inDegree[i]++
						atomic.AddInt32(&outDegree[j+1], 1)
					}
				}
			}
		}()
	}
	wg.Wait()
	for j := range n {
		outDegree[j+1] += outDegree[j]
	}
	an.cscPtr = outDegree
	m := int(outDegree[n])
	an.cscRow = make([]int32, m)
	an.cscVal = make([]float64, m)
	next := make([]int32, n)
	copy(next, outDegree[:n])
	for i := range n {
		for k := an.rowPtr[i]; k < an.rowPtr[i+1]; k++ {
			if j := an.col[k]; int(j) != i {
				an.cscRow[next[j]] = int32(i)
				an.cscVal[next[j]] = an.val[k]
				next[j]++
			}
		}
	}
}

// N is the order of the triangle.
func (an *Analysis) N() int { return an.n }

// Triangle is the triangle the Analysis solves with.
func (an *Analysis) Triangle() Triangle { return an.triangle }

// UnitDiagonal reports whether the diagonal is taken as one.
func (an *Analysis) UnitDiagonal() bool { return an.unit }

// Levels is the number of level sets.
func (an *Analysis) Levels() int { return len(an.levelPtr) - 1 }

// LevelSizes returns the number of rows of every level, in level order.
func (an *Analysis) LevelSizes() []int {
	s := make([]int, an.Levels())
	for l := range s {
		s[l] = int(an.levelPtr[l+1] - an.levelPtr[l])
	}
	return s
}

// Level returns the level (0-based) of row i.
func (an *Analysis) Level(i int) int { return int(an.level[i]) }

// InDegree returns the number of rows row i depends on: its off-diagonal
// entries in the triangle.
func (an *Analysis) InDegree(i int) int { return int(an.inDegree[i]) }

// Triangular returns the triangle in CSR (the stored diagonal included
// unless the diagonal is unit) and the position of every row's diagonal
// entry in its Col and Val (-1 when not stored). The caller must not
// modify them.
func (an *Analysis) Triangular() (*sparse.CSR, []int32) {
	return &sparse.CSR{N: an.n, M: an.n, RowPtr: an.rowPtr, Col: an.col, Val: an.val}, an.diagPos
}

// Stats returns the order, nonzeros and level statistics.
func (an *Analysis) Stats() Stats { return StatsOf(an.n, len(an.val), an.levelPtr) }

// StatsOf returns the statistics of a triangle of order n with nnz stored
// entries whose level l holds levelPtr[l+1] − levelPtr[l] rows (the level
// pointers of Naumov's analysis, on whatever device computed them).
func StatsOf(n, nnz int, levelPtr []int32) Stats {
	s := Stats{N: n, NNZ: nnz, Levels: max(0, len(levelPtr)-1)}
	if s.Levels == 0 {
		return s
	}
	s.MinRowsPerLevel = n
	for l := range s.Levels {
		r := int(levelPtr[l+1] - levelPtr[l])
		s.MaxRowsPerLevel = max(s.MaxRowsPerLevel, r)
		s.MinRowsPerLevel = min(s.MinRowsPerLevel, r)
	}
	s.MeanRowsPerLevel = float64(n) / float64(s.Levels)
	return s
}
