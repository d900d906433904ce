package tuning

// Truncated SPIKE on the GPU (gpu.SpikePlan, ptx/src/band_spike.cuh)
// factors each partition of the band with one thread block, sequentially
// over its rows: the window-sliding LU/UL of band_window.cuh for
// K ≤ SpikeWindowMaxK (min(K², 1024) threads, (K+2)² elements of shared
// memory) and band_spike_factor_wide above (G·K threads, G =
// spikeWideGroups(K), ((K+2)² + K+1) elements). The solves sweep each
// partition with one block of K threads. A partition's time is its row
// count times the cost of a step, so the factorization takes about
// ⌈P/C⌉·N/P steps, C the number of blocks resident on the GPU at once:
// it falls with P until P = C and stays flat at multiples of C. The
// solve's blocks are much smaller, so more partitions keep speeding it
// up. Accuracy goes the other way: the truncation neglects spike blocks
// that decay with the partition size in units of K (spike/doc.go: at
// d = 1, 8K rows give 6e-11, so 16K rows are at double-precision
// round-off).
//
// Above SpikeWideMaxK (the wide window and the K×K blocks no longer fit in
// shared memory: 167 in FP64, 238 in FP32 on an H100) the plan takes the
// blocked path of ptx/src/band_blocked.cuh, SpikeBlocked says when: the
// partitions are factored by panels of spikeBlockedPanel steps, the
// trailing K×K block updated in global memory by spikeBlockedThreads
// threads; the spikes are computed spikeTipsColumns columns per block; the
// reduced matrices are formed by tiles and factored in global memory.
// SpikeMaxK is that path's limit. Where both run, the shared-memory path
// is the faster, so it stays the default up to its limit.
//
// H100, FP32 K = 200: the blocked factorization about 2× slower than the
// wide kernel (go test -tags cuda -run '^$' -bench SpikeGPUBlocked
// ./internal/gpu/spikegpu).

// SpikeWindowMaxK is the largest K of the window-sliding kernels of
// band_window.cuh (at most four entries of the K×K update per thread).
const SpikeWindowMaxK = 64

// spikeWideFromK is the K from which the wide kernel is the default: its
// blocks need fewer registers (two of 1024 threads per SM) and each
// thread reads one entry of U's row per step instead of one per entry.
//
// H100, K = 16, FP64 LU of N = 10⁶: 1.17 ms with the wide kernel against
// 1.52 ms with the window one (go test -tags cuda -run '^$' -bench
// SpikeGPU ./internal/gpu/spikegpu).
const spikeWideFromK = 16

// SpikeKernel selects the partition factorization kernel.
type SpikeKernel int

const (
	// SpikeKernelAuto: the window kernel below K = 16, the wide one
	// from there, the blocked path above SpikeWideMaxK.
	SpikeKernelAuto SpikeKernel = iota
	// SpikeKernelWindow forces band_factor_window (K ≤ SpikeWindowMaxK).
	SpikeKernelWindow
	// SpikeKernelWide forces band_spike_factor_wide.
	SpikeKernelWide
	// SpikeKernelBlocked forces the blocked path (band_blocked.cuh) for
	// any K, which is otherwise taken only above SpikeWideMaxK.
	SpikeKernelBlocked
)

// Wide reports whether the kernel choice uses the wide kernel for K = k.
func (c SpikeKernel) Wide(k int) bool {
	switch c {
	case SpikeKernelWindow:
		return k > SpikeWindowMaxK
	case SpikeKernelWide:
		return true
	}
	return k >= spikeWideFromK
}

// Partition sizes of SpikePartitions.
const (
	// spikeMinRows is the fewest rows SpikePartitions gives a partition.
	spikeMinRows = 64
	// spikeRowsPerK: partitions also keep at least this many times K
	// rows, so that truncated SPIKE is accurate as a direct solver for
	// diagonally dominant matrices (d ≥ 1).
	spikeRowsPerK = 16
)

// SpikeFactor is the launch of the partition factorization kernel.
type SpikeFactor struct {
	// Wide selects band_spike_factor_wide over band_factor_window.
	Wide bool
	// Blocked selects the blocked path: band_spike_factor_blocked, and the
	// spike and reduced kernels of band_blocked.cuh.
	Blocked bool
	// Threads per block.
	Threads int
	// Shared is the dynamic shared memory per block in bytes.
	Shared int
	// Static is the kernel's static shared memory in bytes (as compiled).
	Static int
	// TipsColumns, TipsThreads and TipsShared are the launch of
	// band_spike_tips_blocked on the blocked path (zero otherwise): blocks
	// of TipsThreads threads, each computing TipsColumns columns of a
	// spike with TipsShared bytes of dynamic shared memory.
	TipsColumns, TipsThreads, TipsShared int
}

