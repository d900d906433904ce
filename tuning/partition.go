package tuning

import (
	"fmt"
	"math"
	"math/bits"
	"slices"

	"github.com/bandsolve/bandsolve/internal/gpu/kernels"
	"github.com/bandsolve/bandsolve/tridiag/partition"
)

// The partition kernels (ptx/src/partition.cuh, the CPU twin is package
// tridiag/partition) give every thread one chunk of P consecutive rows of
// a system held in shared memory: ThreadsPerSystem ≥ ⌈N/P⌉ threads per
// system, SystemsPerBlock systems per block. The chunk size P is
// partition.DefaultChunk(N) unless a caller forces one of PartitionChunks:
// the kernels are compiled for those P (P is a template parameter: a
// thread's loops over its chunk are unrolled).
//
// Shared memory of a block: 4 arrays (a, b, c, d) of SystemsPerBlock × ss
// units of 16 bytes, ss = ⌈N/P⌉·P·ElemSize/16 (the chunks of a system,
// whole units: P·ElemSize must be a multiple of 16), rounded up to an odd
// multiple of 8 units when the systems are first in memory and ss ≥ 8
// (against bank conflicts of their copies); each array rounded up to a
// multiple of 8 units (the kernels' XOR swizzle permutes aligned groups of
// 8 units); then one int32 key per system.
//
// Choice of the launch, for the bandwidth of large batches: the kernel
// reads a, b, c, d once and writes x once, so it needs many bytes in
// flight (Little's law: about 3 TB/s × 0.7 µs ≈ 2 MB over 132 SMs on an
// H100, 16 KB per SM) and phases of different blocks overlapping (one
// block computes while another loads). Both come from many resident
// blocks per SM. So among the block sizes that fit (threads a multiple of
// 32, at most the kernel's launch bound; shared memory at most
// Device.MaxShared) the launch maximises the threads resident per SM, limited by threads, blocks,
// shared memory (plus the 1 KiB the driver reserves per block on compute
// capability ≥ 8) and registers; ties go to the block closest to 256
// threads. With the systems first in memory (bs < es, e.g. interleaved)
// a block takes at least 32 bytes' worth of systems (8 FP32, 4 FP64) when
// they fit, so that every 32-byte sector the loads touch is used whole.
// A batch too small to give every SM a block gets fewer systems per block.

// PartitionChunks lists the chunk sizes P the GPU kernels are built for
// (P = 32 in FP32 only: a chunk is at most 8 units of 16 bytes).
var PartitionChunks = []int{4, 8, 16, 32}

// PartitionKernelBuilt reports whether there is a kernel for chunks of p
// rows of elem bytes: p in PartitionChunks, a chunk of whole 16-byte
// units, at most 8 of them.
func PartitionKernelBuilt(p, elem int) bool {
	return (elem == 4 || elem == 8) && slices.Contains(PartitionChunks, p) && p*elem%16 == 0 && p*elem <= 128
}

// partitionKernelThreads is the launch bound of partition_p<p> for
// elements of elem bytes (1024 in FP32, 512 in FP64, whose reduced rows
// need more than 64 registers).
func partitionKernelThreads(p, elem int) int { return bound(kernels.PartitionPFor(p, elem == 8)) }

// PartitionLaunch is the launch of a partition kernel for systems of N
// rows: Blocks(G) blocks of Threads threads, SharedBytes of dynamic shared
// memory.
type PartitionLaunch struct {
	N, G, ElemSize   int
	Chunk            int  // P, rows per chunk (per thread)
	Chunks           int  // ⌈N/P⌉: threads with a chunk, per system
	ThreadsPerSystem int  // ≥ Chunks: a power of two ≤ 32 (Warp) or a multiple of 32
	SystemsPerBlock  int  // systems in one block
	Threads          int  // ThreadsPerSystem × SystemsPerBlock
	SharedBytes      int  // dynamic shared memory of one block
	Warp             bool // the reduced system is solved with warp shuffles (no barriers)
	// BlocksPerSM and ResidentThreads are the residency the choice
	// expects on the device (with the registers given to the choice).
	BlocksPerSM, ResidentThreads int
	MaxN                         int // the largest N this chunk size supports on the device
}

