package bench

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"time"

	"gonum.org/v1/gonum/lapack/gonum"

	"github.com/bandsolve/bandsolve/tridiag"
)

// timeHost times f reps times after warmup untimed calls, calling restore
// before each call outside the timed region. It stops at the first error
// and returns the times measured so far.
func timeHost(restore func(), f func() error, warmup, reps int) ([]time.Duration, error) {
	for i := 0; i < warmup; i++ {
		restore()
		if err := f(); err != nil {
			return nil, err
		}
	}
	times := make([]time.Duration, 0, reps)
	for i := 0; i < reps; i++ {
		restore()
		t0 := time.Now()
		err := f()
		times = append(times, time.Since(t0))
		if err != nil {
			return times, err
		}
	}
	return times, nil
}

// hostRun is what the host solvers of one case share.
type hostRun struct {
	warmup, reps int
	bandwidth    float64 // host copy bandwidth, bytes read+written per second
	check        bool
	progress     func(solver string)
}

// runCPUPlans times this module's CPU backend (tridiag.DefaultCPU) for
// each algorithm on the case; the solver names are "cpu:<algorithm>".
// Complex cases take Auto, Thomas and GTSV; the other algorithms come back
// "unsupported".
func runCPUPlans[T tridiag.Scalar](ctx context.Context, h *hostData[T], algos []tridiag.Algorithm, hr hostRun) []Result {
	c := h.cs
	var out []Result
	var x, d []T
	for _, algo := range algos {
		name := "cpu:" + algo.String()
		hr.progress(name)
		if err := ctx.Err(); err != nil {
			out = append(out, Result{Case: c, Solver: name, Err: err.Error(), Resid: -1})
			continue
		}
		p, err := tridiag.NewPlan[T](tridiag.DefaultCPU(), c.Shape(), tridiag.Options{Algorithm: algo, SkipFiniteCheck: true})
		if err != nil {
			out = append(out, Result{Case: c, Solver: name, Err: "unsupported: " + err.Error(), Resid: -1})
			continue
		}
		if x == nil {
			x, d = make([]T, c.Len()), make([]T, c.Len())
		}
		restore := func() { copy(d, h.d) }
		var solve func() error
		if c.Constant {
			solve = func() error { return p.SolveConst(ctx, h.ka, h.kb, h.kc, d, x) }
		} else {
			solve = func() error { return p.Solve(ctx, h.a, h.b, h.c, d, x) }
		}
		times, err := timeHost(restore, solve, hr.warmup, hr.reps)
		_ = p.Close()
		r := newResult(c, name, times, hr.bandwidth)
		if err != nil {
			r.Err = shortErr(err)
		}
		if hr.check && len(times) > 0 {
			r.Resid = h.backwardError(x)
		}
		out = append(out, r)
	}
	return out
}

// runGonum times gonum's LAPACK Dgtsv (partial pivoting) on each system
// of a float64 contiguous batch, the systems shared among GOMAXPROCS
// goroutines. Dgtsv overwrites its matrix, so a, b, c and d are restored
// before each repetition, outside the timed region.
func runGonum(ctx context.Context, h *hostData[float64], hr hostRun) Result {
	c := h.cs
	const name = "gonum:dgtsv"
	hr.progress(name)
	switch {
	case !c.systemsContiguous():
		return Result{Case: c, Solver: name, Err: "needs the contiguous layout", Resid: -1}
	case ctx.Err() != nil:
		return Result{Case: c, Solver: name, Err: ctx.Err().Error(), Resid: -1}
	}
	gs := newGonumSolver(h)
	times, err := timeHost(gs.restore, gs.solve, hr.warmup, hr.reps)
	r := newResult(c, name, times, hr.bandwidth)
	r.Note = fmt.Sprintf("%d goroutines", gs.workers)
	if err != nil {
		r.Err = shortErr(err)
	}
	if hr.check && len(times) > 0 {
		r.Resid = h.backwardError(gs.x)
	}
	return r
}

// gonumSolver holds Dgtsv's working copies of a contiguous float64
// batch.
type gonumSolver struct {
	h             *hostData[float64]
	dl, dd, du, x []float64
	workers       int
	impl          gonum.Implementation
}

func newGonumSolver(h *hostData[float64]) *gonumSolver {
	h.coeffs()
	n := h.cs.Len()
	return &gonumSolver{h: h, dl: make([]float64, n), dd: make([]float64, n), du: make([]float64, n),
		x: make([]float64, n), workers: min(runtime.GOMAXPROCS(0), h.cs.G)}
}

// restore copies the matrix and the right-hand side into the working
// arrays (Dgtsv overwrites them).
func (s *gonumSolver) restore() {
	copy(s.dl, s.h.a)
	copy(s.dd, s.h.b)
	copy(s.du, s.h.c)
	copy(s.x, s.h.d)
}

// solve runs Dgtsv on every system, the systems shared among the workers;
// the solutions end in s.x.
func (s *gonumSolver) solve() error {
	n, G := s.h.cs.N, s.h.cs.G
	var wg sync.WaitGroup
	var mu sync.Mutex
	failed := 0
	for w := 0; w < s.workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			bad := 0
			for g := w; g < G; g += s.workers {
				o := g * n
				if !s.impl.Dgtsv(n, 1, s.dl[o+1:o+n], s.dd[o:o+n], s.du[o:o+n-1], s.x[o:o+n], 1) {
					bad++
				}
			}
			mu.Lock()
			failed += bad
			mu.Unlock()
		}(w)
	}
	wg.Wait()
	if failed > 0 {
		return fmt.Errorf("%d of %d systems singular", failed, G)
	}
	return nil
}

// HostBandwidth measures the host's copy bandwidth (bytes read plus
// written per second) with a parallel copy of bytes, the median of reps.
func HostBandwidth(bytes int64, reps int) float64 {
	n := int(bytes / 8)
	if n < 1 || reps < 1 {
		return 0
	}
	src, dst := make([]float64, n), make([]float64, n)
	for i := range src {
		src[i] = float64(i)
	}
	workers := runtime.GOMAXPROCS(0)
	chunk := (n + workers - 1) / workers
	cp := func() {
		var wg sync.WaitGroup
		for lo := 0; lo < n; lo += chunk {
			hi := min(n, lo+chunk)
			wg.Add(1)
			go func() {
				defer wg.Done()
				copy(dst[lo:hi], src[lo:hi])
			}()
		}
		wg.Wait()
	}
	cp() // fault the pages in
	secs := make([]float64, reps)
	for i := range secs {
		t0 := time.Now()
		cp()
		secs[i] = time.Since(t0).Seconds()
	}
	return 2 * float64(n*8) / medianFloat(secs)
}

// shortErr keeps an error message to one line of reasonable length.
func shortErr(err error) string {
	s := err.Error()
	for i, r := range s {
		if r == '\n' {
			s = s[:i]
			break
		}
	}
	if r := []rune(s); len(r) > 160 {
		s = string(r[:157]) + "..."
	}
	return s
}
