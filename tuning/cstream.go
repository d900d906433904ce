package tuning

import (
	"fmt"
	"math/bits"
)

// The constant-coefficient streaming kernels (partition_cstream_p16_* and
// partition_cstream_warp_p16_*, ptx/src/cstream.cuh) solve large batches
// of systems that share constant a, b, c: a persistent grid whose blocks
// compute what depends on the matrix once (Stage 1's table, the factors
// of every PCR step, kept in registers) and then loop over groups of spb
// systems, loading the next group's d while they solve the current one
// with d alone. Auto's rule is PreferConstStream.

// PartitionConstStreamMaxN is the largest N of the constant streaming
// kernels: the factors of at most 9 PCR steps (2·⌈N/16⌉ ≤ 512 reduced
// rows) stay in registers.
const PartitionConstStreamMaxN = 4096

// PartitionConstStreamMaxThreads is the kernels' __launch_bounds__: 512 in
// FP32, 256 in FP64.
func PartitionConstStreamMaxThreads(elem int) int {
	if elem == 8 {
		return 256
	}
	return 512
}

// PartitionConstStreamSharedBytes is the dynamic shared memory of a block
// of spb systems of n rows: two arrays (d, and the exchange where x also
// passes) of the systems' units of 16 bytes in whole groups of 8, Stage 1's
// table (r, γ, α for 16 rows and a bit mask), 3·spb int32 keys.
func PartitionConstStreamSharedBytes(n, elem, spb int, sysFirst bool) int {
	units := (spb*partitionStride(n, 16, elem, sysFirst) + 7) &^ 7
	table := (3*16*elem + 4 + elem - 1) / elem * elem
	return 2*units*16 + table + 12*spb
}

// ConstStreamLaunch is the launch of a constant streaming kernel: Grid
// blocks (at most one a group, at most BlocksPerSM on every SM) of
// Threads = SystemsPerBlock·ThreadsPerSystem threads, SharedBytes of
// dynamic shared memory; Warp kernels (ThreadsPerSystem ≤ 32) run PCR by
// shuffles.
type ConstStreamLaunch struct {
	N, ElemSize      int
	ThreadsPerSystem int
	SystemsPerBlock  int
	Threads          int
	SharedBytes      int
	Warp             bool
	BlocksPerSM      int
	Groups           int // ⌈G/SystemsPerBlock⌉, the blocks' units of work
	Grid             int
}

// PartitionConstStreamLaunchFor is the launch of a constant streaming
// kernel for g systems of n rows of elem bytes (sysFirst: the systems are
// closer together in memory than the rows); regs is the kernel's
// registers per thread (0: the most its launch bounds allow); spb > 0
// forces the systems a block (benchmarks), else the choice is the
// candidate with the most resident threads on d, the smaller block on a
// tie, among those of whole 32-byte sectors when sysFirst. It fails for N
// above PartitionConstStreamMaxN or when no block fits an SM.
func PartitionConstStreamLaunchFor(d Device, n, elem, g int, sysFirst bool, regs, spb int) (ConstStreamLaunch, error) {
	l := ConstStreamLaunch{N: n, ElemSize: elem}
	if n < 1 || g < 1 || (elem != 4 && elem != 8) {
		return l, fmt.Errorf("tuning: constant streaming launch for N=%d G=%d, element size %d", n, g, elem)
	}
	if n > PartitionConstStreamMaxN {
		return l, fmt.Errorf("%w: the constant streaming kernel takes N ≤ %d; N=%d", ErrTooLargeForShared, PartitionConstStreamMaxN, n)
	}
	maxT := PartitionConstStreamMaxThreads(elem)
	if d.MaxThreadsPerBlock > 0 {
		maxT = min(maxT, d.MaxThreadsPerBlock)
	}
	if regs <= 0 {
		regs = 65536 / PartitionConstStreamMaxThreads(elem)
	}
	tps := partitionThreads(n, 16)
	l.ThreadsPerSystem, l.Warp = tps, tps <= 32
	type cand struct{ spb, blocks, res, shared int }
	var cands []cand
	unit := max(1, 32/tps)
	for s := unit; s*tps <= maxT; s *= 2 {
		if spb > 0 && s != spb {
			continue
		}
		sh := PartitionConstStreamSharedBytes(n, elem, s, sysFirst)
		blocks, res := partitionResidency(d, s*tps, sh, regs)
		if blocks < 1 || sh > d.MaxShared() {
			continue
		}
		cands = append(cands, cand{s, blocks, res, sh})
	}
	if sysFirst && spb == 0 {
		var wide []cand
		for _, c := range cands {
			if c.spb*elem >= 32 {
				wide = append(wide, c)
			}
		}
		if len(wide) > 0 {
			cands = wide
		}
	}
	if len(cands) == 0 {
		return l, fmt.Errorf("%w: no block of the constant streaming kernel for N=%d (%d systems a block asked, %d registers a thread) fits an SM of %s", ErrTooLargeForShared, n, spb, regs, d.Name)
	}
	best := cands[0]
	for _, c := range cands[1:] {
		if c.res > best.res {
			best = c
		}
	}
	l.SystemsPerBlock, l.Threads, l.SharedBytes, l.BlocksPerSM = best.spb, best.spb*tps, best.shared, best.blocks
	l.Groups = (g + best.spb - 1) / best.spb
	l.Grid = min(l.Groups, l.BlocksPerSM*max(d.SMs, 1))
	return l, nil
}

// PartitionConstStreamSteps is the number of PCR steps of the constant
// streaming kernel for n rows (⌈log2 RR⌉ of its RR reduced rows): at most
// 6 in the warp kernel, 9 in the other.
func PartitionConstStreamSteps(n int) int {
	nch := (n + 15) / 16
	rr := 2 * nch
	if n-(nch-1)*16 == 1 {
		rr--
	}
	if rr <= 1 {
		return 0
	}
	return bits.Len(uint(rr - 1))
}

// PreferConstStream reports whether a constant solve of g systems takes
// the streaming kernel (launch s): when every block gets two groups of
// systems or more (the gain is the next group's copy; a smaller batch
// keeps the one-shot kernel, which signals its own completion).
func PreferConstStream(d Device, s ConstStreamLaunch) bool {
	return s.N <= PartitionConstStreamMaxN && s.BlocksPerSM >= 1 && s.Groups >= 2*s.BlocksPerSM*max(d.SMs, 1)
}
