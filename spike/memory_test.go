package spike

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/banded"
	"github.com/bandsolve/bandsolve/internal/memguard"
)

func TestFactorChecksMemory(t *testing.T) {
	A := banded.Random[float64](4096, 16, 1, rand.New(rand.NewPCG(1, 2)))
	defer memguard.SetLimit(memguard.SetLimit(512 << 10))
	_, err := Factor(A, Options{Partitions: 4})
	require.ErrorIs(t, err, banded.ErrMemory)
	assert.Contains(t, err.Error(), "spike: factoring a band of N=4096, K=16 in 4 partitions needs")
	memguard.SetLimit(64 << 20)
	_, err = Factor(A, Options{Partitions: 4})
	require.NoError(t, err)
}
