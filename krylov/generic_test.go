package krylov

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// devVec stands in for a device buffer: a handle the solver cannot index.
type devVec struct {
	data  []float64
	freed bool
}

// devSpace is a Space[*devVec] that counts allocations and Dots calls (the
// host round trips of a GPU implementation).
type devSpace struct {
	host        HostSpace
	live, dots  int
	allocs      int
	failNewFrom int // New fails from this allocation on (0: never)
}

func (s *devSpace) New() (*devVec, error) {
	s.allocs++
	if s.failNewFrom > 0 && s.allocs >= s.failNewFrom {
		return nil, errors.New("out of device memory")
	}
	v, err := s.host.New()
	s.live++
	return &devVec{data: v}, err
}

func (s *devSpace) Free(v *devVec) {
	if v.freed {
		panic("double free")
	}
	v.freed = true
	s.live--
}

func (s *devSpace) Copy(dst, src *devVec) error { return s.host.Copy(dst.data, src.data) }
func (s *devSpace) Zero(v *devVec) error        { return s.host.Zero(v.data) }
func (s *devSpace) Axpby(a float64, x *devVec, b float64, y *devVec) error {
	return s.host.Axpby(a, x.data, b, y.data)
}

func (s *devSpace) Dots(xs, ys []*devVec, out []float64) error {
	s.dots++
	hx, hy := make([][]float64, len(xs)), make([][]float64, len(ys))
	for i := range xs {
		hx[i] = xs[i].data
	}
	for i := range ys {
		hy[i] = ys[i].data
	}
	return s.host.Dots(hx, hy, out)
}

// devOp lifts a host operator to devVec.
type devOp struct{ a hostOp }

func (o devOp) Apply(ctx context.Context, x, y *devVec) error { return o.a.Apply(ctx, x.data, y.data) }

// The same generic code runs on a vector type that is only a handle, with
// the number of inner-product round trips the documentation promises, and
// frees every work vector on every path.
func TestGenericSpace(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	a := convDiff{m: 29, beta: 600}
	n := a.m * a.m
	b, xs := rhsFor(rng, a, n)

	// Same iterates as on the host.
	xh, rh, err := solveHost(t, a, nil, b, Options{})
	require.NoError(t, err)
	sp := &devSpace{host: HostSpace{N: n}}
	x := &devVec{data: make([]float64, n)}
	res, err := BiCGStab2(context.Background(), sp, devOp{a}, nil, &devVec{data: b}, x, Options{})
	require.NoError(t, err)
	assert.True(t, res.Converged)
	assert.Equal(t, rh.Iterations, res.Iterations)
	assert.Equal(t, xh, x.data)
	assert.Less(t, relErr(x.data, xs), 1e-7)
	assert.Zero(t, sp.live, "all work vectors freed")
	assert.Equal(t, 8, sp.allocs)

	// Round trips: 3 at the start (‖b‖, ‖b − A·x₀‖, ‖r̂₀‖), 2 per step, 1 per
	// MR part, 1 per true-residual check and up to 2 more per residual
	// replacement.
	k := res.Iterations
	checks := res.OperatorApplies - 1 - 2*k
	lo := 3 + 2*k + k/2 + checks
	t.Logf("%d steps, %d checks, %d Dots calls", k, checks, sp.dots)
	assert.GreaterOrEqual(t, sp.dots, lo)
	assert.LessOrEqual(t, sp.dots, lo+2*checks)
	assert.Less(t, sp.dots, 3*k, "about 2.5 round trips per step")

	// Error paths free what they allocated.
	boom := errors.New("boom")
	calls := 0
	failing := OperatorFunc[*devVec](func(ctx context.Context, x, y *devVec) error {
		if calls++; calls == 7 {
			return boom
		}
		return a.Apply(ctx, x.data, y.data)
	})
	sp = &devSpace{host: HostSpace{N: n}}
	_, err = BiCGStab2(context.Background(), sp, failing, nil, &devVec{data: b}, &devVec{data: make([]float64, n)}, Options{})
	require.ErrorIs(t, err, boom)
	assert.Zero(t, sp.live)

	sp = &devSpace{host: HostSpace{N: n}, failNewFrom: 5}
	_, err = BiCGStab2(context.Background(), sp, devOp{a}, nil, &devVec{data: b}, &devVec{data: make([]float64, n)}, Options{})
	require.ErrorContains(t, err, "out of device memory")
	assert.Zero(t, sp.live)
}
