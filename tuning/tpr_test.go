package tuning

import (
	"errors"
	"fmt"
	"github.com/bandsolve/bandsolve/internal/gpu/kernels"
	"math/bits"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/tridiag/tpr"
)

var tprDevices = []Device{H200, H100, A100, GTX980}

// checkTPR asserts the invariants every TPR launch must hold.
func checkTPR(t *testing.T, d Device, l TPRLaunch, n, g, s, elem int) bool {
	t.Helper()
	what := fmt.Sprintf("%s N=%d G=%d S=%d elem=%d", d.Name, n, g, s, elem)
	ok := true
	check := func(cond bool, format string, args ...any) {
		if !cond {
			ok = false
			t.Errorf("%s: "+format, append([]any{what}, args...)...)
		}
	}
	// The slice size is the one asked for (or the default), clamped as the
	// CPU twin clamps it.
	want, err := tprSliceSize(n, s)
	check(err == nil && l.S == want, "S = %d, want %d (%v)", l.S, want, err)
	lay, err := tpr.NewLayout(n, l.S)
	check(err == nil && lay.M == l.M && lay.MPad == l.MP, "M, MP = %d, %d, want %d, %d", l.M, l.MP, lay.M, lay.MPad)
	check(1<<l.K == l.S, "K = %d for S = %d", l.K, l.S)
	for i, st := range []SliceLaunch{l.Stage1, l.Stage3} {
		check(st.ThreadsPerSlice >= 1 && st.SlicesPerBlock >= 1, "stage %d: empty block %+v", 2*i+1, st)
		check(st.Threads == st.ThreadsPerSlice*st.SlicesPerBlock, "stage %d: threads %+v", 2*i+1, st)
		check(st.Threads <= d.MaxThreadsPerBlock && st.Threads <= tprBound(elem), "stage %d: %d threads", 2*i+1, st.Threads)
		check(st.ThreadsPerSlice == min(max(l.S/2, 1), tprBound(elem)), "stage %d: %d threads per slice for S=%d", 2*i+1, st.ThreadsPerSlice, l.S)
		check(st.SharedBytes <= d.MaxShared(), "stage %d: %d B shared", 2*i+1, st.SharedBytes)
		check(st.Blocks(g*l.M)*st.SlicesPerBlock >= g*l.M, "stage %d: blocks do not cover the slices", 2*i+1)
		check(st.SlicesPerBlock&(st.SlicesPerBlock-1) == 0, "stage %d: %d slices per block", 2*i+1, st.SlicesPerBlock)
	}
	slice1 := tprStage1SliceBytes(l.S, elem)
	check(l.Stage1.Global == (slice1 > d.MaxShared()), "stage 1 global = %v for a %d B slice", l.Stage1.Global, slice1)
	if l.Stage1.Global {
		check(l.Stage1.SharedBytes == 0, "stage 1 global with shared memory")
	} else {
		check(l.Stage1.SharedBytes == l.Stage1.SlicesPerBlock*slice1, "stage 1 shared %d", l.Stage1.SharedBytes)
	}
	slice3 := tprStage3SliceBytes(l.S, elem, false)
	check(l.Stage3.Global == (slice3 > d.MaxShared()), "stage 3 global = %v", l.Stage3.Global)
	if l.Stage3.Global {
		check(l.Stage3.SharedBytes == 4*l.Stage3.SlicesPerBlock, "stage 3 global shared %d", l.Stage3.SharedBytes)
	} else {
		check(l.Stage3.SharedBytes == l.Stage3.SlicesPerBlock*slice3, "stage 3 shared %d", l.Stage3.SharedBytes)
	}
	s2 := l.Stage2
	levels := bits.TrailingZeros(uint(l.MP))
	check(s2.Compact == l.MP>>s2.GlobalLevels, "stage 2 compact %d", s2.Compact)
	check(s2.GlobalLevels == 0 || (s2.GlobalLevels <= levels-1 && s2.Compact >= 2), "stage 2: %d global levels of %d", s2.GlobalLevels, levels)
	check(s2.SharedBytes == tprStage2SystemBytes(s2.Compact, elem)*s2.SystemsPerBlock, "stage 2 shared %d", s2.SharedBytes)
	check(s2.SharedBytes <= d.MaxShared(), "stage 2: %d B shared", s2.SharedBytes)
	// The fewest global levels that fit.
	check(s2.GlobalLevels == 0 || tprStage2SystemBytes(2*s2.Compact, elem) > d.MaxShared(), "stage 2: %d global levels, %d would fit", s2.GlobalLevels, s2.GlobalLevels-1)
	check(s2.Threads == s2.ThreadsPerSystem*s2.SystemsPerBlock && s2.Threads <= d.MaxThreadsPerBlock, "stage 2 threads %+v", s2)
	check(s2.ThreadsPerSystem == min(max(s2.Compact/2, 1), tprBound(elem)), "stage 2: %d threads for %d equations", s2.ThreadsPerSystem, s2.Compact)
	check(s2.Blocks(g)*s2.SystemsPerBlock >= g, "stage 2 blocks")
	// Launchable: the kernels' registers fit in the device's per-block file.
	check(residentThreads(d, l.Stage1.Threads, l.Stage1.SharedBytes, regsOf(regsStage1G, elem)) > 0, "stage 1 not resident")
	check(residentThreads(d, s2.Threads, s2.SharedBytes, regsOf(regsStage2, elem)) > 0, "stage 2 not resident")
	check(residentThreads(d, l.Stage3.Threads, l.Stage3.SharedBytes, regsOf(regsStage3G, elem)) > 0, "stage 3 not resident")
	return ok
}

