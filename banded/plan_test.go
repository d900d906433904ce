package banded_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/banded"
	"github.com/bandsolve/bandsolve/tridiag"
)

// planBatch is a batch of random systems of dominance dom with a zero
// pivot (boosted) in system 1 and a NaN entry (failing) in system 2.
func planBatch(t *testing.T, n, k, g int, lay banded.Layout, dom float64, seed uint64) (*banded.Batch[float64], []float64) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 7))
	b, err := banded.NewBatch[float64](n, k, g, lay)
	require.NoError(t, err)
	for s := 0; s < g; s++ {
		require.NoError(t, b.SetSystem(s, banded.Random[float64](n, k, dom, r)))
	}
	b.Set(1, 0, 0, 0)
	b.Set(2, n/2, n/2, math.NaN())
	rhs := make([]float64, n*g)
	for i := range rhs {
		rhs[i] = r.Float64()*2 - 1
	}
	return b, rhs
}

// sameBits compares solutions bit for bit (NaN equal to NaN).
func sameBits(t *testing.T, want, got []float64, what string) {
	t.Helper()
	require.Len(t, got, len(want))
	for i := range want {
		if math.Float64bits(want[i]) != math.Float64bits(got[i]) && !(math.IsNaN(want[i]) && math.IsNaN(got[i])) {
			t.Fatalf("%s: x[%d] = %v, want %v", what, i, got[i], want[i])
		}
	}
}

// sameOutcome compares two batch solves: solutions, boosts and failures.
func sameOutcome(t *testing.T, wx, gx []float64, wres, gres banded.BatchResult, werr, gerr error, what string) {
	t.Helper()
	sameBits(t, wx, gx, what)
	assert.Equal(t, wres, gres, what)
	var wbe, gbe *banded.BatchError
	if errors.As(werr, &wbe) {
		require.ErrorAs(t, gerr, &gbe, what)
		require.Equal(t, len(wbe.Failed), len(gbe.Failed), what)
		assert.Equal(t, wbe.G, gbe.G, what)
		for i := range wbe.Failed {
			w, g := wbe.Failed[i], gbe.Failed[i]
			assert.Equal(t, [3]int{w.System, w.Row, w.Col}, [3]int{g.System, g.Row, g.Col}, what)
			assert.Equal(t, w.Status, g.Status, what)
			assert.Equal(t, w.Err.Error(), g.Err.Error(), what)
		}
		return
	}
	assert.Equal(t, werr, gerr, what)
}

var planOptions = map[string]banded.BatchOptions{
	"default":      {},
	"pivot":        {Pivot: true},
	"refine off":   {Refine: banded.RefineOptions{Mode: banded.RefineOff}},
	"refine all":   {Refine: banded.RefineOptions{Mode: banded.RefineAlways}},
	"check":        {Check: true},
	"boosting off": {Factor: banded.FactorOptions{BoostTol: -1}},
	"workers":      {Workers: 3},
}

// The CPU plan is SolveBatch.
func TestBatchPlanCPU(t *testing.T) {
	ctx := context.Background()
	for name, opts := range planOptions {
		for _, lay := range []banded.Layout{banded.Contiguous, banded.Interleaved} {
			what := fmt.Sprintf("%s %v", name, lay)
			b, rhs := planBatch(t, 60, 3, 9, lay, 0.6, 1)
			want := make([]float64, len(rhs))
			wres, werr := banded.SolveBatch(ctx, b, rhs, want, opts)
			require.Error(t, werr, "system 2 fails")
			p, err := banded.NewBatchPlan[float64](nil, b.N, b.K, b.G, lay, opts)
			require.NoError(t, err, what)
			assert.Contains(t, p.Describe(), "SolveBatch")
			got := make([]float64, len(rhs))
			gres, gerr := p.SolveBatch(ctx, b, rhs, got)
			sameOutcome(t, want, got, wres, gres, werr, gerr, what)
			got2 := append([]float64(nil), rhs...)
			gres, gerr = p.Solve(ctx, b.Data, got2, got2) // in place
			sameOutcome(t, want, got2, wres, gres, werr, gerr, what+" in place")
			require.NoError(t, p.Close())
		}
	}
}

