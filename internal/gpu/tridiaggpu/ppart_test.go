//go:build cuda

package tridiaggpu

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/stability"
	"github.com/bandsolve/bandsolve/tridiag"
	"github.com/bandsolve/bandsolve/tridiag/pivotpart"
	"github.com/bandsolve/bandsolve/tuning"
)

// The pivoting partition kernels do pivotpart.SolveWith's operations in
// the same order, so the results agree bit for bit, whatever the launch,
// and a breakdown is reported at the twin's row (the GPU also fails a
// system whose x is not finite, at its smallest such row). A system that
// fits one block solves its coarse system directly up to 64 rows
// (PPART_DIRECT), by the method once more above; a longer one runs in
// segments and its coarse systems (contiguous) are solved the same way,
// recursively, without refinement. The solution of the whole system is
// refined once (Stage 4). pivotSolve is the twin of those rules.

// pivotSolve solves one system as the GPU plan does: whole (one block)
// where whole, else in segments with the coarse systems solved by
// pivotSolve again, whole where they have at most maxN rows; refined
// where refine.
func pivotSolve[T tridiag.Float](a, b, c, d, x []T, whole bool, maxN int, refine bool) error {
	const m = 16
	n := len(b)
	var ws *pivotpart.Workspace[T]
	var coarse pivotpart.CoarseSolver[T]
	if whole {
		ws = pivotpart.NewWorkspaceDirect[T](n, m, 64)
	} else {
		ws = pivotpart.NewWorkspace[T](n, m)
		coarse = func(ca, cb, cc, cd, cx []T) error {
			return pivotSolve(ca, cb, cc, cd, cx, len(cb) <= maxN, maxN, false)
		}
	}
	if !refine {
		ws.SetRefine(pivotpart.RefineNever)
	}
	return pivotpart.SolveWith(a, b, c, d, x, m, ws, coarse)
}

// pivotMaxN is the largest N the pivoting kernel holds in one block.
func pivotMaxN[T tridiag.Float](sysFirst bool) int {
	return tuning.PivotMaxN(dev.Properties(), int(elemSize[T]()), sysFirst)
}

// pivotTwin is pivotSolve for systems of a batch in layout l, with the
// GPU's check of the solution.
func pivotTwin[T tridiag.Float](l tridiag.Layout, n int) func(a, b, c, d, x []T) error {
	whole := n <= pivotMaxN[T](sysFirst(l))
	maxN := pivotMaxN[T](false)
	return func(a, b, c, d, x []T) error {
		if err := pivotSolve(a, b, c, d, x, whole, maxN, true); err != nil {
			return err
		}
		for i, v := range x {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				return &tridiag.PivotError{Row: i, Err: tridiag.ErrNonFiniteResult}
			}
		}
		return nil
	}
}

// pivotGPU solves bt with the plan of tridiag.PartitionPivot.
func pivotGPU[T tridiag.Float](t *testing.T, bt batch[T], constant bool, ca, cb, cc T) ([]T, map[int]int) {
	t.Helper()
	return gpuConfig(t, config{}, bt, tridiag.Options{Algorithm: tridiag.PartitionPivot}, constant, ca, cb, cc, nil)
}

func TestPartitionPivotBitExact(t *testing.T) {
	t.Run("float32", testPartitionPivotBitExact[float32])
	t.Run("float64", testPartitionPivotBitExact[float64])
}

// testPartitionPivotBitExact: the GPU plan against pivotpart.Solve for
// sizes around the chunk (a last chunk of one row, of fifteen), batches
// that leave a block partly empty, every layout, matrices that pivot in
// most rows (no diagonal dominance) and dominant ones, arrays and
// constant coefficients.
func testPartitionPivotBitExact[T tridiag.Float](t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	maxN := pivotMaxN[T](false)
	t.Logf("%s: largest N a block holds %d (systems first: %d)", dev.Name(), maxN, pivotMaxN[T](true))
	for _, n := range []int{1, 2, 3, 5, 16, 17, 31, 33, 64, 100, 256, 257, 272, 513, 1000, 1024, 4096, maxN, maxN + 1, 3*maxN + 17, 8193, 40961} {
		for _, g := range []int{1, 7, 300} {
			for lname, l := range layouts(n, g) {
				if n*g > 1<<22 {
					continue
				}
				shape := tridiag.Shape{N: n, G: g, Layout: l}
				for _, dom := range []float64{0, 4} {
					bt := newBatch[T](r, shape, dom)
					cpu, cf := cpuSystems(bt, false, 0, 0, 0, pivotTwin[T](l, n))
					x, gf := pivotGPU(t, bt, false, 0, 0, 0)
					name := fmt.Sprintf("N=%d/G=%d/%s/dom=%g", n, g, lname, dom)
					assert.Equal(t, cf, gf, name)
					if !sameBits(t, bt.shape, x, cpu, name) {
						return
					}
				}
				// Constant coefficients: a small diagonal, which pivots.
				bt := newBatch[T](r, shape, 0)
				ca, cb, cc := T(1), T(0.1), T(-0.7)
				cpu, cf := cpuSystems(bt, true, ca, cb, cc, pivotTwin[T](l, n))
				x, gf := pivotGPU(t, bt, true, ca, cb, cc)
				name := fmt.Sprintf("N=%d/G=%d/%s/const", n, g, lname)
				assert.Equal(t, cf, gf, name)
				if !sameBits(t, bt.shape, x, cpu, name) {
					return
				}
			}
		}
	}
}

