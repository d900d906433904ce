package tridiag

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/klauspost/cpuid/v2"

	"github.com/bandsolve/bandsolve/internal/memguard"

	"github.com/bandsolve/bandsolve/tridiag/cr"
	"github.com/bandsolve/bandsolve/tridiag/internal/tri"
	"github.com/bandsolve/bandsolve/tridiag/partition"
	"github.com/bandsolve/bandsolve/tridiag/pcr"
	"github.com/bandsolve/bandsolve/tridiag/pivotpart"
	"github.com/bandsolve/bandsolve/tridiag/tpr"
	"github.com/bandsolve/bandsolve/tridiag/wangmou"
)

// CPU is the pure-Go device: it solves the systems of a batch in parallel
// on a pool of goroutines, one system per goroutine at a time, in chunks
// of systems sized to the CPU's L2 cache.
type CPU struct {
	workers int
	cache   int // bytes of L2 per core used to size chunks
}

// NewCPU returns a CPU device with the given number of worker goroutines
// (0 or less: one per logical core, runtime.GOMAXPROCS(0)).
func NewCPU(workers int) *CPU {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	l2 := cpuid.CPU.Cache.L2
	if l2 <= 0 {
		l2 = 1 << 20
	}
	return &CPU{workers: workers, cache: l2}
}

var defaultCPU = sync.OnceValue(func() *CPU { return NewCPU(0) })

// DefaultCPU returns the shared CPU device with one worker per core.
func DefaultCPU() *CPU { return defaultCPU() }

// Name describes the device.
func (c *CPU) Name() string {
	return fmt.Sprintf("cpu (%s, %d workers)", cpuid.CPU.BrandName, c.workers)
}

// Workers returns the number of worker goroutines.
func (c *CPU) Workers() int { return c.workers }

// NewSolver32 builds a float32 CPU solver; use NewPlan instead.
func (c *CPU) NewSolver32(spec Spec) (Solver[float32], error) { return newCPUSolver[float32](c, spec) }

// NewSolver64 builds a float64 CPU solver; use NewPlan instead.
func (c *CPU) NewSolver64(spec Spec) (Solver[float64], error) { return newCPUSolver[float64](c, spec) }

type cpuSolver[T Float] struct {
	spec    Spec
	workers []*cpuWorker[T]
	chunk   int // systems per task
	// Auto: the systems of the last solve, and how many of them GTSV
	// solved (solved is 0 before the first solve).
	solved, pivoted atomic.Int64
}

// cpuWorker is one goroutine's workspace: gathered copies of a system and
// the algorithm's scratch space.
type cpuWorker[T Float] struct {
	a, b, c, d, x []T
	y, z, u       []T // cyclic: second right-hand side and its solution
	work          []T
	piv           *tri.PivotWork[T]
	cr            *cr.Workspace[T]
	pcr           *pcr.Workspace[T]
	wm            *wangmou.Workspace[T]
	tpr           *tpr.Workspace[T]
	part          *partition.Workspace[T]
	pp            *pivotpart.Workspace[T]
	pt            []T            // LDLT: the pivots and multipliers of one system
	fac           *sysFactors[T] // Plan.SolveMany: one system's factors
	slice         int
	chunk         int  // Partition's rows per chunk, PartitionPivot's per partition
	pivoted       bool // Auto: GTSV solved the current system
}

