package spike

import (
	"errors"
	"fmt"
	"runtime"
	"sync"

	"github.com/bandsolve/bandsolve/banded"
	"github.com/bandsolve/bandsolve/internal/memguard"
)

// Float is the element type of a factorization: float32 or float64.
type Float = banded.Float

// ErrOption is wrapped by the errors about an Options field out of range.
var ErrOption = errors.New("spike: invalid option")

// Method selects what Factor computes.
type Method int

const (
	// Truncated is truncated SPIKE (§2.2): block LU, spikes, reduced
	// systems, purification.
	Truncated Method = iota
	// BlockJacobi is the banded-block-diagonal (BBD) preconditioner of
	// Fig. 4: the LU factorizations of the diagonal blocks only, SPIKE with
	// the spikes set to zero (no coupling between partitions).
	BlockJacobi
)

// String returns "truncated" or "block-jacobi".
func (m Method) String() string {
	switch m {
	case Truncated:
		return "truncated"
	case BlockJacobi:
		return "block-jacobi"
	}
	return fmt.Sprintf("Method(%d)", int(m))
}

// Options configure Factor. The zero value is truncated SPIKE with as many
// partitions as ChoosePartitions picks, exact left spikes and the default
// boosting.
type Options struct {
	// Partitions is the number of partitions P; 0 chooses
	// ChoosePartitions(N, K, Workers). Every partition must have at least
	// 2K rows when P > 1. P = 1 is a plain banded LU solve (exact).
	Partitions int
	// ULBlock is the size l of the top-left block of each partition that
	// the UL factorization for the left spike's top block W_i⁽ᵗ⁾ works on:
	// 0 means the whole partition (W_i⁽ᵗ⁾ exact, at the cost of a second
	// factorization of every block), l > K the top-left l×l block only, as
	// SPIKE::GPU does with l = 2K (§4; PaperULBlock), which approximates
	// W_i⁽ᵗ⁾ (see the package documentation). Values ≥ the partition size
	// mean the whole partition.
	ULBlock int
	// BoostTol is the relative diagonal boosting threshold of the block
	// factorizations (banded.FactorOptions.BoostTol): 0 is the machine
	// epsilon of the element type, a negative value turns boosting off (a
	// zero pivot is then an error).
	BoostTol float64
	// Method is Truncated (the default) or BlockJacobi.
	Method Method
	// Workers bounds the goroutines Factor and Solve use; 0 means
	// GOMAXPROCS (for a Plan, the workers of its tridiag.CPU). The CPU
	// only: other devices do not use it.
	Workers int
	// Refine says when Factorization.Solve refines its solution (see
	// banded.Refine): by default (banded.RefineBoosted) when a pivot of
	// a block or of a reduced system was boosted, to a normwise backward
	// error of Refine.Tol (0: 10³·ε of the element type), by iterative
	// refinement and then BiCGStab(2) preconditioned by the
	// factorization itself; a solve whose refinement does not get there
	// fails with banded.ErrNotRefined. banded.RefineAlways measures the
	// backward error of every solve (one product with A) and refines
	// whatever its cause (truncation, growth, float32 factors);
	// banded.RefineOff never refines. Factor keeps a copy of A for the
	// residuals when refinement may run. Plan refines on every device
	// (on the host, with the device's solves); the Preconditioner and
	// the device-resident GPU plan never refine.
	Refine banded.RefineOptions
}

// PaperULBlock is the UL block size of SPIKE::GPU, l = 2K (§4).
func PaperULBlock(k int) int { return 2 * k }

// Boost reports the diagonal boosts made in one partition.
type Boost struct {
	// Partition is the partition's index.
	Partition int
	// LU holds the rows (absolute indices) whose pivot was boosted by the
	// LU factorization of the partition's diagonal block, and the
	// threshold τ used.
	LU banded.Boosts
	// UL is the same for the UL factorization used for the left spike
	// (absolute row indices; empty for the first partition, which has no
	// left spike, and for BlockJacobi).
	UL banded.Boosts
}

