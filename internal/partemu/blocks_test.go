//go:build cudaemu

package partemu

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/internal/gpu/kernels"
	"github.com/bandsolve/bandsolve/tridiag/partition"
	"github.com/bandsolve/bandsolve/tuning"
)

// runBlocks launches kern over the batch with launch l and compares every
// system's x with partition.Solve in chunks of p rows (on the constant
// arrays when the batch is constant), bit for bit; no system fails, and
// no entry outside the systems is written.
func runBlocks[T Float](t *testing.T, name string, kern Kernel, l Blocks, b *batch[T], p int) {
	t.Helper()
	x := b.newX()
	status := make([]int32, b.g+2)
	k, o := b.k, b.lay.off
	if !k.Const {
		k.A, k.B, k.C = k.A[o:], k.B[o:], k.C[o:]
	}
	require.NoError(t, LaunchBlocks(kern, l, b.n, b.g, b.es, b.bs, k, b.d[o:], x[o:], status, Options{Seed: 5}), name)
	for g := range b.g {
		s := b.sys[g]
		if b.k.Const {
			s = constSystem(b.k, s.d)
		}
		want := make([]T, b.n)
		require.NoError(t, partition.Solve(s.a, s.b, s.c, s.d, want, p, nil), name)
		if !sameBits(t, fmt.Sprintf("%s: system %d", name, g), b.rows(x, g), want, false) {
			return
		}
		assert.Zero(t, status[g], "%s: system %d", name, g)
	}
	assert.Zero(t, status[b.g], name)
	for i, own := range b.owned {
		if !own && bits(x[i]) != bits(junk[T]()) {
			t.Errorf("%s: entry %d outside the systems written: %v", name, i, x[i])
			return
		}
	}
}

// newBlocksBatch is g random systems of n rows (constant coefficients when
// constant) in layout lay, barely diagonally dominant (a, c from
// U(−1, −0.1), b = 1.001·(|a| + |c|); constant: −0.4, 1.001, −0.6), so
// that the reduced rows' couplings do not die out in the cyclic
// reduction's upper levels (with b = 4 they fall below the rounding of d
// there, and an error in those levels would not change a bit).
func newBlocksBatch[T Float](r *rand.Rand, n, g int, lay layout, constant bool) *batch[T] {
	k := Coeffs[T]{}
	if constant {
		k = Coeffs[T]{CA: T(-0.4), CB: T(1.001), CC: T(-0.6), Const: true}
	}
	sys := randSystems[T](r, n, g)
	for _, s := range sys {
		for i := range n {
			a, c := T(-0.1-0.9*r.Float64()), T(-0.1-0.9*r.Float64())
			if i > 0 {
				s.a[i] = a
			}
			if i < n-1 {
				s.c[i] = c
			}
			s.b[i] = T(1.001) * (-a - c)
		}
	}
	return pack(sys, lay, k)
}

// TestBlocksBitExact: the partition kernels that solve whole systems —
// one block per group of systems with chunks of 4, 8, 16 and 32 rows, the
// constant-coefficient kernel, the lanes kernel (interleaved batches), the
// streaming kernel and the constant streaming kernels (persistent grids
// of fewer blocks than groups) — launched as package tuning launches them
// on an H100, agree bit for bit with partition.Solve, for sizes that are
// not powers of two, one-row last chunks and every layout.
func TestBlocksBitExact(t *testing.T) {
	t.Run("float32", testBlocksBitExact[float32])
	t.Run("float64", testBlocksBitExact[float64])
}

