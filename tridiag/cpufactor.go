package tridiag

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/bandsolve/bandsolve/internal/memguard"
	"github.com/bandsolve/bandsolve/tridiag/internal/tri"
)

// factorKind is the factorization of one system.
type factorKind uint8

const (
	kindNone   factorKind = iota
	kindLU                // Thomas without pivoting: l, 1/u, c/u
	kindGT                // gttrf: dl, d, du, du2 and ipiv
	kindLDLT              // pttrf: d, l
	kindFailed            // broke down in Factor
)

// sysFactors is the factorization of one system: views of a cpuFactors'
// storage, or a worker's scratch.
type sysFactors[T Float] struct {
	kind factorKind
	f    [4][]T // kindLU: l, 1/u, c/u; kindGT: dl, d, du, du2; kindLDLT: d, l
	ipiv []uint8
	// Cyclic plans of N ≥ 3 (Sherman–Morrison): z = T⁻¹u, α/γ and the
	// denominator 1 + vᵀz; z is nil otherwise.
	z       []T
	ag, den T
}

// newSysFactors allocates scratch factors for one system of n rows, with
// room for z when cyclic.
func newSysFactors[T Float](n int, cyclic bool) *sysFactors[T] {
	k := 4
	if cyclic {
		k = 5
	}
	buf := make([]T, k*n)
	f := &sysFactors[T]{ipiv: make([]uint8, n)}
	for i := range f.f {
		f.f[i] = buf[i*n : (i+1)*n : (i+1)*n]
	}
	if cyclic && n >= 3 {
		f.z = buf[4*n:]
	}
	return f
}

// solveT solves with the factors of T (the system without its cyclic
// corners) for m columns: row i of column j at i·rs + j·cs of d and x.
// scratch holds scratchLen(m) values.
func (f *sysFactors[T]) solveT(d, x []T, rs, cs, m int, scratch []T) {
	switch f.kind {
	case kindLU:
		tri.LUSolve(f.f[0], f.f[1], f.f[2], d, x, rs, cs, m, scratch)
	case kindGT:
		tri.GTTRS(f.f[0], f.f[1], f.f[2], f.f[3], f.ipiv, d, x, rs, cs, m, scratch)
	case kindLDLT:
		tri.PTTRS(f.f[0], f.f[1], d, x, rs, cs, m, scratch)
	}
}

// scratchLen is the scratch a solve of m columns needs (none for one
// column).
func scratchLen(m int) int { return tri.ScratchLen(m) }

// solve solves for m columns as solveT does, then applies the
// Sherman–Morrison update of a cyclic system, column by column:
// x = y − z·(y[0] + α/γ·y[n−1])/den, with the operations of the cyclic
// solve.
func (f *sysFactors[T]) solve(d, x []T, rs, cs, m int, scratch []T) {
	f.solveT(d, x, rs, cs, m, scratch)
	z := f.z
	if z == nil {
		return
	}
	last := (len(z) - 1) * rs
	for j, k0 := 0, 0; j < m; j, k0 = j+1, k0+cs {
		vy := x[k0] + T(f.ag*x[k0+last])
		fj := vy / f.den
		for i, k := 0, k0; i < len(z); i, k = i+1, k+rs {
			x[k] -= T(fj * z[i])
		}
	}
}