// Blocks returns the number of blocks for a batch of g systems.
func (l PartitionLaunch) Blocks(g int) int { return (g + l.SystemsPerBlock - 1) / l.SystemsPerBlock }

// PartitionSharedBytes is the dynamic shared memory of a block of spb
// systems of n rows in chunks of p rows; sysFirst: the systems are closer
// together in memory than the rows (batch stride < element stride).
func PartitionSharedBytes(n, p, elem, spb int, sysFirst bool) int {
	units := (spb*partitionStride(n, p, elem, sysFirst) + 7) &^ 7 // whole swizzle groups
	return 4*units*16 + 4*spb
}

// partitionConstSharedBytes is the dynamic shared memory of a block of the
// constant-coefficient kernel (partition_const_p16_*): two arrays (d, and
// the exchange slots) of spb systems' units in whole groups of 8, the
// table of Stage 1 (r, γ, α for P rows and a bit mask), one int32 key per
// system.
func partitionConstSharedBytes(n, p, elem, spb int, sysFirst bool) int {
	units := (spb*partitionStride(n, p, elem, sysFirst) + 7) &^ 7
	table := (3*p*elem + 4 + elem - 1) / elem * elem
	return 2*units*16 + table + 4*spb
}

// partitionShared is the shared memory of either kernel.
func partitionShared(n, p, elem, spb int, sysFirst bool, kind partKind) int {
	switch kind {
	case partConst:
		return partitionConstSharedBytes(n, p, elem, spb, sysFirst)
	case partPivot:
		return PivotSharedBytes(n, elem, spb, sysFirst)
	}
	return PartitionSharedBytes(n, p, elem, spb, sysFirst)
}

// partKind names a kernel with the partition kernels' layout: its shared
// memory and the largest system it holds differ.
type partKind int

const (
	partGeneral partKind = iota // partition_p*_*
	partConst                   // partition_const_p16_*
	partPivot                   // partition_pivot_p16_*
)

// partitionStride is the kernels' part_ss: a system's units of 16 bytes.
func partitionStride(n, p, elem int, sysFirst bool) int {
	ss := partition.Chunks(n, p) * p * elem / 16
	if sysFirst && ss >= 8 {
		ss = (ss+7)&^7 | 8
	}
	return ss
}

// partitionThreads returns the threads per system for n rows in chunks of
// p: the power of two ≥ ⌈n/p⌉ up to 32 (one warp or less: shuffles), the
// multiple of 32 ≥ ⌈n/p⌉ beyond.
func partitionThreads(n, p int) int {
	c := partition.Chunks(n, p)
	if c <= 32 {
		return 1 << bits.Len(uint(c-1))
	}
	return (c + 31) / 32 * 32
}

// partitionMaxBlock is the largest block of a kernel whose launch bound
// is maxT threads on d.
func partitionMaxBlock(d Device, maxT int) int {
	m := maxT
	if d.MaxThreadsPerBlock > 0 {
		m = min(m, d.MaxThreadsPerBlock)
	}
	return m
}

// partitionFits reports whether one system of n rows in chunks of p fits
// one block.
func partitionFits(d Device, n, p, elem int, sysFirst bool) bool {
	return partitionThreads(n, p) <= partitionMaxBlock(d, partitionKernelThreads(p, elem)) && PartitionSharedBytes(n, p, elem, 1, sysFirst) <= d.MaxShared()
}

// PartitionMaxN returns the largest N a block holds with chunks of p
// rows (the shared memory of one system, and ⌈N/p⌉ threads), for systems
// stored rows first (sysFirst false: contiguous, strided) or systems
// first (interleaved). With p = 0 it is the largest N such that every
// system of up to N rows fits one block with the default chunk size
// partition.DefaultChunk.
func PartitionMaxN(d Device, elem, p int, sysFirst bool) int {
	if p > 0 {
		return partitionMaxN(d, elem, p, sysFirst, partGeneral, partitionKernelThreads(p, elem))
	}
	n := 0
	for n < 1<<22 && partitionFits(d, n+1, partition.DefaultChunk(n+1), elem, sysFirst) {
		n++
	}
	return n
}

