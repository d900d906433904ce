//go:build cuda

package cuda

import (
	"errors"
	"fmt"

	"github.com/bandsolve/bandsolve/tridiag"
)

// autoPreference lists the algorithms Auto would like for a spec, best
// first; the first whose kernels accept the spec is used.
func autoPreference(d *Device, spec tridiag.Spec) []tridiag.Algorithm {
	// One thread per system is right when there are enough systems to
	// fill the GPU and they are interleaved (coalesced).
	if spec.Layout.IsInterleaved(spec.G) && spec.G >= 8*d.props.SMs*32 {
		return []tridiag.Algorithm{tridiag.Thomas}
	}
	return []tridiag.Algorithm{tridiag.Partition, tridiag.PCR, tridiag.TPR, tridiag.Thomas}
}

// buildKernelPlan resolves Auto and builds the algorithm's kernel plan.
func buildKernelPlan(d *Device, spec tridiag.Spec, f64 bool) (tridiag.Algorithm, kernelPlan, error) {
	algs := []tridiag.Algorithm{spec.Algorithm}
	if spec.Algorithm == tridiag.Auto {
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
