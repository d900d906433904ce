package sptrsv

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseAlgorithm(t *testing.T) {
	for _, a := range []Algorithm{Auto, Sequential, LevelSet, SyncFree, SyncFreeCSR, LocalityAware} {
		got, err := ParseAlgorithm(a.String())
		require.NoError(t, err)
		require.Equal(t, a, got)
	}
	got, err := ParseAlgorithm("LevelSet")
	require.NoError(t, err)
	require.Equal(t, LevelSet, got)
	_, err = ParseAlgorithm("cholesky")
	require.ErrorIs(t, err, ErrAlgorithm)
	require.ErrorContains(t, err, "levelset")
	require.Equal(t, "Algorithm(9)", Algorithm(9).String())
}

// TestSyncFreeCSRIsSequential: the row-wise synchronization-free solve
// gives SolveSequential's bits, lower and upper, float64 and float32,
// with one worker and with many.
func TestSyncFreeCSRIsSequential(t *testing.T) {
	for _, up := range []bool{false, true} {
		a := randomTriangle(rand.New(rand.NewPCG(7, 1)), 2000, 0.004, Lower, false)
		opts := Options{}
		if up {
			a = a.Transpose()
			opts.Triangle = Upper
		}
		for _, workers := range []int{1, 7} {
			opts.Workers = workers
			an, err := Analyze(a, opts)
			require.NoError(t, err)
			b := make([]float64, a.N)
			for i := range b {
				b[i] = float64(i%17) - 8
			}
			ref := make([]float64, a.N)
			require.NoError(t, SolveSequential(an, b, ref))
			x := make([]float64, a.N)
			require.NoError(t, SolveSyncFreeCSR(context.Background(), an, b, x))
			require.Equal(t, ref, x)
			b32 := make([]float32, a.N)
			for i := range b {
				b32[i] = float32(b[i])
			}
			ref32 := make([]float32, a.N)
			require.NoError(t, SolveSequential(an, b32, ref32))
			x32 := make([]float32, a.N)
			require.NoError(t, SolveSyncFreeCSR(context.Background(), an, b32, x32))
			require.Equal(t, ref32, x32)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	an, err := Analyze(layered(50000, 10), Options{Workers: 2})
	require.NoError(t, err)
	b := make([]float64, an.N())
	require.ErrorIs(t, SolveSyncFreeCSR(ctx, an, b, b), context.Canceled)
}
