package tuning

// Small batches are latency-bound: with few systems the GPU is mostly idle
// and a call takes as long as one block's critical path (the P rows of a
// chunk eliminated one after another, the reduced system, the P rows
// recovered), not as long as the bytes take to move. Shorter chunks
// shorten that path; the reduced system they leave (2N/P rows) is solved
// by all the block's threads at once.
//
// Measured on an H100 (cuda BenchmarkChunkLatency, gated event times, the
// TPR paper's G = 1, 8, 64; bench/results/h100-2026-11-26/session11,
// run 3), the partition kernel with one block per system, median µs:
//
//	FP32  N = 128: P=4 6.6–6.8, P=8 7.4–7.5, P=16 8.5–8.8
//	      N = 1024: P=4 8.8–9.0, P=8 8.7–9.0, P=16 9.7–10.0
//	      N = 2048: P=4 10.4–10.6, P=8 9.5–9.9, P=16 10.1–10.3
//	      N = 4096: P=4 14.0–14.3, P=8 11.4–11.9, P=16 11.2–11.6
//	FP64  N = 128: P=4 7.5–7.7, P=8 8.1–8.4, P=16 9.5–10.1
//	      N = 1024: P=4 9.6–9.9, P=8 9.8–10.0, P=16 11.4–11.7
//	      N = 2048: P=4 11.5–11.9, P=8 10.8–11.3, P=16 11.8–12.2
//	      N = 4096: P=8 13.1–14.0, P=16 13.2–14.0 (Auto's two-block
//	      clusters: 14.6–15.7)
//
// (An empty kernel between the same events: 4.0 µs.) Large batches keep
// P = 16, the fastest at 2^24 rows.
//
// Interleaved batches (cuda BenchmarkChunkLatencyInterleaved, run 16, G =
// 8 and 64): up to LatencyInterleavedMaxN rows chunks of 4 beat the lanes
// kernel by 0.9–1.6 µs in both precisions; from 256 rows on the gain is
// irregular or a loss (N = 512: 11.2–11.5 µs with the lanes kernel against
// 14.3–14.9 with chunks of 4).

// LatencyInterleavedMaxN is the longest system of a small interleaved
// batch that LatencyChunk gives short chunks.
const LatencyInterleavedMaxN = 128

// LatencyChunk returns the chunk size P of the partition kernel (one
// block per system) for a batch of g systems of n rows of elem bytes
// small enough to be latency-bound on d, or 0 where the default plan
// (chunks of 16, lanes, or segments) is kept: the batch has at most one
// system for every two multiprocessors, and n is at most 2048 (FP32) or
// 4096 (FP64); systems stored systems first (sysFirst) only when they are
// adjacent (batch stride 1, the interleaved layout) and n is at most
// LatencyInterleavedMaxN. The results are partition.Solve's with that P.
func LatencyChunk(d Device, n, elem, g int, sysFirst, adjacent bool) int {
	if n < 1 || g < 1 || 2*g > d.SMs || sysFirst && (!adjacent || n > LatencyInterleavedMaxN) {
		return 0
	}
	switch elem {
	case 4:
		switch {
		case n <= 512:
			return 4
		case n <= 2048:
			return 8
		}
	case 8:
		switch {
		case n <= 1024:
			return 4
		case n <= 4096:
			return 8
		}
	}
	return 0
}
