//go:build cuda

package krylovgpu

import (
	"fmt"
	"os"
	"testing"

	"github.com/bandsolve/bandsolve/cuda"
)

// dev is the GPU of the tests.
var dev *cuda.Device

func TestMain(m *testing.M) {
	var err error
	dev, err = cuda.Open(0)
	if err != nil {
		fmt.Fprintln(os.Stderr, "krylovgpu tests need a GPU:", err)
		os.Exit(1)
	}
	fmt.Fprintln(os.Stderr, "testing on", dev.Name())
	Register()
	code := m.Run()
	_ = dev.Close()
	os.Exit(code)
}
