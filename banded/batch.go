package banded

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/bandsolve/bandsolve/internal/memguard"
	"github.com/bandsolve/bandsolve/tridiag"
)

// Layout says how the G systems of a Batch (and their vectors) share one
// slice.
type Layout int

const (
	// Contiguous stores the systems one after the other: system g's Band
	// data (length (2K+1)·N, storage as in Band) starts at g·(2K+1)·N, and
	// element i of its right-hand side or solution is at g·N + i.
	Contiguous Layout = iota
	// Interleaved stores element e of every system together: element e of
	// system g's Band storage is at e·G + g, and element i of its
	// right-hand side or solution is at i·G + g. Consecutive systems are
	// adjacent in memory, for GPU kernels with one thread per system.
	Interleaved
)

// String is "contiguous" or "interleaved".
func (l Layout) String() string {
	switch l {
	case Contiguous:
		return "contiguous"
	case Interleaved:
		return "interleaved"
	}
	return fmt.Sprintf("Layout(%d)", int(l))
}

// Batch is G band matrices of the same order N and half-bandwidth K in one
// slice of length (2K+1)·N·G, arranged as Layout says.
type Batch[T Scalar] struct {
	N, K, G int
	Layout  Layout
	Data    []T
}

// NewBatch returns G zero N×N matrices of half-bandwidth K. It fails with
// ErrShape on a bad shape (as New), G < 1, or an unknown layout, and with
// an error wrapping ErrMemory when the batch does not fit in memory.
func NewBatch[T Scalar](n, k, g int, layout Layout) (*Batch[T], error) {
	b := &Batch[T]{N: n, K: k, G: g, Layout: layout}
	if err := b.checkHead(); err != nil {
		return nil, err
	}
	var zero T
	if err := memguard.Check(fmt.Sprintf("banded: a batch of %d %s bands of N=%d, K=%d", g, typeName(zero), n, k),
		memguard.Bytes(sizeOf(zero), 2*k+1, n, g)); err != nil {
		return nil, err
	}
	b.Data = make([]T, (2*k+1)*n*g)
	return b, nil
}

func (b *Batch[T]) checkHead() error {
	if err := CheckShape(b.N, b.K); err != nil {
		return err
	}
	if b.G < 1 {
		return shapeErr("batch count G=%d, want ≥ 1", b.G)
	}
	if b.Layout != Contiguous && b.Layout != Interleaved {
		return shapeErr("unknown layout %v", b.Layout)
	}
	return nil
}

// Check reports a Batch whose fields are inconsistent (ErrShape).
func (b *Batch[T]) Check() error {
	if b == nil {
		return shapeErr("nil batch")
	}
	if err := b.checkHead(); err != nil {
		return err
	}
	if want := (2*b.K + 1) * b.N * b.G; len(b.Data) != want {
		return shapeErr("len(Data)=%d, want (2K+1)·N·G=%d", len(b.Data), want)
	}
	return nil
}

// elem is the position in Data of element e of system g's Band storage.
func (b *Batch[T]) elem(g, e int) int {
	if b.Layout == Interleaved {
		return e*b.G + g
	}
	return g*(2*b.K+1)*b.N + e
}

// Index is the position in Data of a_ij of system g; (i, j) must be in the
// band.
func (b *Batch[T]) Index(g, i, j int) int { return b.elem(g, (b.K+i-j)*b.N+j) }

// VecIndex is the position of element i of system g in a right-hand side
// or solution vector of the batch's layout (length N·G).
func (b *Batch[T]) VecIndex(g, i int) int {
	if b.Layout == Interleaved {
		return i*b.G + g
	}
	return g*b.N + i
}

func (b *Batch[T]) checkIJ(g, i, j int, set bool) bool {
	if g < 0 || g >= b.G || i < 0 || j < 0 || i >= b.N || j >= b.N {
		panic(fmt.Sprintf("banded: batch entry (%d; %d, %d) outside %d systems of order %d", g, i, j, b.G, b.N))
	}
	in := i-j <= b.K && j-i <= b.K
	if set && !in {
		panic(fmt.Sprintf("banded: Set(%d; %d, %d) outside the band K=%d", g, i, j, b.K))
	}
	return in
}