func TestBatchPlanErrors(t *testing.T) {
	ctx := context.Background()
	_, err := banded.NewBatchPlan[float64](nil, 5, 5, 1, banded.Contiguous, banded.BatchOptions{})
	assert.ErrorIs(t, err, banded.ErrShape)
	_, err = banded.NewBatchPlan[float64](nil, 5, 1, 0, banded.Contiguous, banded.BatchOptions{})
	assert.ErrorIs(t, err, banded.ErrShape)
	_, err = banded.NewBatchPlan[float64](nil, 5, 1, 1, banded.Layout(9), banded.BatchOptions{})
	assert.ErrorIs(t, err, banded.ErrShape)
	_, err = banded.NewBatchPlan[float64](nil, 5, 1, 1, banded.Contiguous, banded.BatchOptions{Workers: -1})
	assert.ErrorIs(t, err, banded.ErrOption)
	_, err = banded.NewBatchPlan[float64](nil, 5, 1, 1, banded.Contiguous, banded.BatchOptions{Refine: banded.RefineOptions{Tol: -1}})
	assert.ErrorIs(t, err, banded.ErrOption)
	cpu := tridiag.NewCPU(2)
	_, err = banded.NewBatchPlan[float32](cpu, 5, 1, 1, banded.Contiguous, banded.BatchOptions{CheckFinite: true})
	require.ErrorIs(t, err, banded.ErrOption)
	assert.Contains(t, err.Error(), "CheckFinite")
	assert.Contains(t, err.Error(), cpu.Name())
	_, err = banded.SolveBatch(ctx, &banded.Batch[float32]{N: 5, K: 1, G: 1, Data: make([]float32, 15)}, make([]float32, 5), make([]float32, 5), banded.BatchOptions{CheckFinite: true})
	assert.ErrorIs(t, err, banded.ErrOption, "SolveBatch refuses CheckFinite too")

	p, err := banded.NewBatchPlan[float32](cpu, 5, 1, 2, banded.Interleaved, banded.BatchOptions{})
	require.NoError(t, err)
	defer p.Close()
	n, k, g := p.Shape()
	assert.Equal(t, [3]int{5, 1, 2}, [3]int{n, k, g})
	assert.Equal(t, banded.Interleaved, p.Layout())
	assert.Equal(t, tridiag.Device(cpu), p.Device())
	_, err = p.Solve(ctx, make([]float32, 29), make([]float32, 10), make([]float32, 10))
	assert.ErrorIs(t, err, banded.ErrShape, "short a")
	_, err = p.Solve(ctx, make([]float32, 30), make([]float32, 9), make([]float32, 10))
	assert.ErrorIs(t, err, banded.ErrShape, "short rhs")
	other, err := banded.NewBatch[float32](5, 1, 2, banded.Contiguous)
	require.NoError(t, err)
	_, err = p.SolveBatch(ctx, other, make([]float32, 10), make([]float32, 10))
	assert.ErrorIs(t, err, banded.ErrShape, "layout mismatch")
	_, err = p.SolveBatch(ctx, nil, make([]float32, 10), make([]float32, 10))
	assert.ErrorIs(t, err, banded.ErrShape, "nil batch")
}

// nowhere is a device that no backend serves.
type nowhere struct{}

func (nowhere) Name() string { return "nowhere:0" }

func TestBatchPlanNoBackend(t *testing.T) {
	_, err := banded.NewBatchPlan[float64](nowhere{}, 10, 2, 3, banded.Contiguous, banded.BatchOptions{})
	require.ErrorIs(t, err, banded.ErrOption)
	assert.Contains(t, err.Error(), "nowhere:0")
	assert.Contains(t, err.Error(), "-tags cuda")
}

// twinDev is a device whose backend solves like the GPU: LU without
// pivoting and without refinement (SolveBatch with refinement off).
type twinDev struct{}

func (twinDev) Name() string { return "twin:0" }

type twinBackend struct{}

func (twinBackend) NewBatchSolver32(spec banded.BatchSpec) (banded.BatchSolver[float32], error) {
	return newTwin[float32](spec)
}

func (twinBackend) NewBatchSolver64(spec banded.BatchSpec) (banded.BatchSolver[float64], error) {
	return newTwin[float64](spec)
}

type twinSolver[T banded.Float] struct {
	spec   banded.BatchSpec
	closed bool
}

func newTwin[T banded.Float](spec banded.BatchSpec) (*twinSolver[T], error) {
	if spec.Options.Pivot {
		return nil, fmt.Errorf("%w: BatchOptions.Pivot is not available on device twin:0", banded.ErrOption)
	}
	return &twinSolver[T]{spec: spec}, nil
}

func (s *twinSolver[T]) Solve(ctx context.Context, a, rhs, x []T) (banded.BatchResult, error) {
	b := &banded.Batch[T]{N: s.spec.N, K: s.spec.K, G: s.spec.G, Layout: s.spec.Layout, Data: a}
	return banded.SolveBatch(ctx, b, rhs, x, banded.BatchOptions{Factor: s.spec.Options.Factor, Refine: banded.RefineOptions{Mode: banded.RefineOff}})
}

func (s *twinSolver[T]) Describe() string { return "twin solver" }

func (s *twinSolver[T]) Close() error { s.closed = true; return nil }

func init() {
	banded.RegisterBackend(func(dev tridiag.Device) (banded.BatchBackend, bool) {
		_, ok := dev.(twinDev)
		return twinBackend{}, ok
	})
}

// On a device whose backend does not refine, the plan refines and checks
// on the host: the results are SolveBatch's with the same options.
func TestBatchPlanBackendRefinesOnHost(t *testing.T) {
	ctx := context.Background()
	for name, opts := range planOptions {
		for _, lay := range []banded.Layout{banded.Contiguous, banded.Interleaved} {
			what := fmt.Sprintf("%s %v", name, lay)
			p, err := banded.NewBatchPlan[float64](twinDev{}, 60, 3, 9, lay, opts)
			if opts.Pivot {
				assert.ErrorIs(t, err, banded.ErrOption, "the backend refuses Pivot")
				continue
			}
			require.NoError(t, err, what)
			assert.Contains(t, p.Describe(), "twin solver")
			b, rhs := planBatch(t, 60, 3, 9, lay, 0.6, 2)
			want := make([]float64, len(rhs))
			wres, werr := banded.SolveBatch(ctx, b, rhs, want, opts)
			got := append([]float64(nil), rhs...)
			gres, gerr := p.Solve(ctx, b.Data, got, got)
			sameOutcome(t, want, got, wres, gres, werr, gerr, what)
			if name == "default" {
				require.NotEmpty(t, gres.Boosted, "%s: system 1 boosts", what)
				assert.True(t, gres.Boosted[0].Refine.Refined(), "%s: boosted systems are refined", what)
			}
			require.NoError(t, p.Close())
		}
	}
}
