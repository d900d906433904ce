//go:build cuda

package tridiaggpu

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/tridiag"
)

// deviceBuffers copies host arrays to new device buffers.
func deviceBuffers[T tridiag.Float](t testing.TB, arrays ...[]T) []*cuda.Buffer[T] {
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

// condSystems fills system g of a batch of shape with one of five kinds,
// by g: dominant; random and not dominant (the estimate's factorization
// pivots); the (−1, 2, −1) Laplacian (singular when periodic); a zero
// diagonal in every other row; and a badly scaled dominant system.
func condSystems[T tridiag.Float](shape tridiag.Shape, r *rand.Rand) (a, b, c, d []T) {
	size := shape.Len()
	a, b, c, d = make([]T, size), make([]T, size), make([]T, size), make([]T, size)
	u := func() float64 { return 2*r.Float64() - 1 }
	for g := 0; g < shape.G; g++ {
		for i := 0; i < shape.N; i++ {
			j := shape.Layout.Index(i, g)
			var ai, bi, ci float64
			switch g % 5 {
			case 0:
				ai, bi, ci = u(), 3+u(), u()
			case 1:
				ai, bi, ci = u(), u(), u()
			case 2:
				ai, bi, ci = -1, 2, -1
			case 3:
				ai, bi, ci = 1+u(), float64(i%2)*u(), 1+u()
			case 4:
				s := math.Pow(10, float64(6*(i%3)))
				ai, bi, ci = s*u(), s*(3+u()), s*u()
			}
			a[j], b[j], c[j], d[j] = T(ai), T(bi), T(ci), T(u())
		}
	}
	return a, b, c, d
}

// TestCondOnDevice: the device check's condition estimate κ̂ and singular
// flag equal the host check's (tridiag.Plan.Check on the same x) bit for
// bit, and its backward error to rounding: both precisions, systems of
// 1, 2, 3, 37 and 300 rows, contiguous, interleaved and strided batches
// with gaps, periodic or not, variable and constant coefficients, the
// workspace split into chunks of 5 systems. A tolerance of 1e−300 makes
// every system fail the backward error check, so that the error lists
// every status.
func TestCondOnDevice(t *testing.T) {
	t.Run("f32", func(t *testing.T) { testCondOnDevice[float32](t) })
	t.Run("f64", func(t *testing.T) { testCondOnDevice[float64](t) })
}

func testCondOnDevice[T tridiag.Float](t *testing.T) {
	const G = 133
	r := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{1, 2, 3, 37, 300} {
		layouts := map[string]tridiag.Layout{
			"contiguous":  tridiag.Contiguous(n),
			"interleaved": tridiag.Interleaved(G),
			"strided":     tridiag.Strided(2, 2*n+3),
		}
		for lname, layout := range layouts {
			for _, cyclic := range []bool{false, true} {
				for _, constant := range []bool{false, true} {
					name := fmt.Sprintf("n=%d/%s/cyclic=%t/const=%t", n, lname, cyclic, constant)
					shape := tridiag.Shape{N: n, G: G, Layout: layout}
					opts := tridiag.Options{Algorithm: tridiag.GTSV, Cyclic: cyclic, Check: true, Tol: 1e-300}
					p, err := newPlan[T](dev, shape, opts, config{condOnDevice: true, condWorkBytes: 5 * condRowBytes * n})
					require.NoError(t, err, name)
					a, b, c, d := condSystems[T](shape, r)
					x := make([]T, len(d))
					bufs := deviceBuffers(t, a, b, c, d, x)
					ca, cb, cc := T(-1), T(2), T(-1)
					if n%2 == 0 {
						ca, cb, cc = 1, 0.25, 1
					}
					if constant {
						err = p.SolveDeviceConst(context.Background(), ca, cb, cc, bufs[3], bufs[4])
					} else {
						err = p.SolveDevice(context.Background(), bufs[0], bufs[1], bufs[2], bufs[3], bufs[4])
					}
					require.NoError(t, p.Close())
					if err == nil && n == 1 {
						continue // one-row systems solved exactly: η = 0 passes any tolerance
					}
					var be *tridiag.BatchError
					require.ErrorAs(t, err, &be, name)
					require.NoError(t, bufs[4].CopyTo(x))
					host, err := tridiag.NewPlan[T](nil, shape, tridiag.Options{Cyclic: cyclic, Tol: 1e-300})
					require.NoError(t, err)
					var st []tridiag.Status
					if constant {
						st, _ = host.CheckConst(ca, cb, cc, d, x)
					} else {
						st, _ = host.Check(a, b, c, d, x)
					}
					require.NoError(t, host.Close())
					seen := 0
					for _, f := range be.Failed {
						g, want := f.System, st[f.System]
						got := f.Status
						require.Equal(t, math.Float64bits(want.Cond), math.Float64bits(got.Cond), "%s system %d: κ̂ %g, host %g", name, g, got.Cond, want.Cond)
						require.Equal(t, want.Flags&tridiag.Singular, got.Flags&tridiag.Singular, "%s system %d", name, g)
						if !math.IsInf(want.BackwardError, 0) {
							// To rounding: the device sums a row's terms in another order.
							require.InDelta(t, want.BackwardError, got.BackwardError, 1e-6*want.BackwardError+4*tridiag.Epsilon[T](), "%s system %d", name, g)
						} else {
							require.True(t, math.IsInf(got.BackwardError, 1), "%s system %d", name, g)
						}
						seen++
					}
					// Systems solved exactly (η = 0) pass even this tolerance,
					// as systems of one or two rows often are.
					if n > 2 {
						assert.Greater(t, seen, G/2, name)
					}
				}
			}
		}
	}
}

// TestCondOnDeviceSingularPeriodic: the singular periodic Laplacian,
// whose computed x is huge with a small backward error, fails the device
// check by its condition estimate, on the device's path and the host's.
func TestCondOnDeviceSingularPeriodic(t *testing.T) {
	for _, onHost := range []bool{false, true} {
		const n, G = 64, 9
		shape := tridiag.Shape{N: n, G: G}
		p, err := newPlan[float64](dev, shape, tridiag.Options{Cyclic: true, Check: true}, config{condOnHost: onHost, condOnDevice: !onHost})
		require.NoError(t, err)
		d := make([]float64, n*G)
		for i := range d {
			d[i] = math.Sin(float64(i))
		}
		bufs := deviceBuffers(t, d, make([]float64, n*G))
		err = p.SolveDeviceConst(context.Background(), -1, 2, -1, bufs[0], bufs[1])
		require.NoError(t, p.Close())
		var be *tridiag.BatchError
		require.ErrorAs(t, err, &be, "on host %t", onHost)
		require.Len(t, be.Failed, G)
		for _, f := range be.Failed {
			assert.NotZero(t, f.Status.Flags&(tridiag.IllConditioned|tridiag.Singular), "system %d on host %t: %+v", f.System, onHost, f.Status)
		}
	}
}