// TestTPRLaunchEveryN: the launch depends on N only through S, M and MP,
// so covering every (S, M) pair reached by N = 1 … 2^24 covers every N.
// For each power-of-two range of N the default S is fixed and every M of
// the range is visited (N = M·S and N = (M−1)·S+1); the explicit slice
// sizes are run on a sample of N.
func TestTPRLaunchEveryN(t *testing.T) {
	for _, d := range tprDevices {
		for _, elem := range []int{4, 8} {
			for hi := 1; hi <= 1<<24; hi *= 2 {
				lo := hi/2 + 1
				s := tpr.DefaultSliceSize(hi)
				for m := (lo + s - 1) / s; m*s-s < hi; m++ {
					for _, n := range []int{max(lo, (m-1)*s+1), min(hi, m*s)} {
						require.Equal(t, s, tpr.DefaultSliceSize(n))
						l, err := TPRLaunchFor(d, n, 1, 0, elem, TPROptions{})
						require.NoError(t, err)
						if !checkTPR(t, d, l, n, 1, 0, elem) {
							return
						}
					}
				}
			}
		}
	}
}

// TestTPRLaunchSlices: the slice sizes of the GPU tests and beyond, on a
// sample of N, G (including G·M near the 2^31 slice limit).
func TestTPRLaunchSlices(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	ns := []int{1, 2, 3, 4, 5, 7, 100, 1000, 4096, 4097, 65536, 1 << 20, 1<<20 + 1, 1 << 24}
	for range 200 {
		ns = append(ns, 1+r.IntN(1<<24))
	}
	for _, d := range tprDevices {
		for _, elem := range []int{4, 8} {
			for _, n := range ns {
				for _, g := range []int{1, 7, 64, 65536} {
					for _, s := range []int{0, 2, 8, 128, 2048, 1 << 14, 1 << 16, 1 << 24} {
						l, err := TPRLaunchFor(d, n, g, s, elem, TPROptions{})
						if err != nil {
							m := (n + s - 1) / max(s, 1)
							require.ErrorIs(t, err, ErrTPRShape)
							require.GreaterOrEqual(t, int64(g)*int64(m), int64(1)<<31, "%v", err)
							continue
						}
						if !checkTPR(t, d, l, n, g, s, elem) {
							return
						}
					}
				}
			}
		}
	}
}