func testBlocksBitExact[T Float](t *testing.T) {
	r := rand.New(rand.NewPCG(71, 72))
	elem := sizeOf[T]()
	dev := tuning.H100
	sysFirst := func(b *batch[T]) bool { return b.bs < b.es }
	const g = 5

	// One block per group of systems, chunks of p rows.
	chunks := map[Kernel]int{PartitionP4: 4, PartitionP8: 8, PartitionP16: 16, PartitionP32: 32}
	for _, kern := range []Kernel{PartitionP16, PartitionP4, PartitionP8, PartitionP32} {
		p := chunks[kern]
		if kern == PartitionP32 && elem == 8 {
			continue
		}
		sizes := []int{1, 2, 17, 33, 100, 513, 1000}
		if kern == PartitionP16 {
			sizes = append(sizes, 2049, 4096)
		}
		for _, n := range sizes {
			for _, lay := range []layout{contiguous, unaligned, strided, interleaved} {
				if kern != PartitionP16 && lay.name != "contiguous" && lay.name != "interleaved" {
					continue
				}
				for _, constant := range []bool{false, true} {
					if constant && kern != PartitionP16 {
						continue
					}
					b := newBlocksBatch[T](r, n, g, lay, constant)
					pl, err := tuning.PartitionLaunchChunk(dev, n, elem, p, g, sysFirst(b), 64)
					kk := kern
					if constant {
						kk = Const
						pl, err = tuning.PartitionLaunchConst(dev, n, elem, g, sysFirst(b), 64)
					}
					if err != nil {
						continue // too large for one block in this layout
					}
					l := Blocks{Grid: pl.Blocks(g), Threads: pl.Threads, SharedBytes: pl.SharedBytes, SPB: pl.SystemsPerBlock, TPS: pl.ThreadsPerSystem}
					runBlocks(t, fmt.Sprintf("kernel %d N=%d %s const=%v (%d systems × %d threads)", kk, n, lay.name, constant, l.SPB, l.TPS), kk, l, b, p)
				}
			}
		}
	}

	// The streamed lanes kernel: interleaved batches (aligned rows and, G
	// odd, not), constant coefficients, a grid of fewer blocks than
	// groups (each block several groups) and of one.
	for _, c := range []struct{ n, g, grid int }{{1, 16, 2}, {17, 40, 2}, {100, 37, 3}, {256, 64, 1}, {512, 24, 2}, {33, 8, 1}} {
		for _, constant := range []bool{false, true} {
			b := newBlocksBatch[T](r, c.n, c.g, interleaved, constant)
			ll, err := tuning.LanesStreamLaunchFor(dev, c.n, elem, b.g, 0)
			require.NoError(t, err)
			l := Blocks{Grid: c.grid, Threads: ll.Threads, SharedBytes: ll.SharedBytes, SPB: tuning.LanesStreamSystems}
			runBlocks(t, fmt.Sprintf("streamed lanes N=%d G=%d grid=%d const=%v", c.n, c.g, c.grid, constant), LanesStream, l, b, 16)
		}
	}

	// The lanes kernel: interleaved batches.
	for _, n := range []int{1, 16, 17, 100, 512} {
		b := newBlocksBatch[T](r, n, 40, interleaved, false)
		pl, err := tuning.PartitionLanesLaunch(dev, n, elem, 0, b.g, 0)
		require.NoError(t, err)
		l := Blocks{Grid: pl.Blocks(b.g), Threads: pl.Threads, SharedBytes: pl.SharedBytes, SPB: pl.SystemsPerBlock, TPS: pl.ThreadsPerSystem}
		runBlocks(t, fmt.Sprintf("lanes N=%d (%d systems a block)", n, l.SPB), Lanes, l, b, 16)
	}

	// The streaming kernel: two blocks loop over the systems.
	for _, n := range []int{2, 100, 2048, 3000, 4096, 8192} {
		maxT := kernelMaxThreads(t, Stream, elem)
		if n > tuning.PartitionStreamMaxN(dev, elem, maxT) {
			continue
		}
		for _, lay := range []layout{contiguous, unaligned} {
			b := newBlocksBatch[T](r, n, g, lay, false)
			sl, err := tuning.PartitionStreamLaunchFor(dev, n, elem, g, maxT, 0)
			require.NoError(t, err)
			l := Blocks{Grid: 2, Threads: sl.Threads, SharedBytes: sl.SharedBytes}
			runBlocks(t, fmt.Sprintf("stream N=%d %s", n, lay.name), Stream, l, b, 16)
		}
	}

	// The constant streaming kernels: two blocks loop over the groups.
	// Interleaved batches of 40 systems (G a multiple of 16 bytes) take
	// the row-major kernels' 16-byte copies and stores, but in the last,
	// partial group; unaligned ones element by element.
	for _, n := range []int{1, 17, 64, 100, 600, 1024, 1500, 2048, 2049, 4096} {
		for _, lg := range []struct {
			lay layout
			g   int
		}{{contiguous, 9}, {strided, 9}, {interleaved, 9}, {interleaved, 40}, {interleavedUnaligned, 40}} {
			lay := lg.lay
			b := newBlocksBatch[T](r, n, lg.g, lay, true)
			warp := tuning.PartitionConstStreamWarp(n)
			kern := ConstStream
			switch {
			case warp && sysFirst(b):
				kern = ConstStreamWarpRows
			case warp:
				kern = ConstStreamWarp
			case sysFirst(b):
				kern = ConstStreamRows
			}
			cl, err := tuning.PartitionConstStreamLaunchFor(dev, n, elem, b.g, sysFirst(b), kernelMaxThreads(t, kern, elem), 0, 0)
			if err != nil {
				continue // FP64 N > 2048, or interleaved without whole sectors in a block
			}
			l := Blocks{Grid: 2, Threads: cl.Threads, SharedBytes: cl.SharedBytes, SPB: cl.SystemsPerBlock, TPS: cl.ThreadsPerSystem}
			runBlocks(t, fmt.Sprintf("cstream kernel %d N=%d %s (%d systems × %d threads)", kern, n, lay.name, l.SPB, l.TPS), kern, l, b, 16)
		}
	}
}

// kernelMaxThreads is the launch bound (.maxntid) of the GPU kernel that
// kern, the streaming kernel or a constant streaming kernel, emulates for
// elements of elem bytes, from the kernel table.
func kernelMaxThreads(t *testing.T, kern Kernel, elem int) int {
	t.Helper()
	f64 := elem == 8
	var k kernels.Kernel
	var err error
	switch kern {
	case Stream:
		var f kernels.PartitionStreamP
		f, err = kernels.PartitionStreamPFor(16, f64)
		k = f.Kernel()
	case ConstStream:
		var f kernels.PartitionCstreamP
		f, err = kernels.PartitionCstreamPFor(16, f64)
		k = f.Kernel()
	case ConstStreamWarp:
		var f kernels.PartitionCstreamWarpP
		f, err = kernels.PartitionCstreamWarpPFor(16, f64)
		k = f.Kernel()
	case ConstStreamRows:
		var f kernels.PartitionCstreamRowsP
		f, err = kernels.PartitionCstreamRowsPFor(16, f64)
		k = f.Kernel()
	case ConstStreamWarpRows:
		var f kernels.PartitionCstreamWarpRowsP
		f, err = kernels.PartitionCstreamWarpRowsPFor(16, f64)
		k = f.Kernel()
	default:
		require.Failf(t, "no kernel", "kernel %d has no GPU twin with a launch bound", kern)
	}
	require.NoError(t, err)
	return k.Info().MaxThreads
}
