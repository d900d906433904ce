package tridiag

import (
	"context"
	"fmt"
	"math"
	"sync/atomic"

	"github.com/bandsolve/bandsolve/internal/memguard"
	"github.com/bandsolve/bandsolve/tridiag/internal/tri"
	"github.com/bandsolve/bandsolve/tridiag/partition"
)

// NewSolverC64 builds a complex64 CPU solver; use NewPlan instead.
func (c *CPU) NewSolverC64(spec Spec) (Solver[complex64], error) {
	return newCPUComplexSolver[complex64](c, spec)
}

// NewSolverC128 builds a complex128 CPU solver; use NewPlan instead.
func (c *CPU) NewSolverC128(spec Spec) (Solver[complex128], error) {
	return newCPUComplexSolver[complex128](c, spec)
}

// complexAlgorithm reports whether the CPU solves complex systems with
// alg: Auto, Thomas, GTSV and Partition.
func complexAlgorithm(alg Algorithm) bool {
	return alg == Auto || alg == Thomas || alg == GTSV || alg == Partition
}

// cpuComplexSolver solves complex batches on the CPU: Thomas (tri.ThomasC),
// GTSV (tri.GTSVC, pivoting by Cabs1), Auto's choice between them and
// Partition (partition.SolveC, chunks of partition.DefaultChunk(N) rows),
// in every layout, with constant coefficients and cyclic systems.
type cpuComplexSolver[T Complex] struct {
	spec    Spec
	workers []*cpuComplexWorker[T]
	chunk   int
	// Auto: the systems of the last solve, and how many of them GTSV
	// solved.
	solved, pivoted atomic.Int64
}

// cpuComplexWorker is one goroutine's workspace.
type cpuComplexWorker[T Complex] struct {
	a, b, c, d, x []T
	y, z, u       []T // cyclic: second right-hand side and its solution; Auto: d kept for the retry
	work          []T
	piv           *tri.PivotWork[T]
	part          *partition.WorkspaceC[T] // Partition
	pivoted       bool
}

func newCPUComplexSolver[T Complex](dev *CPU, spec Spec) (*cpuComplexSolver[T], error) {
	if !complexAlgorithm(spec.Algorithm) {
		return nil, fmt.Errorf("%w: %s does not solve complex systems on the CPU (complex plans take %s, %s, %s or %s)", ErrOptions, spec.Algorithm, Auto, Thomas, GTSV, Partition)
	}
	if spec.Algorithm == Auto && spec.Pivoting == PivotAlways {
		spec.Algorithm = GTSV
	}
	n := spec.N
	nw := min(dev.workers, spec.G)
	var zero T
	if err := memguard.Check(fmt.Sprintf("tridiag: the %s workspace of %d workers for N=%d (%s)", typeName(zero), nw, n, spec.Algorithm),
		memguard.Bytes(int(sizeOf(zero)), nw, workerElems(GTSV, n, 0))); err != nil {
		return nil, err
	}
	ws := make([]*cpuComplexWorker[T], nw)
	for i := range ws {
		buf := make([]T, 9*n)
		w := &cpuComplexWorker[T]{piv: tri.NewPivotWork[T](n)}
		w.a, w.b, w.c, w.d, w.x = buf[:n], buf[n:2*n], buf[2*n:3*n], buf[3*n:4*n], buf[4*n:5*n]
		w.y, w.z, w.u, w.work = buf[5*n:6*n], buf[6*n:7*n], buf[7*n:8*n], buf[8*n:]
		if spec.Algorithm == Partition {
			w.part = partition.NewWorkspaceC[T](n)
		}
		ws[i] = w
	}
	rowBytes := 5 * int(sizeOf(zero))
	chunk := max(1, dev.cache/(rowBytes*n))
	chunk = max(1, min(chunk, spec.G/(4*nw)))
	return &cpuComplexSolver[T]{spec: spec, workers: ws, chunk: chunk}, nil
}

// Describe names the algorithm (Auto resolved) and, for Auto after a
// solve, how many systems of the last solve GTSV solved.
func (s *cpuComplexSolver[T]) Describe() string {
	return cpuDescription(s.spec, s.solved.Load(), s.pivoted.Load())
}

func (s *cpuComplexSolver[T]) Close() error {
	s.workers = nil
	return nil
}

