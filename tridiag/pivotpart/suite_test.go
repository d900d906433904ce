package pivotpart

import (
	"flag"
	"fmt"
	"math"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/stability"
	"github.com/bandsolve/bandsolve/tridiag/internal/tri"
	"github.com/bandsolve/bandsolve/tridiag/partition"
)

// suiteSizes are the orders of the stability suite's systems the tests
// solve.
var suiteSizes = []int{512, 4096}

// randsvd4096 adds the randsvd types (8–11) at N = 4096, whose generators
// cost O(N³): about 2 minutes each on 2 cores.
var randsvd4096 = flag.Bool("randsvd4096", false, "also run the randsvd types (8-11) of the stability suite at N = 4096")

// long adds N = 2^20 to TestLargeSystems.
var long = flag.Bool("long", false, "TestLargeSystems also at N = 2^20")

var (
	suiteMu    sync.Mutex
	suiteCache = map[int][]suiteCase{}
)

// suiteCase is one system of the stability suite with its reference
// solution.
type suiteCase struct {
	name string
	p    stability.Problem[float64]
}

// suiteCases returns the suite's FP64 systems of order n (seed 1): the
// types 1..21 and the Toeplitz readings; those without a reference
// (singular, or unresolvable) are logged and left out.
func suiteCases(t *testing.T, n int) []suiteCase {
	t.Helper()
	suiteMu.Lock()
	defer suiteMu.Unlock()
	if out, ok := suiteCache[n]; ok {
		return out
	}
	var out []suiteCase
	for _, ty := range stability.Types(true) {
		if ty >= 8 && ty <= 11 && n > 512 && !*randsvd4096 {
			t.Logf("N=%d type %s: left out (go test -randsvd4096 runs it)", n, ty.Name())
			continue
		}
		p, err := stability.NewProblem[float64](ty, n, 1)
		if err != nil {
			t.Logf("N=%d type %s: no reference: %v", n, ty.Name(), err)
			continue
		}
		out = append(out, suiteCase{fmt.Sprintf("N=%d type %-3s (%v)", n, ty.Name(), ty), p})
	}
	suiteCache[n] = out
	return out
}

// relErr solves the case with solve and returns the relative error
// against the reference, or NaN when solve reports a breakdown.
func relErr(p stability.Problem[float64], solve func(a, b, c, d, x []float64) error) (float64, error) {
	x := make([]float64, p.N())
	if err := solve(p.A, p.B, p.C, p.D, x); err != nil {
		return math.NaN(), err
	}
	return stability.RelError(x, p.X), nil
}

func gtsvSolve(a, b, c, d, x []float64) error {
	return tri.GTSV(a, b, c, d, x, tri.NewPivotWork[float64](len(b)))
}

func partitionSolve(a, b, c, d, x []float64) error {
	return partition.Solve(a, b, c, d, x, partition.DefaultChunk(len(b)), nil)
}

func variantSolve(m int, v variant) func(a, b, c, d, x []float64) error {
	return func(a, b, c, d, x []float64) error {
		return NewWorkspace[float64](len(b), m).solve(a, b, c, d, x, nil, v)
	}
}

// TestSuite holds Solve's relative error with the devices' partitions
// (DefaultRows: 16 rows) within 100× of GTSV's (LAPACK gtsv's) on every
// type of the stability suite at N = 512 and 4096, wherever GTSV's error is
// below 1, and Solve to a solution wherever GTSV finds one, with every
// partition size. go test -v logs the errors of GTSV, of the partition
// method without pivoting and of Solve with every partition size.
//
// Partitions of 4, 8 and 32 rows are not held to that bound: on the
// random types 1, 4, 5 and 10 they miss it (see "Accuracy" in the package
// documentation). The test logs every error above 10× GTSV's (the issue's
// target) with "over 10×".
func TestSuite(t *testing.T) {
	for _, n := range suiteSizes {
		for _, sc := range suiteCases(t, n) {
			eg, gerr := relErr(sc.p, gtsvSolve)
			en, _ := relErr(sc.p, partitionSolve)
			line := fmt.Sprintf("%-40s gtsv %9.2e  partition %9.2e  pivotpart", sc.name, eg, en)
			for _, m := range sizes {
				e, err := relErr(sc.p, func(a, b, c, d, x []float64) error { return Solve(a, b, c, d, x, m, nil) })
				line += fmt.Sprintf(" m=%d %9.2e", m, e)
				if gerr != nil {
					continue
				}
				require.NoError(t, err, "%s m=%d: breakdown where GTSV solves", sc.name, m)
				if eg >= 1 {
					continue
				}
				if m == DefaultRows(n) {
					assert.LessOrEqual(t, e, 100*eg, "%s m=%d: error against GTSV's %.2e", sc.name, m, eg)
				}
				if e > 10*eg {
					line += " (over 10×)"
				}
			}
			t.Log(line)
		}
	}
}