// Factorization is the truncated SPIKE factorization of a banded matrix,
// ready to Solve. It is safe for concurrent Solve calls.
type Factorization[T Float] struct {
	n, k    int
	bounds  []int
	method  Method
	ulBlock int
	workers int

	// lu is a copy of A whose diagonal blocks A_i hold their LU factors
	// (banded.FactorLURange); the coupling entries B_i, C_i outside the
	// blocks are A's, which purification (Eq. 12) reads.
	lu *banded.Band[T]
	// Per interface i = 0 … P−2, K×K column-major blocks at [i·K², (i+1)·K²):
	// v holds V_i⁽ᵇ⁾, w holds W_{i+1}⁽ᵗ⁾, r the LU factors of R̄_i with
	// interchanges piv[i·K : (i+1)·K].
	v, w, r []T
	piv     []int

	boosts        []Boost
	reducedBoosts []int

	// a is a copy of A for the residuals of refinement (nil when Solve
	// does not refine), refine the settings.
	a      *banded.Band[T]
	refine banded.RefineOptions

	pool sync.Pool // *workspace[T]
}

// workspace is the scratch of one Solve.
type workspace[T Float] struct {
	g      []T // D⁻¹·b (Eq. 4)
	xt, xb []T // x_{i+1}⁽ᵗ⁾ and x_i⁽ᵇ⁾ per interface (Eq. 11b, 11c)
}

