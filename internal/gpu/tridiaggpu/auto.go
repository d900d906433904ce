//go:build cuda

package tridiaggpu

import (
	"errors"
	"fmt"

	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/tridiag"
	"github.com/bandsolve/bandsolve/tuning/route"
)

// buildKernelPlan resolves Auto and builds the algorithm's kernel plan.
// The partition method's plan is the route of route.Partition, with
// Auto's rules (short chunks for latency-bound batches) where the spec
// asks for Auto.
func buildKernelPlan(d *gpu, spec tridiag.Spec, f64 bool) (tridiag.Algorithm, kernelPlan, error) {
	algs := []tridiag.Algorithm{spec.Algorithm}
	auto := spec.Algorithm == tridiag.Auto
	switch {
	case auto && spec.Pivoting == tridiag.PivotAlways:
		algs = pivotingOrder(spec)
	case auto:
		algs = route.AutoOrder(d.props, problemOf(spec, f64, true))
	}
	var errs []error
	for _, alg := range algs {
		s := spec
		s.Algorithm = alg
		var kp kernelPlan
		var err error
		if alg == tridiag.Partition {
			kp, err = d.routePlan(s, f64, auto, route.Options{})
		} else {
			mk, ok := algorithms[alg]
			if !ok {
				errs = append(errs, fmt.Errorf("%w: %s has no GPU kernel", tridiag.ErrOptions, alg))
				continue
			}
			kp, err = mk(d, s, f64)
		}
		if err == nil {
			return alg, kp, nil
		}
		errs = append(errs, fmt.Errorf("%s: %w", alg, err))
	}
	return 0, nil, fmt.Errorf("cuda: no GPU plan for N=%d G=%d: %w", spec.N, spec.G, errors.Join(errs...))
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

// pivotingOrder is the order Auto tries the pivoting algorithms in for
// PivotAlways. PartitionPivot (within 10× of GTSV's error on the
// stability suite, package pivotpart, "Accuracy") is the faster one but
// on large batches stored systems first, where GTSV's thread a system
// reads coalesced rows and fills the GPU. H100, bandsolve bench -device
// cuda -grid layouts -algorithms partition-pivot,gtsv, MRows/s:
// interleaved N = 256, G = 65536: FP32 GTSV 40 500 against 17 600, FP64
// 26 100 against 8 400; interleaved N = 4096, G = 4096: FP32 3 900
// against 6 500; contiguous N = 256, G = 65536: FP32 7 900 against
// 21 000.
func pivotingOrder(spec tridiag.Spec) []tridiag.Algorithm {
	l := spec.Layout
	if l.BatchStride < l.ElemStride && spec.G >= pivotGTSVMinBatch {
		return []tridiag.Algorithm{tridiag.GTSV, tridiag.PartitionPivot}
	}
	return []tridiag.Algorithm{tridiag.PartitionPivot, tridiag.GTSV}
}

// pivotGTSVMinBatch is the smallest batch, stored systems first, that
// PivotAlways gives to GTSV (see pivotingOrder).
const pivotGTSVMinBatch = 1 << 15
