//go:build cuda

package gpuclock

import (
	"testing"

	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/internal/gpu/gputest"
)

// dev is the GPU the tests run on, clk its clock.
var (
	dev *cuda.Device
	clk *Clock
)

func TestMain(m *testing.M) {
	dev = gputest.Open("gpuclock")
	var err error
	if clk, err = New(dev); err != nil {
		gputest.Abort(dev, err)
	}
	gputest.Run(m, dev, clk)
}
