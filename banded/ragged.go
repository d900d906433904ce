package banded

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sort"

	"github.com/bandsolve/bandsolve/internal/memguard"
	"github.com/bandsolve/bandsolve/internal/ragged"
)

// RaggedBatch is G band matrices of one half-bandwidth K and different
// orders N_g, stored one after another: with off the prefix sums of the
// orders (Offsets: off[0] = 0, off[g+1] = off[g] + N_g), system g's Band
// storage ((2K+1)·N_g elements, as in Band) starts at Data[(2K+1)·off[g]],
// and element i of its right-hand side or solution at off[g] + i
// (VecIndex). SolveRagged solves it.
type RaggedBatch[T Scalar] struct {
	// Data holds the systems' storage, (2K+1)·Rows() elements. It may be
	// replaced by another slice of that length.
	Data    []T
	k       int
	lengths []int
	off     []int
}

// NewRaggedBatch returns zero band matrices of half-bandwidth k and the
// given orders. Every order must exceed k (CheckShape); otherwise, and for
// no orders, a negative k or more elements than an int counts, the error
// wraps ErrShape and names the system. It fails with an error wrapping
// ErrMemory when the batch does not fit in memory.
func NewRaggedBatch[T Scalar](k int, lengths []int) (*RaggedBatch[T], error) {
	if k < 0 {
		return nil, shapeErr("half-bandwidth K=%d, want ≥ 0", k)
	}
	if len(lengths) == 0 {
		return nil, shapeErr("a ragged batch of no systems: need at least one order")
	}
	lengths = append([]int(nil), lengths...)
	off, bad, ok := ragged.Offsets(lengths, k+1, math.MaxInt/(2*k+1))
	if !ok {
		if err := CheckShape(lengths[bad], k); err != nil {
			return nil, fmt.Errorf("banded: system %d of the ragged batch: %w", bad, err)
		}
		return nil, shapeErr("systems 0…%d of the ragged batch of K=%d hold more elements than an int counts", bad, k)
	}
	b := &RaggedBatch[T]{k: k, lengths: lengths, off: off}
	var zero T
	if err := memguard.Check(fmt.Sprintf("banded: a ragged batch of %d %s bands of K=%d and %d rows", len(lengths), typeName(zero), k, b.Rows()),
		memguard.Bytes(sizeOf(zero), 2*k+1, b.Rows())); err != nil {
		return nil, err
	}
	b.Data = make([]T, (2*k+1)*b.Rows())
	return b, nil
}

// K returns the half-bandwidth.
func (b *RaggedBatch[T]) K() int { return b.k }

// Systems returns G, the number of systems.
func (b *RaggedBatch[T]) Systems() int { return len(b.lengths) }

// Lengths returns the order of each system (a copy).
func (b *RaggedBatch[T]) Lengths() []int { return append([]int(nil), b.lengths...) }

// Offsets returns where the systems start (a copy of G+1 entries): system
// g's rows are Offsets()[g] … Offsets()[g+1]−1 of a right-hand side or
// solution, its storage starts at Data[(2K+1)·Offsets()[g]], and the last
// entry is Rows().
func (b *RaggedBatch[T]) Offsets() []int { return append([]int(nil), b.off...) }

// Rows returns the rows of all the systems: the length of a right-hand
// side or solution of the batch.
func (b *RaggedBatch[T]) Rows() int { return b.off[len(b.lengths)] }

// VecIndex is the position of element i of system g in a right-hand side
// or solution of the batch.
func (b *RaggedBatch[T]) VecIndex(g, i int) int { return b.off[g] + i }

// Check reports a batch whose Data does not have (2K+1)·Rows() elements
// (ErrShape).
func (b *RaggedBatch[T]) Check() error {
	if b == nil || b.lengths == nil {
		return shapeErr("nil ragged batch (make one with NewRaggedBatch)")
	}
	if want := (2*b.k + 1) * b.Rows(); len(b.Data) != want {
		return shapeErr("len(Data)=%d, want (2K+1)·Rows()=%d for the ragged batch of %d systems", len(b.Data), want, len(b.lengths))
	}
	return nil
}

