//go:build !cuda

package main

import (
	"fmt"

	"github.com/bandsolve/bandsolve/tridiag"
)

const devicesHelp = "cpu (build with -tags cuda for cuda)"

// testDevice is the device the tests run on.
const testDevice = "cpu"

// openDevice opens "cpu"; this build has no CUDA.
func openDevice(name string) (tridiag.Device, func(), error) {
	if name != "cpu" {
		return nil, nil, fmt.Errorf("device %q: this build has only the cpu (build with -tags cuda for cuda)", name)
	}
	return tridiag.DefaultCPU(), func() {}, nil
}
