//go:build !cuda

package main

import (
	"fmt"

	"github.com/bandsolve/bandsolve/tridiag"
)

// device is where the example runs: the CPU (and, built with -tags cuda,
// a GPU; see device_cuda.go).
type device struct {
	name   string
	dev    tridiag.Device // solves host arrays (the 3D stepper)
	note3D string         // said before the tables, when not empty
	close  func()
}

// availableDevices lists the devices of this build.
func availableDevices() []string { return []string{"cpu"} }

// openDevice opens "cpu"; this build has no CUDA.
func openDevice(name string) (*device, error) {
	if name != "cpu" {
		return nil, fmt.Errorf("device %q: this build has only the cpu (build with -tags cuda for cuda)", name)
	}
	cpu := tridiag.DefaultCPU()
	return &device{name: cpu.Name(), dev: cpu, close: func() {}}, nil
}

// newPR makes the 2D Peaceman–Rachford stepper of grid g on device d.
func newPR[T tridiag.Float](d *device, g grid) (stepper, error) {
	return newHostPR[T](d.dev, g)
}

// newDouglas makes the 3D Douglas stepper of grid g on device d.
func newDouglas[T tridiag.Float](d *device, g grid) (stepper, error) {
	return newHostDouglas[T](d.dev, g)
}
