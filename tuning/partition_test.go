package tuning

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/tridiag/partition"
)

// TestPartitionSharedBytes: 16-byte units of whole chunks, 8-unit groups,
// the odd multiple of 8 for systems first in memory, one key per system.
func TestPartitionSharedBytes(t *testing.T) {
	for _, c := range []struct {
		n, p, elem, spb int
		sysFirst        bool
		want            int
	}{
		{64, 16, 4, 1, false, 4*16*16 + 4},       // 4 chunks of 4 units
		{64, 16, 4, 1, true, 4*24*16 + 4},        // 16 units → 24 (24/8 odd)
		{64, 16, 4, 3, false, 4*48*16 + 12},      // 48 units
		{100, 16, 4, 1, false, 4*32*16 + 4},      // 7 chunks, 28 units → 32
		{100, 16, 8, 2, false, 4*112*16 + 8},     // 7 chunks of 8 units, 2 systems
		{5, 16, 4, 1, true, 4*8*16 + 4},          // 4 units (< 8: no padding) → 8
		{1, 4, 4, 1, false, 4*8*16 + 4},          // 1 unit → 8
		{4096, 16, 8, 1, false, 4*2048*16 + 4},   // 128 KiB of rows
		{4096, 16, 8, 1, true, 4*2056*16 + 4},    // 2048 → 2056
		{1000, 8, 4, 4, true, 4*(4*264)*16 + 16}, // 250 units → 264 (33 groups)
	} {
		assert.Equal(t, c.want, PartitionSharedBytes(c.n, c.p, c.elem, c.spb, c.sysFirst), "%+v", c)
	}
}

func TestPartitionKernelBuilt(t *testing.T) {
	for _, c := range []struct {
		p, elem int
		want    bool
	}{{4, 4, true}, {8, 4, true}, {16, 4, true}, {32, 4, true}, {4, 8, true}, {8, 8, true}, {16, 8, true},
		{32, 8, false}, {2, 4, false}, {2, 8, false}, {12, 4, false}, {16, 2, false}} {
		assert.Equal(t, c.want, PartitionKernelBuilt(c.p, c.elem), "p=%d elem=%d", c.p, c.elem)
	}
	_, err := PartitionLaunchChunk(H100, 64, 8, 32, 1, false, 0)
	assert.Error(t, err)
	_, err = PartitionLaunchChunk(H100, 0, 4, 16, 1, false, 0)
	assert.Error(t, err)
}

// TestPartitionMaxN: the largest N fits, one more does not, on every
// recorded device, in both layouts' orders and precisions; on Hopper a
// block holds an FP32 system of 14496 rows and an FP64 one of 7248 (four
// arrays of 16-byte units in 227 KiB).
func TestPartitionMaxN(t *testing.T) {
	assert.Equal(t, 14496, PartitionMaxN(H100, 4, 0, false))
	assert.Equal(t, 7248, PartitionMaxN(H100, 8, 0, false))
	assert.Equal(t, 7248, PartitionMaxN(H200, 8, 0, true))
	assert.Equal(t, 10400, PartitionMaxN(A100, 4, 0, false))
	assert.Equal(t, 1520, PartitionMaxN(GTX980, 8, 0, false))
	for _, d := range recorded {
		for _, elem := range []int{4, 8} {
			for _, sf := range []bool{false, true} {
				m := PartitionMaxN(d, elem, 0, sf)
				require.Positive(t, m)
				_, err := partitionLaunchFor(d, m, elem, 100, sf, 0)
				require.NoError(t, err, "%s elem %d", d.Name, elem)
				_, err = partitionLaunchFor(d, m+1, elem, 100, sf, 0)
				require.ErrorIs(t, err, ErrTooLargeForShared, "%s elem %d", d.Name, elem)
				assert.Contains(t, err.Error(), fmt.Sprintf("N=%d", PartitionMaxN(d, elem, partition.DefaultChunk(m+1), sf)))
				for _, p := range PartitionChunks {
					if !PartitionKernelBuilt(p, elem) {
						continue
					}
					mc := PartitionMaxN(d, elem, p, sf)
					_, err := PartitionLaunchChunk(d, mc, elem, p, 1, sf, 0)
					require.NoError(t, err, "%s elem %d p %d N %d", d.Name, elem, p, mc)
					l, err := PartitionLaunchChunk(d, mc+1, elem, p, 1, sf, 0)
					require.ErrorIs(t, err, ErrTooLargeForShared, "%s elem %d p %d", d.Name, elem, p)
					assert.Equal(t, mc, l.MaxN)
				}
			}
		}
	}
}

