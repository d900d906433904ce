//go:build cuda

package main

import (
	"fmt"

	"github.com/bandsolve/bandsolve/cuda"
	_ "github.com/bandsolve/bandsolve/gpu" // registers the GPU solvers
	"github.com/bandsolve/bandsolve/tridiag"
)

// availableDevices lists the devices of this build.
func availableDevices() []string { return []string{"cpu", "cuda"} }

// openDevice opens "cpu" or "cuda" (the first GPU). A spline.Fitter on the
// GPU copies each batch's coefficients and values to the device and the
// moments back.
func openDevice(name string) (tridiag.Device, func(), error) {
	switch name {
	case "cpu":
		return tridiag.DefaultCPU(), func() {}, nil
	case "cuda":
		d, err := cuda.Open(0)
		if err != nil {
			return nil, nil, err
		}
		return d, func() { _ = d.Close() }, nil
	}
	return nil, nil, fmt.Errorf("device %q: want cpu or cuda", name)
}
