package tridiag

import (
	"context"
	"errors"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/bandsolve/bandsolve/internal/ragged"
	"github.com/bandsolve/bandsolve/tridiag/partition"
	"github.com/bandsolve/bandsolve/tridiag/pivotpart"
	"github.com/bandsolve/bandsolve/tridiag/tpr"
)

// NewRaggedSolver32 builds a float32 CPU solver of ragged batches; use
// NewRaggedPlan instead.
func (c *CPU) NewRaggedSolver32(spec RaggedSpec) (Solver[float32], error) {
	return newCPURaggedSolver[float32](c, spec)
}

// NewRaggedSolver64 builds a float64 CPU solver of ragged batches; use
// NewRaggedPlan instead.
func (c *CPU) NewRaggedSolver64(spec RaggedSpec) (Solver[float64], error) {
	return newCPURaggedSolver[float64](c, spec)
}

// cpuRaggedSolver solves every system of a ragged batch as the CPU solver
// of a contiguous batch of that one system does (cpuSolver.solveSystem),
// with workspaces sized for the longest system.
type cpuRaggedSolver[T Float] struct {
	spec  RaggedSpec
	base  *cpuSolver[T] // its workers hold the longest system; Describe
	sched ragged.Schedule
	views []cpuRaggedView[T] // one a worker
}

// cpuRaggedView is one worker's solver of a batch of one system of n
// rows: the spec of that batch, and the worker's buffers cut to n rows
// with the algorithm's parameters for n, as a plan of N = n has them.
type cpuRaggedView[T Float] struct {
	s    cpuSolver[T]
	w    cpuWorker[T]
	full *cpuWorker[T]
	n    int // rows the view is fitted to (0: none yet)
}

func newCPURaggedSolver[T Float](dev *CPU, spec RaggedSpec) (*cpuRaggedSolver[T], error) {
	G := len(spec.Lengths)
	base, err := newCPUSolver[T](dev, Spec{Shape: Shape{N: ragged.Longest(spec.Offsets), G: G}.Normalize(), Options: spec.Options})
	if err != nil {
		return nil, err
	}
	nw := len(base.workers)
	var zero T
	// Tasks as the batch solver's chunks: a core's L2 cache of rows of the
	// five arrays, and at least 4 tasks per worker where the batch allows.
	rows := max(1, min(dev.cache/(5*int(sizeOf(zero))), spec.Offsets[G]/(4*nw)))
	s := &cpuRaggedSolver[T]{spec: spec, base: base, sched: ragged.NewSchedule(spec.Offsets, rows), views: make([]cpuRaggedView[T], nw)}
	for i := range s.views {
		v := &s.views[i]
		v.s.spec = base.spec
		v.full = base.workers[i]
	}
	return s, nil
}

// fit makes v solve systems of n rows, n at most the longest.
func (v *cpuRaggedView[T]) fit(n int) {
	if v.n == n {
		return
	}
	v.n = n
	v.s.spec.Shape = Shape{N: n, G: 1, Layout: Contiguous(n)}
	f := v.full
	v.w = *f
	w := &v.w
	w.a, w.b, w.c, w.d, w.x = f.a[:n], f.b[:n], f.c[:n], f.d[:n], f.x[:n]
	w.y, w.z, w.u, w.work = f.y[:n], f.z[:n], f.u[:n], f.work[:n]
	switch v.s.spec.Algorithm {
	case TPR:
		if v.s.spec.SliceSize == 0 {
			w.slice = tpr.DefaultSliceSize(n)
		}
	case Partition:
		w.chunk = partition.DefaultChunk(n)
	case PartitionPivot:
		w.chunk = pivotpart.DefaultRows(n)
		if f.pp.Rows() != w.chunk {
			f.pp = pivotpart.NewWorkspace[T](f.pp.Cap(), w.chunk)
			w.pp = f.pp
		}
	}
}

// Describe is the CPU solver's: the algorithm, and for Auto after a solve
// how many systems of the last solve GTSV solved.
func (s *cpuRaggedSolver[T]) Describe() string { return s.base.Describe() }

func (s *cpuRaggedSolver[T]) Close() error {
	s.views = nil
	return s.base.Close()
}

func (s *cpuRaggedSolver[T]) Solve(ctx context.Context, bt Batch[T]) error {
	G := len(s.spec.Lengths)
	var mu sync.Mutex
	var failed []SystemError
	var pivoted atomic.Int64
	s.sched.Run(ctx, len(s.views), func(k, g int) {
		v := &s.views[k]
		o, n := s.spec.Offsets[g], s.spec.Lengths[g]
		v.fit(n)
		v.w.pivoted = false
		err := v.s.solveSystem(&v.w, systemOf(bt, o, n), 0)
		if v.w.pivoted {
			pivoted.Add(1)
		}
		if err != nil {
			row := -1
			var pe *PivotError
			if errors.As(err, &pe) {
				row = pe.Row
			}
			mu.Lock()
			failed = append(failed, SystemError{System: g, Row: row, Err: err})
			mu.Unlock()
		}
	})
	if s.base.spec.Algorithm == Auto {
		s.base.pivoted.Store(pivoted.Load())
		s.base.solved.Store(int64(G))
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(failed) > 0 {
		sort.Slice(failed, func(i, j int) bool { return failed[i].System < failed[j].System })
		return &BatchError{G: G, Failed: failed}
	}
	return nil
}