// Factor computes the truncated SPIKE factorization of A (steps 1–4 of the
// package documentation), leaving A unchanged. Errors:
//   - banded.ErrShape for an inconsistent A (bad N, K ≥ N, wrong
//     len(Data));
//   - ErrPartitions when a partition would have fewer than 2K rows
//     (naming the sizes), ErrOption for a bad Options field;
//   - a *banded.RowError wrapping banded.ErrNonFinite naming the row and
//     column of a NaN or ±Inf entry of A;
//   - a *banded.RowError wrapping banded.ErrZeroPivot (boosting off) or
//     banded.ErrNonFinite (a pivot overflowed) from a block
//     factorization, wrapped with the partition's index;
//   - banded.ErrMemory, before anything is allocated, when the factors
//     do not fit the memory the process can have.
func Factor[T Float](A *banded.Band[T], opts Options) (*Factorization[T], error) {
	if A == nil {
		return nil, fmt.Errorf("%w: nil band matrix", banded.ErrShape)
	}
	n, k := A.N, A.K
	if err := banded.CheckShape(n, k); err != nil {
		return nil, err
	}
	if want := (2*k + 1) * n; len(A.Data) != want {
		return nil, fmt.Errorf("%w: len(Data)=%d, want (2K+1)·N=%d for N=%d, K=%d", banded.ErrShape, len(A.Data), want, n, k)
	}
	switch {
	case opts.Partitions < 0:
		return nil, fmt.Errorf("%w: Partitions=%d, want ≥ 0", ErrOption, opts.Partitions)
	case opts.ULBlock < 0:
		return nil, fmt.Errorf("%w: ULBlock=%d, want 0 (whole partition) or l > K", ErrOption, opts.ULBlock)
	case opts.ULBlock > 0 && opts.ULBlock <= k:
		return nil, fmt.Errorf("%w: ULBlock=%d must exceed K=%d (or be 0 for the whole partition)", ErrOption, opts.ULBlock, k)
	case opts.Method != Truncated && opts.Method != BlockJacobi:
		return nil, fmt.Errorf("%w: unknown method %d", ErrOption, int(opts.Method))
	case opts.Workers < 0:
		return nil, fmt.Errorf("%w: Workers=%d, want ≥ 0", ErrOption, opts.Workers)
	}
	if err := opts.Refine.Check(); err != nil {
		return nil, fmt.Errorf("%w: Refine: %v", ErrOption, err)
	}
	workers := opts.Workers
	if workers == 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	p := opts.Partitions
	if p == 0 {
		p = ChoosePartitions(n, k, workers)
	}
	if err := CheckPartitions(n, k, p); err != nil {
		return nil, err
	}
	if err := scanFinite(A.Data, n, k); err != nil {
		return nil, fmt.Errorf("spike: %w", err)
	}
	if err := checkFactorMemory[T](n, k, p, min(workers, p), opts); err != nil {
		return nil, err
	}
	f := &Factorization[T]{
		n: n, k: k, bounds: Partitions(n, p), method: opts.Method,
		ulBlock: opts.ULBlock, workers: workers,
		lu: A.Clone(),
	}
	coupled := p > 1 && k > 0 && opts.Method == Truncated
	if coupled {
		kk := k * k
		f.v = make([]T, (p-1)*kk)
		f.w = make([]T, (p-1)*kk)
		f.r = make([]T, (p-1)*kk)
		f.piv = make([]int, (p-1)*k)
	}
	fo := banded.FactorOptions{BoostTol: opts.BoostTol}
	boosts := make([]Boost, p)

	// Steps 1–3, one partition per task: the LU of A_i, V_i⁽ᵇ⁾ from its
	// bottom blocks, and W_i⁽ᵗ⁾ from a UL factorization of (the top of) A_i
	// in a scratch band of the worker.
	scratch := make([][]T, min(workers, p))
	err := parallelFor(p, workers, func(wk, i int) error {
		r0, r1 := f.bounds[i], f.bounds[i+1]
		boosts[i].Partition = i
		b, err := banded.FactorLURange(f.lu, r0, r1, fo) // step 1
		boosts[i].LU = b
		if err != nil {
			return fmt.Errorf("spike: partition %d (rows %d–%d), LU: %w", i, r0, r1-1, err)
		}
		if !coupled {
			return nil
		}
		kk := k * k
		if i < p-1 { // step 2: V_i⁽ᵇ⁾
			v := f.v[i*kk : (i+1)*kk]
			couplingB(A.Data, n, k, r1, v)
			rightSpikeBottom(f.lu.Data, n, k, r1, v)
		}
		if i > 0 { // step 3: W_i⁽ᵗ⁾, stored with interface i−1
			m := r1 - r0
			if l := f.ulBlock; l > 0 && l < m {
				m = l
			}
			need := (2*k + 1) * m
			if cap(scratch[wk]) < need {
				scratch[wk] = make([]T, need)
			}
			blk := &banded.Band[T]{N: m, K: k, Data: scratch[wk][:need]}
			extractBlock(A.Data, n, k, r0, r0+m, blk.Data)
			ub, err := banded.FactorULRange(blk, 0, m, fo)
			for q := range ub.Rows {
				ub.Rows[q] += r0
			}
			boosts[i].UL = ub
			if err != nil {
				var re *banded.RowError
				if errors.As(err, &re) {
					err = &banded.RowError{Row: re.Row + r0, Col: re.Col + r0, Err: re.Err}
				}
				return fmt.Errorf("spike: partition %d (rows %d–%d), UL: %w", i, r0, r1-1, err)
			}
			w := f.w[(i-1)*kk : i*kk]
			couplingC(A.Data, n, k, r0, w)
			leftSpikeTop(blk.Data, m, k, 0, w)
		}
		return nil
	})
	for _, b := range boosts {
		if b.LU.Count() > 0 || b.UL.Count() > 0 {
			f.boosts = append(f.boosts, b)
		}
	}
	if err != nil {
		return nil, err
	}
	f.refine = opts.Refine
	if !coupled {
		f.keepA(A)
		return f, nil
	}

	// Step 4: R̄_i = I − W_{i+1}⁽ᵗ⁾·V_i⁽ᵇ⁾ (Eq. 11a), factored by dense LU with
	// partial pivoting; an exactly singular R̄_i is boosted like the blocks.
	tau := T(boostTol[T](opts.BoostTol))
	reduced := make([][]int, p-1)
	err = parallelFor(p-1, workers, func(_, i int) error {
		kk := k * k
		r := f.r[i*kk : (i+1)*kk]
		reducedMatrix(f.w[i*kk:(i+1)*kk], f.v[i*kk:(i+1)*kk], k, r)
		b, bad, ok := denseLU(r, k, f.piv[i*k:(i+1)*k], tau)
		reduced[i] = b
		if !ok {
			return fmt.Errorf("spike: reduced system %d (between partitions %d and %d): %w at step %d",
				i, i, i+1, banded.ErrNonFinite, bad)
		}
		return nil
	})
	for i, b := range reduced {
		if len(b) > 0 {
			f.reducedBoosts = append(f.reducedBoosts, i)
		}
	}
	if err != nil {
		return nil, err
	}
	f.keepA(A)
	return f, nil
}

// keepA keeps a copy of A for refinement when Options.Refine may use it.
func (f *Factorization[T]) keepA(A *banded.Band[T]) {
	switch f.refine.Mode {
	case banded.RefineAlways:
	case banded.RefineBoosted:
		if f.BoostCount() == 0 && len(f.reducedBoosts) == 0 {
			return
		}
	default:
		return
	}
	f.a = A.Clone()
}

