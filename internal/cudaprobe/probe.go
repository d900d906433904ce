//go:build cuda

package cudaprobe

/*
#cgo LDFLAGS: -ldl
#include "probe.h"
*/
import "C"

// The outcomes of probe.h are the Go ones: uint(a−b) + uint(b−a) is a
// constant overflow unless a = b.
const (
	_ = uint(int(C.BANDSOLVE_CUDA_OK)-int(OK)) + uint(int(OK)-int(C.BANDSOLVE_CUDA_OK))
	_ = uint(int(C.BANDSOLVE_CUDA_NO_LIBRARY)-int(NoLibrary)) + uint(int(NoLibrary)-int(C.BANDSOLVE_CUDA_NO_LIBRARY))
	_ = uint(int(C.BANDSOLVE_CUDA_NO_SYMBOL)-int(NoSymbol)) + uint(int(NoSymbol)-int(C.BANDSOLVE_CUDA_NO_SYMBOL))
	_ = uint(int(C.BANDSOLVE_CUDA_INIT)-int(InitError)) + uint(int(InitError)-int(C.BANDSOLVE_CUDA_INIT))
	_ = uint(int(C.BANDSOLVE_CUDA_COUNT)-int(CountFailed)) + uint(int(CountFailed)-int(C.BANDSOLVE_CUDA_COUNT))
	_ = uint(int(C.BANDSOLVE_CUDA_NO_DEVICE)-int(NoDevice)) + uint(int(NoDevice)-int(C.BANDSOLVE_CUDA_NO_DEVICE))
)

// Err returns nil when the driver loads, initializes and has a device,
// else an *Error naming what is missing (no driver library, cuInit failed
// with code X, no device). It reads what the probe recorded before the
// program started; it never ends the process.
func Err() error {
	var code C.int
	var what *C.char
	out := Outcome(C.bandsolve_cuda_probe(&code, &what))
	if out == OK {
		return nil
	}
	return &Error{Outcome: out, Code: int(code), What: C.GoString(what)}
}