// TestTPRPaperTable4: on the paper's Maxwell GPU, in FP32, the default
// slices give the thread counts of Table 4: L = 64 threads (S = 128, one
// slice per block: the row of Table 3 with 64 threads and 2560 bytes that
// §4.4 picks) up to N = 2^18, then L = 128 … 1024 for N = 2^19 … 2^22;
// stage 2 then has M = 2048 equations, one system per 1024 threads.
func TestTPRPaperTable4(t *testing.T) {
	for n := 7; n <= 22; n++ {
		l, err := TPRLaunchFor(GTX980, 1<<n, 64, 0, 4, TPROptions{})
		require.NoError(t, err)
		want := 64
		if n > 18 {
			want = 1 << (n - 12)
		}
		assert.Equal(t, want, l.Stage1.ThreadsPerSlice, "n=%d", n)
		assert.Equal(t, want, l.Stage3.ThreadsPerSlice, "n=%d", n)
		if n <= 18 {
			assert.Equal(t, 1, l.Stage1.SlicesPerBlock, "n=%d", n)
		} else {
			assert.Equal(t, 2048, l.M, "n=%d", n)
			assert.Equal(t, 1024, l.Stage2.Threads, "n=%d", n)
		}
		// Kernel 2 of the paper: at least 64 threads per block once the
		// batch has enough systems.
		assert.GreaterOrEqual(t, l.Stage2.Threads, min(64, 64*l.Stage2.ThreadsPerSystem), "n=%d", n)
	}
}

// TestTPRGlobalPaths: slices too large for shared memory run in the
// workspace; reduced systems too large for it take global levels first.
func TestTPRGlobalPaths(t *testing.T) {
	for _, c := range []struct {
		d              Device
		n, s, elem     int
		glob1, glob3   bool
		levels, compct int
	}{
		{H100, 1 << 24, 0, 4, false, false, 0, 2048}, // S = 8192: 128 KiB per slice
		{H100, 1 << 24, 0, 8, true, false, 0, 2048},  // 256 KiB per slice: global
		{H100, 1 << 24, 1 << 14, 4, true, false, 0, 1024},
		{H100, 1 << 24, 1 << 15, 8, true, true, 0, 512},
		{H100, 1 << 20, 2, 8, false, false, 7, 4096}, // MP = 2^19
		{H100, 1 << 20, 2, 4, false, false, 6, 8192},
		{H200, 1 << 24, 2, 4, false, false, 10, 8192},
		{A100, 1 << 20, 2, 8, false, false, 8, 2048},   // 4096 padded: 170 KiB > 163 KiB
		{GTX980, 1 << 20, 0, 8, false, false, 1, 1024}, // 80 KiB of reduced system > 48 KiB
		{GTX980, 1 << 22, 0, 8, true, false, 1, 1024},
	} {
		l, err := TPRLaunchFor(c.d, c.n, 1, c.s, c.elem, TPROptions{})
		require.NoError(t, err)
		what := fmt.Sprintf("%s N=%d S=%d elem=%d", c.d.Name, c.n, c.s, c.elem)
		assert.Equal(t, c.glob1, l.Stage1.Global, what)
		assert.Equal(t, c.glob3, l.Stage3.Global, what)
		assert.Equal(t, c.levels, l.Stage2.GlobalLevels, what)
		assert.Equal(t, c.compct, l.Stage2.Compact, what)
		checkTPR(t, c.d, l, c.n, 1, c.s, c.elem)
	}
}