// TestCoarseRowChoices compares, on the suite at N = 512 and 4096 (m =
// 16), the coarse rows Solve forms with the alternatives of variant:
// every coarse row divided by its largest coefficient (scaled), and the
// end partitions' outer rows formed by CoarseRows (spike ends), and Stage
// 3 by solving every partition again instead of combining its spikes
// (recompute). It holds what the package documentation states: with spike ends the
// zero-diagonal types 16 and 16T break down at N = 512 (the first
// partition's two rows are parallel), and scaling lowers no type's error
// by more than a factor 2 where GTSV's error is below 1, nor does
// solving the partitions again (go test -v logs the table).
func TestCoarseRowChoices(t *testing.T) {
	const m = 16
	for _, n := range suiteSizes {
		for _, sc := range suiteCases(t, n) {
			eg, _ := relErr(sc.p, gtsvSolve)
			e0, _ := relErr(sc.p, variantSolve(m, variant{}))
			es, _ := relErr(sc.p, variantSolve(m, variant{scaled: true}))
			ee, erre := relErr(sc.p, variantSolve(m, variant{spikeEnds: true}))
			ees, _ := relErr(sc.p, variantSolve(m, variant{spikeEnds: true, scaled: true}))
			er, _ := relErr(sc.p, variantSolve(m, variant{recompute: true}))
			t.Logf("%-40s gtsv %9.2e  chosen %9.2e  scaled %9.2e  spike ends %9.2e  both %9.2e  recompute %9.2e", sc.name, eg, e0, es, ee, ees, er)
			if eg < 1 {
				assert.LessOrEqual(t, e0, 2*es, "%s: scaled coarse rows", sc.name)
				assert.LessOrEqual(t, e0, 2*er, "%s: Stage 3 by solving the partitions again", sc.name)
			}
			if n == 512 && (sc.p.Type == 16 || sc.p.Type == stability.Type16T) {
				var pe *tri.PivotError
				require.ErrorAs(t, erre, &pe, "%s: spike ends", sc.name)
				assert.Equal(t, 0, pe.Row, "%s: the first partition's first row", sc.name)
			}
		}
	}
}

// TestLargeSystems measures the error on type 1 (U(−1,1)) as N grows: the
// more partitions, the likelier one whose own block is nearly singular,
// and the coarse rows formed from its large spikes lose digits that GTSV
// keeps. It holds the error within 10⁵× GTSV's with 16 rows a partition
// and logs the errors of every partition size (go test -v; N = 2^20 with
// -long).
func TestLargeSystems(t *testing.T) {
	ns := []int{1 << 14, 1 << 17}
	if *long {
		ns = append(ns, 1<<20)
	}
	for _, n := range ns {
		p, err := stability.NewProblem[float64](1, n, 1)
		require.NoError(t, err)
		eg, _ := relErr(p, gtsvSolve)
		line := fmt.Sprintf("N=%d type 1: gtsv %.2e, pivotpart", n, eg)
		for _, m := range sizes {
			e, err := relErr(p, func(a, b, c, d, x []float64) error { return Solve(a, b, c, d, x, m, nil) })
			require.NoError(t, err)
			line += fmt.Sprintf(" m=%d %.2e", m, e)
			if m == DefaultRows(n) {
				assert.LessOrEqual(t, e, 1e5*eg, "N=%d m=%d", n, m)
			}
		}
		t.Log(line)
	}
}
