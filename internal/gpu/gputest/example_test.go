//go:build cuda

package gputest_test

import (
	"testing"

	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/internal/gpu/gputest"
)

// dev is the GPU of a package's tests.
var dev *cuda.Device

// A GPU package's TestMain: open the device (or fail without one), then
// run the tests and close it. The example has no output to check: it
// needs a GPU and ends the process, so it is compiled, not run.
func Example() {
	testMain := func(m *testing.M) {
		dev = gputest.Open("mypackage")
		gputest.Run(m, dev)
	}
	_ = testMain
}