func TestPartitionPivotSuite(t *testing.T) {
	t.Run("float32", testPartitionPivotSuite[float32])
	t.Run("float64", testPartitionPivotSuite[float64])
}

// testPartitionPivotSuite: every matrix type of the stability suite (the
// 20 types and the Toeplitz readings) at N = 512 (a batch of four seeds)
// and 2^16 (one block, and segments), on the GPU against the twin bit
// for bit; and in FP64 the error against the exact solution within 10× of
// LAPACK gtsv's (tridiag.GTSV on the CPU) wherever that is below 1 (see
// "Accuracy" in package pivotpart).
func testPartitionPivotSuite[T tridiag.Float](t *testing.T) {
	for _, c := range []struct{ n, g int }{{512, 4}, {1 << 16, 1}} {
		testPivotSuiteSize[T](t, c.n, c.g)
	}
}

// testPivotSuiteSize is testPartitionPivotSuite for g systems of n rows
// of every type (the randsvd types 8–11, whose generator costs O(n³), up
// to n = 4096).
func testPivotSuiteSize[T tridiag.Float](t *testing.T, n, g int) {
	for _, ty := range append(stability.Types(false), stability.Toeplitz()...) {
		if ty >= 8 && ty <= 11 && n > 4096 {
			continue
		}
		shape := tridiag.Shape{N: n, G: g}.Normalize()
		l := shape.Layout
		bt := batch[T]{shape: shape, a: make([]T, n*g), b: make([]T, n*g), c: make([]T, n*g), d: make([]T, n*g)}
		exact := make([][]float64, g)
		for s := range g {
			p, err := stability.NewProblem[T](ty, n, uint64(100+s))
			if err != nil {
				t.Logf("type %s seed %d: %v", ty.Name(), s, err)
				continue
			}
			copy(bt.a[s*n:], p.A)
			copy(bt.b[s*n:], p.B)
			copy(bt.c[s*n:], p.C)
			copy(bt.d[s*n:], p.D)
			exact[s] = p.X
		}
		cpu, cf := cpuSystems(bt, false, 0, 0, 0, pivotTwin[T](l, n))
		x, gf := pivotGPU(t, bt, false, 0, 0, 0)
		name := fmt.Sprintf("N=%d type %s", n, ty.Name())
		assert.Equal(t, cf, gf, name)
		sameBits(t, shape, x, cpu, name)
		if !isF64[T]() {
			continue
		}
		ref := make([]T, n*g)
		gp, err := tridiag.NewPlan[T](nil, shape, tridiag.Options{Algorithm: tridiag.GTSV})
		require.NoError(t, err)
		refErr := gp.Solve(context.Background(), bt.a, bt.b, bt.c, bt.d, ref)
		require.NoError(t, gp.Close())
		for s := range g {
			if exact[s] == nil {
				continue
			}
			eg := stability.RelError(x[s*n:(s+1)*n], exact[s])
			el := stability.RelError(ref[s*n:(s+1)*n], exact[s])
			if refErr == nil && el < 1 {
				assert.LessOrEqual(t, eg, 10*max(el, 1e-16), "%s seed %d: GPU %.3g, gtsv %.3g", name, s, eg, el)
			}
		}
	}
}

func TestPartitionPivotBreakdown(t *testing.T) {
	// A system with a zero column (row 37's b and the a of row 38, the c
	// of row 36) is singular: the GPU reports the twin's row and NaN; the
	// other systems of the batch are solved.
	const n, g = 100, 3
	r := rand.New(rand.NewPCG(5, 6))
	bt := newBatch[float64](r, tridiag.Shape{N: n, G: g}, 0)
	bt.b[n+37], bt.a[n+38], bt.c[n+36] = 0, 0, 0
	cpu, cf := cpuSystems(bt, false, 0, 0, 0, pivotTwin[float64](bt.shape.Layout, n))
	x, gf := pivotGPU(t, bt, false, 0, 0, 0)
	require.Contains(t, gf, 1)
	assert.Equal(t, cf, gf)
	assert.NotContains(t, gf, 0)
	sameBits(t, bt.shape, x, cpu, "zero column")
	assert.True(t, math.IsNaN(x[n+5]))
}
