//go:build cuda

package spikegpu

import (
	"fmt"
	"math"
	"os"
	"testing"

	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/internal/gpu/bandedgpu"
	"github.com/bandsolve/bandsolve/tridiag"
)

var dev *cuda.Device

func TestMain(m *testing.M) {
	var err error
	dev, err = cuda.Open(0)
	if err != nil {
		fmt.Fprintln(os.Stderr, "spikegpu tests need a GPU:", err)
		os.Exit(1)
	}
	Register()
	fmt.Fprintln(os.Stderr, "testing on", dev.Name())
	code := m.Run()
	_ = dev.Close()
	os.Exit(code)
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
