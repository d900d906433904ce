package tuning

import (
	"errors"
	"fmt"
	"github.com/bandsolve/bandsolve/internal/gpu/kernels"
	"math/bits"

	"github.com/bandsolve/bandsolve/tridiag/tpr"
)

// Tree Partitioning Reduction (ptx/src/tpr.cuh) runs three stages (§4.3 of
// the TPR paper, Fig. 11):
//
//   - Stage 1, one slice of S rows per ThreadsPerSlice threads,
//     SlicesPerBlock slices per block: the sliced forward reduction, the
//     slice in shared memory (4 planes of tprPadded(S)+1 elements per
//     slice, tprStage1SliceBytes), or, when one slice does not fit in a
//     block's shared memory, in place in the workspace ("global slices").
//   - Stage 2, the reduced system of the M slices of one system (MP = M
//     rounded up to a power of two equations): its first GlobalLevels
//     reduction levels and last GlobalLevels substitution levels run as one
//     launch per level over the workspace (when MP equations do not fit in
//     a block's shared memory), the rest in shared memory, one system per
//     ThreadsPerSystem threads, SystemsPerBlock systems per block (5 planes
//     of tprPadded(MP >> GlobalLevels) elements per system,
//     tprStage2SystemBytes).
//   - Stage 3, as stage 1, with the S+1 unknowns of a slice in shared
//     memory (tprPadded(S)+1 elements) or in the workspace (global slices),
//     and one int per slice (tprStage3SliceBytes).
//
// Shared arrays are padded against bank conflicts (element i at
// i + i/32 for 4-byte elements, i + i/16 for 8-byte ones).
//
// The choice follows §4.4's premises on current GPUs: P = 2 rows per thread
// (ThreadsPerSlice = S/2, the paper's Table 4, more rows per thread only
// beyond the 1024 threads a block may have), and then as many slices (or
// systems) per block as maximise the threads resident on one
// multiprocessor under its limits on threads, blocks, registers and shared
// memory (§4.4, Table 3, recomputed for the device), the smallest such
// block winning ties (block parallelism).

// TPRMaxN is the largest system the TPR and Wang–Mou kernels take: their
// breakdown keys hold a row in 27 bits and a position in the algorithm's
// loops in 35.
const TPRMaxN = 1 << 26

// ErrTPRShape reports a batch the TPR or Wang–Mou kernels cannot take.
var ErrTPRShape = errors.New("tuning: batch outside the TPR/Wang–Mou kernels' limits")

const (
	// TPRGlobalBlock is the block size of the one-level stage-2 kernels
	// (tpr_s2inter, tpr_s2reduce, tpr_s2subst) and of wm_step.
	TPRGlobalBlock = 256
	// WMFinalBlock is the block size of wm_final (WM_FINAL_BLOCK).
	WMFinalBlock = 256
)

// Registers per thread of the kernels as ptxas (CUDA 11.8) assembles them
// for sm_90, [float32, float64]: the occupancy estimate's register use.
var (
	regsStage1  = [2]int{47, 59}
	regsStage1G = [2]int{46, 58}
	regsStage2  = [2]int{46, 64}
	regsStage3  = [2]int{36, 39}
	regsStage3G = [2]int{36, 38}
	regsWMLocal = [2]int{69, 104}
)

func regsOf(r [2]int, elem int) int {
	if elem == 8 {
		return r[1]
	}
	return r[0]
}

// tprPadded returns the room n padded shared-memory elements of elem bytes
// take in the TPR kernels (tpr_padded).
func tprPadded(n, elem int) int {
	if elem == 8 {
		return n + n>>4
	}
	return n + n>>5
}

// tprStage1SliceBytes is the shared memory of one slice in tpr_stage1.
func tprStage1SliceBytes(s, elem int) int { return 4 * (tprPadded(s, elem) + 1) * elem }

// tprStage3SliceBytes is the shared memory of one slice in tpr_stage3
// (global: the flag only).
func tprStage3SliceBytes(s, elem int, global bool) int {
	if global {
		return 4
	}
	return (tprPadded(s, elem)+1)*elem + 4
}

// tprStage2SystemBytes is the shared memory of one system of m reduced
// equations in tpr_stage2.
func tprStage2SystemBytes(m, elem int) int { return 5 * tprPadded(m, elem) * elem }

