package banded

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/bandsolve/bandsolve/internal/memguard"
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
type Batch[T Float] struct {
	N, K, G int
	Layout  Layout
	Data    []T
}

// NewBatch returns G zero N×N matrices of half-bandwidth K. It fails with
// ErrShape on a bad shape (as New), G < 1, or an unknown layout, and with
// an error wrapping ErrMemory when the batch does not fit in memory.
func NewBatch[T Float](n, k, g int, layout Layout) (*Batch[T], error) {
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

// BatchOptions configure SolveBatch. The zero value solves with LU without
// pivoting, default boosting, on GOMAXPROCS goroutines.
type BatchOptions struct {
	// Pivot selects LU with partial pivoting (FactorPivot) instead of LU
	// without pivoting (FactorLU with Factor's boosting).
	Pivot bool
	// Factor configures boosting of the non-pivoting LU.
	Factor FactorOptions
	// Workers is the number of goroutines; 0 means GOMAXPROCS.
	Workers int
}

// SystemBoosts are the boosted pivots of one system of a batch.
type SystemBoosts struct {
	System int
	Boosts
}

// BatchResult reports what SolveBatch did besides solving.
type BatchResult struct {
	// Boosted lists the systems whose factorization boosted a pivot, by
	// increasing system index, with their rows.
	Boosted []SystemBoosts
}

// SystemError is the failure of one system of a batch.
type SystemError struct {
	System int
	// Row and Col locate the failure in the system (from the *RowError
	// in Err), or are −1 when it has none.
	Row, Col int
	// Err is the cause, a *RowError wrapping ErrZeroPivot, ErrSingular or
	// ErrNonFinite.
	Err error
}

// Error prefixes the cause with the system index.
func (e SystemError) Error() string { return fmt.Sprintf("system %d: %v", e.System, e.Err) }

// Unwrap returns the cause.
func (e SystemError) Unwrap() error { return e.Err }

// BatchError lists the systems of a batch that could not be solved, by
// increasing system index. errors.Is and errors.As see through it to each
// system's cause.
type BatchError struct {
	Failed []SystemError
}

// Error lists the first failures.
func (e *BatchError) Error() string {
	const show = 3
	var sb strings.Builder
	fmt.Fprintf(&sb, "banded: %d system(s) of the batch failed: ", len(e.Failed))
	for i, f := range e.Failed {
		if i == show {
			fmt.Fprintf(&sb, "; … (%d more)", len(e.Failed)-show)
			break
		}
		if i > 0 {
			sb.WriteString("; ")
		}
		sb.WriteString(f.Error())
	}
	return sb.String()
}

// Unwrap returns one error per failed system.
func (e *BatchError) Unwrap() []error {
	out := make([]error, len(e.Failed))
	for i, f := range e.Failed {
		out[i] = f
	}
	return out
}

// SolveBatch solves A_g·x_g = rhs_g for every system g of the batch, in
// parallel over opt.Workers goroutines (GOMAXPROCS by default), each system
// on one goroutine. The batch is not modified (each system is copied to
// scratch and factored there). rhs and x (length N·G) are in the batch's
// layout (see Contiguous and Interleaved); x may be the same slice as rhs
// but must not otherwise overlap it.
//
// Systems that fail get x_g = NaN and are listed, with their row and
// cause, in a *BatchError; the others are solved regardless. Boosted pivots
// are in the result either way. On a bad shape it returns an error wrapping
// ErrShape and solves nothing; when ctx is cancelled it stops starting
// systems and returns ctx.Err() (x is then partly written).
func SolveBatch[T Float](ctx context.Context, b *Batch[T], rhs, x []T, opt BatchOptions) (BatchResult, error) {
	var res BatchResult
	if err := b.Check(); err != nil {
		return res, err
	}
	n, g := b.N, b.G
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
			sys := &Band[T]{N: n, K: b.K, Data: make([]T, (2*b.K+1)*n)}
			var piv PivotLU[T]
			vec := make([]T, n)
			var myFailed []SystemError
			var myBoosted []SystemBoosts
			for ctx.Err() == nil {
				g0 := int(next.Add(int64(chunk))) - chunk
				if g0 >= g {
					break
				}
				for s := g0; s < min(g0+chunk, g); s++ {
					b.copyOut(s, sys.Data)
					for i := range vec {
						vec[i] = rhs[b.VecIndex(s, i)]
					}
					var err error
					if opt.Pivot {
						if err = piv.factor(sys); err == nil {
							piv.Solve(vec)
						}
					} else {
						var bs Boosts
						bs, err = FactorLU(sys, opt.Factor)
						if len(bs.Rows) > 0 {
							myBoosted = append(myBoosted, SystemBoosts{System: s, Boosts: bs})
						}
						if err == nil {
							SolveLU(sys, vec)
						}
					}
					if err != nil {
						se := SystemError{System: s, Row: -1, Col: -1, Err: err}
						var re *RowError
						if errors.As(err, &re) {
							se.Row, se.Col = re.Row, re.Col
						}
						myFailed = append(myFailed, se)
						nan := T(math.NaN())
						for i := range vec {
							vec[i] = nan
						}
					}
					for i, v := range vec {
						x[b.VecIndex(s, i)] = v
					}
				}
			}
			mu.Lock()
			failed = append(failed, myFailed...)
			res.Boosted = append(res.Boosted, myBoosted...)
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
		return res, &BatchError{Failed: failed}
	}
	return res, nil
}
