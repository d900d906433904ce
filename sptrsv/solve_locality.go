package sptrsv

import (
	"context"
	"fmt"
	"sync/atomic"
)

// subgraph solves sub-graph g of p as a GPU block does (see
// LocalityPlan), with xl as its x_loc: the rows' b, the external slots,
// then step by step the divisions of the rows made final and the slot's
// internal edges; last x of its rows. x may be b.
func subgraph[T Float](p *LocalityPlan[T], unit bool, g int32, b, x, xl []T) {
	lo, hi := p.RowPtr[g], p.RowPtr[g+1]
	rows := p.Rows[lo:hi]
	xl = xl[:len(rows)]
	for q, r := range rows {
		xl[q] = b[r]
	}
	for s := p.ExtSlotPtr[g]; s < p.ExtSlotPtr[g+1]; s++ {
		for e := p.ExtPtr[s]; e < p.ExtPtr[s+1]; e++ {
			xl[p.ExtDst[e]] -= p.ExtVal[e] * x[p.ExtCol[e]]
		}
	}
	for s := p.StepPtr[g]; s < p.StepPtr[g+1]; s++ {
		if !unit {
			for q := p.StepRowPtr[s]; q < p.StepRowPtr[s+1]; q++ {
				xl[q-lo] /= p.Diag[q]
			}
		}
		for e := p.EdgePtr[s]; e < p.EdgePtr[s+1]; e++ {
			xl[p.EdgeDst[e]] -= p.EdgeVal[e] * xl[p.EdgeSrc[e]]
		}
	}
	for q, r := range rows {
		x[r] = xl[q]
	}
}

// levelOrder, when not nil, gives the order in which the sub-graphs
// lo .. hi−1 of a level are handed out (tests make it adversarial).
type levelOrder func(lo, hi int32) []int32

// SolveLocality solves T x = b with the Locality of T, the CPU twin of
// Picciau et al.'s GPU solve (their Algorithm 1) written as the GPU runs
// it: the sub-graph levels one after another (a launch each), the
// sub-graphs of a level in parallel on the workers of the Analysis (a
// block each), and within a sub-graph its rows' x in a local array, the
// external slots first, then the steps in order, each dividing the rows
// made final and applying one slot of internal entries. A level of one
// sub-graph, and every level with one worker, is done on the calling
// goroutine.
//
// A row's entries are subtracted in the order of its slots, not of its
// columns, so x may differ from SolveSequential's in the last bits; it is
// the same, bit for bit, from solve to solve and for any number of
// workers, since every row is computed by one sub-graph in a fixed order.
// x may be b. float32 vectors are solved in float32 (the values rounded
// once, see Plan). It stops between levels when ctx is done and returns
// ctx's error.
func SolveLocality[T Float](ctx context.Context, loc *Locality, b, x []T) error {
	return solveLocality(ctx, loc, b, x, nil)
}

func solveLocality[T Float](ctx context.Context, loc *Locality, b, x []T, order levelOrder) error {
	if loc == nil {
		return fmt.Errorf("sptrsv: nil Locality")
	}
	an := loc.an
	if err := checkVectors(an, b, x); err != nil {
		return err
	}
	p := LocalityArrays[T](loc)
	unit := an.unit
	done := ctx.Done()
	nLevels := len(p.LevelPtr) - 1
	w := an.workers
	xls := make([][]T, max(w, 1)) // every worker's shared-memory stand-in
	xls[0] = make([]T, loc.maxRows)
	pool := helpers{w: w}
	defer pool.close()
	var job localityJob[T]
	for l := range nLevels {
		if done != nil {
			select {
			case <-done:
				return fmt.Errorf("sptrsv: locality solve of the %s triangle of order %d stopped at sub-graph level %d of %d: %w", an.triangle, an.n, l, nLevels, ctx.Err())
			default:
			}
		}
		lo, hi := p.LevelPtr[l], p.LevelPtr[l+1]
		var ids []int32
		if order != nil {
			ids = order(lo, hi)
		}
		if w <= 1 || hi-lo == 1 {
			for k := lo; k < hi; k++ {
				g := k
				if ids != nil {
					g = ids[k-lo]
				}
				subgraph(p, unit, g, b, x, xls[0])
			}
			continue
		}
		job.lo, job.hi, job.ids = lo, hi, ids
		job.next.Store(lo)
		pool.run(func(k int) {
			if xls[k] == nil {
				xls[k] = make([]T, loc.maxRows)
			}
			job.run(p, unit, b, x, xls[k])
		})
	}
	return nil
}

// localityJob is one sub-graph level handed to the workers: they take
// its sub-graphs lo .. hi−1 one at a time through next (ids[k−lo] in
// place of k when ids is set).
type localityJob[T Float] struct {
	lo, hi int32
	ids    []int32
	next   atomic.Int32
}

func (j *localityJob[T]) run(p *LocalityPlan[T], unit bool, b, x, xl []T) {
	for {
		k := j.next.Add(1) - 1
		if k >= j.hi {
			return
		}
		g := k
		if j.ids != nil {
			g = j.ids[k-j.lo]
		}
		subgraph(p, unit, g, b, x, xl)
	}
}