func (s *cpuComplexSolver[T]) Solve(ctx context.Context, bt Batch[T]) error {
	G := s.spec.G
	fails := make([][]SystemError, len(s.workers))
	var pivoted atomic.Int64
	forEachSystem(ctx, len(s.workers), s.chunk, G, func(t, g int) {
		w := s.workers[t]
		w.pivoted = false
		err := s.solveSystem(w, bt, g)
		if w.pivoted {
			pivoted.Add(1)
		}
		if err != nil {
			fails[t] = append(fails[t], SystemError{System: g, Row: rowOf(err), Err: err})
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

// solveSystem solves system g of the batch with worker w's scratch, as
// cpuSolver.solveSystem does.
func (s *cpuComplexSolver[T]) solveSystem(w *cpuComplexWorker[T], bt Batch[T], g int) error {
	n, l := s.spec.N, s.spec.Layout
	var a, b, c, d, x []T
	direct := l.IsContiguous(n) && !bt.Constant && !s.spec.Cyclic
	if direct {
		o := g * n
		a, b, c, d, x = bt.A[o:o+n], bt.B[o:o+n], bt.C[o:o+n], bt.D[o:o+n], bt.X[o:o+n]
	} else {
		a, b, c, d, x = w.a, w.b, w.c, w.d, w.x
		for i := 0; i < n; i++ {
			k := l.Index(i, g)
			if bt.Constant {
				a[i], b[i], c[i] = bt.ConstA, bt.ConstB, bt.ConstC
			} else {
				a[i], b[i], c[i] = bt.A[k], bt.B[k], bt.C[k]
			}
			d[i] = bt.D[k]
		}
	}
	var err error
	if s.spec.Cyclic {
		err = s.solveCyclic(w, a, b, c, d, x)
	} else {
		err = s.solveOne(w, a, b, c, d, x)
	}
	if err == nil {
		for i, v := range x {
			if !tri.FiniteC(v) {
				err = &PivotError{Row: i, Err: ErrNonFiniteResult}
				break
			}
		}
	}
	if err != nil {
		nan := T(complex(math.NaN(), math.NaN()))
		for i := range x {
			x[i] = nan
		}
	}
	if !direct {
		for i := 0; i < n; i++ {
			bt.X[l.Index(i, g)] = x[i]
		}
	}
	return err
}

// solveOne solves one contiguous non-cyclic system. x may alias d.
func (s *cpuComplexSolver[T]) solveOne(w *cpuComplexWorker[T], a, b, c, d, x []T) error {
	switch s.spec.Algorithm {
	case Thomas:
		return tri.ThomasC(a, b, c, d, x, w.work)
	case GTSV:
		return tri.GTSVC(a, b, c, d, x, w.piv)
	case Partition:
		return partition.SolveC(a, b, c, d, x, partition.DefaultChunk(len(b)), w.part)
	}
	// Auto: Thomas where its pivot growth test (in Cabs1) passes, GTSV
	// elsewhere; PivotNever: Thomas wherever no pivot is zero.
	if &x[0] == &d[0] {
		copy(w.y, d)
		d = w.y
	}
	var err error
	if s.spec.Pivoting == PivotNever {
		err = tri.ThomasC(a, b, c, d, x, w.work)
	} else {
		err = tri.ThomasBoundedC(a, b, c, d, x, w.work)
	}
	if err == nil {
		return nil
	}
	w.pivoted = true
	return tri.GTSVC(a, b, c, d, x, w.piv)
}

// solveCyclic solves one periodic complex system by the Sherman–Morrison
// formula, with the splitting of cpuSolver.solveCyclic (γ = −b[0], or
// −1 when b[0] = 0). a, b, c and d are the worker's copies.
func (s *cpuComplexSolver[T]) solveCyclic(w *cpuComplexWorker[T], a, b, c, d, x []T) error {
	n := len(b)
	switch n {
	case 1:
		p := a[0] + b[0] + c[0]
		if p == 0 {
			return &PivotError{Row: 0, Err: ErrSingular}
		}
		x[0] = d[0] / p
		return nil
	case 2:
		c[0] += a[0]
		a[1] += c[1]
		a[0], c[1] = 0, 0
		return s.solveOne(w, a, b, c, d, x)
	}
	// solveOne's Auto keeps d in w.y for an in-place solve only; y is not
	// d here, so it is free.
	return shermanMorrison(a, b, c, d, x, w.u, w.y, w.z, func(rhs, sol []T) error {
		return s.solveOne(w, a, b, c, rhs, sol)
	})
}