// SliceLaunch is the launch of stage 1 or stage 3: Blocks(G·M) blocks of
// Threads = ThreadsPerSlice·SlicesPerBlock threads with SharedBytes bytes
// of dynamic shared memory.
type SliceLaunch struct {
	ThreadsPerSlice int
	SlicesPerBlock  int
	Threads         int
	SharedBytes     int
	// Global: the slice lives in the workspace, not in shared memory
	// (kernels tpr_stage1g, tpr_stage3g).
	Global bool
}

// Blocks returns the number of blocks for the given number of slices.
func (l SliceLaunch) Blocks(slices int) int {
	return (slices + l.SlicesPerBlock - 1) / l.SlicesPerBlock
}

// TPRStage2 is the launch of stage 2.
type TPRStage2 struct {
	// GlobalLevels (t0) is the number of reduction levels done by
	// tpr_s2reduce before tpr_stage2 (and of substitution levels done by
	// tpr_s2subst after it); 0: tpr_stage2 does the intermediate stage and
	// the whole tree.
	GlobalLevels int
	// Compact is MP >> GlobalLevels, the equations tpr_stage2 holds per
	// system.
	Compact          int
	ThreadsPerSystem int
	SystemsPerBlock  int
	Threads          int
	SharedBytes      int
}

// Blocks returns the number of tpr_stage2 blocks for g systems.
func (l TPRStage2) Blocks(g int) int { return (g + l.SystemsPerBlock - 1) / l.SystemsPerBlock }

// TPRLaunch is the launch of the three TPR stages for G systems of N rows.
type TPRLaunch struct {
	N, G, ElemSize int
	S              int // slice size used (tpr.NewLayout's clamp applied)
	K              int // log2 S
	M              int // slices per system, ⌈N/S⌉
	MP             int // M rounded up to a power of two
	Stage1         SliceLaunch
	Stage2         TPRStage2
	Stage3         SliceLaunch
}

// TPROptions override choices of TPRLaunchFor, for tests of the kernels'
// other paths: global slices in stage 1 or 3 even when they fit in shared
// memory, and at least Stage2GlobalLevels stage-2 levels done by the
// one-level kernels (capped at log2 MP − 1).
type TPROptions struct {
	GlobalStage1, GlobalStage3 bool
	Stage2GlobalLevels         int
}

// tprSliceSize returns the slice size TPR uses for n rows when asked for s:
// tpr.DefaultSliceSize(n) for s = 0, otherwise s (a power of two ≥ 2)
// clamped as tpr.NewLayout clamps it.
func tprSliceSize(n, s int) (int, error) {
	if s == 0 {
		s = tpr.DefaultSliceSize(n)
	}
	lay, err := tpr.NewLayout(max(n, 0), s)
	if err != nil {
		return 0, err
	}
	return lay.S, nil
}