// partitionMaxN is the largest N of chunks of p rows for either kernel
// layout, by a kernel whose launch bound is maxT threads.
func partitionMaxN(d Device, elem, p int, sysFirst bool, kind partKind, maxT int) int {
	limit := math.MaxInt
	if kind == partPivot {
		limit = PivotBlockRows
	}
	return min(limit, maxFit(d.MaxShared(), func(n int) int {
		if partitionThreads(n, p) > partitionMaxBlock(d, maxT) {
			return d.MaxShared() + 1
		}
		return partitionShared(n, p, elem, 1, sysFirst, kind)
	}))
}

// partitionLaunchFor chooses the launch for a batch of g systems of n rows
// of elem bytes with the default chunk size (partition.DefaultChunk(n)).
// sysFirst says that the systems are closer together in memory than the
// rows (batch stride < element stride); regs is the kernel's registers per
// thread (0: assume 64, the most its launch bounds allow).
func partitionLaunchFor(d Device, n, elem, g int, sysFirst bool, regs int) (PartitionLaunch, error) {
	return PartitionLaunchChunk(d, n, elem, partition.DefaultChunk(n), g, sysFirst, regs)
}

// PartitionLaunchChunk chooses the launch for a batch of g systems of n
// rows of elem bytes in chunks of p rows, p one of PartitionChunks.
// sysFirst says that the systems are closer together in memory than the
// rows (batch stride < element stride); regs is the kernel's registers per
// thread (0: assume 64, the most its launch bounds allow). It fails with
// ErrTooLargeForShared when one system does not fit a block.
func PartitionLaunchChunk(d Device, n, elem, p, g int, sysFirst bool, regs int) (PartitionLaunch, error) {
	return partitionLaunch(d, n, elem, p, g, sysFirst, regs, partGeneral, partitionKernelThreads(p, elem))
}

// PartitionLaunchConst chooses the launch of the constant-coefficient
// kernel (partition_const_p16_*: chunks of 16 rows, a quarter to a half
// of the shared memory of PartitionLaunchChunk's kernel per system) by the
// same rules; regs is that kernel's registers per thread.
func PartitionLaunchConst(d Device, n, elem, g int, sysFirst bool, regs int) (PartitionLaunch, error) {
	return partitionLaunch(d, n, elem, 16, g, sysFirst, regs, partConst, bound(kernels.PartitionConstPFor(16, elem == 8)))
}

