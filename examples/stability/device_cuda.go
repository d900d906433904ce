//go:build cuda

package main

import (
	"fmt"

	"github.com/bandsolve/bandsolve/cuda"
	_ "github.com/bandsolve/bandsolve/gpu" // registers the GPU solvers
	"github.com/bandsolve/bandsolve/tridiag"
)

const devicesHelp = "cpu or cuda"

// testDevice is the device the tests run on: the GPU in this build.
const testDevice = "cuda"

// openDevice opens "cpu" or "cuda" (the first GPU).
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
