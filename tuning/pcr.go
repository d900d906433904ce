package tuning

import (
	"errors"
	"fmt"
	"github.com/bandsolve/bandsolve/internal/gpu/kernels"
	"math/bits"
)

// Shared-memory reduction kernels (PCR and its PCR→Thomas hybrid, CR;
// ptx/src/pcr.cuh and ptx/src/cr.cuh) keep whole systems in shared memory:
// a block loads SystemsPerBlock systems, ThreadsPerSystem threads reduce
// each one, and x is written back. A system that does not fit in the
// shared memory one block may use (Device.MaxShared) is not supported by
// these kernels.
//
// Shared memory of one system (elements of ElemSize bytes):
//
//	PCR: 4·N (the current level: a, b, c, d; x ends in d's place)
//	     + 4·⌊N/2⌋ (the half level that one step's odd-class rows are
//	     written to before they are copied back)
//	CR:  4·N (every level in place: a kept row is rewritten at its own
//	     index, an eliminated row keeps its values for the substitution,
//	     x ends in d's place)
//
// plus one int32 per system (the breakdown key), after all the systems'
// arrays.

// ErrTooLargeForShared reports a system that does not fit in the shared
// memory of one block of the device.
var ErrTooLargeForShared = errors.New("tuning: system does not fit in shared memory")

// reductionMinBlock is the smallest block the launch aims for: systems
// smaller than this many threads are packed several to a block.
const reductionMinBlock = 128

// ReductionLaunch is the launch of a shared-memory reduction kernel for
// systems of N rows: the grid has Blocks(G) blocks of Threads threads and
// SharedBytes bytes of dynamic shared memory.
type ReductionLaunch struct {
	N, ElemSize      int
	ThreadsPerSystem int // threads that work on one system (a power of two)
	SystemsPerBlock  int // systems packed in one block
	Threads          int // ThreadsPerSystem × SystemsPerBlock
	SharedBytes      int // dynamic shared memory of one block
	MaxN             int // the largest N this kernel supports on the device
	// HybridSteps is the number of PCR steps the PCR→Thomas hybrid does
	// before each thread solves one interleaved subsystem by Thomas (PCR
	// launches only; ⌈log2 N⌉ or more is plain PCR).
	HybridSteps int
}

// Blocks returns the number of blocks for a batch of g systems.
func (l ReductionLaunch) Blocks(g int) int { return (g + l.SystemsPerBlock - 1) / l.SystemsPerBlock }

// pcrSteps returns ⌈log2 n⌉, the number of PCR steps after which every
// equation is decoupled (0 for n ≤ 1); the same as pcr.Steps.
func pcrSteps(n int) int {
	if n <= 1 {
		return 0
	}
	return bits.Len(uint(n - 1))
}

// PCRSharedBytes is the dynamic shared memory of a PCR block of spb
// systems of n rows.
func PCRSharedBytes(n, elem, spb int) int { return spb * ((4*n+4*(n/2))*elem + 4) }

// crSharedBytes is the dynamic shared memory of a CR block of spb systems
// of n rows.
func crSharedBytes(n, elem, spb int) int { return spb * (4*n*elem + 4) }

// PCRMaxN returns the largest N whose system fits in one block's shared
// memory for the PCR kernels (elem: 4 for float32, 8 for float64).
func PCRMaxN(d Device, elem int) int {
	return maxFit(d.MaxShared(), func(n int) int { return PCRSharedBytes(n, elem, 1) })
}

// CRMaxN returns the largest N whose system fits in one block's shared
// memory for the CR kernel.
func CRMaxN(d Device, elem int) int {
	return maxFit(d.MaxShared(), func(n int) int { return crSharedBytes(n, elem, 1) })
}