// factorSystem factors system g of bt: into dst's storage, or, for a
// system that Auto sends to gttrf, into the storage gtDst returns; the
// cyclic z goes to dst.z. It returns the factors, or the error of the
// breakdown, as solveSystem would report it.
func (s *cpuSolver[T]) factorSystem(w *cpuWorker[T], bt Batch[T], g int, dst sysFactors[T], gtDst func() sysFactors[T]) (sysFactors[T], error) {
	n, l := s.spec.N, s.spec.Layout
	spd := s.spec.Algorithm == LDLT
	var a, b, c []T
	if l.IsContiguous(n) && !bt.Constant && !s.spec.Cyclic {
		o := g * n
		b, c = bt.B[o:o+n], bt.C[o:o+n]
		if !spd {
			a = bt.A[o : o+n]
		}
	} else {
		a, b, c = w.a, w.b, w.c
		for i := 0; i < n; i++ {
			k := l.Index(i, g)
			switch {
			case bt.Constant:
				a[i], b[i], c[i] = bt.ConstA, bt.ConstB, bt.ConstC
			case spd:
				b[i], c[i] = bt.B[k], bt.C[k]
			default:
				a[i], b[i], c[i] = bt.A[k], bt.B[k], bt.C[k]
			}
		}
		if spd {
			symmetrize(a, c)
		}
	}
	var alpha, beta, gamma T
	sm := false
	if s.spec.Cyclic {
		// The corners as solveCyclic treats them.
		switch n {
		case 1:
			p := a[0] + b[0] + c[0]
			if spd && !(p > 0 && finite(p)) {
				return dst, &PivotError{Row: 0, Err: ErrNotPositiveDefinite}
			}
			if p == 0 {
				return dst, &PivotError{Row: 0, Err: ErrSingular}
			}
			a[0], b[0], c[0] = 0, p, 0
		case 2:
			c[0] += a[0]
			a[1] += c[1]
			a[0], c[1] = 0, 0
		default:
			alpha, beta, gamma = splitCorners(a, b, c)
			sm = true
		}
	}
	f, err := s.factorT(a, b, c, dst, gtDst)
	if err != nil || !sm {
		f.z = nil
		return f, err
	}
	z := dst.z
	f.z = z
	clear(z)
	z[0], z[n-1] = gamma, beta
	f.solveT(z, z, 1, 0, 1, nil)
	ag := alpha / gamma
	den := 1 + z[0] + T(ag*z[n-1])
	if den == 0 || !finite(den) {
		return f, fmt.Errorf("%w: Sherman–Morrison denominator is %v", ErrSingular, den)
	}
	f.ag, f.den = ag, den
	return f, nil
}

// factorT factors the non-cyclic system a, b, c with the plan's
// algorithm, as solveOne solves it.
func (s *cpuSolver[T]) factorT(a, b, c []T, dst sysFactors[T], gtDst func() sysFactors[T]) (sysFactors[T], error) {
	switch s.spec.Algorithm {
	case Thomas:
		dst.kind = kindLU
		return dst, tri.LUFactor(a, b, c, dst.f[0], dst.f[1], dst.f[2], false)
	case GTSV:
		dst.kind = kindGT
		return dst, tri.GTTRF(a, b, c, dst.f[0], dst.f[1], dst.f[2], dst.f[3], dst.ipiv)
	case LDLT:
		dst.kind = kindLDLT
		return dst, tri.PTTRF(b, c, dst.f[0], dst.f[1])
	}
	// Auto: the choice of solveOne.
	dst.kind = kindLU
	if tri.LUFactor(a, b, c, dst.f[0], dst.f[1], dst.f[2], s.spec.Pivoting != PivotNever) == nil {
		return dst, nil
	}
	gt := gtDst()
	gt.kind = kindGT
	return gt, tri.GTTRF(a, b, c, gt.f[0], gt.f[1], gt.f[2], gt.f[3], gt.ipiv)
}

// forEachSystem calls fn(t, g) for every system g of G, in tasks of chunk
// systems on nw goroutines (t, in [0, nw), names the goroutine). It stops
// taking tasks when ctx is done.
func forEachSystem(ctx context.Context, nw, chunk, G int, fn func(t, g int)) {
	tasks := (G + chunk - 1) / chunk
	nw = max(1, min(nw, tasks))
	var next atomic.Int64
	var wg sync.WaitGroup
	for t := range nw {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				k := int(next.Add(1)) - 1
				if k >= tasks || ctx.Err() != nil {
					return
				}
				for g := k * chunk; g < min(G, (k+1)*chunk); g++ {
					fn(t, g)
				}
			}
		}()
	}
	wg.Wait()
}

