//go:build !cuda

package main

import (
	"fmt"
	"io"

	"github.com/bandsolve/bandsolve/tridiag"
)

// cudaBuilt reports whether this binary can use CUDA devices.
const cudaBuilt = false

// openDevice returns the device called name ("cpu" or "cpu:WORKERS"; this
// build has no CUDA) and a function that releases it.
func openDevice(name string) (tridiag.Device, func(), error) {
	kind, n, err := parseDeviceName(name)
	if err != nil {
		return nil, nil, err
	}
	if kind == "cuda" {
		return nil, nil, fmt.Errorf("device %q: CUDA support is not built into this binary (rebuild with -tags cuda); use -device cpu", name)
	}
	return cpuDevice(n), func() {}, nil
}

// listGPUs says that this build has no CUDA support.
func listGPUs(w io.Writer) error {
	_, err := fmt.Fprintln(w, "CUDA: not built in (build with -tags cuda)")
	return err
}
