//go:build cuda

package tridiaggpu

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/tridiag"
)

// deviceBuffers copies host arrays to new device buffers.
func deviceBuffers[T tridiag.Float](t *testing.T, arrays ...[]T) []*cuda.Buffer[T] {
	t.Helper()
	bufs := make([]*cuda.Buffer[T], len(arrays))
	for i, a := range arrays {
		b, err := cuda.Alloc[T](dev, len(a))
		require.NoError(t, err)
		require.NoError(t, b.CopyFrom(a))
		bufs[i] = b
		t.Cleanup(func() { _ = b.Free() })
	}
	return bufs
}

// TestCheckOnDevice: with Options.Check, a device-buffer solve measures
// every system's backward error on the device. On tridiag(1, 1e−8, 1)
// solved without pivoting (the partition method) the systems fail the
// check, each with the backward error the host's tridiag.Plan.Check finds
// for the same x (to rounding); an in-place solve is checked against its
// d as it was; a dominant batch passes.
func TestCheckOnDevice(t *testing.T) {
	const n, g = 512, 7
	shape := tridiag.Shape{N: n, G: g}
	opts := tridiag.Options{Algorithm: tridiag.Partition, Check: true}
	r := rand.New(rand.NewPCG(3, 4))
	a, b, c, d := make([]float64, n*g), make([]float64, n*g), make([]float64, n*g), make([]float64, n*g)
	for i := range b {
		a[i], b[i], c[i], d[i] = 1, 1e-8, 1, r.Float64()*2-1
	}
	p, err := newPlan[float64](dev, shape, opts, config{})
	require.NoError(t, err)
	defer p.Close()
	bufs := deviceBuffers(t, a, b, c, d, make([]float64, n*g))
	err = p.SolveDevice(context.Background(), bufs[0], bufs[1], bufs[2], bufs[3], bufs[4])
	var be *tridiag.BatchError
	require.ErrorAs(t, err, &be)
	require.ErrorIs(t, err, tridiag.ErrInaccurate)
	x := make([]float64, n*g)
	require.NoError(t, bufs[4].CopyTo(x))
	host, err := tridiag.NewPlan[float64](nil, shape, tridiag.Options{Algorithm: tridiag.GTSV})
	require.NoError(t, err)
	defer host.Close()
	st, _ := host.Check(a, b, c, d, x)
	require.NotEmpty(t, be.Failed)
	for _, f := range be.Failed {
		assert.InEpsilon(t, st[f.System].BackwardError, f.Status.BackwardError, 1e-6, "system %d", f.System)
		assert.NotZero(t, f.Status.Flags&tridiag.BackwardErrorTooLarge, "system %d", f.System)
	}

	// A dominant batch in place (x = d): the check sees d as it was.
	for i := range b {
		a[i], b[i], c[i] = r.Float64()-0.5, 4+r.Float64(), r.Float64()-0.5
	}
	bufs = deviceBuffers(t, a, b, c, d)
	require.NoError(t, p.SolveDevice(context.Background(), bufs[0], bufs[1], bufs[2], bufs[3], bufs[3]))
}

// TestCheckOnDeviceConstCyclic: constant coefficients and periodic
// systems. tridiag(1, 1e−8, 1) without pivoting fails the check; a
// dominant periodic system passes it, which needs the corners a_0 and
// c_{n−1} in the residual (without them rows 0 and n−1 would leave a
// residual of order x). The check measures the backward error alone: a
// singular periodic system whose computed x is huge can pass it (its
// backward error is small), which tridiag.Plan.Check's κ̂ catches.
func TestCheckOnDeviceConstCyclic(t *testing.T) {
	const n, g = 256, 5
	shape := tridiag.Shape{N: n, G: g}
	d := make([]float64, n*g)
	for i := range d {
		d[i] = math.Sin(float64(i))
	}
	p, err := newPlan[float64](dev, shape, tridiag.Options{Algorithm: tridiag.Partition, Check: true}, config{})
	require.NoError(t, err)
	defer p.Close()
	bufs := deviceBuffers(t, d, make([]float64, n*g))
	err = p.SolveDeviceConst(context.Background(), 1, 1e-8, 1, bufs[0], bufs[1])
	var be *tridiag.BatchError
	require.ErrorAs(t, err, &be)
	require.ErrorIs(t, err, tridiag.ErrInaccurate)

	pc, err := newPlan[float64](dev, shape, tridiag.Options{Cyclic: true, Check: true}, config{})
	require.NoError(t, err)
	defer pc.Close()
	require.NoError(t, pc.SolveDeviceConst(context.Background(), -1, 4, -1.5, bufs[0], bufs[1]))
	// The same solve without the corners in the check would fail: the
	// solution of the periodic system against the open one differs at
	// the ends by far more than the tolerance.
	po, err := newPlan[float64](dev, shape, tridiag.Options{}, config{})
	require.NoError(t, err)
	defer po.Close()
	xo := deviceBuffers(t, make([]float64, n*g))[0]
	require.NoError(t, po.SolveDeviceConst(context.Background(), -1, 4, -1.5, bufs[0], xo))
	x, y := make([]float64, n*g), make([]float64, n*g)
	require.NoError(t, bufs[1].CopyTo(x))
	require.NoError(t, xo.CopyTo(y))
	assert.Greater(t, math.Abs(x[0]-y[0]), 1e-3)
}
