//go:build cuda

package gpuclock

import (
	"fmt"
	"os"
	"testing"

	"github.com/bandsolve/bandsolve/cuda"
)

// dev is the GPU the tests run on, clk its clock.
var (
	dev *cuda.Device
	clk *Clock
)

func TestMain(m *testing.M) {
	var err error
	dev, err = cuda.Open(0)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gpuclock tests need a GPU:", err)
		os.Exit(1)
	}
	if clk, err = New(dev); err != nil {
		fmt.Fprintln(os.Stderr, err)
		_ = dev.Close()
		os.Exit(1)
	}
	fmt.Fprintln(os.Stderr, "testing on", dev.Name())
	code := m.Run()
	_ = clk.Close()
	_ = dev.Close()
	os.Exit(code)
}
