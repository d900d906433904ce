//go:build cuda

package main

// Before anything else runs, the CUDA build makes sure the driver has a
// GPU: gorgonia.org/cu initializes the driver in its package init and
// ends the process with a message of its own when that fails, so the
// check is a C constructor, which runs before any Go init. Without a GPU
// the command prints one line, saying what is missing and which build to
// use, and exits with status 1 (package cudaprobe records the cause;
// library code asks it instead of exiting).

/*
#include "../../internal/cudaprobe/probe.h"

__attribute__((constructor)) static void bandsolve_require_cuda(void) {
	bandsolve_cuda_require("bandsolve", "use the CPU build (go build ./cmd/bandsolve)");
}
*/
import "C"

import (
	// The probe's C code, which the constructor calls.
	_ "github.com/bandsolve/bandsolve/internal/cudaprobe"
)