// rowOf is the row a breakdown names, −1 when it names none.
func rowOf(err error) int {
	var pe *PivotError
	if errors.As(err, &pe) {
		return pe.Row
	}
	return -1
}

// finishColumns checks the m solved columns of system g (first row at
// x[0], rows rs apart, columns cs apart): a column whose solution is not
// finite gets NaN in every row, and the first such column is reported.
func finishColumns[T Float](x []T, n, rs, cs, m, g int) *SystemError {
	var first *SystemError
	for j, k0 := 0, 0; j < m; j, k0 = j+1, k0+cs {
		for i, k := 0, k0; i < n; i, k = i+1, k+rs {
			if finite(x[k]) {
				continue
			}
			if first == nil {
				err := columnError(j, m, &PivotError{Row: i, Err: ErrNonFiniteResult})
				first = &SystemError{System: g, Row: i, Err: err}
			}
			fillNaN(x[k0:], n, rs, 1, 1)
			break
		}
	}
	return first
}

// fillNaN sets the n rows of the m columns of one system to NaN.
func fillNaN[T Float](x []T, n, rs, cs, m int) {
	nan := T(math.NaN())
	for j, k0 := 0, 0; j < m; j, k0 = j+1, k0+cs {
		for i, k := 0, k0; i < n; i, k = i+1, k+rs {
			x[k] = nan
		}
	}
}

// sortedBatchError returns the failures of every goroutine as one
// *BatchError in system order, or nil.
func sortedBatchError(G int, lists ...[]SystemError) error {
	var failed []SystemError
	for _, l := range lists {
		failed = append(failed, l...)
	}
	if len(failed) == 0 {
		return nil
	}
	sort.Slice(failed, func(i, j int) bool { return failed[i].System < failed[j].System })
	return &BatchError{G: G, Failed: failed}
}

