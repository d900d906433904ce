package sptrsv

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseAlgorithm(t *testing.T) {
	for _, a := range []Algorithm{Auto, Sequential, LevelSet, SyncFree} {
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