func TestTPROptions(t *testing.T) {
	l, err := TPRLaunchFor(H100, 1<<20, 3, 0, 8, TPROptions{GlobalStage1: true, GlobalStage3: true, Stage2GlobalLevels: 3})
	require.NoError(t, err)
	assert.True(t, l.Stage1.Global)
	assert.True(t, l.Stage3.Global)
	assert.Zero(t, l.Stage1.SharedBytes)
	assert.Equal(t, 3, l.Stage2.GlobalLevels)
	assert.Equal(t, 2048>>3, l.Stage2.Compact)
	// Capped at log2 MP − 1: two equations stay for the top.
	l, err = TPRLaunchFor(H100, 1<<20, 3, 0, 8, TPROptions{Stage2GlobalLevels: 100})
	require.NoError(t, err)
	assert.Equal(t, 10, l.Stage2.GlobalLevels)
	assert.Equal(t, 2, l.Stage2.Compact)
	// Nothing to do globally for MP ≤ 2.
	for _, n := range []int{1, 100, 256} {
		l, err = TPRLaunchFor(H100, n, 3, 128, 8, TPROptions{Stage2GlobalLevels: 5})
		require.NoError(t, err)
		assert.Zero(t, l.Stage2.GlobalLevels, "N=%d", n)
	}
}

func TestTPRLimits(t *testing.T) {
	for _, bad := range []struct{ n, g, elem int }{{0, 1, 4}, {1, 0, 4}, {10, 1, 2}, {TPRMaxN + 1, 1, 4}} {
		_, err := TPRLaunchFor(H100, bad.n, bad.g, 0, bad.elem, TPROptions{})
		assert.ErrorIs(t, err, ErrTPRShape, "%+v", bad)
		_, err = WMLaunchFor(H100, bad.n, bad.g, bad.elem, 0)
		assert.ErrorIs(t, err, ErrTPRShape, "%+v", bad)
	}
	_, err := TPRLaunchFor(H100, TPRMaxN, 1, 0, 8, TPROptions{})
	assert.NoError(t, err)
	_, err = TPRLaunchFor(H100, 100, 1, 6, 4, TPROptions{})
	assert.ErrorIs(t, err, tpr.ErrSliceSize)
	assert.False(t, errors.Is(err, ErrTPRShape))
	// Too many slices for 32-bit slice numbers.
	_, err = TPRLaunchFor(H100, 1<<24, 1<<9, 2, 4, TPROptions{})
	assert.ErrorIs(t, err, ErrTPRShape)
}

func TestTPRSliceSize(t *testing.T) {
	for _, c := range []struct{ n, s, want int }{
		{1, 0, 2}, {3, 0, 4}, {100, 0, 128}, {1000, 0, 128}, {1 << 20, 0, 512}, {1 << 24, 0, 8192},
		{100, 2, 2}, {100, 4096, 128}, {1 << 20, 2048, 2048}, {5, 2048, 8},
	} {
		s, err := tprSliceSize(c.n, c.s)
		require.NoError(t, err)
		assert.Equal(t, c.want, s, "N=%d S=%d", c.n, c.s)
	}
}

// TestResidentThreadsTable3: the full-occupancy rows of the TPR paper's
// Table 3 (Maxwell, 32 registers or 1 warp of 64) come out of the
// occupancy estimate.
func TestResidentThreadsTable3(t *testing.T) {
	for _, c := range []struct{ warps, regs, shared, blocks int }{
		{1, 64, 2048, 32}, {2, 32, 2048, 32}, {4, 32, 4096, 16}, {8, 32, 8192, 8}, {16, 32, 16384, 4}, {32, 32, 32768, 2},
	} {
		threads := 32 * c.warps
		assert.Equal(t, c.blocks*threads, residentThreads(GTX980, threads, c.shared, c.regs), "%+v", c)
	}
	// Nothing fits: too many registers for one block.
	assert.Zero(t, residentThreads(H100, 1024, 0, 128))
}