// SolveMany solves the batch for nrhs right-hand sides (Plan.SolveMany):
// where the plan factors, each system is factored in the worker's scratch
// and solved for every column; other algorithms solve column by column.
func (s *cpuSolver[T]) SolveMany(ctx context.Context, nrhs int, bt Batch[T]) error {
	if !s.spec.Algorithm.factors() {
		return solveColumns(ctx, Solver[T](s), s.spec, nrhs, bt)
	}
	n, G, L := s.spec.N, s.spec.G, s.spec.Len()
	rs := s.spec.Layout.ElemStride
	fails := make([][]SystemError, len(s.workers))
	var pivoted atomic.Int64
	scratch := make([][]T, len(s.workers))
	forEachSystem(ctx, len(s.workers), s.chunk, G, func(t, g int) {
		w := s.workers[t]
		if w.fac == nil {
			w.fac = newSysFactors[T](n, s.spec.Cyclic)
		}
		if scratch[t] == nil {
			scratch[t] = make([]T, scratchLen(nrhs))
		}
		dst := *w.fac
		f, err := s.factorSystem(w, bt, g, dst, func() sysFactors[T] { return dst })
		if f.kind == kindGT && s.spec.Algorithm == Auto {
			pivoted.Add(1)
		}
		o := s.spec.Layout.Index(0, g)
		if err != nil {
			fillNaN(bt.X[o:], n, rs, L, nrhs)
			fails[t] = append(fails[t], SystemError{System: g, Row: rowOf(err), Err: err})
			return
		}
		f.solve(bt.D[o:], bt.X[o:], rs, L, nrhs, scratch[t])
		if e := finishColumns(bt.X[o:], n, rs, L, nrhs, g); e != nil {
			fails[t] = append(fails[t], *e)
		}
	})
	if s.spec.Algorithm == Auto {
		s.pivoted.Store(pivoted.Load())
		s.solved.Store(int64(G))
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return sortedBatchError(G, fails...)
}

// cpuFactors is the factorization of a batch on the CPU. The factors of
// system g are stored system after system: rows g·N … g·N+N−1 of each
// array, whatever the batch's layout.
type cpuFactors[T Float] struct {
	spec    Spec // Auto with PivotAlways resolved to GTSV
	workers int
	chunk   int
	// shared: constant coefficients, every system's factors are system
	// 0's (the arrays below then hold one system).
	shared bool
	kinds  []factorKind // per system held
	flat   [4][]T       // the arrays of the plan's kind (kindLU, kindGT or kindLDLT)
	ipiv   []uint8      // GTSV
	// Auto: the gttrf factors of the systems that need pivoting.
	side    map[int]sysFactors[T]
	z       []T // cyclic: N per system
	ag, den []T // cyclic: one per system
	failed  []SystemError
}

// factorArrays is how many arrays of N·G values the factors of a plan of
// algorithm alg hold (cyclic: one more, for z).
func factorArrays(alg Algorithm) int {
	switch alg {
	case GTSV:
		return 4
	case LDLT:
		return 2
	}
	return 3
}

// Factor factors the batch (Plan.Factor) for the algorithms that factor:
// Auto, Thomas, GTSV and LDLT.
func (s *cpuSolver[T]) Factor(ctx context.Context, bt Batch[T]) (FactorSolver[T], error) {
	alg := s.spec.Algorithm
	if !alg.factors() {
		return nil, fmt.Errorf("%w: algorithm %s does not factor (Factor takes %s, %s, %s or %s)", ErrOptions, alg, Auto, Thomas, GTSV, LDLT)
	}
	n, G := s.spec.N, s.spec.G
	// Constant coefficients: one matrix for every system, factored once.
	held := G
	if bt.Constant {
		held = 1
	}
	arrays := factorArrays(alg)
	var zero T
	elems := arrays
	if s.spec.Cyclic {
		elems++
	}
	size := int(sizeOf(zero))
	// The values, ipiv (GTSV) and one kind byte a system.
	bytes := memguard.Bytes(size, elems, n, held)
	if alg == GTSV {
		bytes = memguard.Add(bytes, memguard.Bytes(1, n, held))
	}
	if err := memguard.Check(fmt.Sprintf("tridiag: the %s factors of %d systems of %d rows (%s)", typeName(zero), held, n, alg), bytes); err != nil {
		return nil, err
	}
	f := &cpuFactors[T]{spec: s.spec, workers: len(s.workers), chunk: s.chunk, shared: bt.Constant, kinds: make([]factorKind, held)}
	buf := make([]T, elems*n*held)
	for i := range arrays {
		f.flat[i] = buf[i*n*held : (i+1)*n*held : (i+1)*n*held]
	}
	if alg == GTSV {
		f.ipiv = make([]uint8, n*held)
	}
	if s.spec.Cyclic {
		f.z = buf[arrays*n*held:]
		f.ag, f.den = make([]T, held), make([]T, held)
	}
	fails := make([][]SystemError, len(s.workers))
	sides := make([]map[int]sysFactors[T], len(s.workers))
	forEachSystem(ctx, len(s.workers), s.chunk, held, func(t, g int) {
		w := s.workers[t]
		dst := f.view(g, kindNone)
		gtDst := func() sysFactors[T] {
			gt := *newSysFactors[T](n, false)
			if sides[t] == nil {
				sides[t] = map[int]sysFactors[T]{}
			}
			sides[t][g] = gt
			return gt
		}
		fac, err := s.factorSystem(w, bt, g, dst, gtDst)
		if err != nil {
			f.kinds[g] = kindFailed
			delete(sides[t], g)
			fails[t] = append(fails[t], SystemError{System: g, Row: rowOf(err), Err: err})
			return
		}
		f.kinds[g] = fac.kind
		if fac.z != nil {
			f.ag[g], f.den[g] = fac.ag, fac.den
		}
	})
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for _, m := range sides {
		for g, gt := range m {
			if f.side == nil {
				f.side = map[int]sysFactors[T]{}
			}
			f.side[g] = gt
		}
	}
	if f.shared && f.kinds[0] == kindFailed {
		// The one matrix breaks down: in every system, at the same row.
		var e SystemError
		for _, l := range fails {
			if len(l) > 0 {
				e = l[0]
			}
		}
		fails = [][]SystemError{make([]SystemError, G)}
		for g := range G {
			fails[0][g] = e
			fails[0][g].System = g
		}
	}
	err := sortedBatchError(G, fails...)
	var be *BatchError
	if errors.As(err, &be) {
		f.failed = be.Failed
	}
	return f, err
}

// view returns the factors of system g: the views of the flat arrays
// (kind none: before Factor chose), or its gttrf factors for a system
// Auto sent to gttrf.
func (f *cpuFactors[T]) view(g int, kind factorKind) sysFactors[T] {
	n := f.spec.N
	g = f.held(g)
	o := g * n
	var v sysFactors[T]
	if kind == kindGT && f.spec.Algorithm != GTSV {
		v = f.side[g]
	} else {
		for i, a := range f.flat {
			if a != nil {
				v.f[i] = a[o : o+n : o+n]
			}
		}
		if f.ipiv != nil {
			v.ipiv = f.ipiv[o : o+n : o+n]
		}
	}
	v.kind = kind
	if f.z != nil && n >= 3 {
		v.z = f.z[o : o+n : o+n]
		v.ag, v.den = f.ag[g], f.den[g]
	}
	return v
}

// held returns the system whose factors system g uses: g, or 0 when
// every system shares system 0's.
func (f *cpuFactors[T]) held(g int) int {
	if f.shared {
		return 0
	}
	return g
}

// SolveMany solves the factored batch for nrhs right-hand sides
// (Factors.SolveMany).
func (f *cpuFactors[T]) SolveMany(ctx context.Context, nrhs int, d, x []T) error {
	n, G, L := f.spec.N, f.spec.G, f.spec.Len()
	l := f.spec.Layout
	rs := l.ElemStride
	fails := make([][]SystemError, f.workers)
	scratch := make([][]T, f.workers)
	forEachSystem(ctx, f.workers, f.chunk, G, func(t, g int) {
		o := l.Index(0, g)
		kind := f.kinds[f.held(g)]
		if kind == kindFailed {
			fillNaN(x[o:], n, rs, L, nrhs)
			return
		}
		if scratch[t] == nil {
			scratch[t] = make([]T, scratchLen(nrhs))
		}
		v := f.view(g, kind)
		v.solve(d[o:], x[o:], rs, L, nrhs, scratch[t])
		if e := finishColumns(x[o:], n, rs, L, nrhs, g); e != nil {
			fails[t] = append(fails[t], *e)
		}
	})
	if err := ctx.Err(); err != nil {
		return err
	}
	return sortedBatchError(G, append(fails, f.failed)...)
}

// Describe names the factorization: the plan's, and for Auto how many
// systems gttrf factored.
func (f *cpuFactors[T]) Describe() string {
	switch f.spec.Algorithm {
	case Thomas:
		return "thomas (lu without pivoting)"
	case GTSV:
		return "gtsv (gttrf: lu with partial pivoting)"
	case LDLT:
		return "ldlt (pttrf: l·d·lᵀ)"
	}
	pivoted := len(f.side)
	if f.shared {
		pivoted *= f.spec.G
	}
	return fmt.Sprintf("thomas (lu without pivoting), gtsv (gttrf) for %d of %d systems", pivoted, f.spec.G)
}

// Close drops the factors.
func (f *cpuFactors[T]) Close() error {
	*f = cpuFactors[T]{}
	return nil
}