func newCPUSolver[T Float](dev *CPU, spec Spec) (*cpuSolver[T], error) {
	if spec.Algorithm == Auto && spec.Pivoting == PivotAlways {
		spec.Algorithm = GTSV // the CPU's pivoting solver
	}
	n := spec.N
	s := spec.SliceSize
	if spec.Algorithm == TPR && s == 0 {
		s = tpr.DefaultSliceSize(n)
	}
	nw := min(dev.workers, spec.G)
	var zero T
	if err := memguard.Check(fmt.Sprintf("tridiag: the %s workspace of %d workers for N=%d (%s)", typeName(zero), nw, n, spec.Algorithm),
		memguard.Bytes(int(sizeOf(zero)), nw, workerElems(spec.Algorithm, n, s))); err != nil {
		return nil, err
	}
	ws := make([]*cpuWorker[T], nw)
	for i := range ws {
		w := &cpuWorker[T]{slice: s}
		buf := make([]T, 9*n)
		w.a, w.b, w.c, w.d, w.x = buf[:n], buf[n:2*n], buf[2*n:3*n], buf[3*n:4*n], buf[4*n:5*n]
		w.y, w.z, w.u, w.work = buf[5*n:6*n], buf[6*n:7*n], buf[7*n:8*n], buf[8*n:]
		switch spec.Algorithm {
		case Auto, GTSV:
			w.piv = tri.NewPivotWork[T](n)
		case CR:
			w.cr = cr.NewWorkspace[T](n)
		case PCR:
			w.pcr = pcr.NewWorkspace[T](n)
		case WangMou:
			w.wm = wangmou.NewWorkspace[T](n)
		case TPR:
			w.tpr = tpr.NewWorkspace[T](n, s)
		case Partition:
			w.part, w.chunk = partition.NewWorkspace[T](n), partition.DefaultChunk(n)
		case PartitionPivot:
			w.chunk = pivotpart.DefaultRows(n)
			w.pp = pivotpart.NewWorkspace[T](n, w.chunk)
		case LDLT:
			w.pt = make([]T, 2*n)
		}
		ws[i] = w
	}
	rowBytes := 5 * int(sizeOf(zero))
	chunk := max(1, dev.cache/(rowBytes*n))
	// Keep every worker busy: at least 4 tasks per worker when G allows.
	chunk = max(1, min(chunk, spec.G/(4*nw)))
	return &cpuSolver[T]{spec: spec, workers: ws, chunk: chunk}, nil
}

// workerElems bounds the elements one worker allocates for systems of n
// rows: the gathered copies of a system (9n) and the algorithm's
// workspace. It saturates instead of overflowing.
func workerElems(alg Algorithm, n, slice int) int {
	const big = math.MaxInt / 64
	if n > big {
		return math.MaxInt
	}
	var w int
	switch alg {
	case Auto, GTSV:
		w = 4 * n
	case CR:
		w = 8 * n
	case PCR:
		w = 9 * n
	case WangMou:
		p := 1
		for p < n {
			p *= 2
		}
		w = 24 * p // two levels of triads, 12 values a padded row
	case TPR:
		w = 6*n + 4*max(slice, 2)
	case Partition:
		w = 13 * n
	case PartitionPivot:
		w = pivotpart.WorkspaceLen(n, pivotpart.DefaultRows(n))
	case LDLT:
		w = 2 * n
	}
	return 9*n + w
}

func typeName[T Scalar](T) string {
	switch any(*new(T)).(type) {
	case float32:
		return "float32"
	case complex64:
		return "complex64"
	case complex128:
		return "complex128"
	}
	return "float64"
}

func sizeOf[T Scalar](v T) uintptr {
	switch any(v).(type) {
	case float32:
		return 4
	case complex128:
		return 16
	}
	return 8
}

// What a CPU plan with Auto runs, by Options.Pivoting (PivotAlways
// reaches the CPU as GTSV).
const (
	cpuAutoDescription  = "thomas, gtsv for the systems that fail its pivot growth test or break down"
	cpuNeverDescription = "thomas, gtsv for the systems where thomas breaks down"
)

// Describe names the algorithm the solver runs (Auto resolved) and, for
// Auto after a solve, how many systems of the last solve GTSV solved.
func (s *cpuSolver[T]) Describe() string {
	return cpuDescription(s.spec, s.solved.Load(), s.pivoted.Load())
}

// cpuDescription is the Describe of a CPU solver of spec whose last solve
// had solved systems, pivoted of them by GTSV (Auto).
func cpuDescription(spec Spec, solved, pivoted int64) string {
	if spec.Algorithm != Auto {
		return spec.Algorithm.String()
	}
	d := cpuAutoDescription
	if spec.Pivoting == PivotNever {
		d = cpuNeverDescription
	}
	if solved > 0 {
		d += fmt.Sprintf("; last solve: gtsv for %d of %d systems", pivoted, solved)
	}
	return d
}

func (s *cpuSolver[T]) Close() error {
	s.workers = nil
	return nil
}

