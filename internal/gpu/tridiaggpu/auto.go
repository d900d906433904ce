//go:build cuda

package tridiaggpu

import (
	"errors"
	"fmt"

	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/tridiag"
	"github.com/bandsolve/bandsolve/tuning"
)

// autoPreference lists the algorithms Auto would like for a spec, best
// first; the first whose kernels accept the spec is used.
func autoPreference(d *gpu, spec tridiag.Spec) []tridiag.Algorithm {
	// The partition kernel stages systems through shared memory with
	// coalesced loads in any layout. On an H100 with 2^24-row batches (go
	// test -tags cuda -run '^$' -bench '^BenchmarkBatch$'
	// ./internal/gpu/tridiaggpu) it beats one thread per system (Thomas)
	// in the interleaved layout too, at
	// every N from 64 to 4096 (e.g. N = 256: 58% against 21% of the limit
	// in FP32). Thomas stays the fallback for systems larger than shared
	// memory when there are enough of them to fill the GPU.
	if spec.Layout.IsInterleaved(spec.G) && spec.G >= 8*d.props.SMs*32 {
		return []tridiag.Algorithm{tridiag.Partition, tridiag.Thomas}
	}
	return []tridiag.Algorithm{tridiag.Partition, tridiag.PCR, tridiag.TPR, tridiag.Thomas}
}

// buildKernelPlan resolves Auto and builds the algorithm's kernel plan.
func buildKernelPlan(d *gpu, spec tridiag.Spec, f64 bool) (tridiag.Algorithm, kernelPlan, error) {
	algs := []tridiag.Algorithm{spec.Algorithm}
	if spec.Algorithm == tridiag.Auto {
		if kp, ok := latencyPlan(d, spec, f64); ok {
			return tridiag.Partition, kp, nil
		}
		algs = autoPreference(d, spec)
	}
	var errs []error
	for _, alg := range algs {
		mk, ok := algorithms[alg]
		if !ok {
			errs = append(errs, fmt.Errorf("%s has no GPU kernel", alg))
			continue
		}
		s := spec
		s.Algorithm = alg
		kp, err := mk(d, s, f64)
		if err == nil {
			return alg, kp, nil
		}
		errs = append(errs, fmt.Errorf("%s: %w", alg, err))
	}
	return 0, nil, fmt.Errorf("cuda: no GPU plan for N=%d G=%d: %w", spec.N, spec.G, errors.Join(errs...))
}

// latencyPlan is Auto's plan for a batch small enough to be latency-bound
// (tuning.LatencyChunk): the partition kernel, one block per system, with
// shorter chunks than the default 16 rows, so partition.Solve's results
// with that chunk, for general solves, and for constant ones but where
// tuning.LatencyConstChunk16 gives them the constant kernels of chunks of
// 16 (partition.Solve's results with chunks of 16,
// partitionPlan.chunk16). ok is false
// where the rule keeps the usual plan, Options.SegmentRows asks for
// segments, or the kernel does not take the batch; then Auto goes on as
// usual.
func latencyPlan(d *gpu, spec tridiag.Spec, f64 bool) (kernelPlan, bool) {
	if d.cfg.noLatencyChunks || spec.SegmentRows > 0 {
		return nil, false
	}
	l := spec.Layout
	p := tuning.LatencyChunk(d.props, spec.N, reductionElem(f64), spec.G, l.BatchStride < l.ElemStride, l.BatchStride == 1)
	if p == 0 {
		return nil, false
	}
	pp, err := newSharedPartitionPlan(d, spec, f64, p)
	if err != nil {
		return nil, false
	}
	pp.latency = true
	if tuning.LatencyConstChunk16(d.props, spec.N, spec.G) {
		// Constant solves, which read d alone, keep the constant kernels
		// of chunks of 16 here (where that plan has them).
		if p16, err := newSharedPartitionPlan(d, spec, f64, 16); err == nil {
			if _, _, _, _, ok := p16.constLaunch(); ok {
				pp.chunk16 = p16
			}
		}
	}
	return pp, true
}

// AutoAlgorithm returns the algorithm a plan with Options.Algorithm = Auto
// would run for shape on d (the first of the preferred algorithms whose
// kernels accept the shape), without allocating anything.
func AutoAlgorithm[T tridiag.Float](d *cuda.Device, shape tridiag.Shape, opts tridiag.Options) (tridiag.Algorithm, error) {
	if d == nil {
		return 0, fmt.Errorf("%w: a GPU plan needs a device (nil *cuda.Device)", tridiag.ErrOptions)
	}
	if err := shape.Validate(); err != nil {
		return 0, err
	}
	opts.Algorithm = tridiag.Auto
	alg, _, err := buildKernelPlan(newGPU(d, config{}), tridiag.Spec{Shape: shape.Normalize(), Options: opts}, elemSize[T]() == 8)
	return alg, err
}