// System returns system g, a view sharing Data: writes go to the batch.
func (b *RaggedBatch[T]) System(g int) *Band[T] {
	if g < 0 || g >= len(b.lengths) {
		panic(fmt.Sprintf("banded: system %d outside a ragged batch of %d", g, len(b.lengths)))
	}
	w := 2*b.k + 1
	lo, hi := w*b.off[g], w*b.off[g+1]
	return &Band[T]{N: b.lengths[g], K: b.k, Data: b.Data[lo:hi:hi]}
}

// SetSystem copies m, of system g's order and the batch's K, into system
// g.
func (b *RaggedBatch[T]) SetSystem(g int, m *Band[T]) error {
	if err := checkBand(m); err != nil {
		return err
	}
	if g < 0 || g >= len(b.lengths) {
		return shapeErr("system %d outside a ragged batch of %d", g, len(b.lengths))
	}
	if m.N != b.lengths[g] || m.K != b.k {
		return shapeErr("a band of N=%d, K=%d for system %d of N=%d, K=%d", m.N, m.K, g, b.lengths[g], b.k)
	}
	copy(b.System(g).Data, m.Data)
	return nil
}

// SolveRagged solves A_g·x_g = rhs_g for every system g of the ragged
// batch, each as SolveBatch solves a batch of that one system: the same
// factorization, refinement and check, the same bits, and the same
// failures (in the *BatchError, with the system's index g and its row and
// column within the system) and boosts (in the result, by g). rhs and x
// hold Rows() elements, system g's at Offsets()[g] …; x may be rhs but
// must not otherwise overlap it. The systems are spread over opt.Workers
// goroutines (GOMAXPROCS by default) by rows, not by count: the batch is
// cut into tasks of consecutive systems of about equal rows, the largest
// handed out first. The batch is not modified. Errors that stop the
// solve: ErrShape for a bad batch or vector length, ErrOption for bad
// options (CheckFinite is not available on the CPU), ctx.Err() when ctx
// is cancelled (x is then partly written). A complex ragged batch needs
// opt.Pivot, as SolveBatch's.
func SolveRagged[T Scalar](ctx context.Context, b *RaggedBatch[T], rhs, x []T, opt BatchOptions) (BatchResult, error) {
	var res BatchResult
	if err := b.Check(); err != nil {
		return res, err
	}
	if err := opt.Refine.Check(); err != nil {
		return res, err
	}
	if opt.CheckFinite {
		return res, fmt.Errorf("%w: BatchOptions.CheckFinite is not available on the CPU (SolveRagged)", ErrOption)
	}
	if err := checkComplexOptions[T](opt, "SolveRagged"); err != nil {
		return res, err
	}
	rows, G := b.Rows(), len(b.lengths)
	if len(rhs) != rows || len(x) != rows {
		return res, shapeErr("len(rhs)=%d, len(x)=%d, want the %d rows of the ragged batch", len(rhs), len(x), rows)
	}
	workers := opt.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(workers, G)
	long, w := ragged.Longest(b.off), 2*b.k+1
	bws := make([]*batchWorker[T], workers)
	views := make([]Batch[T], workers)
	ragged.NewSchedule(b.off, max(1, rows/(8*workers))).Run(ctx, workers, func(k, g int) {
		if bws[k] == nil {
			bws[k] = newBatchWorker[T](b.k, long, opt)
		}
		o, n := b.off[g], b.lengths[g]
		v := &views[k]
		*v = Batch[T]{N: n, K: b.k, G: 1, Layout: Contiguous, Data: b.Data[w*o : w*(o+n)]}
		bws[k].solve(v, 0, g, rhs[o:o+n], x[o:o+n])
	})
	var failed []SystemError
	for _, bw := range bws {
		if bw != nil {
			failed = append(failed, bw.failed...)
			res.Boosted = append(res.Boosted, bw.boosted...)
		}
	}
	sort.Slice(res.Boosted, func(i, j int) bool { return res.Boosted[i].System < res.Boosted[j].System })
	if err := ctx.Err(); err != nil {
		return res, err
	}
	if len(failed) > 0 {
		sort.Slice(failed, func(i, j int) bool { return failed[i].System < failed[j].System })
		return res, &BatchError{G: G, Failed: failed}
	}
	return res, nil
}
