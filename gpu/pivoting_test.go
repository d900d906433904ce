//go:build cuda

package gpu_test

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/gpu"
	"github.com/bandsolve/bandsolve/tridiag"
)

// On a GPU, PivotAlways runs the partition method with partial pivoting:
// on tridiag(1, 1e−8, 1), where the non-pivoting default loses digits,
// the GPU's answer is the CPU GTSV's to rounding, and the plan says what
// it runs.
func TestPivotAlwaysOnGPU(t *testing.T) {
	dev, err := gpu.Open(0)
	require.NoError(t, err)
	defer dev.Close()
	const n, g = 512, 37
	a, b, c, d := make([]float64, n*g), make([]float64, n*g), make([]float64, n*g), make([]float64, n*g)
	for i := range b {
		a[i], b[i], c[i], d[i] = 1, 1e-8, 1, float64(i%7)-3
	}
	solve := func(dev tridiag.Device, opts tridiag.Options) ([]float64, string) {
		p, err := tridiag.NewPlan[float64](dev, tridiag.Shape{N: n, G: g}, opts)
		require.NoError(t, err)
		defer p.Close()
		x := make([]float64, n*g)
		require.NoError(t, p.Solve(context.Background(), a, b, c, d, x))
		return x, p.Describe()
	}
	ref, _ := solve(tridiag.DefaultCPU(), tridiag.Options{Algorithm: tridiag.GTSV})
	got, desc := solve(dev, tridiag.Options{Pivoting: tridiag.PivotAlways})
	assert.Contains(t, desc, "partial pivoting")
	var diff, norm float64
	for i := range ref {
		diff = math.Max(diff, math.Abs(got[i]-ref[i]))
		norm = math.Max(norm, math.Abs(ref[i]))
	}
	assert.LessOrEqual(t, diff/norm, 1e-13, "GPU partition with pivoting against CPU GTSV")
}