// TPRLaunchFor chooses the launch of the TPR kernels for g systems of n
// rows of elem bytes (4 or 8) with slice size s (0: tpr.DefaultSliceSize)
// and the overrides o (the zero value: none).
func TPRLaunchFor(d Device, n, g, s, elem int, o TPROptions) (TPRLaunch, error) {
	l := TPRLaunch{N: n, G: g, ElemSize: elem}
	if n < 1 || g < 1 || (elem != 4 && elem != 8) {
		return l, fmt.Errorf("%w: TPR launch for N=%d, G=%d, element size %d", ErrTPRShape, n, g, elem)
	}
	if n > TPRMaxN {
		return l, fmt.Errorf("%w: TPR takes N ≤ %d, got N=%d", ErrTPRShape, TPRMaxN, n)
	}
	if s == 0 {
		s = tpr.DefaultSliceSize(n)
	}
	lay, err := tpr.NewLayout(n, s)
	if err != nil {
		return l, err
	}
	l.S, l.M, l.MP = lay.S, lay.M, lay.MPad
	l.K = bits.TrailingZeros(uint(l.S))
	if int64(g)*int64(l.M) >= 1<<31 {
		return l, fmt.Errorf("%w: G·M = %d·%d slices, the TPR kernels take fewer than 2^31", ErrTPRShape, g, l.M)
	}
	maxT := blockLimit(d, bound(kernels.TprStage1For(elem == 8)))
	slices := g * l.M

	// Stage 1.
	tps := min(max(l.S/2, 1), maxT)
	l.Stage1 = SliceLaunch{ThreadsPerSlice: tps}
	slice1 := tprStage1SliceBytes(l.S, elem)
	l.Stage1.Global = o.GlobalStage1 || slice1 > d.MaxShared()
	if l.Stage1.Global {
		l.Stage1.SlicesPerBlock = chooseSPB(d, tps, maxT, slices, func(int) int { return 0 }, regsOf(regsStage1G, elem))
	} else {
		l.Stage1.SlicesPerBlock = chooseSPB(d, tps, maxT, slices, func(spb int) int { return spb * slice1 }, regsOf(regsStage1, elem))
		l.Stage1.SharedBytes = l.Stage1.SlicesPerBlock * slice1
	}
	l.Stage1.Threads = tps * l.Stage1.SlicesPerBlock

	// Stage 3.
	l.Stage3 = SliceLaunch{ThreadsPerSlice: tps}
	l.Stage3.Global = o.GlobalStage3 || tprStage3SliceBytes(l.S, elem, false) > d.MaxShared()
	slice3 := tprStage3SliceBytes(l.S, elem, l.Stage3.Global)
	regs3 := regsOf(regsStage3, elem)
	if l.Stage3.Global {
		regs3 = regsOf(regsStage3G, elem)
	}
	l.Stage3.SlicesPerBlock = chooseSPB(d, tps, maxT, slices, func(spb int) int { return spb * slice3 }, regs3)
	l.Stage3.SharedBytes = l.Stage3.SlicesPerBlock * slice3
	l.Stage3.Threads = tps * l.Stage3.SlicesPerBlock

	// Stage 2.
	levels := bits.TrailingZeros(uint(l.MP))
	sys2 := func(m int) int { return tprStage2SystemBytes(m, elem) }
	t0 := 0
	if levels >= 2 {
		t0 = min(max(o.Stage2GlobalLevels, 0), levels-1)
		for t0 < levels-1 && sys2(l.MP>>t0) > d.MaxShared() {
			t0++
		}
	}
	if sys2(l.MP>>t0) > d.MaxShared() {
		return l, fmt.Errorf("%w: two reduced equations of %d bytes do not fit in the shared memory of %s", ErrTPRShape, elem, d.Name)
	}
	c := l.MP >> t0
	tps2 := min(max(c/2, 1), maxT)
	spb2 := chooseSPB(d, tps2, maxT, g, func(spb int) int { return spb * sys2(c) }, regsOf(regsStage2, elem))
	l.Stage2 = TPRStage2{GlobalLevels: t0, Compact: c, ThreadsPerSystem: tps2, SystemsPerBlock: spb2,
		Threads: tps2 * spb2, SharedBytes: spb2 * sys2(c)}
	return l, nil
}

// blockLimit returns the largest power of two ≤ min(bound, the device's
// threads per block).
func blockLimit(d Device, bound int) int {
	m := bound
	if d.MaxThreadsPerBlock > 0 {
		m = min(m, d.MaxThreadsPerBlock)
	}
	return 1 << (bits.Len(uint(max(m, 1))) - 1)
}

// chooseSPB returns the number of units (slices, systems, chunks) per block
// of tpu threads each: the power of two with at most maxT threads per
// block, shared(spb) ≤ the device's shared memory per block and no more
// unit slots than the next power of two ≥ units, that maximises the
// threads resident on one multiprocessor; the smallest wins ties.
func chooseSPB(d Device, tpu, maxT, units int, shared func(spb int) int, regs int) int {
	best, bestRes := 1, -1
	for spb := 1; spb*tpu <= maxT; spb *= 2 {
		if spb > 1 && spb/2 >= units {
			break
		}
		sh := shared(spb)
		if sh > d.MaxShared() {
			break
		}
		if r := residentThreads(d, spb*tpu, sh, regs); r > bestRes {
			best, bestRes = spb, r
		}
	}
	return best
}

// residentThreads estimates how many threads of blocks of the given size,
// dynamic shared memory and registers per thread one multiprocessor holds
// at once (the occupancy calculation of the CUDA programming guide:
// registers allocated per warp in units of 256, 1 KiB of shared memory
// reserved per block on compute capability ≥ 8).
func residentThreads(d Device, threads, shared, regs int) int {
	if threads < 1 {
		return 0
	}
	ws := max(d.WarpSize, 1)
	warps := (threads + ws - 1) / ws
	blocks := d.MaxBlocksPerSM
	if blocks <= 0 {
		blocks = 16
	}
	if d.MaxThreadsPerSM > 0 {
		blocks = min(blocks, d.MaxThreadsPerSM/(warps*ws))
	}
	if regs > 0 && d.RegsPerSM > 0 {
		perWarp := (regs*ws + 255) / 256 * 256
		blocks = min(blocks, d.RegsPerSM/(perWarp*warps))
		if d.RegsPerBlock > 0 && perWarp*warps > d.RegsPerBlock {
			blocks = 0
		}
	}
	if shared > 0 {
		reserve := 0
		if d.Major >= 8 {
			reserve = 1024
		}
		spm := d.SharedPerSM
		if spm <= 0 {
			spm = d.MaxShared()
		}
		blocks = min(blocks, spm/(shared+reserve))
	}
	return max(blocks, 0) * threads
}