func TestWMLaunch(t *testing.T) {
	for _, c := range []struct {
		d            Device
		max32, max64 int
	}{{H100, 4096, 2048}, {H200, 4096, 2048}, {A100, 2048, 1024}, {GTX980, 512, 256}} {
		for _, elem := range []int{4, 8} {
			maxSingle := c.max32
			if elem == 8 {
				maxSingle = c.max64
			}
			assert.Equal(t, maxSingle, wmMaxChunk(c.d, elem), c.d.Name)
			for _, n := range []int{1, 2, 3, 100, 1000, maxSingle - 1, maxSingle, maxSingle + 1, 65536, 1 << 20, 1 << 24} {
				for _, g := range []int{1, 7, 65536} {
					for _, capc := range []int{0, 4, 64} {
						l, err := WMLaunchFor(c.d, n, g, elem, capc)
						if err != nil {
							// Chunk or wm_final block numbers beyond 32 bits.
							require.ErrorIs(t, err, ErrTPRShape)
							parts := int64(g) * int64((n+WMFinalBlock-1)/WMFinalBlock)
							require.True(t, int64(g)*int64(l.NP/l.Chunk) >= 1<<31 || parts >= 1<<31, "%v", err)
							continue
						}
						what := fmt.Sprintf("%s N=%d G=%d elem=%d cap=%d", c.d.Name, n, g, elem, capc)
						assert.Equal(t, maxSingle, l.MaxSingleN, what)
						assert.Equal(t, 1<<bits.Len(uint(n-1)), l.NP, what)
						wantChunk := min(l.NP, maxSingle)
						if capc > 0 {
							wantChunk = min(wantChunk, capc)
						}
						assert.Equal(t, wantChunk, l.Chunk, what)
						assert.Equal(t, l.Chunk == l.NP, l.Single, what)
						assert.LessOrEqual(t, l.Threads, bound(kernels.WmLocalFor(elem == 8)), what)
						assert.Equal(t, l.Threads, l.ThreadsPerChunk*l.ChunksPerBlock, what)
						assert.Equal(t, min(max(l.Chunk/2, 1), bound(kernels.WmLocalFor(elem == 8))), l.ThreadsPerChunk, what)
						assert.Equal(t, l.ChunksPerBlock*wmChunkBytes(l.Chunk, elem), l.SharedBytes, what)
						assert.LessOrEqual(t, l.SharedBytes, c.d.MaxShared(), what)
						assert.Positive(t, residentThreads(c.d, l.Threads, l.SharedBytes, regsOf(regsWMLocal, elem)), what)
						assert.GreaterOrEqual(t, l.Blocks()*l.ChunksPerBlock, g*(l.NP/l.Chunk), what)
					}
				}
			}
		}
	}
}

// tprBound is the TPR stage kernels' launch bound for elements of elem
// bytes.
func tprBound(elem int) int { return bound(kernels.TprStage1For(elem == 8)) }

// TestLaunchBounds: the bounds the choices take from the kernel table are
// the kernels' __launch_bounds__, as their sources state them.
func TestLaunchBounds(t *testing.T) {
	for _, c := range []struct {
		what      string
		got, want int
	}{
		{"partition_p16_f32", partitionKernelThreads(16, 4), 1024},
		{"partition_p16_f64", partitionKernelThreads(16, 8), 512},
		{"partition_p32_f64 (none)", partitionKernelThreads(32, 8), 0},
		{"partition_lanes_p16_f32", partitionLanesMaxThreads(4), 512},
		{"partition_lanes_p16_f64", partitionLanesMaxThreads(8), 256},
		{"tpr_stage1_f32", tprBound(4), 1024},
		{"tpr_stage1_f64", tprBound(8), 1024},
		{"wm_local_f64", bound(kernels.WmLocalFor(true)), 512},
		{"pcr_f64", bound(kernels.PcrFor(true)), 1024},
		{"cr_f32", bound(kernels.CrFor(false)), 1024},
	} {
		assert.Equal(t, c.want, c.got, c.what)
	}
}
