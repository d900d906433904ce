//go:build !cuda

package bench

import "errors"

// gpuBuiltIn reports whether the binary was built with the cuda tag.
const gpuBuiltIn = false

// errNoGPU is what -device cuda gets in a binary built without the tag.
var errNoGPU = errors.New("GPU not built in (build with -tags cuda)")

func openGPU(ordinal int, copyBytes int64, cusparsePath string) (gpuBackend, error) {
	return nil, errNoGPU
}
