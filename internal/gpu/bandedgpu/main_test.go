//go:build cuda

package bandedgpu

import (
	"fmt"
	"os"
	"testing"

	"github.com/bandsolve/bandsolve/cuda"
)

var dev *cuda.Device

func TestMain(m *testing.M) {
	var err error
	dev, err = cuda.Open(0)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bandedgpu tests need a GPU:", err)
		os.Exit(1)
	}
	Register()
	fmt.Fprintln(os.Stderr, "testing on", dev.Name())
	code := m.Run()
	_ = dev.Close()
	os.Exit(code)
}
