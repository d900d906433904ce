//go:build !cuda

package main

import "fmt"

// iterateCUDA is the GPU path of the iterate command; this build has no
// CUDA.
func iterateCUDA(device string, st *iterateSetup, x []float64, rep *iterateReport) error {
	return fmt.Errorf("device %q: CUDA support is not built into this binary (rebuild with -tags cuda); use -device cpu", device)
}
