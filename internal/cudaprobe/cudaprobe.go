// Package cudaprobe finds out, before any Go code runs, whether the CUDA
// driver can be used: it loads libcuda.so.1 with dlopen, calls cuInit(0)
// and cuDeviceGetCount from a C constructor, and records what failed. The
// CUDA bindings (gorgonia.org/cu) initialize the driver in their package
// init and end the process with a message of their own when that fails;
// the probe lets a command say instead, in one line, what is missing and
// which build to use, and lets other code ask.
//
// Err returns the result to Go code. C code (a command's own constructor,
// an interop layer) includes probe.h: bandsolve_cuda_probe returns the
// result, and bandsolve_cuda_require prints the line and exits, which only
// a command should do.
//
// The probe is built with -tags cuda (it needs cgo, but no CUDA headers:
// the driver is loaded with dlopen); without the tag Err reports that the
// binary has no CUDA support.
package cudaprobe

import (
	"errors"
	"fmt"
)

// ErrUnavailable is wrapped by the error of Err.
var ErrUnavailable = errors.New("CUDA is not available")

// Outcome is what the probe found.
type Outcome int

// The outcomes of the probe (the values of probe.h).
const (
	OK          Outcome = 0  // a device is usable
	NoLibrary   Outcome = 1  // libcuda.so.1 cannot be loaded: no driver
	NoSymbol    Outcome = 2  // libcuda.so.1 lacks cuInit or cuDeviceGetCount
	InitError   Outcome = 3  // cuInit(0) failed
	CountFailed Outcome = 4  // cuDeviceGetCount failed
	NoDevice    Outcome = 5  // the driver counts no device
	NotBuilt    Outcome = -1 // the binary is built without -tags cuda
)

// Error is a failed probe. It wraps ErrUnavailable.
type Error struct {
	Outcome Outcome
	Code    int    // the CUDA result code of the failed call (0 if none)
	What    string // what is missing, as a sentence fragment
}

// Error returns "CUDA is not available: <what>".
func (e *Error) Error() string { return fmt.Sprintf("%v: %s", ErrUnavailable, e.What) }

// Unwrap returns ErrUnavailable.
func (e *Error) Unwrap() error { return ErrUnavailable }
