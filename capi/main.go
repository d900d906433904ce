// Command capi is libbandsolve, bandsolve's C interface: built with
//
//	go build -buildmode=c-shared -o libbandsolve.so ./capi
//
// (add -tags cuda for the CUDA variant), it exports the functions that
// bandsolve.h, in this folder, declares and documents. Use that header:
// the one go build writes beside the library has Go's types.
//
// Every exported function converts Go errors to a bandsolve_status and
// keeps the error text in thread-local storage of the C caller's thread
// (bandsolve_last_error), and converts a Go panic into
// BANDSOLVE_ERR_INTERNAL rather than ending the host process.
package main

/*
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

// The calling thread's last error and last returned text: Go exports run
// on the thread of their C caller, so thread-local C storage is per
// caller thread.
static __thread char *bs_err;
static __thread char *bs_text;

// bs_set takes ownership of s (malloc'd, may be NULL) as the slot's text.
static void bs_set(int slot, char *s) {
	char **p = slot == 0 ? &bs_err : &bs_text;
	free(*p);
	*p = s;
}

static const char *bs_get(int slot) {
	const char *s = slot == 0 ? bs_err : bs_text;
	return s != NULL ? s : "";
}
*/
import "C"

import (
	"errors"
	"fmt"
	"runtime/debug"

	"github.com/bandsolve/bandsolve/banded"
	"github.com/bandsolve/bandsolve/tridiag"
)

// apiVersion is BANDSOLVE_API_VERSION of bandsolve.h.
const apiVersion = 1

// The status codes of bandsolve.h.
const (
	statusOK          = 0
	statusArgument    = 1
	statusNonFinite   = 2
	statusSystems     = 3
	statusUnsupported = 4
	statusMemory      = 5
	statusDevice      = 6
	statusInternal    = 7
)

// infoNotSolved is the info value of every system when a call fails
// before solving.
const infoNotSolved = -2

var (
	// errUnsupported reports a function this variant or device lacks.
	errUnsupported = errors.New("not supported")
	// errArgument reports a bad argument the Go packages do not check
	// (null handles, unknown enum values).
	errArgument = errors.New("bad argument")
	// errDevice marks CUDA driver errors (the cuda variant wraps them).
	errDevice = errors.New("CUDA error")
)

var versionText = C.CString(fmt.Sprintf("bandsolve %d (%s)", apiVersion, variant))

func main() {}

//export bandsolve_version
func bandsolve_version() *C.char { return versionText }

//export bandsolve_api_version
func bandsolve_api_version() C.int { return apiVersion }

//export bandsolve_has_cuda
func bandsolve_has_cuda() C.int {
	if variant == "cuda" {
		return 1
	}
	return 0
}

//export bandsolve_last_error
func bandsolve_last_error() *C.char { return C.bs_get(0) }

// setText keeps s as the calling thread's returned text and returns it.
func setText(s string) *C.char {
	C.bs_set(1, C.CString(s))
	return C.bs_get(1)
}

// statusOf maps an error to its status code.
func statusOf(err error) int {
	var be *tridiag.BatchError
	switch {
	case err == nil:
		return statusOK
	case errors.As(err, &be):
		return statusSystems
	case errors.Is(err, tridiag.ErrNonFinite), errors.Is(err, banded.ErrNonFinite):
		return statusNonFinite
	case errors.Is(err, tridiag.ErrMemory):
		return statusMemory
	case errors.Is(err, errUnsupported):
		return statusUnsupported
	case errors.Is(err, errDevice):
		return statusDevice
	case errors.Is(err, errArgument), errors.Is(err, tridiag.ErrShape), errors.Is(err, tridiag.ErrLength),
		errors.Is(err, tridiag.ErrOptions), errors.Is(err, tridiag.ErrClosed),
		errors.Is(err, banded.ErrShape), errors.Is(err, banded.ErrOption):
		return statusArgument
	}
	return statusInternal
}

// finish records err as the calling thread's last error ("" for nil),
// fills info (g entries, may be nil) and returns the status.
func finish(fn string, err error, info *C.int32_t, g int) C.int {
	fillInfo(info, g, err)
	if err == nil {
		C.bs_set(0, nil)
		return statusOK
	}
	C.bs_set(0, C.CString(fn+": "+err.Error()))
	return C.int(statusOf(err))
}

// fillInfo writes the per-system status of bandsolve.h to info.
func fillInfo(info *C.int32_t, g int, err error) {
	if info == nil || g <= 0 {
		return
	}
	out := cSlice[int32](info, g)
	var be *tridiag.BatchError
	switch {
	case err == nil:
		clear(out)
	case errors.As(err, &be):
		clear(out)
		for i, s := range be.Status() {
			if i < g {
				out[i] = int32(s)
			}
		}
	default:
		for i := range out {
			out[i] = infoNotSolved
		}
	}
}

// guard turns a panic of an exported function into
// BANDSOLVE_ERR_INTERNAL with the panic and its stack as the error text.
func guard(fn string, st *C.int, info *C.int32_t, g *int) {
	if r := recover(); r != nil {
		*st = finish(fn, fmt.Errorf("internal error: %v\n%s", r, debug.Stack()), info, *g)
		*st = statusInternal
	}
}
