package tuning

// Small batches are latency-bound: with few systems the GPU is mostly idle
// and a call takes as long as one block's critical path (the P rows of a
// chunk eliminated one after another, the reduced system, the P rows
// recovered), not as long as the bytes take to move. Shorter chunks
// shorten that path; the reduced system they leave (2N/P rows) is solved
// by all the block's threads at once. Large batches keep chunks of 16, the
// fastest at 2^24 rows.
//
// LatencyChunk's bounds are where short chunks beat Auto's default plan;
// with more than one system for every two SMs, interleaved batches keep
// Auto's lanes kernels.
//
// H100, FP32 N = 128, G = 1: 6.6 µs in chunks of 4 against 8.5 µs in
// chunks of 16 (go test -tags cuda -run '^$' -bench ChunkLatency
// ./internal/gpu/tridiaggpu, which covers every bound).

// latencyInterleavedMaxN is the longest system of a small interleaved
// batch that LatencyChunk gives chunks of 4 among the short ones; longer
// ones take short chunks again from latencyInterleavedLongMinN rows.
const latencyInterleavedMaxN = 128

// latencyInterleavedLongMinN is the shortest of the long systems of a
// small interleaved batch that LatencyChunk gives short chunks.
const latencyInterleavedLongMinN = 1024

// Rows an SM up to which a batch takes chunks of 4 (both precisions) or
// of 8 (FP32, FP64): LatencyChunk's bounds on n·g.
const (
	latencyRowsP4    = 1024
	latencyRowsP8F32 = 4096
	latencyRowsP8F64 = 8192
	// Batches of more than one system for every two SMs take short
	// chunks from this many rows on; shorter systems share blocks.
	latencyMinNManySystems = 128
	// Interleaved FP32 batches of 2049 … 4096 rows take chunks of 8 up
	// to this many rows in all (N = 4096: G = 8, not G = 64).
	latencyInterleavedRowsF32 = 1 << 15
)

// LatencyChunk returns the chunk size P of the partition kernel (one
// block per system) for a batch of g systems of n rows of elem bytes
// small enough to be latency-bound on d, or 0 where the default plan
// (chunks of 16, lanes, or segments) is kept. Systems stored rows first:
// chunks of 4 for n ≤ 512 (FP32) or 1024 (FP64) and at most 1024 rows an
// SM in all (n ≥ 128 where there are more systems than half the SMs);
// chunks of 8 for n ≤ 2048 (FP32) or 4096 (FP64) and at most 4096 (FP32)
// or 8192 (FP64) rows an SM. Systems stored systems first only when they
// are adjacent (batch stride 1, the interleaved layout) and there is at
// most one system for every two SMs: chunks of 4 up to 128 rows; from
// 1024 rows, FP32 chunks of 4 up to 1024 rows, of 8 up to 2048 and, for at most 2^15
// rows in all, up to 4096; FP64 chunks of 4 up to 2048 rows. The results
// are partition.Solve's with that P.
func LatencyChunk(d Device, n, elem, g int, sysFirst, adjacent bool) int {
	few := 2*g <= d.SMs
	if n < 1 || g < 1 || (elem != 4 && elem != 8) {
		return 0
	}
	rows := int64(n) * int64(g)
	if sysFirst {
		if !adjacent || !few {
			return 0
		}
		switch {
		case n <= latencyInterleavedMaxN:
			return 4
		case n < latencyInterleavedLongMinN:
			return 0
		case elem == 4 && n <= 1024:
			return 4
		case elem == 4 && (n <= 2048 || n <= 4096 && rows <= latencyInterleavedRowsF32):
			return 8
		case elem == 8 && n <= 2048:
			return 4
		}
		return 0
	}
	if !few && n < latencyMinNManySystems {
		return 0
	}
	perSM := func(r int) bool { return rows <= int64(r)*int64(d.SMs) }
	switch elem {
	case 4:
		switch {
		case n <= 512:
			if perSM(latencyRowsP4) {
				return 4
			}
		case n <= 2048:
			if perSM(latencyRowsP8F32) {
				return 8
			}
		}
	case 8:
		switch {
		case n <= 1024 && perSM(latencyRowsP4):
			return 4
		case n <= 4096 && perSM(latencyRowsP8F64):
			return 8
		}
	}
	return 0
}

// LatencyConstChunk16 reports whether a batch of g systems of n rows that
// LatencyChunk gives short chunks runs its constant solves (which read d
// alone) with the constant kernels of chunks of 16 instead: beyond one
// system for two SMs and 1024 rows an SM. Short chunks win there for
// general solves but lose for constant ones, while up to 1024 rows an SM
// they win for both.
//
// H100, FP64 N = 1024, G = 1024, constant: 14.1 µs in chunks of 16
// against 20.1 µs in short ones (bandsolve bench -device cuda -grid
// 1024x1024:const).
func LatencyConstChunk16(d Device, n, g int) bool {
	return 2*g > d.SMs && int64(n)*int64(g) > int64(latencyRowsP4)*int64(d.SMs)
}