// partitionLaunch is the launch of a kernel with the partition kernels'
// layout (kind: which kernel) and launch bound maxT.
func partitionLaunch(d Device, n, elem, p, g int, sysFirst bool, regs int, kind partKind, maxT int) (PartitionLaunch, error) {
	l := PartitionLaunch{N: n, G: g, ElemSize: elem, Chunk: p}
	if n < 1 || g < 1 || !PartitionKernelBuilt(p, elem) {
		return l, fmt.Errorf("tuning: partition launch for N=%d G=%d, element size %d, chunk %d (kernels: chunks %v of at most 128 bytes)", n, g, elem, p, PartitionChunks)
	}
	l.MaxN = partitionMaxN(d, elem, p, sysFirst, kind, maxT)
	if n > l.MaxN {
		return l, fmt.Errorf("%w: the partition method holds a system in one block (%d B of shared memory, %d threads on %s): N=%d exceeds the largest supported N=%d for %d-byte elements and chunks of %d rows",
			ErrTooLargeForShared, d.MaxShared(), partitionMaxBlock(d, maxT), d.Name, n, l.MaxN, elem, p)
	}
	if regs <= 0 {
		regs = 64
	}
	l.Chunks = partition.Chunks(n, p)
	tps := partitionThreads(n, p)
	l.ThreadsPerSystem, l.Warp = tps, tps <= 32

	// Candidates: spb = unit·2^k, unit systems fill one warp.
	unit := max(1, 32/tps)
	maxBlock := partitionMaxBlock(d, maxT)
	type cand struct{ spb, blocks, res int }
	var cands []cand
	for spb := unit; spb*tps <= maxBlock; spb *= 2 {
		sh := partitionShared(n, p, elem, spb, sysFirst, kind)
		if sh > d.MaxShared() && spb > 1 {
			break
		}
		blocks, res := partitionResidency(d, tps*spb, sh, regs)
		cands = append(cands, cand{spb, blocks, res})
	}
	// Systems first in memory: whole 32-byte sectors when possible, else
	// the widest candidate the small-batch rule below leaves. A row of a
	// block's systems is one L2 request; below a sector the requests, not
	// DRAM, bound the kernel, so fewer blocks on an SM cost less than
	// narrower rows.
	// H100, FP32 N = 2048 interleaved: 32% of the limit with 4 systems a
	// block against 22% with 2 (go test -tags cuda -run '^$' -bench
	// Interleaved ./internal/gpu/tridiaggpu).
	widest := false
	if sysFirst {
		minSys := 32 / elem
		var wide []cand
		for _, c := range cands {
			if c.spb >= minSys {
				wide = append(wide, c)
			}
		}
		if len(wide) > 0 {
			cands = wide
		} else {
			widest = true
		}
	}
	// A small batch: at most ⌈g/SMs⌉ systems per block, so that every SM
	// gets a block (the smallest candidate stays).
	if d.SMs > 0 {
		lim := (g + d.SMs - 1) / d.SMs
		var few []cand
		for _, c := range cands {
			if c.spb <= lim {
				few = append(few, c)
			}
		}
		if len(few) > 0 {
			cands = few
		} else {
			cands = cands[:1]
		}
	}
	best := cands[0]
	dist := func(c cand) int {
		return abs(bits.Len(uint(c.spb*tps)) - bits.Len(256))
	}
	// Equal residency: two blocks an SM or more before one (one block
	// computing while another loads), then the block closest to 256
	// threads.
	// H100, FP64 N = 3072 in one block of two systems: 75% of the limit
	// (go test -tags cuda -run '^$' -bench Stream ./internal/gpu/tridiaggpu).
	better := func(c, best cand) bool {
		if c.res != best.res {
			return c.res > best.res
		}
		if (c.blocks >= 2) != (best.blocks >= 2) {
			return c.blocks >= 2
		}
		return dist(c) < dist(best)
	}
	for _, c := range cands[1:] {
		if widest || better(c, best) {
			best = c // candidates are in increasing spb
		}
	}
	l.SystemsPerBlock, l.Threads = best.spb, best.spb*tps
	l.SharedBytes = partitionShared(n, p, elem, best.spb, sysFirst, kind)
	l.BlocksPerSM, l.ResidentThreads = best.blocks, best.res
	return l, nil
}