// spikeWideGroups is the number G of row groups of band_spike_factor_wide
// for half-bandwidth k (G·K threads): as many as 1024 threads allow, at
// most K (one row each), at least 3 (the block needs 2K+1 loader
// threads).
func spikeWideGroups(k int) int {
	k = max(k, 1)
	return max(3, min(max(k, 3), 1024/k))
}

// spikeFactorLaunch returns the factorization launch for half-bandwidth k
// and elements of elem bytes: the window kernel for k ≤ SpikeWindowMaxK
// unless wide is set, else the wide kernel.
func spikeFactorLaunch(k, elem int, wide bool) SpikeFactor {
	if !wide && k <= SpikeWindowMaxK {
		// band_window.cuh: red[1024] doubles, the first bad index and
		// the multipliers Lsh[65] as static shared memory.
		return SpikeFactor{Threads: max(32, min(k*k, 1024)), Shared: (k + 2) * (k + 2) * elem,
			Static: 8*1024 + 8 + (SpikeWindowMaxK+1)*elem}
	}
	th := spikeWideGroups(k) * k
	sh := max(((k+2)*(k+2)+k+1)*elem, 8*th)
	return SpikeFactor{Wide: true, Threads: th, Shared: (sh + 15) &^ 15, Static: 16}
}

// SpikeWideMaxK returns the largest half-bandwidth of the shared-memory
// kernels (band_spike_factor_wide, band_spike_tips, band_spike_reduced)
// for elements of elem bytes: the wide factorization's window and the K×K
// blocks must fit in a block's shared memory, with K threads per block.
// Above it SpikeBlocked holds.
func SpikeWideMaxK(d Device, elem int) int {
	best := 0
	for k := 1; k <= d.MaxThreadsPerBlock && k <= 1024; k++ {
		f := spikeFactorLaunch(k, elem, true)
		if f.Shared+f.Static > d.MaxShared() || k*k*elem > d.MaxShared() || f.Threads < 2*k+1 {
			break
		}
		best = k
	}
	return best
}

// Launch sizes of the blocked path; they are compiled into
// ptx/src/band_blocked.cuh (SPIKE_BLK_B, SPIKE_BLK_THREADS, SPIKE_TIPS_CW,
// SPIKE_TIPS_THREADS) and must change with it.
const (
	// spikeBlockedPanel is the number of elimination steps per panel of
	// band_spike_factor_blocked.
	spikeBlockedPanel = 16
	// spikeBlockedThreads is band_spike_factor_blocked's block size.
	spikeBlockedThreads = 512
	// spikeTipsColumns is the number of spike columns per block of
	// band_spike_tips_blocked.
	spikeTipsColumns = 16
	// spikeTipsThreads is band_spike_tips_blocked's block size.
	spikeTipsThreads = 256
	// spikeBlockedMaxK bounds the blocked path by the solves, which use
	// K threads per block.
	spikeBlockedMaxK = 1024
)

// spikeBlockedLaunch returns the launch of band_spike_factor_blocked for
// half-bandwidth k: spikeBlockedThreads threads and the L panel (B rows of
// K+B entries) and U rows (B rows of K) of B = spikeBlockedPanel steps in
// dynamic shared memory, rows padded by a quarter (entry i at i + ⌊i/4⌋,
// against bank conflicts), at least 8 bytes a thread for the norm's
// reduction.
func spikeBlockedLaunch(k, elem int) SpikeFactor {
	b := spikeBlockedPanel
	skew := func(i int) int { return i + i/4 }
	sh := max(b*(skew(k+b)+1+skew(k)+1)*elem, 8*spikeBlockedThreads)
	return SpikeFactor{Blocked: true, Threads: spikeBlockedThreads, Shared: (sh + 15) &^ 15, Static: 16,
		TipsColumns: spikeTipsColumns, TipsThreads: spikeTipsThreads, TipsShared: spikeTipsShared(k, elem)}
}

// spikeTipsShared is the dynamic shared memory of band_spike_tips_blocked
// in bytes: a K×spikeTipsColumns slice of a spike block.
func spikeTipsShared(k, elem int) int { return k * spikeTipsColumns * elem }

