//go:build cuda

package main

import (
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSolveSummaryAutoCUDA checks that on the GPU the summary line names
// what Auto chose (the plan's description), for a small batch and a large
// single system.
func TestSolveSummaryAutoCUDA(t *testing.T) {
	for _, sz := range []struct{ n, g int }{{64, 8}, {1 << 16, 1}} {
		dir := t.TempDir()
		bt := randomBatch(sz.n, sz.g, false, 6)
		out := filepath.Join(dir, "x.npy")
		code, _, errOut := runCmd(t, append([]string{"solve", "-device", "cuda", "-o", out}, bt.write(t, dir, false)...)...)
		require.Equal(t, 0, code, errOut)
		assert.Regexp(t, regexp.MustCompile(` algorithm=auto \((thomas|gtsv|cr|pcr|wangmou|tpr|partition|batches)`), errOut)
		assert.NotContains(t, errOut, "algorithm=auto precision")
	}
}