// WMLaunch is the launch of the Wang–Mou kernels (ptx/src/wangmou.cuh) for
// G systems of N rows: NP = N rounded up to a power of two elements per
// system, chunks of Chunk elements (ChunksPerBlock per block of Threads
// threads, ThreadsPerChunk each, SharedBytes of dynamic shared memory) do
// the first log2 Chunk merge steps in shared memory. Single: Chunk = NP,
// the whole solve is one launch of wm_local; otherwise wm_step runs the
// remaining steps (one launch each) on the workspace and wm_final solves.
type WMLaunch struct {
	N, G, ElemSize  int
	NP              int
	Chunk           int
	ChunksPerBlock  int
	ThreadsPerChunk int
	Threads         int
	SharedBytes     int
	Single          bool
	// MaxSingleN is the largest N this device solves in one launch.
	MaxSingleN int
}

// Blocks returns the number of wm_local blocks.
func (l WMLaunch) Blocks() int {
	chunks := l.G * (l.NP / l.Chunk)
	return (chunks + l.ChunksPerBlock - 1) / l.ChunksPerBlock
}

// wmChunkBytes is the shared memory of one chunk of c elements in wm_local:
// 12 planes and a 64-bit key.
func wmChunkBytes(c, elem int) int { return 12*c*elem + 8 }

// wmMaxChunk returns the largest chunk (a power of two) that fits in one
// block's shared memory.
func wmMaxChunk(d Device, elem int) int {
	c := 1
	for wmChunkBytes(2*c, elem) <= d.MaxShared() {
		c *= 2
	}
	return c
}

// WMLaunchFor chooses the Wang–Mou launch for g systems of n rows of elem
// bytes: the whole system in one chunk when it fits (one launch), else the
// largest chunk; ThreadsPerChunk = Chunk/2 (a pair per thread, at most
// 512); chunks per block as for TPR's slices. maxChunk caps the chunk (a
// power of two, for tests of the multi-launch path; 0: no cap).
func WMLaunchFor(d Device, n, g, elem, maxChunk int) (WMLaunch, error) {
	l := WMLaunch{N: n, G: g, ElemSize: elem}
	if n < 1 || g < 1 || (elem != 4 && elem != 8) {
		return l, fmt.Errorf("%w: Wang–Mou launch for N=%d, G=%d, element size %d", ErrTPRShape, n, g, elem)
	}
	if n > TPRMaxN {
		return l, fmt.Errorf("%w: Wang–Mou takes N ≤ %d, got N=%d", ErrTPRShape, TPRMaxN, n)
	}
	l.NP = 1 << bits.Len(uint(n-1))
	cmax := wmMaxChunk(d, elem)
	l.MaxSingleN = cmax
	if maxChunk > 0 {
		cmax = min(cmax, 1<<(bits.Len(uint(maxChunk))-1))
	}
	l.Chunk = min(l.NP, cmax)
	l.Single = l.Chunk == l.NP
	chunks := int64(g) * int64(l.NP/l.Chunk)
	if chunks >= 1<<31 || (!l.Single && int64(g)*int64((n+WMFinalBlock-1)/WMFinalBlock) >= 1<<31) {
		return l, fmt.Errorf("%w: %d chunks, the Wang–Mou kernels take fewer than 2^31", ErrTPRShape, chunks)
	}
	maxT := blockLimit(d, bound(kernels.WmLocalFor(elem == 8)))
	l.ThreadsPerChunk = min(max(l.Chunk/2, 1), maxT)
	per := wmChunkBytes(l.Chunk, elem)
	l.ChunksPerBlock = chooseSPB(d, l.ThreadsPerChunk, maxT, int(chunks), func(spb int) int { return spb * per }, regsOf(regsWMLocal, elem))
	l.Threads = l.ThreadsPerChunk * l.ChunksPerBlock
	l.SharedBytes = l.ChunksPerBlock * per
	return l, nil
}
