package banded

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/internal/memguard"
)

// Shapes that no machine can hold are refused with an error, not a Go
// fatal error.
func TestConstructorsCheckMemory(t *testing.T) {
	_, err := New[float64](1<<40, 0)
	require.ErrorIs(t, err, ErrMemory)
	assert.Contains(t, err.Error(), "banded: a float64 band of N=1099511627776, K=0 needs 8 TiB, more than the")

	_, err = NewBatch[float32](1<<20, 1000, 1<<20, Contiguous)
	require.ErrorIs(t, err, ErrMemory)
	assert.Contains(t, err.Error(), "banded: a batch of 1048576 float32 bands of N=1048576, K=1000 needs")

	defer memguard.SetLimit(memguard.SetLimit(64 << 20))
	m, err := New[float64](1000, 10)
	require.NoError(t, err, "small shapes pass")
	require.NoError(t, CheckMemory[float64](1000, 10, 2))
	_, err = New[float64](1<<20, 10) // 168 MiB
	require.ErrorIs(t, err, ErrMemory)
	assert.EqualError(t, err, "banded: a float64 band of N=1048576, K=10 needs 168 MiB, more than the 56 MiB this process can have (memory cap of BANDSOLVE_MEMORY_LIMIT or memguard.SetLimit)")

	// The pivoted factors need (3K+1)·N: refused when they do not fit.
	memguard.SetLimit(128 << 10)
	_, err = FactorPivot(m)
	require.ErrorIs(t, err, ErrMemory)
	assert.Contains(t, err.Error(), "banded: the pivoted LU factors of a float64 band of N=1000, K=10 needs")
}
