//go:build !cuda

package main

import (
	"fmt"

	"github.com/bandsolve/bandsolve/tridiag"
)

// availableDevices lists the devices of this build.
func availableDevices() []string { return []string{"cpu"} }

// openDevice opens "cpu"; this build has no CUDA.
func openDevice(name string) (tridiag.Device, func(), error) {
	if name != "cpu" {
		return nil, nil, fmt.Errorf("device %q: this build has only the cpu (build with -tags cuda for cuda)", name)
	}
	return tridiag.DefaultCPU(), func() {}, nil
}
