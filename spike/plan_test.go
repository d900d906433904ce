package spike_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/banded"
	"github.com/bandsolve/bandsolve/spike"
	"github.com/bandsolve/bandsolve/tridiag"
)

func bitsEqual(t *testing.T, want, got []float64, what string) {
	t.Helper()
	require.Len(t, got, len(want))
	for i := range want {
		if math.Float64bits(want[i]) != math.Float64bits(got[i]) {
			t.Fatalf("%s: x[%d] = %v, want %v", what, i, got[i], want[i])
		}
	}
}

// planMatrix is a random band with a zero pivot at the top of partition 1
// of P = 4 (boosted by default).
func planMatrix(n, k int, d float64, seed uint64) (*banded.Band[float64], []float64) {
	r := rand.New(rand.NewPCG(seed, 3))
	A := banded.Random[float64](n, k, d, r)
	b0 := spike.Partitions(n, 4)[1]
	A.Set(b0, b0, 0)
	b := make([]float64, n)
	for i := range b {
		b[i] = r.Float64()*2 - 1
	}
	return A, b
}

var planOptions = map[string]spike.Options{
	"default":      {Partitions: 4},
	"refine off":   {Partitions: 4, Refine: banded.RefineOptions{Mode: banded.RefineOff}},
	"refine all":   {Partitions: 4, Refine: banded.RefineOptions{Mode: banded.RefineAlways}},
	"ul block":     {Partitions: 4, ULBlock: 10},
	"block-jacobi": {Partitions: 4, Method: spike.BlockJacobi},
	"one":          {Partitions: 1},
}

// The CPU plan is Factor and Factorization.Solve.
func TestPlanCPU(t *testing.T) {
	ctx := context.Background()
	const n, k = 400, 4
	for name, opts := range planOptions {
		A, b := planMatrix(n, k, 1, 1)
		f, err := spike.Factor(A, opts)
		require.NoError(t, err, name)
		want := make([]float64, n)
		werr := f.Solve(b, want)
		p, err := spike.NewPlan[float64](nil, n, k, opts)
		require.NoError(t, err, name)
		assert.Equal(t, f.Bounds(), p.Bounds(), name)
		assert.Equal(t, [3]int{n, k, f.P()}, [3]int{p.N(), p.K(), p.P()}, name)
		assert.Equal(t, opts.Method, p.Method(), name)
		assert.ErrorIs(t, p.Solve(ctx, b, make([]float64, n)), spike.ErrNotFactored, name)
		require.NoError(t, p.Factor(ctx, A), name)
		assert.Equal(t, f.Boosts(), p.Boosts(), name)
		assert.Equal(t, f.BoostCount(), p.BoostCount(), name)
		assert.Equal(t, f.ReducedBoosts(), p.ReducedBoosts(), name)
		got := append([]float64(nil), b...)
		assert.Equal(t, werr, p.Solve(ctx, got, got), name) // in place
		bitsEqual(t, want, got, name)
		assert.Contains(t, p.Describe(), "SPIKE", name)
		require.NoError(t, p.Close())
		assert.ErrorIs(t, p.Solve(ctx, b, got), tridiag.ErrClosed)
		assert.ErrorIs(t, p.Factor(ctx, A), tridiag.ErrClosed)
	}
	// The default partitions are Factor's for the CPU's workers.
	cpu := tridiag.NewCPU(3)
	p, err := spike.NewPlan[float32](cpu, 100_000, 5, spike.Options{})
	require.NoError(t, err)
	assert.Equal(t, spike.Partitions(100_000, spike.ChoosePartitions(100_000, 5, 3)), p.Bounds())
	assert.Contains(t, p.Describe(), "3 workers")
	require.NoError(t, p.Close())
}

