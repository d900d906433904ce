//go:build !cuda

package main

import (
	"fmt"

	"github.com/bandsolve/bandsolve/tridiag"
)

// variant names the build in bandsolve_version.
const variant = "cpu"

// newGPUPlan refuses: the CPU variant has no GPU solvers.
func newGPUPlan(ordinal int, f64 bool, s tridiag.Shape, o tridiag.Options) (planImpl, error) {
	return nil, fmt.Errorf("%w: BANDSOLVE_DEVICE_CUDA in the CPU variant of libbandsolve (build it with -tags cuda)", errUnsupported)
}
