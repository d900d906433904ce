//go:build cuda

package bench

import (
	"fmt"
	"time"

	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/internal/gpu/sptrsvgpu"
	"github.com/bandsolve/bandsolve/sptrsv"
)

// firstSpsv is the time of the first SpSV analysis of the process (it
// holds the library's start-up), reported apart.
var firstSpsv time.Duration

// runTrsvGPU times this module's GPU plans (Auto, level sets,
// synchronization-free) and, with peer, cuSPARSE SpSV on one triangle in
// precision prec.
func runTrsvGPU(g gpuBackend, tc *trsvCase, prec string, warmup, reps int, peer bool) []TrsvResult {
	be := g.(*cudaBackend)
	if prec == "f32" {
		return trsvGPU[float32](be, tc, prec, warmup, reps, peer)
	}
	return trsvGPU[float64](be, tc, prec, warmup, reps, peer)
}

func trsvGPU[T sptrsvgpu.Float](be *cudaBackend, tc *trsvCase, prec string, warmup, reps int, peer bool) []TrsvResult {
	a := tc.c.Build()
	b := make([]T, len(tc.b))
	for i, v := range tc.b {
		b[i] = T(v)
	}
	db, err := cuda.Upload(be.dev, b)
	if err != nil {
		r := tc.result("gpu", prec)
		r.Err = err.Error()
		return []TrsvResult{r}
	}
	defer func() { _ = db.Free() }()
	dx, err := cuda.Alloc[T](be.dev, len(b))
	if err != nil {
		r := tc.result("gpu", prec)
		r.Err = err.Error()
		return []TrsvResult{r}
	}
	defer func() { _ = dx.Free() }()
	x := make([]T, len(b))
	var out []TrsvResult
	for _, opts := range []sptrsvgpu.Options{{Algorithm: sptrsv.Auto}, {Algorithm: sptrsv.LevelSet}, {Algorithm: sptrsv.SyncFree},
		{Algorithm: sptrsv.SyncFreeCSR, Lanes: 1}, {Algorithm: sptrsv.SyncFreeCSR, Lanes: 32}, {Algorithm: sptrsv.LocalityAware}} {
		alg := opts.Algorithm
		r := tc.result("gpu:"+alg.String(), prec)
		if opts.Lanes != 0 {
			r.Solver += fmt.Sprintf("/lanes=%d", opts.Lanes)
		}
		fail := func(err error) { r.Err = err.Error(); out = append(out, r) }
		p, err := sptrsvgpu.NewPlan[T](be.dev, a, sptrsv.Options{}, opts)
		if err != nil {
			fail(err)
			continue
		}
		if alg == sptrsv.Auto {
			r.Solver += "(" + p.Algorithm().String() + ")"
		}
		var ans []time.Duration
		for range max(1, min(reps, 5)) {
			start := time.Now()
			if err = p.Analyze(); err != nil {
				break
			}
			ans = append(ans, time.Since(start))
		}
		if err != nil {
			_ = p.Close()
			fail(err)
			continue
		}
		r.Analysis, _, _ = summarize(ans)
		var times []time.Duration
		err = be.dev.Do(func() error {
			var e error
			times, e = cuda.TimeEvents(p.Stream(), warmup, reps, nil, func() error { return p.Enqueue(p.Stream(), db.Ptr(), dx.Ptr()) }, nil)
			return e
		})
		if err == nil {
			err = dx.CopyTo(x)
		}
		r.Launches = p.Launches()
		_ = p.Close()
		if err != nil {
			fail(err)
			continue
		}
		r.Solve, r.SolveLo, r.SolveHi = summarize(times)
		r.RelErr = relErrOf(x, tc.ref)
		out = append(out, r)
	}
	if peer {
		out = append(out, spsvRun[T](be, tc, a.RowPtr, a.Col, a.Val, prec, db, dx, warmup, reps))
	}
	return out
}

// spsvRun times cuSPARSE SpSV on the triangle (lower, non-unit).
func spsvRun[T sptrsvgpu.Float](be *cudaBackend, tc *trsvCase, rowPtr, col []int32, val []float64, prec string,
	db, dx *cuda.Buffer[T], warmup, reps int) TrsvResult {
	r := tc.result("cusparse:SpSV", prec)
	if be.peer == nil {
		r.Err = be.peerErr.Error()
		return r
	}
	vals := make([]T, len(val))
	for i, v := range val {
		vals[i] = T(v)
	}
	drp, err := cuda.Upload(be.dev, rowPtr)
	if err != nil {
		r.Err = err.Error()
		return r
	}
	defer func() { _ = drp.Free() }()
	dcol, err := cuda.Upload(be.dev, col)
	if err != nil {
		r.Err = err.Error()
		return r
	}
	defer func() { _ = dcol.Free() }()
	dval, err := cuda.Upload(be.dev, vals)
	if err != nil {
		r.Err = err.Error()
		return r
	}
	defer func() { _ = dval.Free() }()
	var zero T
	_, f64 := any(zero).(float64)
	s, err := be.peer.newSpsv(f64, len(rowPtr)-1, len(col), drp.Ptr(), dcol.Ptr(), dval.Ptr(), db.Ptr(), dx.Ptr(), false, false)
	if err != nil {
		r.Err = err.Error()
		return r
	}
	defer s.close()
	if firstSpsv == 0 {
		if firstSpsv, err = s.analyse(); err != nil {
			r.Err = err.Error()
			return r
		}
		r.First = firstSpsv
	}
	var ans []time.Duration
	for range max(1, min(reps, 5)) {
		t, err := s.analyse()
		if err != nil {
			r.Err = err.Error()
			return r
		}
		ans = append(ans, t)
	}
	r.Analysis, _, _ = summarize(ans)
	times, err := s.time(warmup, reps)
	if err != nil {
		r.Err = err.Error()
		return r
	}
	r.Solve, r.SolveLo, r.SolveHi = summarize(times)
	r.Launches = 0
	x := make([]T, len(tc.b))
	if err := dx.CopyTo(x); err != nil {
		r.Err = err.Error()
		return r
	}
	r.RelErr = relErrOf(x, tc.ref)
	return r
}
