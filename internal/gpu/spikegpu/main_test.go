//go:build cuda

package spikegpu

import (
	"math"
	"testing"

	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/internal/gpu/bandedgpu"
	"github.com/bandsolve/bandsolve/internal/gpu/gputest"
	"github.com/bandsolve/bandsolve/tridiag"
)

// dev is the GPU of the tests.
var dev *cuda.Device

func TestMain(m *testing.M) {
	dev = gputest.Open("spikegpu")
	Register()
	gputest.Run(m, dev)
}

func bandEps[T tridiag.Float]() float64 {
	if bandedgpu.ElemSize[T]() == 8 {
		return 0x1p-52
	}
	return 0x1p-23
}

func f64bits[T tridiag.Float](v T) uint64 {
	if bandedgpu.ElemSize[T]() == 8 {
		return math.Float64bits(float64(v))
	}
	return uint64(math.Float32bits(float32(v)))
}