// At returns a_ij of system g: zero outside the band; it panics outside
// the batch.
func (b *Batch[T]) At(g, i, j int) T {
	if !b.checkIJ(g, i, j, false) {
		return 0
	}
	return b.Data[b.Index(g, i, j)]
}

// Set sets a_ij of system g; it panics outside the batch or the band.
func (b *Batch[T]) Set(g, i, j int, v T) {
	b.checkIJ(g, i, j, true)
	b.Data[b.Index(g, i, j)] = v
}

// System returns system g: a view sharing Data for Contiguous (writes go
// to the batch), a copy for Interleaved.
func (b *Batch[T]) System(g int) *Band[T] {
	if g < 0 || g >= b.G {
		panic(fmt.Sprintf("banded: system %d outside a batch of %d", g, b.G))
	}
	w := (2*b.K + 1) * b.N
	if b.Layout == Contiguous {
		return &Band[T]{N: b.N, K: b.K, Data: b.Data[g*w : (g+1)*w : (g+1)*w]}
	}
	m := &Band[T]{N: b.N, K: b.K, Data: make([]T, w)}
	b.copyOut(g, m.Data)
	return m
}

// SetSystem copies m (of the batch's N and K) into system g.
func (b *Batch[T]) SetSystem(g int, m *Band[T]) error {
	if err := checkBand(m); err != nil {
		return err
	}
	if m.N != b.N || m.K != b.K {
		return shapeErr("system of N=%d, K=%d in a batch of N=%d, K=%d", m.N, m.K, b.N, b.K)
	}
	if g < 0 || g >= b.G {
		return shapeErr("system %d outside a batch of %d", g, b.G)
	}
	if b.Layout == Contiguous {
		w := len(m.Data)
		copy(b.Data[g*w:(g+1)*w], m.Data)
		return nil
	}
	for e, v := range m.Data {
		b.Data[e*b.G+g] = v
	}
	return nil
}

func (b *Batch[T]) copyOut(g int, dst []T) {
	if b.Layout == Contiguous {
		w := len(dst)
		copy(dst, b.Data[g*w:(g+1)*w])
		return
	}
	for e := range dst {
		dst[e] = b.Data[e*b.G+g]
	}
}

// BatchOptions configure SolveBatch and BatchPlan. The zero value solves
// with LU without pivoting, default boosting, on GOMAXPROCS goroutines.
// Every field means the same on every device; Workers tunes the CPU only,
// and CheckFinite is for devices that do not refine on the host. A device
// that cannot honour a field refuses it (NewBatchPlan's error names the
// field and the device).
type BatchOptions struct {
	// Pivot selects LU with partial pivoting (FactorPivot) instead of LU
	// without pivoting (FactorLU with Factor's boosting), on every device
	// (on a GPU a thread a system, bit for bit the CPU's).
	Pivot bool
	// Factor configures boosting of the non-pivoting LU.
	Factor FactorOptions
	// Refine says when the non-pivoting LU's solutions are refined
	// (Refine): by default those of systems with a boosted pivot, to a
	// backward error of 10³·ε. A system whose refinement fails is
	// reported in the *BatchError (ErrNotRefined) with x_g = NaN.
	Refine RefineOptions
	// Check measures every solved system (Check: the normwise backward
	// error, κ̂ by CondEst, O(N·K²) more per system) and reports those
	// that fail the verdict for the tolerance Refine.Tol (0: 10³·ε) in
	// the *BatchError with their Status, keeping their solution. Off by
	// default. A singular system whose zero pivot was boosted is refined
	// to a small backward error with a huge x: only κ̂ tells.
	Check bool
	// Workers is the number of goroutines of the CPU; 0 means GOMAXPROCS
	// for SolveBatch and the device's workers for a BatchPlan on a
	// tridiag.CPU. Other devices do not use it (their host work, the
	// refinement and Check, runs on one goroutine).
	Workers int
	// CheckFinite also fails systems whose solution holds a NaN or ±Inf
	// (from a right-hand side that is not finite, or overflow), naming the
	// first such row. The GPU only: SolveBatch and the CPU refuse it (there
	// Check measures every solution).
	CheckFinite bool
}

