//go:build cuda

package bench

import (
	"context"
	"time"

	"github.com/bandsolve/bandsolve/internal/gpu/tridiaggpu"
	"github.com/bandsolve/bandsolve/tridiag"
)

// runGPUComplexCase uploads a complex case once, times this module's
// complex plan (tridiaggpu.ComplexPlan, what gpu.NewComplexTridiagPlan
// makes) for every algorithm asked for, on the data resident in device
// memory, then the cuSPARSE complex peers that apply. Algorithms other
// than Auto, Thomas, GTSV and Partition (and Partition where a system does
// not fit a block, or the case is cyclic) come back "unsupported"; the
// partition solvers of -segment-rows are real only and not run.
func runGPUComplexCase[T tridiag.Complex](ctx context.Context, be *cudaBackend, h *hostData[T], gr gpuRun) []Result {
	c := h.cs
	var out []Result
	var names []string
	for _, a := range gr.algos {
		names = append(names, "gpu:"+a.String())
	}
	if gr.cusparse {
		names = append(names, cusparseNames(c)...)
	}
	fail := func(err error) []Result {
		for _, n := range names[len(out):] {
			out = append(out, Result{Case: c, Solver: n, Err: shortErr(err), Resid: -1})
		}
		return out
	}
	dd := &deviceData[T]{}
	defer dd.free()
	if err := dd.uploadCase(be.dev, h); err != nil {
		return fail(err)
	}
	check := checker(h, gr.check)
	for _, algo := range gr.algos {
		name := "gpu:" + algo.String()
		gr.progress(name)
		if err := ctx.Err(); err != nil {
			return fail(err)
		}
		p, err := tridiaggpu.NewComplexPlan[T](be.dev, c.Shape(), tridiag.Options{Algorithm: algo, SkipFiniteCheck: true})
		if err != nil {
			out = append(out, Result{Case: c, Solver: name, Err: "unsupported: " + shortErr(err), Resid: -1})
			continue
		}
		times, how, err := timeComplexPlan(ctx, be, p, h, dd, gr)
		r := newResult(c, name, times, be.bw)
		if algo == tridiag.Auto {
			r.Note = "auto → " + p.Describe()
		}
		r.Note = joinNote(r.Note, how)
		if err != nil {
			r.Err = shortErr(err)
		}
		check(&r, dd.x)
		_ = p.Close()
		out = append(out, r)
	}
	if gr.cusparse {
		out = append(out, runCusparse(be, h, dd, gr, check)...)
	}
	return out
}

// timeComplexPlan times the plan's solves of the case's device buffers
// gated with the backend's clock (x apart from d, so d needs no
// restoring).
func timeComplexPlan[T tridiag.Complex](ctx context.Context, be *cudaBackend, p *tridiaggpu.ComplexPlan[T], h *hostData[T], dd *deviceData[T], gr gpuRun) ([]time.Duration, string, error) {
	if h.cs.Constant {
		return be.timeGated(func() ([]time.Duration, error) {
			return p.TimeConst(ctx, be.timer(), h.ka, h.kb, h.kc, dd.d, dd.x, gr.warmup, gr.reps)
		})
	}
	return be.timeGated(func() ([]time.Duration, error) {
		return p.Time(ctx, be.timer(), dd.a, dd.b, dd.c, dd.d, dd.x, gr.warmup, gr.reps)
	})
}