func TestPlanErrors(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		n, k int
		opts spike.Options
		want error
	}{
		{0, 0, spike.Options{}, banded.ErrShape},
		{100, 100, spike.Options{}, banded.ErrShape},
		{100, 5, spike.Options{Partitions: 11}, spike.ErrPartitions},
		{100, 5, spike.Options{Partitions: -1}, spike.ErrOption},
		{100, 5, spike.Options{ULBlock: 5}, spike.ErrOption},
		{100, 5, spike.Options{Method: 7}, spike.ErrOption},
		{100, 5, spike.Options{Workers: -2}, spike.ErrOption},
		{100, 5, spike.Options{Refine: banded.RefineOptions{Tol: -1}}, spike.ErrOption},
	} {
		_, err := spike.NewPlan[float64](nil, c.n, c.k, c.opts)
		assert.ErrorIs(t, err, c.want, "N=%d K=%d %+v", c.n, c.k, c.opts)
	}
	p, err := spike.NewPlan[float64](nil, 100, 3, spike.Options{Partitions: 4})
	require.NoError(t, err)
	defer p.Close()
	assert.ErrorIs(t, p.Factor(ctx, nil), banded.ErrShape)
	assert.ErrorIs(t, p.Factor(ctx, banded.Random[float64](101, 3, 1, rand.New(rand.NewPCG(1, 1)))), banded.ErrShape)
	A := banded.Random[float64](100, 3, 1, rand.New(rand.NewPCG(1, 1)))
	A.Set(50, 51, math.NaN())
	assert.ErrorIs(t, p.Factor(ctx, A), banded.ErrNonFinite)
	assert.ErrorIs(t, p.Solve(ctx, make([]float64, 100), make([]float64, 100)), spike.ErrNotFactored, "a failed Factor leaves no factorization")
	assert.Nil(t, p.Boosts())
	A.Set(50, 51, 0.5)
	require.NoError(t, p.Factor(ctx, A))
	assert.ErrorIs(t, p.Solve(ctx, make([]float64, 99), make([]float64, 100)), banded.ErrShape)
	b := make([]float64, 100)
	b[7] = math.Inf(1)
	assert.ErrorIs(t, p.Solve(ctx, b, make([]float64, 100)), banded.ErrNonFinite)
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	assert.ErrorIs(t, p.Solve(cctx, make([]float64, 100), make([]float64, 100)), context.Canceled)
}

type nowhere struct{}

func (nowhere) Name() string { return "nowhere:0" }

func TestPlanNoBackend(t *testing.T) {
	_, err := spike.NewPlan[float64](nowhere{}, 100, 2, spike.Options{})
	require.ErrorIs(t, err, spike.ErrOption)
	assert.Contains(t, err.Error(), "nowhere:0")
	assert.Contains(t, err.Error(), "-tags cuda")
}

// twinDev's backend is the CPU factorization without refinement, as a
// GPU's: the plan refines on the host.
type twinDev struct{}

func (twinDev) Name() string { return "twin:0" }

type twinBackend struct{}

func (twinBackend) NewSolver32(spec spike.Spec) (spike.Solver[float32], error) {
	return &twin[float32]{spec: spec}, nil
}

func (twinBackend) NewSolver64(spec spike.Spec) (spike.Solver[float64], error) {
	return &twin[float64]{spec: spec}, nil
}

type twin[T spike.Float] struct {
	spec spike.Spec
	f    *spike.Factorization[T]
}

func (s *twin[T]) Factor(_ context.Context, A *banded.Band[T]) error {
	o := s.spec.Options
	o.Refine.Mode = banded.RefineOff
	f, err := spike.Factor(A, o)
	s.f = f
	return err
}

func (s *twin[T]) Solve(_ context.Context, b, x []T) error { return s.f.Solve(b, x) }
func (s *twin[T]) Bounds() []int                           { return spike.Partitions(s.spec.N, s.spec.Options.Partitions) }
func (s *twin[T]) Boosts() []spike.Boost                   { return s.f.Boosts() }
func (s *twin[T]) ReducedBoosts() []int                    { return s.f.ReducedBoosts() }
func (s *twin[T]) Describe() string                        { return "twin SPIKE" }
func (s *twin[T]) Close() error                            { return nil }

func init() {
	spike.RegisterBackend(func(dev tridiag.Device) (spike.Backend, bool) {
		_, ok := dev.(twinDev)
		return twinBackend{}, ok
	})
}

// On a device whose solver does not refine, the plan refines on the host:
// the solutions are Factorization.Solve's bit for bit.
func TestPlanBackendRefinesOnHost(t *testing.T) {
	ctx := context.Background()
	const n, k = 400, 4
	for name, opts := range planOptions {
		A, b := planMatrix(n, k, 0.6, 2)
		f, err := spike.Factor(A, opts)
		require.NoError(t, err, name)
		want := make([]float64, n)
		werr := f.Solve(b, want)
		p, err := spike.NewPlan[float64](twinDev{}, n, k, opts)
		require.NoError(t, err, name)
		assert.Equal(t, f.Bounds(), p.Bounds(), name)
		assert.Contains(t, p.Describe(), "twin SPIKE", name)
		require.NoError(t, p.Factor(ctx, A), name)
		got := append([]float64(nil), b...)
		gerr := p.Solve(ctx, got, got)
		assert.Equal(t, fmt.Sprint(werr), fmt.Sprint(gerr), name)
		bitsEqual(t, want, got, name)
		if name == "default" {
			require.True(t, f.Refines(), "the zero pivot is boosted and refined")
			unrefined := make([]float64, n)
			o := opts
			o.Refine.Mode = banded.RefineOff
			f0, err := spike.Factor(A, o)
			require.NoError(t, err)
			require.NoError(t, f0.Solve(b, unrefined))
			assert.NotEqual(t, unrefined, got, "refinement changed the solution")
		}
		require.NoError(t, p.Close())
	}
}
