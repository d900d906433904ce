//go:build cudaemu

package spikeemu

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/banded"
	"github.com/bandsolve/bandsolve/spike"
	"github.com/bandsolve/bandsolve/tuning"
)

func bits[T Float](v T) uint64 {
	if is64[T]() {
		return math.Float64bits(float64(v))
	}
	return uint64(math.Float32bits(float32(v)))
}

// sameBits reports the first entry where a and b differ in their bits.
func sameBits[T Float](t *testing.T, what string, a, b []T) bool {
	t.Helper()
	require.Equal(t, len(a), len(b), what)
	for i := range a {
		if bits(a[i]) != bits(b[i]) {
			t.Errorf("%s: entry %d: emulated %v, CPU %v", what, i, a[i], b[i])
			return false
		}
	}
	return true
}

// compare factors m with the emulated pipeline and with spike.Factor and
// checks that everything agrees bit for bit: errors, boosts, spikes and
// the solution.
func compare[T Float](t *testing.T, what string, m *banded.Band[T], opts spike.Options, wide bool, r *rand.Rand) {
	t.Helper()
	kern := tuning.SpikeKernelWindow
	if wide {
		kern = tuning.SpikeKernelWide
	}
	compareKernel(t, what, m, opts, kern, r)
}

// compareKernel is compare with any kernel choice.
func compareKernel[T Float](t *testing.T, what string, m *banded.Band[T], opts spike.Options, kern tuning.SpikeKernel, r *rand.Rand) {
	t.Helper()
	p, err := NewPlan[T](m.N, m.K, opts, kern)
	require.NoError(t, err, what)
	opts.Partitions = p.L.P
	opts.Refine.Mode = banded.RefineOff // the twin is the plain SPIKE solve
	f, cerr := spike.Factor(m, opts)
	gerr := p.Factor(m)
	if cerr != nil || gerr != nil {
		require.Error(t, cerr, "%s: emulated error %v", what, gerr)
		require.Error(t, gerr, "%s: CPU error %v", what, cerr)
		assert.Equal(t, cerr.Error(), gerr.Error(), what)
		return
	}
	assert.Equal(t, f.Boosts(), p.Boosts(), "%s: boosts", what)
	assert.Equal(t, f.ReducedBoosts(), p.ReducedBoosts(), "%s: reduced boosts", what)
	for i := 0; i < f.P()-1; i++ {
		cv, cw := f.Spikes(i)
		gv, gw := p.Spikes(i)
		if !sameBits(t, fmt.Sprintf("%s: V_%d", what, i), gv, cv) || !sameBits(t, fmt.Sprintf("%s: W_%d", what, i+1), gw, cw) {
			return
		}
	}
	b := make([]T, m.N)
	for i := range b {
		b[i] = T(r.Float64()*2 - 1)
	}
	cx := make([]T, m.N)
	require.NoError(t, f.Solve(b, cx), what)
	gx := make([]T, m.N)
	require.NoError(t, p.Solve(b, gx), what)
	sameBits(t, what+": x", gx, cx)
	// In place.
	gb := append([]T(nil), b...)
	require.NoError(t, p.Solve(gb, gb), what)
	sameBits(t, what+": x in place", gb, cx)
}

func testPipeline[T Float](t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, k := range []int{1, 2, 5, 16, 33} {
		ps, ds := []int{1, 2, 3, 7}, []float64{2, 1, 0.5}
		if k >= 16 { // blocks of K² emulated threads: few cases
			ps, ds = []int{2, 3}, []float64{1}
		}
		for _, p := range ps {
			n := p*(2*k+3) + r.IntN(5)
			if k >= 16 {
				n = p*2*k + 1 + r.IntN(3)
			}
			for _, d := range ds {
				for _, ul := range []int{0, 2 * k} {
					for _, wide := range []bool{false, true} {
						if wide && k > 16 {
							continue // 1024 fibers per block: slow
						}
						m := banded.Random[T](n, k, d, r)
						what := fmt.Sprintf("K=%d N=%d P=%d d=%g ULBlock=%d wide=%v", k, n, p, d, ul, wide)
						compare(t, what, m, spike.Options{Partitions: p, ULBlock: ul}, wide, r)
					}
				}
			}
		}
	}
}

