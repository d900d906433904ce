package sptrsv

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/tridiag"
)

type otherDevice struct{}

func (otherDevice) Name() string { return "other" }

// TestNewPlanOnTheCPU: every algorithm through the plan gives the
// sequential reference (bit for bit, but for the atomics of SyncFree).
func TestNewPlanOnTheCPU(t *testing.T) {
	a := randomTriangle(rand.New(rand.NewPCG(3, 1)), 800, 0.01, Upper, true)
	opts := Options{Triangle: Upper, Part: TrianglePart}
	an, err := Analyze(a, opts)
	require.NoError(t, err)
	b := make([]float64, a.N)
	for i := range b {
		b[i] = float64(i%13) - 6
	}
	ref := make([]float64, a.N)
	require.NoError(t, SolveSequential(an, b, ref))
	for _, alg := range []Algorithm{Auto, Sequential, LevelSet, SyncFree, SyncFreeCSR, LocalityAware} {
		p, err := NewPlan[float64](tridiag.NewCPU(3), a, opts, alg)
		require.NoError(t, err, alg)
		if alg == Auto {
			require.Equal(t, ChooseCPU(an.Stats(), 3), p.Algorithm())
		} else {
			require.Equal(t, alg, p.Algorithm())
		}
		require.Equal(t, an.Stats(), p.Stats())
		x := make([]float64, a.N)
		require.NoError(t, p.Solve(context.Background(), b, x), alg)
		if alg == SyncFree || alg == LocalityAware {
			require.InDeltaSlice(t, ref, x, 1e-12, alg)
		} else {
			require.Equal(t, ref, x, alg)
		}
		require.NoError(t, p.Close())
	}
	_, err = NewPlan[float32](nil, a, Options{}, Auto)
	require.ErrorIs(t, err, ErrNotTriangular, "the default CPU checks the triangle")
	_, err = NewPlan[float64](otherDevice{}, a, opts, Auto)
	require.ErrorIs(t, err, ErrAlgorithm)
	require.ErrorContains(t, err, "gpu")
	_, err = NewPlan[float64](nil, a, opts, Algorithm(42))
	require.ErrorIs(t, err, ErrAlgorithm)
}

func TestChooseCPU(t *testing.T) {
	require.Equal(t, Sequential, ChooseCPU(Stats{MeanRowsPerLevel: 1e6}, 1))
	require.Equal(t, LevelSet, ChooseCPU(Stats{MeanRowsPerLevel: AutoLevelSetRowsCPU}, 2))
	require.Equal(t, Sequential, ChooseCPU(Stats{MeanRowsPerLevel: AutoLevelSetRowsCPU - 1}, 8))
}
