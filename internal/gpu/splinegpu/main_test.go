//go:build cuda

package splinegpu

import (
	"testing"

	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/internal/gpu/gputest"
)

// dev is the GPU of the tests.
var dev *cuda.Device

func TestMain(m *testing.M) {
	dev = gputest.Open("splinegpu")
	Register()
	gputest.Run(m, dev)
}
