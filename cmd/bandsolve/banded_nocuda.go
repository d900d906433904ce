//go:build !cuda

package main

import (
	"context"
	"fmt"

	"github.com/bandsolve/bandsolve/spike"
)

// solveBandedCUDA reports that this build has no CUDA support.
func solveBandedCUDA(_ context.Context, idx int, _ *bandedProblem, _, _ string, _ spike.IterativeOptions, _ []float64, _ *bandedReport) error {
	return fmt.Errorf("device \"cuda:%d\": CUDA support is not built into this binary (rebuild with -tags cuda); use -device cpu", idx)
}
