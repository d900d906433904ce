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
// Batches of more systems (cuda BenchmarkChunkLatencyLargerG, session 12
// run 1, G = 128 … 1024, one to eight systems an SM) stay latency-bound
// while the batch is small against the GPU: short chunks win there too,
// as long as the batch has at most about 1024 rows an SM for chunks of 4,
// 4096 (FP32) or 8192 (FP64) for chunks of 8. Median µs, Auto (chunks of
// 16) against the best short chunk:
//
//	FP32  N = 128, G = 1024: 8.7 → 7.4 (P=4); N = 512, G = 256: 9.1 → 8.4 (P=4)
//	      N = 512, G = 512: 9.3 (Auto) against 9.5 (P=4), 9.6 (P=8)
//	      N = 1024, G = 128: 9.8 → 8.9 (P=8); N = 2048, G = 256: 11.8 → 11.4 (P=8)
//	      N = 2048, G = 512: 14.2 (Auto) against 15.2 (P=8)
//	FP64  N = 128, G = 1024: 10.1 → 8.6 (P=4); N = 1024, G = 128: 11.7 → 10.2 (P=4)
//	      N = 1024, G = 1024: 30.9 → 26.5 (P=8); N = 2048, G = 512: 31.6 → 26.9 (P=8)
//	      N = 2048, G = 1024: 40.6 (Auto) against 42.5 (P=8)
//	      N = 4096, G = 128: 17.9 → 15.4 (P=8); G = 256: 37.9 → 32.0 (P=8)
//	      N = 4096, G = 512: 42.4 (Auto) against 58.8 (P=8)
//
// (FP32 N = 4096 keeps Auto's plan for every G: chunks of 8 lose 0.2–14
// µs there; session 12 run 5, three counts, spreads below 1%.)
//
// Interleaved batches (cuda BenchmarkChunkLatencyInterleaved, G = 8 and
// 64): up to LatencyInterleavedMaxN rows chunks of 4 beat the lanes
// kernel by 0.9–1.6 µs in both precisions (session 11 run 16); from 256
// to 512 rows the lanes kernel is as fast or faster (N = 512: 11.2–11.5 µs
// against 14.3–14.9 with chunks of 4). From 1024 rows on, where Auto
// runs the lanes kernel at its longest or lanes segments, short chunks win
// again (session 12 run 5, five counts, spreads below 3%), median µs for
// G = 8 / 64:
//
//	FP32  N = 1024: Auto 12.5 / 12.7, P=4 9.8 / 12.8
//	      N = 2048: Auto 20.2 / 20.2, P=8 11.7 / 17.0
//	      N = 4096: Auto 20.2 / 20.8, P=8 15.9 / 26.2
//	FP64  N = 1024: Auto 14.5 / 15.7, P=4 11.1 / 13.0
//	      N = 2048: Auto 18.3 / 20.0, P=4 14.9 / 18.7
//	      N = 4096: Auto 18.6 / 19.8, P=8 19.9 / 27.1
//
// Interleaved batches keep the bound of one system for every two SMs:
// with 128 to 512 systems of 1024 to 4096 rows (BenchmarkChunkLatency-
// InterleavedLargerG, session 12 run 8) Auto's lanes kernels are the
// fastest or within 0.3 µs in all but two cases (gains of 4–7%).

// LatencyInterleavedMaxN is the longest system of a small interleaved
// batch that LatencyChunk gives chunks of 4 among the short ones; longer
// ones take short chunks again from LatencyInterleavedLongMinN rows.
const LatencyInterleavedMaxN = 128

// LatencyInterleavedLongMinN is the shortest of the long systems of a
// small interleaved batch that LatencyChunk gives short chunks.
const LatencyInterleavedLongMinN = 1024

// Rows an SM up to which a batch takes chunks of 4 (both precisions) or
// of 8 (FP32, FP64): LatencyChunk's bounds on n·g.
const (
	latencyRowsP4    = 1024
	latencyRowsP8F32 = 4096
	latencyRowsP8F64 = 8192
	// Batches of more than one system for every two SMs were measured
	// from 128 rows on; shorter systems share blocks there.
	latencyMinNManySystems = 128
	// Interleaved FP32 batches of 2049 … 4096 rows take chunks of 8 up
	// to this many rows in all (N = 4096: G = 8 wins, G = 64 loses).
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
// most one system for every two SMs: chunks of 4 up to
// LatencyInterleavedMaxN rows; from LatencyInterleavedLongMinN rows, FP32
// chunks of 4 up to 1024 rows, of 8 up to 2048 and, for at most 2^15
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
		case n <= LatencyInterleavedMaxN:
			return 4
		case n < LatencyInterleavedLongMinN:
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
// general solves but lose for constant ones (session 12 runs 9 and 10,
// µs, chunks of 16 against short ones: FP64 1024×1024 14.1 / 20.1,
// 4096×256 14.8 / 23.7, 1024×512 11.9 / 12.6; FP32 2048×256 10.5 /
// 10.8), while up to 1024 rows an SM they win for both (FP32 128×1024
// 8.6 / 7.1, FP64 1024×128 11.1 / 9.8).
func LatencyConstChunk16(d Device, n, g int) bool {
	return 2*g > d.SMs && int64(n)*int64(g) > int64(latencyRowsP4)*int64(d.SMs)
}