func TestPipelineF32(t *testing.T) { testPipeline[float32](t) }
func TestPipelineF64(t *testing.T) { testPipeline[float64](t) }

// The wide kernel for K > 64, on a few partitions.
func TestWideLargeK(t *testing.T) {
	if testing.Short() {
		t.Skip("slow")
	}
	r := rand.New(rand.NewPCG(3, 4))
	for _, k := range []int{65, 100} {
		n := 3*2*k + 7
		m := banded.Random[float32](n, k, 1, r)
		compare(t, fmt.Sprintf("K=%d N=%d", k, n), m, spike.Options{Partitions: 3, ULBlock: 0}, true, r)
	}
}

func testBreakdowns[T Float](t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	const k, n, P = 3, 61, 4
	bounds := spike.Partitions(n, P)
	for _, wide := range []bool{false, true} {
		for _, tol := range []float64{0, -1} {
			for _, ul := range []int{0, 2 * k} {
				base := fmt.Sprintf("wide=%v tol=%g ULBlock=%d", wide, tol, ul)
				opts := spike.Options{Partitions: P, BoostTol: tol, ULBlock: ul}
				// A zero pivot at the start of partition 2 (LU) and at the
				// end of the UL block of partition 1.
				m := banded.Random[T](n, k, 2, r)
				m.Set(bounds[2], bounds[2], 0)
				compare(t, base+" zero LU pivot", m, opts, wide, r)
				m = banded.Random[T](n, k, 2, r)
				end := bounds[2] - 1
				if ul > 0 {
					end = bounds[1] + ul - 1
				}
				m.Set(end, end, 0)
				compare(t, base+" zero UL pivot", m, opts, wide, r)
				// NaN inside a block and in a coupling block B_1.
				m = banded.Random[T](n, k, 2, r)
				m.Set(bounds[2]+3, bounds[2]+2, T(math.NaN()))
				compare(t, base+" NaN in a block", m, opts, wide, r)
				m = banded.Random[T](n, k, 2, r)
				m.Set(bounds[2]-1, bounds[2], T(math.Inf(1)))
				compare(t, base+" Inf in B", m, opts, wide, r)
			}
		}
	}
	// An exactly singular reduced matrix: B_0 = 0, so V_0 = 0 and R̄_0 = I,
	// boosting nothing; with W·V = I instead (a crafted case) the reduced
	// pivot is zero. Here: zero rows of V make R̄ singular only if W·V has
	// a unit eigenvalue, so test the non-finite path instead: a huge
	// coupling entry that overflows the spikes.
	m := banded.Random[T](n, k, 2, r)
	big := T(math.MaxFloat32)
	if is64[T]() {
		mx := math.MaxFloat64
		big = T(mx)
	}
	m.Set(bounds[1]-1, bounds[1], big)
	m.Set(bounds[1], bounds[1]-1, big)
	compare(t, "overflowing spikes", m, spike.Options{Partitions: P}, false, r)

	// A NaN in b.
	m = banded.Random[T](n, k, 2, r)
	p, err := NewPlan[T](n, k, spike.Options{Partitions: P}, tuning.SpikeKernelAuto)
	require.NoError(t, err)
	require.NoError(t, p.Factor(m))
	f, err := spike.Factor(m, spike.Options{Partitions: P})
	require.NoError(t, err)
	b := make([]T, n)
	b[17] = T(math.NaN())
	b[30] = T(math.Inf(-1))
	cerr := f.Solve(b, make([]T, n))
	gerr := p.Solve(b, make([]T, n))
	require.Error(t, gerr)
	assert.True(t, errors.Is(gerr, banded.ErrNonFinite))
	assert.Equal(t, cerr.Error(), gerr.Error())
	b[17], b[30] = 1, 1
	require.NoError(t, p.Solve(b, make([]T, n)), "the flag is cleared after a failure")
}

