//go:build cuda

package tridiaggpu

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/tridiag"
	"github.com/bandsolve/bandsolve/tuning"
)

func TestPartitionTransposed(t *testing.T) {
	t.Run("float32", testPartitionTransposed[float32])
	t.Run("float64", testPartitionTransposed[float64])
}

// testPartitionTransposed: batches stored systems first of more than
// tuning.GatherMinN rows, fitting one block or not (interleaved, and
// systems-first strided with gaps of NaN), are gathered into contiguous
// systems: every solve, general and constant,
// Auto and tridiag.Partition, is bit for bit the inner plan's twin on the
// same systems, with the same failed systems and rows (zero pivots in
// Stage 1, a segment's first row, the last row), and within 1e4 ε of the
// pivoting reference.
func testPartitionTransposed[T tridiag.Float](t *testing.T) {
	cfg := config{noLanesSegments: true} // interleaved batches gathered too
	r := rand.New(rand.NewPCG(91, 92))
	maxN := tuning.PartitionMaxN(dev.Properties(), reductionElem(isF64[T]()), 0, true)
	for _, c := range []struct {
		n, g    int
		strided bool
	}{{3001, 50, false}, {maxN + 1, 3, false}, {3*maxN + 7, 37, false}, {70001, 5, true}, {2*maxN + 33, 40, true}} {
		l := tridiag.Interleaved(c.g)
		lname := "interleaved"
		if c.strided {
			l, lname = tridiag.Strided(2*c.g+3, 2), "strided" // systems first, gaps of NaN
		}
		shape := tridiag.Shape{N: c.n, G: c.g, Layout: l}.Normalize()
		name := fmt.Sprintf("N=%d/G=%d/%s", c.n, c.g, lname)
		bt := newBatch[T](r, shape, 4)
		for _, opts := range []tridiag.Options{{}, {Algorithm: tridiag.Partition}} {
			for _, constant := range []bool{false, true} {
				what := fmt.Sprintf("%s/%s/const=%v", name, opts.Algorithm, constant)
				kp, failed := segmentCaseConfig(t, cfg, bt, opts, constant, 2, what)
				require.IsType(t, &transposePlan{}, kp, what)
				assert.Empty(t, failed, what)
			}
		}
		// Against the pivoting reference.
		gp, err := newPlan[T](dev, shape, tridiag.Options{}, cfg)
		require.NoError(t, err, name)
		t.Logf("%s: %s", name, gp.Describe())
		x := make([]T, len(bt.d))
		require.NoError(t, gp.Solve(context.Background(), bt.a, bt.b, bt.c, bt.d, x), name)
		require.NoError(t, gp.Close())
		twin, _ := cpuSystems(bt, false, 0, 0, 0, planTwin[T](t, gp.kp, false))
		ref, err := cpuSolve(t, bt, tridiag.Options{Algorithm: tridiag.GTSV}, false, 0, 0, 0)
		require.NoError(t, err, name)
		compare(t, shape, x, twin, ref, 0, 1e4*eps[T](), name)
		// Breakdowns: reported at the twin's rows, the others untouched.
		m := 2048
		bt.zero(1, m+77, false) // Stage 1, inside the second segment (or later chunk)
		bt.zero(2, m, true)     // a segment's first row
		bt.zero(c.g-1, c.n-1, false)
		_, failed := segmentCaseConfig(t, cfg, bt, tridiag.Options{}, false, 2, name+"/breakdown")
		for _, sys := range []int{1, 2, c.g - 1} {
			assert.Contains(t, failed, sys, name)
		}
		assert.NotContains(t, failed, 0, name)
	}
}