func (s *cpuSolver[T]) Solve(ctx context.Context, bt Batch[T]) error {
	G := s.spec.G
	tasks := (G + s.chunk - 1) / s.chunk
	var next atomic.Int64
	var mu sync.Mutex
	var failed []SystemError
	var wg sync.WaitGroup
	var pivoted atomic.Int64
	for _, w := range s.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				t := int(next.Add(1)) - 1
				if t >= tasks || ctx.Err() != nil {
					return
				}
				for g := t * s.chunk; g < min(G, (t+1)*s.chunk); g++ {
					w.pivoted = false
					err := s.solveSystem(w, bt, g)
					if w.pivoted {
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
				}
			}
		}()
	}
	wg.Wait()
	if s.spec.Algorithm == Auto {
		s.pivoted.Store(pivoted.Load())
		s.solved.Store(int64(G))
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

// solveSystem solves system g of the batch with worker w's scratch.
func (s *cpuSolver[T]) solveSystem(w *cpuWorker[T], bt Batch[T], g int) error {
	n, l := s.spec.N, s.spec.Layout
	var a, b, c, d, x []T
	spd := s.spec.Algorithm == LDLT
	direct := l.IsContiguous(n) && !bt.Constant && !s.spec.Cyclic
	if direct {
		o := g * n
		b, c, d, x = bt.B[o:o+n], bt.C[o:o+n], bt.D[o:o+n], bt.X[o:o+n]
		if !spd {
			a = bt.A[o : o+n]
		}
	} else {
		a, b, c, d, x = w.a, w.b, w.c, w.d, w.x
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
			d[i] = bt.D[k]
		}
		if spd {
			symmetrize(a, c)
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
			if !finite(v) {
				err = &PivotError{Row: i, Err: ErrNonFiniteResult}
				break
			}
		}
	}
	if err != nil {
		nan := T(math.NaN())
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

// solveOne solves one contiguous non-cyclic system with the plan's
// algorithm. x may alias d.
func (s *cpuSolver[T]) solveOne(w *cpuWorker[T], a, b, c, d, x []T) error {
	switch s.spec.Algorithm {
	case Thomas:
		return tri.Thomas(a, b, c, d, x, w.work)
	case GTSV:
		return tri.GTSV(a, b, c, d, x, w.piv)
	case CR:
		return cr.Solve(a, b, c, d, x, w.cr)
	case PCR:
		return pcr.Solve(a, b, c, d, x, w.pcr)
	case WangMou:
		return wangmou.Solve(a, b, c, d, x, w.wm)
	case TPR:
		return tpr.Solve(a, b, c, d, x, w.slice, w.tpr)
	case Partition:
		return partition.Solve(a, b, c, d, x, w.chunk, w.part)
	case PartitionPivot:
		return pivotpart.Solve(a, b, c, d, x, w.chunk, w.pp)
	case LDLT:
		return tri.PTSV(b, c, d, x, w.pt)
	default:
		// Auto: Thomas where it is safe, GTSV elsewhere. PivotAuto takes
		// Thomas only where ThomasBounded's test, made in the same sweep,
		// proves it componentwise backward stable (|L|·|U| ≤ 5·|A|).
		// PivotNever takes it wherever no pivot is zero.
		// Cost of the test on dominant float32 batches: +1–2.5% over PivotNever (go test ./tridiag -run '^$' -bench CPUAutoDominant).
		if &x[0] == &d[0] {
			// Keep d for the retry.
			copy(w.y, d)
			d = w.y
		}
		var err error
		if s.spec.Pivoting == PivotNever {
			err = tri.Thomas(a, b, c, d, x, w.work)
		} else {
			err = tri.ThomasBounded(a, b, c, d, x, w.work)
		}
		if err == nil {
			return nil
		}
		w.pivoted = true
		return tri.GTSV(a, b, c, d, x, w.piv)
	}
}

// symmetrize sets the sub-diagonal of a symmetric system from its
// super-diagonal, as LDLT reads it: a[i] = c[i−1], and the corner a[0] =
// c[n−1] (used by cyclic plans only).
func symmetrize[T Float](a, c []T) {
	n := len(c)
	a[0] = c[n-1]
	copy(a[1:n], c[:n-1])
}
