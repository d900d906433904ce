//go:build cuda

package main

import (
	"fmt"
	"io"

	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/gpu"
	"github.com/bandsolve/bandsolve/internal/gpu/kernels"
	"github.com/bandsolve/bandsolve/tridiag"
	"github.com/bandsolve/bandsolve/tuning"
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
		writeTuning(w, d)
		_ = d.Close()
	}
	return nil
}

// writeTuning prints what the device's tuning chose: the largest systems
// the shared-memory kernels hold, and the algorithm Auto picks (with its
// launch) for a few typical shapes.
func writeTuning(w io.Writer, d *cuda.Device) {
	p := d.Properties()
	fmt.Fprintf(w, "  tuning:  largest N in one block: partition %d (f32) / %d (f64), pcr %d / %d, cr %d / %d; larger systems use tpr\n",
		tuning.PartitionMaxN(p, 4, 0, false), tuning.PartitionMaxN(p, 8, 0, false),
		tuning.PCRMaxN(p, 4), tuning.PCRMaxN(p, 8), tuning.CRMaxN(p, 4), tuning.CRMaxN(p, 8))
	shapes := []tridiag.Shape{
		{N: 256, G: 65536}, {N: 4096, G: 4096}, {N: 65536, G: 256},
		{N: 1 << 20, G: 1}, {N: 256, G: 65536, Layout: tridiag.Interleaved(65536)},
	}
	for _, sh := range shapes {
		for _, prec := range []string{"f32", "f64"} {
			var alg tridiag.Algorithm
			var err error
			if prec == "f32" {
				alg, err = gpu.AutoAlgorithm[float32](d, sh, tridiag.Options{})
			} else {
				alg, err = gpu.AutoAlgorithm[float64](d, sh, tridiag.Options{})
			}
			layout := "contiguous"
			if sh.Layout.IsInterleaved(sh.G) {
				layout = "interleaved"
			}
			if err != nil {
				fmt.Fprintf(w, "           auto %s N=%d G=%d %s: %v\n", prec, sh.N, sh.G, layout, err)
				continue
			}
			fmt.Fprintf(w, "           auto %s N=%d G=%d %s: %s\n", prec, sh.N, sh.G, layout, alg)
		}
	}
	// The partition plans, with the registers the driver reports.
	writeRoutes(w, p, func(k kernels.Kernel) int {
		r, err := d.KernelRegs(k.Name())
		if err != nil {
			return -1
		}
		return r
	})
}
