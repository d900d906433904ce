package banded

import (
	"errors"
)

// batchWorker is one goroutine's scratch for solving the systems of a
// batch one at a time (SolveBatch, SolveRagged), sized for systems of up
// to n rows of half-bandwidth k, and the failures and boosts it has
// recorded, by system.
type batchWorker[T Scalar] struct {
	opt      BatchOptions
	k, n     int
	sys      Band[T] // the system being factored
	sysData  []T
	piv      PivotLU[T]
	vec      []T     // its right-hand side, then its solution
	orig     Band[T] // refinement: the system as given (sys is factored in place)
	origData []T
	rhsv     []T // and its right-hand side
	failed   []SystemError
	boosted  []SystemBoosts
}

func newBatchWorker[T Scalar](k, n int, opt BatchOptions) *batchWorker[T] {
	return &batchWorker[T]{opt: opt, k: k, n: n, sysData: make([]T, (2*k+1)*n), vec: make([]T, n)}
}

// solve solves system s of b (whose N is at most the worker's n) for the
// right-hand side in rhs into x, both in b's layout, and records its
// failure and boosts as those of system id: factor it as the options
// say (FactorPivot, or FactorLU with boosting), refine the solution as
// Refine says, check it as Check says; a system that fails gets x = NaN
// but where only the check failed. A complex batch pivots (its options
// are checked by checkComplexOptions).
func (w *batchWorker[T]) solve(b *Batch[T], s, id int, rhs, x []T) {
	n, opt := b.N, w.opt
	sys := &w.sys
	*sys = Band[T]{N: n, K: b.K, Data: w.sysData[:(2*b.K+1)*n]}
	vec := w.vec[:n]
	b.copyOut(s, sys.Data)
	for i := range vec {
		vec[i] = rhs[b.VecIndex(s, i)]
	}
	var err error
	if opt.Pivot {
		if err = factorBand(&w.piv, sys); err == nil {
			w.piv.Solve(vec)
		}
	} else {
		err = w.unpivoted(b, s, id)
	}
	if err == nil && opt.Check && !refineFailed(w.failed, id) {
		sb := w.boosted
		if se := checkSystem(b, s, rhsOf(b, rhs, s), vec, opt.Refine.Tol, len(sb) > 0 && sb[len(sb)-1].System == id); se != nil {
			se.System = id
			w.failed = append(w.failed, *se)
		}
	}
	if err != nil {
		se := SystemError{System: id, Row: -1, Col: -1, Err: err}
		var re *RowError
		if errors.As(err, &re) {
			se.Row, se.Col = re.Row, re.Col
		}
		w.failed = append(w.failed, se)
		setNaN(vec)
	}
	for i, v := range vec {
		x[b.VecIndex(s, i)] = v
	}
}

// unpivoted factors the system copied into w.sys by LU without pivoting
// with boosting, solves w.vec with it and refines the solution as the
// options say, recording boosts and refinement failures: the real path
// of solve. A complex T never gets here (checkComplexOptions).
func (w *batchWorker[T]) unpivoted(b *Batch[T], s, id int) error {
	switch w := any(w).(type) {
	case *batchWorker[float32]:
		return solveUnpivoted(w, any(b).(*Batch[float32]), s, id)
	case *batchWorker[float64]:
		return solveUnpivoted(w, any(b).(*Batch[float64]), s, id)
	}
	return errComplexUnpivoted
}

func solveUnpivoted[T Float](w *batchWorker[T], b *Batch[T], s, id int) error {
	n, opt, sys, vec := b.N, w.opt, &w.sys, w.vec[:b.N]
	bs, err := FactorLU(sys, opt.Factor)
	sb := SystemBoosts{System: id, Boosts: bs}
	refine := opt.Refine.Mode == RefineAlways || (opt.Refine.Mode == RefineBoosted && bs.Count() > 0)
	var orig *Band[T]
	var rhsv []T
	if err == nil && refine {
		if w.origData == nil {
			w.origData, w.rhsv = make([]T, len(w.sysData)), make([]T, w.n)
		}
		orig, rhsv = &w.orig, w.rhsv[:n]
		*orig = Band[T]{N: n, K: b.K, Data: w.origData[:len(sys.Data)]}
		b.copyOut(s, orig.Data)
		copy(rhsv, vec)
	}
	if err == nil {
		SolveLU(sys, vec)
	}
	if err == nil && refine {
		var rerr error
		sb.Refine, rerr = Refine(orig, func(r []T) error { SolveLU(sys, r); return nil }, rhsv, vec, opt.Refine)
		if rerr != nil {
			w.failed = append(w.failed, refineFailure(id, sb.Refine, bs.Count() > 0, rerr))
			setNaN(vec)
		}
	}
	if bs.Count() > 0 {
		w.boosted = append(w.boosted, sb)
	}
	return err
}