// SystemBoosts are the boosted pivots of one system of a batch.
type SystemBoosts struct {
	System int
	Boosts
	// Refine is what refinement did for the system (zero when it was
	// off).
	Refine RefineResult
}

// BatchResult reports what SolveBatch did besides solving.
type BatchResult struct {
	// Boosted lists the systems whose factorization boosted a pivot, by
	// increasing system index, with their rows.
	Boosted []SystemBoosts
}

// SystemError is the failure of one system of a batch: System, Row and
// Col locate it (Row and Col from the *RowError in Err, −1 when it has
// none), Err is the cause (a *RowError wrapping ErrZeroPivot, ErrSingular
// or ErrNonFinite, or an error wrapping ErrNotRefined), Status what
// refinement measured. It is tridiag's type, shared by every batch of
// the module.
type SystemError = tridiag.SystemError

// BatchError lists the systems of a batch that could not be solved, by
// increasing system index. errors.Is and errors.As see through it to each
// system's cause. It is tridiag's type, shared by every batch of the
// module.
type BatchError = tridiag.BatchError

// SolveBatch solves A_g·x_g = rhs_g for every system g of the batch, in
// parallel over opt.Workers goroutines (GOMAXPROCS by default), each system
// on one goroutine. The batch is not modified (each system is copied to
// scratch and factored there). rhs and x (length N·G) are in the batch's
// layout (see Contiguous and Interleaved); x may be the same slice as rhs
// but must not otherwise overlap it.
//
// Systems that fail get x_g = NaN and are listed, with their row and
// cause, in a *BatchError; the others are solved regardless. Boosted pivots
// are in the result either way. Without pivoting, the solutions of
// systems whose factorization boosted a pivot are refined (see
// BatchOptions.Refine and Refine); a system whose refinement does not
// reach the tolerance fails with ErrNotRefined. On a bad shape it returns
// an error wrapping ErrShape (ErrOption for bad refinement options) and
// solves nothing; when ctx is cancelled it stops starting
// systems and returns ctx.Err() (x is then partly written).
//
// A complex batch (complex64, complex128) is solved by LU with partial
// pivoting only: opt.Pivot must be set (else ErrOption), and Check
// judges with the complex backward error and κ̂.
func SolveBatch[T Scalar](ctx context.Context, b *Batch[T], rhs, x []T, opt BatchOptions) (BatchResult, error) {
	var res BatchResult
	if err := b.Check(); err != nil {
		return res, err
	}
	n, g := b.N, b.G
	if err := opt.Refine.Check(); err != nil {
		return res, err
	}
	if opt.CheckFinite {
		return res, fmt.Errorf("%w: BatchOptions.CheckFinite is not available on the CPU (SolveBatch)", ErrOption)
	}
	if err := checkComplexOptions[T](opt, "SolveBatch"); err != nil {
		return res, err
	}
	if len(rhs) != n*g || len(x) != n*g {
		return res, shapeErr("len(rhs)=%d, len(x)=%d, want N·G=%d", len(rhs), len(x), n*g)
	}
	workers := opt.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(workers, g)
	chunk := max(1, min(64, g/(8*workers)))

	var (
		next   atomic.Int64
		mu     sync.Mutex
		failed []SystemError
		wg     sync.WaitGroup
	)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			bw := newBatchWorker[T](b.K, n, opt)
			for ctx.Err() == nil {
				g0 := int(next.Add(int64(chunk))) - chunk
				if g0 >= g {
					break
				}
				for s := g0; s < min(g0+chunk, g); s++ {
					bw.solve(b, s, s, rhs, x)
				}
			}
			mu.Lock()
			failed = append(failed, bw.failed...)
			res.Boosted = append(res.Boosted, bw.boosted...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	sort.Slice(res.Boosted, func(i, j int) bool { return res.Boosted[i].System < res.Boosted[j].System })
	if err := ctx.Err(); err != nil {
		return res, err
	}
	if len(failed) > 0 {
		sort.Slice(failed, func(i, j int) bool { return failed[i].System < failed[j].System })
		return res, &BatchError{G: g, Failed: failed}
	}
	return res, nil
}

// setNaN fills v with NaN, the solution of a failed system.
func setNaN[T Scalar](v []T) {
	nan := fromC128[T](complex(math.NaN(), math.NaN()))
	for i := range v {
		v[i] = nan
	}
}

// refineFailed reports whether the last failure recorded is system s's.
func refineFailed(failed []SystemError, s int) bool {
	return len(failed) > 0 && failed[len(failed)-1].System == s
}

// rhsOf returns a copy of system s's right-hand side.
func rhsOf[T Scalar](b *Batch[T], rhs []T, s int) []T {
	v := make([]T, b.N)
	for i := range v {
		v[i] = rhs[b.VecIndex(s, i)]
	}
	return v
}

// refineFailure is the failure of system s whose refinement failed with
// err: its status from the refinement rr, Boosted where its factorization
// boosted a pivot.
func refineFailure(s int, rr RefineResult, boosted bool, err error) SystemError {
	st := rr.Status()
	if boosted {
		st.Flags |= tridiag.Boosted
	}
	return SystemError{System: s, Row: -1, Col: -1, Err: err, Status: st}
}

// checkSystem is BatchOptions.Check of system s of b, solved as x for
// rhs: nil when it passes, else its failure (tol as RefineOptions.Tol; its
// status Boosted where its factorization boosted a pivot).
func checkSystem[T Scalar](b *Batch[T], s int, rhs, x []T, tol float64, boosted bool) *SystemError {
	st, err := Check(b.System(s), rhs, x, tol)
	if boosted {
		st.Flags |= tridiag.Boosted
	}
	if err == nil && st.Failed() {
		if tol == 0 {
			tol = tridiag.DefaultTol[T]()
		}
		err = st.Err(tol)
	}
	if err == nil {
		return nil
	}
	return &SystemError{System: s, Row: -1, Col: -1, Err: err, Status: st}
}

// errComplexUnpivoted refuses a complex batch without BatchOptions.Pivot.
var errComplexUnpivoted = fmt.Errorf("%w: a complex batch needs BatchOptions.Pivot: LU without pivoting, boosting and refinement are real only", ErrOption)

// checkComplexOptions refuses, for a complex T, options that only real
// batches have (what names the caller).
func checkComplexOptions[T Scalar](opt BatchOptions, what string) error {
	if isComplex[T]() && !opt.Pivot {
		return fmt.Errorf("banded: %s of %s systems: %w", what, typeName(*new(T)), errComplexUnpivoted)
	}
	return nil
}

// CheckBatch checks the solutions x of the systems of b for the
// right-hand sides rhs (both in b's layout, N·G elements) as Check does,
// against tol (0: tridiag.DefaultTol[T]()), on GOMAXPROCS goroutines, for
// a device that solved the batch (a GPU plan's device-buffer solves with
// their Check option). It skips the systems that skip reports (those that
// failed already) and flags those that boosted reports as Boosted. It
// returns the systems that fail the check, in order.
func CheckBatch[T Scalar](b *Batch[T], rhs, x []T, tol float64, skip, boosted func(s int) bool) ([]SystemError, error) {
	if err := b.Check(); err != nil {
		return nil, err
	}
	if len(rhs) != b.N*b.G || len(x) != b.N*b.G {
		return nil, shapeErr("CheckBatch with len(rhs)=%d, len(x)=%d for N=%d G=%d", len(rhs), len(x), b.N, b.G)
	}
	failed := make([]*SystemError, b.G)
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < max(1, min(runtime.GOMAXPROCS(0), b.G)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, v := make([]T, b.N), make([]T, b.N)
			for s := int(next.Add(1)) - 1; s < b.G; s = int(next.Add(1)) - 1 {
				if skip != nil && skip(s) {
					continue
				}
				for i := range r {
					r[i], v[i] = rhs[b.VecIndex(s, i)], x[b.VecIndex(s, i)]
				}
				failed[s] = checkSystem(b, s, r, v, tol, boosted != nil && boosted(s))
			}
		}()
	}
	wg.Wait()
	var out []SystemError
	for _, f := range failed {
		if f != nil {
			out = append(out, *f)
		}
	}
	return out, nil
}
