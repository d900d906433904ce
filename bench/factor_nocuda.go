//go:build !cuda

package bench

// runFactorGPU is not built without the cuda tag; openGPU refuses first.
func runFactorGPU(g gpuBackend, c FactorCase, prec string, warmup, reps int, peer bool, seed uint64) []FactorResult {
	return []FactorResult{{Case: c, Precision: prec, Solver: "gpu", Err: errNoGPU.Error()}}
}
