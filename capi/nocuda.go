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

// solveBandedDevice refuses: the CPU variant has no GPU solvers.
func solveBandedDevice(ordinal int, f64 bool, s bandShape, p bandPointers) error {
	return fmt.Errorf("%w: device pointers in the CPU variant of libbandsolve (build it with -tags cuda, or solve host arrays with bandsolve_solve_banded)", errUnsupported)
}
