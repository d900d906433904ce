package tuning

import (
	"fmt"
	"slices"

	"github.com/bandsolve/bandsolve/tridiag/partition"
)

// The segment kernels (ptx/src/segment.cuh, the CPU twin is
// partition.SolveSegmented) cut every system into Q segments of M rows,
// one block of M/16 threads per segment (chunks of 16 rows, one per
// thread), the segment in shared memory as the partition kernels hold a
// system. With Q ≤ segmentOnePassMax one kernel does everything (global
// memory read once, x written once; the reduced system of the segments is
// solved by one warp of the last block of a system to arrive); with more
// segments three launches: reduce, a nested partition plan on the 2Q-row
// reduced systems, expand (a, b, c, d read twice).
//
// Choice of M (SegmentLaunchFor): on Hopper a cluster per system when Q
// is a cluster size, else one pass, else three; within that, a preferred
// segment size, else the most rows resident per SM.

// SegmentChunk is the chunk size of the segment kernels (rows per thread).
const SegmentChunk = 16

// segmentOnePassMax is the most segments a system may have to be solved in
// one pass (the reduced system of 2Q rows is solved in one warp).
const segmentOnePassMax = 32

// SegmentThreads lists the block sizes the segment kernels run with
// (multiples of 32 from 64 to 256, the kernels' bound): M = 16 × threads.
// Sizes that are not powers of two let N = 2^k + 1 avoid a one-row last
// segment (only N ≡ 1 mod 430080, the least common multiple of every M,
// has none).
var SegmentThreads = []int{64, 96, 128, 160, 192, 224, 256}

// segmentSharedExtra is the shared memory after the four arrays
// (SEG_SHARED_BYTES in segment.cuh).
const segmentSharedExtra = 256

// SegmentSharedBytes is the dynamic shared memory of a block with a
// segment of m rows of elem bytes: the four arrays as the partition
// kernels lay out one system, then the block's shared values.
func SegmentSharedBytes(m, elem int) int {
	return PartitionSharedBytes(m, SegmentChunk, elem, 1, false) - 4 + segmentSharedExtra
}

// SegmentRowsOK reports whether the segment kernels run with segments of m
// rows: m/16 one of SegmentThreads' multiples of 32 (64 … 256 threads).
func SegmentRowsOK(m int) bool {
	t := m / SegmentChunk
	return m%SegmentChunk == 0 && t%32 == 0 && t >= SegmentThreads[0] && t <= SegmentThreads[len(SegmentThreads)-1]
}

// SegmentLaunch is the launch of the segment kernels for G systems of N
// rows.
type SegmentLaunch struct {
	N, ElemSize int
	Rows        int  // M, rows per segment
	Threads     int  // M/16, threads per block
	Segments    int  // Q = ⌈N/M⌉
	OnePass     bool // one kernel: Q ≤ 32, or clusters
	Cluster     bool // one thread-block cluster of Q blocks per system
	SharedBytes int  // dynamic shared memory of one block
	// BlocksPerSM is the residency the choice expects (with the
	// registers given to the choice).
	BlocksPerSM int
}

// Blocks returns the blocks of one launch for a batch of g systems.
func (l SegmentLaunch) Blocks(g int) int { return g * l.Segments }

// SegmentClusterSizes lists the cluster sizes the cluster kernels are built
// for (ptx/src/cluster.cu: one cluster of Q blocks per system): the
// portable sizes; clusters of 16 lose to the global-memory kernel.
//
// H100, FP32 N = 16384 in segments of 1024 rows: 41% of the limit in a
// cluster of 16 against 51% for the global-memory kernel (go test -tags
// cuda -run '^$' -bench Segments ./internal/gpu/tridiaggpu).
var SegmentClusterSizes = []int{2, 4, 8}

// SegmentOptions are what SegmentLaunchFor takes beyond the shape.
type SegmentOptions struct {
	// Rows asks for segments of that many rows (SegmentRowsOK); 0 lets
	// the choice decide.
	Rows int
	// Regs is the registers per thread of the global-memory kernel (0:
	// assume 128).
	Regs int
	// ClusterSizes lists the cluster sizes (segments per system) the
	// device runs, none when it has no thread-block clusters;
	// ClusterRegs is the cluster kernels' registers per thread.
	ClusterSizes []int
	ClusterRegs  int
}

