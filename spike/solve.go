package spike

import (
	"fmt"
	"math"

	"github.com/bandsolve/bandsolve/banded"
)

// Solve solves A·x = b with the factorization (steps 5–8 of the package
// documentation): g = D⁻¹·b (Eq. 4), the truncated reduced systems at every
// interface (Eq. 11b, 11c), purification of b (Eq. 12) and the final block
// solves. For BlockJacobi it is g = D⁻¹·b only. len(b) and len(x) must be
// N; x may be b itself (other overlaps are not allowed); b is otherwise
// left unchanged. Partitions are solved in parallel on Options.Workers
// goroutines. It fails with banded.ErrShape on bad lengths and with
// banded.ErrNonFinite naming the first row of b holding NaN or ±Inf.
//
// When Options.Refine asks for it (by default: when the factorization
// boosted a pivot), the solution is then refined to the tolerance (see
// Options.Refine and banded.Refine); a refinement that does not reach it
// returns an error wrapping banded.ErrNotRefined, with x the best
// solution found.
func (f *Factorization[T]) Solve(b, x []T) error {
	_, err := f.SolveRefined(b, x)
	return err
}

// Refines reports whether Solve refines its solutions: Options.Refine is
// banded.RefineAlways, or banded.RefineBoosted and a pivot was boosted.
func (f *Factorization[T]) Refines() bool { return f.a != nil }

// SolveRefined is Solve, returning what refinement did (the zero result
// when Solve does not refine; see Refines).
func (f *Factorization[T]) SolveRefined(b, x []T) (banded.RefineResult, error) {
	var res banded.RefineResult
	if err := f.checkSolve(b, x); err != nil {
		return res, err
	}
	if f.a == nil {
		f.solve(b, x)
		return res, nil
	}
	b0 := b
	if &x[0] == &b[0] {
		b0 = append([]T(nil), b...)
	}
	f.solve(b0, x)
	return banded.Refine(f.a, func(r []T) error { f.solve(r, r); return nil }, b0, x, f.refine)
}

// checkSolve checks Solve's arguments.
func (f *Factorization[T]) checkSolve(b, x []T) error {
	n := f.n
	if len(b) != n || len(x) != n {
		return fmt.Errorf("%w: Solve with len(b)=%d, len(x)=%d for N=%d", banded.ErrShape, len(b), len(x), n)
	}
	for i, v := range b {
		if fv := float64(v); math.IsNaN(fv) || math.IsInf(fv, 0) {
			return fmt.Errorf("spike: %w in b at row %d", banded.ErrNonFinite, i)
		}
	}
	return nil
}

// solve is steps 5–8 without checks or refinement.
func (f *Factorization[T]) solve(b, x []T) {
	n, k := f.n, f.k
	p := f.P()
	bounds := f.bounds
	if f.v == nil { // P = 1, K = 0 or BlockJacobi: x = D⁻¹·b
		if &x[0] != &b[0] {
			copy(x, b)
		}
		parallelFor(p, f.workers, func(_, i int) error {
			r0, r1 := bounds[i], bounds[i+1]
			banded.SolveLURange(f.lu, r0, r1, x[r0:r1])
			return nil
		})
		return
	}

	ws, _ := f.pool.Get().(*workspace[T])
	if ws == nil {
		ws = &workspace[T]{g: make([]T, n), xt: make([]T, (p-1)*k), xb: make([]T, (p-1)*k)}
	}
	defer f.pool.Put(ws)
	g := ws.g
	copy(g, b)

	// Step 5 (Eq. 4): g_i = A_i⁻¹·b_i.
	parallelFor(p, f.workers, func(_, i int) error {
		r0, r1 := bounds[i], bounds[i+1]
		banded.SolveLURange(f.lu, r0, r1, g[r0:r1])
		return nil
	})

	// Step 6 (Eq. 11b, 11c): x_{i+1}⁽ᵗ⁾ and x_i⁽ᵇ⁾ at every interface.
	kk := k * k
	parallelFor(p-1, f.workers, func(_, i int) error {
		r1 := bounds[i+1]
		reducedSolve(f.w[i*kk:(i+1)*kk], f.v[i*kk:(i+1)*kk], f.r[i*kk:(i+1)*kk], f.piv[i*k:(i+1)*k], k,
			g[r1-k:r1], g[r1:r1+k], ws.xt[i*k:(i+1)*k], ws.xb[i*k:(i+1)*k])
		return nil
	})

	// Steps 7–8 (Eq. 12): purify b_i of the neighbours' influence and
	// solve A_i·x_i = b̃_i.
	parallelFor(p, f.workers, func(_, i int) error {
		r0, r1 := bounds[i], bounds[i+1]
		xi := x[r0:r1]
		if &x[0] != &b[0] {
			copy(xi, b[r0:r1])
		}
		var xbPrev, xtNext []T
		if i > 0 {
			xbPrev = ws.xb[(i-1)*k : i*k]
		}
		if i < p-1 {
			xtNext = ws.xt[i*k : (i+1)*k]
		}
		purify(f.lu.Data, n, k, r0, r1, xbPrev, xtNext, xi)
		banded.SolveLURange(f.lu, r0, r1, xi)
		return nil
	})
}
