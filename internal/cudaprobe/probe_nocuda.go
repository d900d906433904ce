//go:build !cuda

package cudaprobe

// Err reports that this binary is built without CUDA support.
func Err() error {
	return &Error{Outcome: NotBuilt, What: "this binary is built without -tags cuda"}
}