// SegmentLaunchFor chooses the launch for a batch of g systems of n rows
// of elem bytes. On a device with thread-block clusters a segment size
// whose Q is a cluster size wins (one cluster per system: the blocks of a
// system are scheduled together and meet at hardware barriers, where the
// global-memory kernel's blocks wait for siblings on other SMs).
func SegmentLaunchFor(d Device, n, elem, g int, o SegmentOptions) (SegmentLaunch, error) {
	l := SegmentLaunch{N: n, ElemSize: elem}
	if n < 2 || g < 1 || (elem != 4 && elem != 8) {
		return l, fmt.Errorf("tuning: segment launch for N=%d G=%d, element size %d", n, g, elem)
	}
	regs, cregs := o.Regs, o.ClusterRegs
	if regs <= 0 {
		regs = 128
	}
	if cregs <= 0 {
		cregs = regs
	}
	type cand struct {
		m, blocks, q int
		cluster      bool
	}
	var cands []cand
	for _, t := range SegmentThreads {
		m := t * SegmentChunk
		if o.Rows > 0 && m != o.Rows {
			continue
		}
		if !partition.SegmentOK(n, m, SegmentChunk) || t > partitionMaxBlock(d, partitionKernelThreads(SegmentChunk, elem)) {
			continue
		}
		sh := SegmentSharedBytes(m, elem)
		if sh > d.MaxShared() {
			continue
		}
		q := partition.Segments(n, m)
		if q == 1 && o.Rows == 0 {
			continue // one segment: a whole system in one block, done better by the partition kernel
		}
		cluster := slices.Contains(o.ClusterSizes, q)
		r := regs
		if cluster {
			r = cregs
		}
		blocks, _ := partitionResidency(d, t, sh, r)
		if blocks < 1 {
			continue
		}
		cands = append(cands, cand{m, blocks, q, cluster})
	}
	if len(cands) == 0 {
		if o.Rows > 0 {
			return l, fmt.Errorf("%w: segments of %d rows for N=%d (want 16·t rows, t threads a multiple of 32 in %v, fitting %s's shared memory, and no one-row segment)",
				ErrTooLargeForShared, o.Rows, n, SegmentThreads, d.Name)
		}
		return l, fmt.Errorf("%w: no segment size for N=%d on %s: every M in 16·%v leaves a last segment of one row", ErrTooLargeForShared, n, d.Name, SegmentThreads)
	}
	// The kind of launch: clusters, else one pass, else three; the first
	// two with at least two blocks per SM.
	// H100, FP64 N = 131072, 2^24 rows: 43% of the limit in three passes
	// of 1024-row segments against 31% in one pass of 4096-row segments,
	// one block an SM (go test -tags cuda -run '^$' -bench Segments
	// ./internal/gpu/tridiaggpu).
	rank := func(c cand) int {
		// One pass without clusters keeps one block per SM where the
		// launch's blocks take at most two waves of the device: a small
		// batch is latency-bound, and the nested solve and second read of
		// three passes cost more.
		// H100, FP64 N = 131072, G = 1: 22.8 µs in one pass of 4096-row
		// segments against 32.7 µs in three passes (bandsolve bench -device
		// cuda -precision f64 -grid 131072x1 -segment-rows 1024,4096).
		fewWaves := g*c.q <= 2*d.SMs*c.blocks
		switch {
		case c.blocks < 2 && (c.cluster || !fewWaves):
			return 0
		case c.cluster:
			return 2
		case c.q <= segmentOnePassMax:
			return 1
		}
		return 0
	}
	kind := 0
	for _, c := range cands {
		kind = max(kind, rank(c))
	}
	// Within the kind, the preferred segment size: 2048 rows in one pass
	// (clusters or not), 1024 in three; failing that, the most useful rows
	// resident per SM (blocks × the mean rows of a segment: a short last
	// segment leaves its block's room unused), ties to the larger M.
	// H100, one pass: 2048-row segments 10–17 points of the limit above
	// 1024-row ones (go test -tags cuda -run '^$' -bench Segments
	// ./internal/gpu/tridiaggpu).
	prefer := 2048
	if kind == 0 {
		// H100, 2^22…2^24-row systems in three passes: 1024-row segments
		// 3–6% faster than 2048-row ones (go test -tags cuda -run '^$'
		// -bench Segments ./internal/gpu/tridiaggpu).
		prefer = 1024
	}
	var best cand
	for _, c := range cands {
		if rank(c) != kind {
			continue
		}
		switch {
		case best.m == 0:
			best = c
		case best.m == prefer:
		case c.m == prefer:
			best = c
		case c.blocks*best.q > best.blocks*c.q || (c.blocks*best.q == best.blocks*c.q && c.m > best.m):
			best = c
		}
	}
	l.Rows, l.Threads, l.Segments = best.m, best.m/SegmentChunk, best.q
	l.Cluster = rank(best) == 2
	l.OnePass = best.q <= segmentOnePassMax || l.Cluster
	l.SharedBytes = SegmentSharedBytes(best.m, elem)
	l.BlocksPerSM = best.blocks
	return l, nil
}