// TestPartitionLaunchLimits: for every N up to the largest, on every
// recorded device, every chunk size, batch size and order, the launch
// stays within the device's and the kernel's limits, holds every chunk
// of a system, keeps a system's threads in one warp (a power of two) or
// in whole warps, and fits at least one block per SM.
func TestPartitionLaunchLimits(t *testing.T) {
	for _, d := range recorded {
		for _, elem := range []int{4, 8} {
			for _, p := range PartitionChunks {
				if !PartitionKernelBuilt(p, elem) {
					continue
				}
				for _, sf := range []bool{false, true} {
					maxN := PartitionMaxN(d, elem, p, sf)
					for n := 1; n <= maxN; n += 1 + n/8 {
						for _, g := range []int{1, 7, 1000, 1 << 20} {
							for _, regs := range []int{0, 40, 64} {
								name := fmt.Sprintf("%s elem=%d p=%d sysFirst=%v n=%d g=%d regs=%d", d.Name, elem, p, sf, n, g, regs)
								l, err := PartitionLaunchChunk(d, n, elem, p, g, sf, regs)
								require.NoError(t, err, name)
								require.Equal(t, partition.Chunks(n, p), l.Chunks, name)
								require.GreaterOrEqual(t, l.ThreadsPerSystem, l.Chunks, name)
								if l.Warp {
									require.LessOrEqual(t, l.ThreadsPerSystem, 32, name)
									require.Zero(t, l.ThreadsPerSystem&(l.ThreadsPerSystem-1), name)
								} else {
									require.Zero(t, l.ThreadsPerSystem%32, name)
								}
								require.Equal(t, l.ThreadsPerSystem*l.SystemsPerBlock, l.Threads, name)
								require.Zero(t, l.Threads%32, name)
								require.LessOrEqual(t, l.Threads, min(d.MaxThreadsPerBlock, partitionKernelThreads(p, elem)), name)
								require.LessOrEqual(t, l.SharedBytes, d.MaxShared(), name)
								require.Equal(t, PartitionSharedBytes(n, p, elem, l.SystemsPerBlock, sf), l.SharedBytes, name)
								require.Positive(t, l.BlocksPerSM, name)
								require.LessOrEqual(t, l.ResidentThreads, d.MaxThreadsPerSM, name)
								require.GreaterOrEqual(t, l.Blocks(g)*l.SystemsPerBlock, g, name)
								require.Less(t, (l.Blocks(g)-1)*l.SystemsPerBlock, g, name)
								again, _ := PartitionLaunchChunk(d, n, elem, p, g, sf, regs)
								require.Equal(t, l, again, name)
							}
						}
					}
				}
			}
		}
	}
}

// TestPartitionLaunchChoices pins the H100 choices for the benchmark
// shapes (2^24 rows; 64 registers per thread, the kernels' bound), whose
// residency the report quotes, and the rules for small and interleaved
// batches.
func TestPartitionLaunchChoices(t *testing.T) {
	type want struct{ tps, spb, blocksPerSM, resident int }
	for _, c := range []struct {
		n, elem int
		want
	}{
		{64, 4, want{4, 16, 13, 832}},
		{256, 4, want{16, 4, 13, 832}},
		{1024, 4, want{64, 1, 13, 832}},
		{4096, 4, want{256, 1, 3, 768}},
		{64, 8, want{4, 8, 13, 416}},
		{256, 8, want{16, 2, 13, 416}},
		{1024, 8, want{64, 2, 3, 384}},
		{4096, 8, want{256, 1, 1, 256}},
	} {
		l, err := partitionLaunchFor(H100, c.n, c.elem, 1<<24/c.n, false, 64)
		require.NoError(t, err)
		assert.Equal(t, c.want, want{l.ThreadsPerSystem, l.SystemsPerBlock, l.BlocksPerSM, l.ResidentThreads}, "N=%d elem=%d", c.n, c.elem)
		assert.Equal(t, 16, l.Chunk)
		assert.Equal(t, l.ThreadsPerSystem <= 32, l.Warp)
	}
	// Fewer registers, more threads per SM.
	l40, _ := partitionLaunchFor(H100, 64, 4, 1<<18, false, 40)
	l64, _ := partitionLaunchFor(H100, 64, 4, 1<<18, false, 64)
	assert.GreaterOrEqual(t, l40.ResidentThreads, l64.ResidentThreads)
	// A small batch: one system per block when the systems number fewer
	// than the SMs (so that they spread), still whole warps.
	l, err := partitionLaunchFor(H100, 64, 4, 7, false, 64)
	require.NoError(t, err)
	assert.Equal(t, 8, l.SystemsPerBlock) // 8 systems of 4 threads: one warp
	assert.Equal(t, 1, l.Blocks(7))
	l, err = partitionLaunchFor(H100, 1024, 4, 7, false, 64)
	require.NoError(t, err)
	assert.Equal(t, 1, l.SystemsPerBlock)
	// Systems first in memory: at least 32 bytes of systems per block
	// when they fit.
	for _, elem := range []int{4, 8} {
		for _, n := range []int{64, 256, 1000} {
			l, err := partitionLaunchFor(H100, n, elem, 1<<16, true, 64)
			require.NoError(t, err)
			assert.GreaterOrEqual(t, l.SystemsPerBlock*elem, 32, "N=%d elem=%d", n, elem)
		}
	}
	// Otherwise as many systems as fit, whatever the blocks an SM (the
	// most a block holds of 2048 rows is 4 FP32 or 2 FP64 systems), and
	// still no more than a small batch spreads.
	for _, c := range []struct{ n, elem, g, spb int }{
		{2048, 4, 1 << 13, 4}, {4096, 4, 1 << 12, 2}, {2048, 8, 1 << 13, 2}, {4096, 4, 100, 1},
	} {
		l, err := partitionLaunchFor(H100, c.n, c.elem, c.g, true, 64)
		require.NoError(t, err)
		assert.Equal(t, c.spb, l.SystemsPerBlock, "%+v", c)
		assert.LessOrEqual(t, l.SharedBytes, H100.MaxShared(), "%+v", c)
	}
}