// partitionResidency returns the blocks of `threads` threads, `shared`
// bytes of shared memory and regs registers per thread that one SM holds
// at once, and their threads.
func partitionResidency(d Device, threads, shared, regs int) (blocks, resident int) {
	blocks = d.MaxThreadsPerSM / threads
	if d.MaxBlocksPerSM > 0 {
		blocks = min(blocks, d.MaxBlocksPerSM)
	}
	reserve := 0
	if d.Major >= 8 {
		reserve = 1 << 10 // the driver's shared memory per block
	}
	if d.SharedPerSM > 0 {
		blocks = min(blocks, d.SharedPerSM/(shared+reserve))
	}
	if d.RegsPerSM > 0 {
		// Registers are allocated per warp in units of 256.
		warpRegs := (regs*32 + 255) / 256 * 256
		warps := (threads + 31) / 32
		blocks = min(blocks, d.RegsPerSM/(warpRegs*warps))
	}
	blocks = max(blocks, 0)
	return blocks, blocks * threads
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

// The lanes kernel (partition_lanes_p16_*, ptx/src/lanes.cuh) puts S
// adjacent systems (S = 32, 16 or 8) across the lanes of a block and one
// chunk of 16 rows a thread: for batches whose systems are adjacent in
// memory (batch stride 1, the interleaved layout) every load and store of
// a warp is 32/S rows of S systems, and a thread's chunk stays in its
// registers. A block holds S systems and S·⌈N/16⌉ threads, so N is at most
// 16 rows a thread of partitionLanesMaxThreads/8 threads; its shared
// memory holds only the reduced rows.

// PartitionLanesSystems lists the systems a block of the lanes kernel may
// take, widest first.
var PartitionLanesSystems = []int{32, 16, 8}

// partitionLanesMaxThreads is the __launch_bounds__ of the lanes kernel
// for elements of elem bytes: 512 in FP32, 256 in FP64 (179 registers a
// thread on sm_90).
func partitionLanesMaxThreads(elem int) int { return bound(kernels.PartitionLanesPFor(16, elem == 8)) }

// PartitionLanesMaxN is the largest N of the lanes kernel for elements of
// elem bytes (8 systems a block): 1024 in FP32, 512 in FP64.
func PartitionLanesMaxN(elem int) int { return partitionLanesMaxThreads(elem) / 8 * 16 }

// partitionLanesSharedBytes is the dynamic shared memory of a block of
// the lanes kernel with spb systems: two buffers of four values (a, c, d,
// 1/b) of the 2·⌈N/16⌉ reduced rows of spb systems.
func partitionLanesSharedBytes(n, elem, spb int) int {
	return 2 * 4 * 2 * partition.Chunks(n, 16) * spb * elem
}

// PartitionLanesLaunch is the launch of the lanes kernel for g systems of
// n rows of elem bytes (chunks of 16 rows, partition.DefaultChunk) with
// spb systems a block, one of PartitionLanesSystems, or, for spb = 0, 64
// bytes of systems a block (16 FP32, 8 FP64), 8 when the threads would
// exceed the kernel's bound. regs is the kernel's registers per thread
// (0: assume the most its launch bounds allow). It fails for N above
// PartitionLanesMaxN.
//
// H100, FP32 N = 256 interleaved: 71% of the limit with 16 systems a
// block against 63% with 32 (go test -tags cuda -run '^$' -bench
// Interleaved ./internal/gpu/tridiaggpu).
func PartitionLanesLaunch(d Device, n, elem, spb, g, regs int) (PartitionLaunch, error) {
	if spb == 0 {
		spb = max(8, 64/max(elem, 1))
		for spb > 8 && spb*partition.Chunks(n, 16) > partitionLanesMaxThreads(elem) {
			spb /= 2
		}
	}
	const p = 16
	l := PartitionLaunch{N: n, G: g, ElemSize: elem, Chunk: p, MaxN: PartitionLanesMaxN(elem)}
	if n < 1 || g < 1 || (elem != 4 && elem != 8) || !slices.Contains(PartitionLanesSystems, spb) {
		return l, fmt.Errorf("tuning: lanes launch for N=%d G=%d, element size %d, %d systems a block (%v)", n, g, elem, spb, PartitionLanesSystems)
	}
	l.Chunks = partition.Chunks(n, p)
	if spb*l.Chunks > partitionLanesMaxThreads(elem) {
		return l, fmt.Errorf("%w: the lanes kernel takes a thread per chunk of 16 rows, at most %d threads: N=%d with %d systems a block needs %d (largest N %d)",
			ErrTooLargeForShared, partitionLanesMaxThreads(elem), n, spb, spb*l.Chunks, l.MaxN)
	}
	if regs <= 0 {
		regs = 65536 / partitionLanesMaxThreads(elem)
	}
	l.ThreadsPerSystem, l.SystemsPerBlock = l.Chunks, spb
	l.Threads = spb * l.Chunks
	l.SharedBytes = partitionLanesSharedBytes(n, elem, spb)
	l.BlocksPerSM, l.ResidentThreads = partitionResidency(d, l.Threads, l.SharedBytes+128, regs)
	return l, nil
}

// GatherMinN is the smallest N at which a partition plan for systems
// stored systems first (interleaved: batch stride < element stride) gathers
// them into contiguous systems (layout_gather, a contiguous plan, x
// scattered back) even where one block holds a system in place: beyond
// N = 2048 the few systems a block leaves too few rows in flight per SM,
// and the gathered plan moves every byte three times but at the
// contiguous kernels' rate.
//
// H100, FP32 N = 4096 interleaved: 30% of the limit gathered against 23%
// in place (go test -tags cuda -run '^$' -bench Interleaved
// ./internal/gpu/tridiaggpu).
const GatherMinN = 2049
