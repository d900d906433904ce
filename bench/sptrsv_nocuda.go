//go:build !cuda

package bench

// runTrsvGPU is not built without the cuda tag; openGPU refuses first.
func runTrsvGPU(g gpuBackend, tc *trsvCase, prec string, warmup, reps int, peer bool) []TrsvResult {
	r := tc.result("gpu", prec)
	r.Err = errNoGPU.Error()
	return []TrsvResult{r}
}