// SpikeBlocked reports whether a plan of half-bandwidth k and elements of
// elem bytes takes the blocked path on d: above SpikeWideMaxK, or always
// with SpikeKernelBlocked.
func SpikeBlocked(d Device, k, elem int, kern SpikeKernel) bool {
	return kern == SpikeKernelBlocked || k > SpikeWideMaxK(d, elem)
}

// SpikeFactorFor returns the factorization launch of a plan: the blocked
// kernel when SpikeBlocked holds, else the window or the wide kernel as
// the kernel choice kern says (SpikeKernel.Wide).
func SpikeFactorFor(d Device, k, elem int, kern SpikeKernel) SpikeFactor {
	if SpikeBlocked(d, k, elem, kern) {
		return spikeBlockedLaunch(k, elem)
	}
	return spikeFactorLaunch(k, elem, kern.Wide(k))
}

// SpikeMaxK returns the largest half-bandwidth the SPIKE kernels handle
// on the device for elements of elem bytes: the limit of the blocked path
// (1024 threads of the solves, the panels of the blocked
// factorization, the spike slices and band_spike_rsolve's 3K elements in
// shared memory), at least SpikeWideMaxK.
func SpikeMaxK(d Device, elem int) int {
	best := SpikeWideMaxK(d, elem)
	for k := best + 1; k <= d.MaxThreadsPerBlock && k <= spikeBlockedMaxK; k++ {
		f := spikeBlockedLaunch(k, elem)
		if f.Shared+f.Static > d.MaxShared() || spikeTipsShared(k, elem) > d.MaxShared() || 3*k*elem > d.MaxShared() {
			break
		}
		best = k
	}
	return best
}

// SpikeShape is what SpikePartitions needs to know about a SPIKE plan.
type SpikeShape struct {
	N, K int
	// Elem is the element size in bytes (4 or 8).
	Elem int
	// FactorRegs and SolveRegs are the registers per thread of the
	// factorization and solve kernels (0: assume 32).
	FactorRegs, SolveRegs int
	// Kernel is the factorization kernel choice.
	Kernel SpikeKernel
}

// ResidentBlocks returns how many blocks of threads threads, shared bytes
// of shared memory (dynamic plus static) and regs registers per thread
// one multiprocessor holds at once (0 when one does not fit): the least of
// the block, thread, shared-memory (plus the 1 KiB per block the driver
// reserves on compute capability ≥ 8) and register limits.
func ResidentBlocks(d Device, threads, shared, regs int) int {
	if threads < 1 {
		return 0
	}
	if regs <= 0 {
		regs = 32
	}
	warps := (threads + d.WarpSize - 1) / max(d.WarpSize, 1)
	b := d.MaxBlocksPerSM
	b = min(b, d.MaxThreadsPerSM/(warps*d.WarpSize))
	if shared > 0 {
		per := shared
		if d.Major >= 8 {
			per += 1024
		}
		b = min(b, d.SharedPerSM/per)
	}
	perWarp := (regs*d.WarpSize + 255) / 256 * 256
	b = min(b, d.RegsPerSM/(perWarp*warps))
	return max(b, 0)
}

// SpikePartitions chooses the number of partitions P of a SPIKE plan:
// every partition at least max(64, 16·K, 2K) rows (16·K: truncated SPIKE
// accurate as a direct solver for diagonally dominant matrices); within
// that, as many as the solve kernel keeps resident (up to SMs ×
// its resident blocks), rounded down to a multiple of the factorization's
// resident blocks C once past C (extra partitions that do not fill a
// whole wave only cost accuracy). At least 1.
func SpikePartitions(d Device, s SpikeShape) int {
	if s.N < 1 || s.K < 0 {
		return 1
	}
	k := max(s.K, 1)
	elem := max(s.Elem, 4)
	f := SpikeFactorFor(d, k, elem, s.Kernel)
	capF := max(1, d.SMs*ResidentBlocks(d, f.Threads, f.Shared+f.Static, s.FactorRegs))
	capS := max(1, d.SMs*ResidentBlocks(d, k, (k+1)*elem, s.SolveRegs))
	rows := max(spikeMinRows, spikeRowsPerK*k, 2*k)
	p := min(s.N/rows, max(capF, capS))
	if p > capF {
		p = p / capF * capF
	}
	return max(p, 1)
}