// TestPartitionConstLaunch: the constant-coefficient kernel holds d and the
// exchange slots (two arrays), the table and the keys, so that a block
// takes twice the systems of the general kernel and N up to its threads'
// limit (16 rows a thread).
func TestPartitionConstLaunch(t *testing.T) {
	assert.Equal(t, 2*16*16+3*16*4+4+4, partitionConstSharedBytes(64, 16, 4, 1, false))
	assert.Equal(t, 2*2048*16+(3*16*8+4+4)+4, partitionConstSharedBytes(4096, 16, 8, 1, false))
	for _, elem := range []int{4, 8} {
		for _, n := range []int{64, 1024, 4096} {
			c, err := PartitionLaunchConst(H100, n, elem, 1<<24/n, false, 48)
			require.NoError(t, err)
			a, err := PartitionLaunchChunk(H100, n, elem, 16, 1<<24/n, false, 48)
			require.NoError(t, err)
			assert.GreaterOrEqual(t, c.ResidentThreads, a.ResidentThreads, "N=%d elem=%d", n, elem)
			assert.Less(t, c.SharedBytes/c.SystemsPerBlock, a.SharedBytes/a.SystemsPerBlock, "N=%d elem=%d", n, elem)
		}
	}
	c, err := PartitionLaunchConst(H100, 16384, 4, 64, false, 48)
	require.NoError(t, err, "FP32: 1024 threads of 16 rows")
	assert.Equal(t, 16384, c.MaxN)
	_, err = PartitionLaunchConst(H100, 16385, 4, 64, false, 48)
	assert.ErrorIs(t, err, ErrTooLargeForShared)
}

// TestPartitionLanesLaunch: 64 bytes of systems a block, 8 systems where
// the threads, one a chunk of 16 rows, would exceed the kernel's bound;
// the reduced rows' two buffers in shared memory.
func TestPartitionLanesLaunch(t *testing.T) {
	for _, elem := range []int{4, 8} {
		maxT := partitionLanesMaxThreads(elem)
		maxN := PartitionLanesMaxN(elem)
		assert.Equal(t, maxT*2, maxN)
		for _, n := range []int{1, 16, 17, 100, 128, 256, 300, maxN} {
			l, err := PartitionLanesLaunch(H100, n, elem, 0, 1000, 0)
			require.NoError(t, err)
			chunks := (n + 15) / 16
			spb := 64 / elem
			if spb*chunks > maxT {
				spb = 8
			}
			assert.Equal(t, spb, l.SystemsPerBlock, "N=%d elem=%d", n, elem)
			assert.Equal(t, spb*chunks, l.Threads)
			assert.Equal(t, (1000+spb-1)/spb, l.Blocks(1000))
			assert.Equal(t, 2*4*2*chunks*spb*elem, l.SharedBytes)
			assert.Positive(t, l.BlocksPerSM)
		}
		_, err := PartitionLanesLaunch(H100, maxN+1, elem, 0, 1000, 0)
		require.ErrorIs(t, err, ErrTooLargeForShared)
		_, err = PartitionLanesLaunch(H100, 256, elem, 12, 1000, 0)
		require.Error(t, err)
	}
}