// boostTol is the pivot given to an exactly singular reduced matrix R̄_i
// (whose entries are O(1): it is I minus a product of spikes).
func boostTol[T Float](tol float64) float64 {
	if tol > 0 {
		return tol
	}
	var z T
	if _, ok := any(z).(float32); ok {
		return 0x1p-23
	}
	return 0x1p-52
}

// N is the order of the matrix.
func (f *Factorization[T]) N() int { return f.n }

// K is the half-bandwidth of the matrix.
func (f *Factorization[T]) K() int { return f.k }

// P is the number of partitions.
func (f *Factorization[T]) P() int { return len(f.bounds) - 1 }

// Bounds returns a copy of the partition bounds: partition i is rows
// [Bounds()[i], Bounds()[i+1]).
func (f *Factorization[T]) Bounds() []int { return append([]int(nil), f.bounds...) }

// Method is the method the factorization was made with.
func (f *Factorization[T]) Method() Method { return f.method }

// ULBlock is Options.ULBlock as used (0: whole partitions).
func (f *Factorization[T]) ULBlock() int { return f.ulBlock }

// Boosts returns the partitions where a pivot was boosted (in increasing
// partition order; nil when none was).
func (f *Factorization[T]) Boosts() []Boost { return f.boosts }

// BoostCount is the number of boosted pivots over all partitions (LU and
// UL).
func (f *Factorization[T]) BoostCount() int {
	c := 0
	for _, b := range f.boosts {
		c += b.LU.Count() + b.UL.Count()
	}
	return c
}

// ReducedBoosts returns the interfaces i whose reduced matrix R̄_i was
// exactly singular and got a boosted pivot.
func (f *Factorization[T]) ReducedBoosts() []int { return f.reducedBoosts }

// Spikes returns copies of V_i⁽ᵇ⁾ and W_{i+1}⁽ᵗ⁾, the spike blocks of the
// interface i between partitions i and i+1 (0 ≤ i < P−1), as K×K
// column-major blocks (entry (p, q) at [q·K + p]). Both are nil for
// BlockJacobi, P = 1 or K = 0.
func (f *Factorization[T]) Spikes(i int) (v, w []T) {
	if i < 0 || i >= f.P()-1 {
		panic(fmt.Sprintf("spike: Spikes(%d) with %d interfaces", i, f.P()-1))
	}
	if f.v == nil {
		return nil, nil
	}
	kk := f.k * f.k
	return append([]T(nil), f.v[i*kk:(i+1)*kk]...), append([]T(nil), f.w[i*kk:(i+1)*kk]...)
}

// parallelFor runs body(worker, i) for i = 0 … count−1 on at most workers
// goroutines, each taking a contiguous range of i; worker < workers
// identifies the goroutine (for scratch). It returns the error of the
// smallest i that failed.
func parallelFor(count, workers int, body func(worker, i int) error) error {
	if count <= 0 {
		return nil
	}
	workers = max(1, min(workers, count))
	errs := make([]error, count)
	if workers == 1 {
		for i := 0; i < count; i++ {
			errs[i] = body(0, i)
		}
	} else {
		var wg sync.WaitGroup
		for wk := 0; wk < workers; wk++ {
			lo, hi := wk*count/workers, (wk+1)*count/workers
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := lo; i < hi; i++ {
					errs[i] = body(wk, i)
				}
			}()
		}
		wg.Wait()
	}
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// checkFactorMemory reports, with an error wrapping banded.ErrMemory,
// whether the factorization of an N×N band of half-bandwidth K in p
// partitions fits the memory the process can have: the copy of the band
// that holds the LU factors, the three K×K blocks (V, W, R) of every
// interface with its pivots, and a UL scratch band for each of the
// workers.
func checkFactorMemory[T Float](n, k, p, workers int, opts Options) error {
	var zero T
	size := 8
	if _, ok := any(zero).(float32); ok {
		size = 4
	}
	scratchRows := (n + p - 1) / p
	if opts.ULBlock > 0 {
		scratchRows = min(scratchRows, opts.ULBlock)
	}
	need := memguard.Add(
		memguard.Bytes(size, 2*k+1, n),
		memguard.Bytes(3*size, p-1, k, k), memguard.Bytes(8, p-1, k),
		memguard.Bytes(size, 2*k+1, scratchRows, workers),
	)
	return memguard.Check(fmt.Sprintf("spike: factoring a band of N=%d, K=%d in %d partitions", n, k, p), need)
}
