//go:build cuda

package main

import (
	"fmt"
	"io"

	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/tridiag"
)

// cudaBuilt reports whether this binary can use CUDA devices.
const cudaBuilt = true

// openDevice returns the device called name ("cpu", "cpu:WORKERS", "cuda"
// for the first GPU or "cuda:N") and a function that releases it.
func openDevice(name string) (tridiag.Device, func(), error) {
	kind, n, err := parseDeviceName(name)
	if err != nil {
		return nil, nil, err
	}
	if kind == "cpu" {
		return cpuDevice(n), func() {}, nil
	}
	d, err := cuda.Open(n)
	if err != nil {
		return nil, nil, fmt.Errorf("device %q: %w", name, err)
	}
	return d, func() { _ = d.Close() }, nil
}

// listGPUs describes every CUDA device.
func listGPUs(w io.Writer) error {
	n, err := cuda.Count()
	if err != nil {
		return fmt.Errorf("CUDA: counting devices: %w", err)
	}
	if n == 0 {
		_, err := fmt.Fprintln(w, "CUDA: no devices")
		return err
	}
	fmt.Fprintf(w, "CUDA: %d device(s)\n", n)
	for i := range n {
		d, err := cuda.Open(i)
		if err != nil {
			fmt.Fprintf(w, "cuda:%d  cannot open: %v\n", i, err)
			continue
		}
		free, total, memErr := d.MemInfo()
		writeGPU(w, i, d.Properties(), free, total, memErr)
		_ = d.Close()
	}
	return nil
}