// maxFit returns the largest n ≥ 0 with bytes(n) ≤ limit (bytes grows
// with n).
func maxFit(limit int, bytes func(int) int) int {
	lo, hi := 0, 1
	for bytes(hi) <= limit {
		lo, hi = hi, 2*hi
	}
	// bytes(lo) ≤ limit < bytes(hi), or lo = 0.
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if bytes(mid) <= limit {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}

// PCRLaunch chooses the launch of the PCR kernels (plain and hybrid) for
// systems of n rows of elem bytes:
//
//   - ThreadsPerSystem is the power of two ≥ n, at most 1024 (and the
//     device's MaxThreadsPerBlock): one row per thread while n ≤ 1024, a
//     thread handles rows i, i+1024, … beyond.
//   - Systems smaller than 128 threads are packed 128/ThreadsPerSystem to
//     a block (fewer if their shared memory would not fit).
//   - HybridSteps = min(⌈log2 n⌉, log2 ThreadsPerSystem): PCR steps until
//     there is one interleaved subsystem per thread, then every thread runs
//     Thomas on its own subsystem (rows r, r+2^steps, …). While n ≤ 1024
//     that is plain PCR (the subsystems are single rows); beyond, it saves
//     the last ⌈log2 n⌉ − 10 steps of O(n) work each and their barriers for
//     a sequential sweep over n/1024 rows per thread.
//
// It fails with ErrTooLargeForShared when n > PCRMaxN.
func PCRLaunch(d Device, n, elem int) (ReductionLaunch, error) {
	bd := min(bound(kernels.PcrFor(elem == 8)), bound(kernels.PcrHybridFor(elem == 8)))
	l, err := reductionLaunch(d, n, elem, n, bd, PCRSharedBytes, PCRMaxN(d, elem), "PCR")
	if err != nil {
		return l, err
	}
	l.HybridSteps = min(pcrSteps(n), bits.Len(uint(l.ThreadsPerSystem))-1)
	return l, nil
}

// CRLaunch chooses the launch of the CR kernel for systems of n rows: as
// PCRLaunch, but with ThreadsPerSystem the power of two ≥ ⌈n/2⌉ (the
// first reduction level has ⌊n/2⌋ equations to update and ⌈n/2⌉ divisors
// to check; later levels have fewer).
func CRLaunch(d Device, n, elem int) (ReductionLaunch, error) {
	return reductionLaunch(d, n, elem, (n+1)/2, bound(kernels.CrFor(elem == 8)), crSharedBytes, CRMaxN(d, elem), "CR")
}

// reductionLaunch is the launch of a PCR or CR kernel whose launch bound
// is maxBound threads (the kernels' .maxntid: 1024, 64 registers a
// thread).
func reductionLaunch(d Device, n, elem, work, maxBound int, shared func(n, elem, spb int) int, maxN int, what string) (ReductionLaunch, error) {
	l := ReductionLaunch{N: n, ElemSize: elem, MaxN: maxN}
	if n < 1 || (elem != 4 && elem != 8) {
		return l, fmt.Errorf("tuning: %s launch for N=%d, element size %d", what, n, elem)
	}
	if n > maxN {
		return l, fmt.Errorf("%w: %s holds a system in one block's shared memory (%d B on %s): N=%d exceeds the largest supported N=%d for %d-byte elements",
			ErrTooLargeForShared, what, d.MaxShared(), d.Name, n, maxN, elem)
	}
	maxThreads := min(maxBound, d.MaxThreadsPerBlock)
	if maxThreads < 1 {
		maxThreads = maxBound
	}
	// The largest power of two ≤ maxThreads.
	maxThreads = 1 << (bits.Len(uint(maxThreads)) - 1)
	tps := 1
	for tps < work && tps < maxThreads {
		tps *= 2
	}
	spb := max(1, reductionMinBlock/tps)
	for spb > 1 && (shared(n, elem, spb) > d.MaxShared() || tps*spb > maxThreads) {
		spb /= 2
	}
	l.ThreadsPerSystem, l.SystemsPerBlock, l.Threads = tps, spb, tps*spb
	l.SharedBytes = shared(n, elem, spb)
	return l, nil
}
