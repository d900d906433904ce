//go:build cuda

package splinegpu

import (
	"testing"

	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/internal/gpu/gputest"
	"github.com/bandsolve/bandsolve/internal/gpu/tridiaggpu"
)

// dev is the GPU of the tests.
var dev *cuda.Device

func TestMain(m *testing.M) {
	dev = gputest.Open("splinegpu")
	Register()
	// The fits of the pipeline benchmark solve on the GPU's tridiagonal
	// plans.
	tridiaggpu.Register()
	gputest.Run(m, dev)
}
