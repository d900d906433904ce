package sptrsv

import (
	"context"
	"fmt"
	"math"
	"sync/atomic"
)

// checkVectors checks the lengths of b and x against the order of an.
func checkVectors[T Float](an *Analysis, b, x []T) error {
	if an == nil {
		return fmt.Errorf("sptrsv: nil Analysis")
	}
	if len(b) != an.n || len(x) != an.n {
		return fmt.Errorf("%w: %s triangle of order %d with len(b) = %d, len(x) = %d", ErrShape, an.triangle, an.n, len(b), len(x))
	}
	return nil
}

// row solves row i: x[i] = (b[i] − Σ_j t_ij x[j]) / t_ii, the sum taken in
// the order of the row's columns. Every solve of the level-set family
// goes through it, so they all give the same bits.
func row[T Float](an *Analysis, val, diag []T, i int, b, x []T) {
	s := b[i]
	d := an.diagPos[i]
	for k := an.rowPtr[i]; k < an.rowPtr[i+1]; k++ {
		if k != d {
			s -= val[k] * x[an.col[k]]
		}
	}
	x[i] = s / diag[i]
}

// SolveSequential solves T x = b for the triangle T of an, one row at a
// time in the order of the dependencies (ascending rows for Lower,
// descending for Upper). It is the reference the parallel solves are
// tested against; Solve gives the same bits. x may be b. With float32
// vectors the values are rounded to float32 once (at the first float32
// solve with an) and the solve runs in float32.
func SolveSequential[T Float](an *Analysis, b, x []T) error {
	if err := checkVectors(an, b, x); err != nil {
		return err
	}
	val, diag := values[T](an)
	if an.triangle == Lower {
		for i := range an.n {
			row(an, val, diag, i, b, x)
		}
	} else {
		for i := an.n - 1; i >= 0; i-- {
			row(an, val, diag, i, b, x)
		}
	}
	return nil
}

// levelJob is one wide level handed to the workers: its rows are
// order[lo:hi], taken chunk by chunk through next.
type levelJob[T Float] struct {
	lo, hi, chunk int32
	next          atomic.Int32
}

// run solves the chunks of the job until none is left.
func (j *levelJob[T]) run(an *Analysis, val, diag, b, x []T) {
	for {
		s := j.next.Add(j.chunk) - j.chunk
		if s >= j.hi {
			return
		}
		e := min(s+j.chunk, j.hi)
		for _, i := range an.order[s:e] {
			row(an, val, diag, int(i), b, x)
		}
	}
}

// Solve solves T x = b with the level sets of an (Naumov's solve phase on
// the CPU): the levels in order, the rows of a level in parallel on the
// Analysis's workers, with a barrier between levels. A level of fewer
// than Options.SerialLevelRows rows is done on the calling goroutine
// without waking the workers, and a run of such levels is done in the
// order of the rows (ascending for Lower), which keeps the accesses to x
// in the matrix's order. Every row is solved as SolveSequential
// solves it, so x has the same bits. x may be b. It stops between levels
// when ctx is done and returns ctx's error. float32 vectors are solved in
// float32 as SolveSequential solves them.
func Solve[T Float](ctx context.Context, an *Analysis, b, x []T) error {
	if err := checkVectors(an, b, x); err != nil {
		return err
	}
	val, diag := values[T](an)
	done := ctx.Done()
	w := an.workers
	pool := helpers{w: w}
	defer pool.close()
	var job levelJob[T]
	for seg := range len(an.wide) {
		if done != nil {
			select {
			case <-done:
				return fmt.Errorf("sptrsv: level-set solve stopped at segment %d of %d: %w", seg, len(an.wide), ctx.Err())
			default:
			}
		}
		lo, hi := an.segPtr[seg], an.segPtr[seg+1]
		if !an.wide[seg] {
			for _, i := range an.order[lo:hi] {
				row(an, val, diag, int(i), b, x)
			}
			continue
		}
		job.lo, job.hi = lo, hi
		job.chunk = int32(max(16, int(hi-lo)/(8*w)))
		job.next.Store(lo)
		pool.run(func(int) { job.run(an, val, diag, b, x) })
	}
	return nil
}

// atomicSums are the partial sums of the synchronization-free solve:
// float64 values as their bits in b64, or float32 values as their bits
// in b32, both added to with compare-and-swap loops (zero bits are 0.0).
type atomicSums[T Float] struct {
	b32 []uint32
	b64 []uint64
}

func newAtomicSums[T Float](n int) *atomicSums[T] {
	if isFloat32[T]() {
		return &atomicSums[T]{b32: make([]uint32, n)}
	}
	return &atomicSums[T]{b64: make([]uint64, n)}
}

// add adds v to sum i.
func (s *atomicSums[T]) add(i int32, v T) {
	if s.b32 != nil {
		p := &s.b32[i]
		for {
			old := atomic.LoadUint32(p)
			if atomic.CompareAndSwapUint32(p, old, math.Float32bits(math.Float32frombits(old)+float32(v))) {
				return
			}
		}
	}
	p := &s.b64[i]
	for {
		old := atomic.LoadUint64(p)
		if atomic.CompareAndSwapUint64(p, old, math.Float64bits(math.Float64frombits(old)+float64(v))) {
			return
		}
	}
}

// load returns sum i.
func (s *atomicSums[T]) load(i int) T {
	if s.b32 != nil {
		return T(math.Float32frombits(atomic.LoadUint32(&s.b32[i])))
	}
	return T(math.Float64frombits(atomic.LoadUint64(&s.b64[i])))
}

// SolveSyncFree solves T x = b with Liu et al.'s synchronization-free
// method, a CPU twin of its GPU kernel: the workers take the components
// in the order of the dependencies (ascending for Lower, descending for
// Upper) from a ticket counter; each waits until as many of its
// dependencies have reported as its in-degree, yielding with
// runtime.Gosched while it waits; then computes x[i] = (b[i] −
// left_sum[i]) / t_ii, and adds t_ri·x[i] into the partial sum of every
// row r that depends on i (an atomic addition: a compare-and-swap loop on
// the float64 bits, or on the float32 bits with float32 vectors) before
// counting itself in r's solved dependencies.
//
// No wait can last forever: every component with a smaller ticket has
// been taken by a running worker and waits only on components with
// smaller tickets still, so the smallest unsolved component is always
// ready. The sums arrive in any order, so x may differ from
// SolveSequential's in the last bits. x may be b. A float32 solve rounds
// the values to float32 once (as SolveSequential does) and adds in
// float32. It returns ctx's error when ctx is done before the solve ends.
func SolveSyncFree[T Float](ctx context.Context, an *Analysis, b, x []T) error {
	if err := checkVectors(an, b, x); err != nil {
		return err
	}
	_, diag := values[T](an)
	cscVal := cscValues[T](an)
	n := an.n
	leftSum := newAtomicSums[T](n)
	solved := make([]int32, n)
	var t tickets
	ok := runTickets(ctx, an, &t, func(i int) bool {
		if !t.wait(func() bool { return atomic.LoadInt32(&solved[i]) >= an.inDegree[i] }) {
			return false
		}
		xi := (b[i] - leftSum.load(i)) / diag[i]
		x[i] = xi
		for c := an.cscPtr[i]; c < an.cscPtr[i+1]; c++ {
			r := an.cscRow[c]
			leftSum.add(r, cscVal[c]*xi)
			atomic.AddInt32(&solved[r], 1)
		}
		return true
	})
	if !ok {
		return fmt.Errorf("sptrsv: synchronization-free solve of the %s triangle of order %d stopped: %w", an.triangle, n, ctx.Err())
	}
	return nil
}