func TestBreakdownsF32(t *testing.T) { testBreakdowns[float32](t) }
func TestBreakdownsF64(t *testing.T) { testBreakdowns[float64](t) }

func TestBlockJacobi(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	m := banded.Random[float64](200, 4, 1, r)
	compare(t, "block-jacobi", m, spike.Options{Partitions: 5, Method: spike.BlockJacobi}, false, r)
}

// The blocked path (band_blocked.cuh) forced at small K, where the
// emulation is quick: panels shorter than K and longer (K < 8), partial
// last panels, both precisions, ULBlock, breakdowns and boosting.
func testBlocked[T Float](t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	blk := tuning.SpikeKernelBlocked
	for _, k := range []int{1, 3, 8, 13, 21} {
		for _, p := range []int{1, 2, 4} {
			n := p*(2*k+5) + r.IntN(9)
			for _, d := range []float64{2, 0.7} {
				for _, ul := range []int{0, 2 * k} {
					m := banded.Random[T](n, k, d, r)
					what := fmt.Sprintf("blocked K=%d N=%d P=%d d=%g ULBlock=%d", k, n, p, d, ul)
					compareKernel(t, what, m, spike.Options{Partitions: p, ULBlock: ul}, blk, r)
				}
			}
		}
	}
	const k, n, P = 11, 200, 4
	bounds := spike.Partitions(n, P)
	for _, tol := range []float64{0, -1} {
		opts := spike.Options{Partitions: P, BoostTol: tol}
		m := banded.Random[T](n, k, 2, r)
		m.Set(bounds[2]+9, bounds[2]+9, 0)
		compareKernel(t, fmt.Sprintf("blocked tol=%g zero LU pivot", tol), m, opts, blk, r)
		m = banded.Random[T](n, k, 2, r)
		m.Set(bounds[2]-3, bounds[2]-3, 0)
		compareKernel(t, fmt.Sprintf("blocked tol=%g zero UL pivot", tol), m, opts, blk, r)
		m = banded.Random[T](n, k, 2, r)
		m.Set(bounds[1]+3, bounds[1]+12, T(math.NaN()))
		compareKernel(t, fmt.Sprintf("blocked tol=%g NaN", tol), m, opts, blk, r)
	}
	// Block-Jacobi.
	m := banded.Random[T](300, 9, 1, r)
	compareKernel(t, "blocked block-jacobi", m, spike.Options{Partitions: 5, Method: spike.BlockJacobi}, blk, r)
}

func TestBlockedF32(t *testing.T) { testBlocked[float32](t) }
func TestBlockedF64(t *testing.T) { testBlocked[float64](t) }

// The blocked path where it is the default: K above the shared-memory
// kernels' limit (tuning.SpikeWideMaxK on the H100).
func TestBlockedLargeK(t *testing.T) {
	if testing.Short() {
		t.Skip("slow")
	}
	r := rand.New(rand.NewPCG(13, 14))
	for _, c := range []struct{ k, p int }{{168, 3}, {239, 2}} {
		n := c.p*2*c.k + 37
		m64 := banded.Random[float64](n, c.k, 1, r)
		compareKernel(t, fmt.Sprintf("K=%d N=%d f64", c.k, n), m64, spike.Options{Partitions: c.p}, tuning.SpikeKernelAuto, r)
		m32 := banded.Random[float32](n, c.k, 1, r)
		compareKernel(t, fmt.Sprintf("K=%d N=%d f32 ULBlock=2K", c.k, n), m32, spike.Options{Partitions: c.p, ULBlock: 2 * c.k}, tuning.SpikeKernelAuto, r)
	}
}
