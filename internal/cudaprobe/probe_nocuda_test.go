//go:build !cuda

package cudaprobe

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestErrWithoutCUDABuild(t *testing.T) {
	err := Err()
	require.ErrorIs(t, err, ErrUnavailable)
	var e *Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, NotBuilt, e.Outcome)
	assert.EqualError(t, err, "CUDA is not available: this binary is built without -tags cuda")
}
