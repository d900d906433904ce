//go:build cuda

package tridiaggpu

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/tridiag"
)

// BenchmarkSmallPath is BenchmarkSmallCall for the partition method with
// chunks of P rows (P16 is Auto's default), both precisions, through the
// direct launch (LaunchDirect) or the path through Device.Enqueue.
func BenchmarkSmallPath(b *testing.B) {
	for _, sz := range []struct{ n, g int }{{128, 1}, {512, 8}, {1024, 64}, {4096, 64}} {
		for _, prec := range precisions(smallPath[float32], smallPath[float64]) {
			for _, p := range []int{4, 8, 16, 32} {
				for _, direct := range []bool{false, true} {
					path := "do"
					if direct {
						path = "direct"
					}
					b.Run(fmt.Sprintf("N=%d/G=%d/%s/P%d/%s", sz.n, sz.g, prec.name, p, path), func(b *testing.B) {
						prec.run(b, sz.n, sz.g, p, direct)
					})
				}
			}
		}
	}
}

// BenchmarkSmallResident is BenchmarkSmallCall for resident plans
// (Plan.SetResident): a persistent grid takes each solve from mapped host
// memory, no launch per solve; "P16" is tridiag.Partition's plan (chunks
// of 16), "auto" Auto's (short chunks for small batches,
// tuning.LatencyChunk).
func BenchmarkSmallResident(b *testing.B) {
	for _, sz := range []struct{ n, g int }{{128, 1}, {512, 8}, {1024, 64}, {4096, 64}} {
		for _, prec := range precisions(smallPath[float32], smallPath[float64]) {
			for _, p := range []int{-1, -2} {
				kind := "P16"
				if p == -2 {
					kind = "auto"
				}
				b.Run(fmt.Sprintf("N=%d/G=%d/%s/%s", sz.n, sz.g, prec.name, kind), func(b *testing.B) {
					prec.run(b, sz.n, sz.g, p, true)
				})
			}
		}
	}
}

// precision is a benchmark body instantiated for one precision, named
// "f32" or "f64" in the sub-benchmark names.
type precision[F any] struct {
	name string
	run  F
}

// precisions pairs the float32 and float64 instances of a benchmark body
// with their names, f32 first.
func precisions[F any](f32, f64 F) []precision[F] {
	return []precision[F]{{"f32", f32}, {"f64", f64}}
}

// smallPath times Start and Wait of a partition plan with chunks of p
// rows (p = -1: a resident plan of tridiag.Partition, chunks of 16; -2: a
// resident plan of Auto).
func smallPath[T tridiag.Float](b *testing.B, n, g, p int, direct bool) {
	shape := tridiag.Shape{N: n, G: g}
	opts := tridiag.Options{Algorithm: tridiag.Partition}
	if p == -1 {
		opts.SegmentRows = n // a resident plan keeps each system in one block
	}
	if p == -2 {
		opts = tridiag.Options{}
	}
	pl, err := newPlan[T](dev, shape, opts, config{noDirectLaunch: !direct})
	if err != nil {
		b.Fatal(err)
	}
	defer pl.Close()
	if p < 0 {
		if err := pl.SetResident(time.Second); err != nil {
			b.Fatal(err)
		}
	} else {
		kp, err := newPartitionPlanChunk(gdev, pl.spec, elemSize[T]() == 8, p)
		if err != nil {
			b.Skip(err)
		}
		pl.kp = kp
	}
	timeSmallCalls(b, pl, n*g)
}

// BenchmarkChunkLatency times, with gated events (Plan.Time), the
// partition kernel with chunks of P rows on the small batches of the TPR
// paper's grid, where one call does not fill the GPU and the kernel's
// critical path (P rows eliminated one after another, then the reduced
// system) sets the time; "auto" is what Auto runs. Metric: the median of
// 21 timed solves (kernel-µs).
func BenchmarkChunkLatency(b *testing.B) {
	benchChunkLatency(b, []int{128, 256, 512, 1024, 2048, 4096, 8192}, []int{1, 8, 64}, false)
}

// BenchmarkChunkLatencyInterleaved is BenchmarkChunkLatency for batches
// of adjacent systems (the interleaved layout), where Auto runs the lanes
// kernel (chunks of 16) or lanes segments.
func BenchmarkChunkLatencyInterleaved(b *testing.B) {
	benchChunkLatency(b, []int{64, 128, 256, 512, 1024, 2048, 4096}, []int{8, 64}, true)
}

// BenchmarkChunkLatencyInterleavedLargerG is BenchmarkChunkLatencyInterleaved
// for 128 to 512 systems of 1024 to 4096 rows, beyond the one system for
// every two SMs that tuning.LatencyChunk keeps for interleaved batches.
func BenchmarkChunkLatencyInterleavedLargerG(b *testing.B) {
	benchChunkLatency(b, []int{1024, 2048, 4096}, []int{128, 256, 512}, true)
}

// BenchmarkChunkLatencyLargerG is BenchmarkChunkLatency for batches of
// 128 to 1024 systems, more than one system for every two SMs, to see
// where chunks of 16 win again (tuning.LatencyChunk's bounds on rows an
// SM).
func BenchmarkChunkLatencyLargerG(b *testing.B) {
	benchChunkLatency(b, []int{128, 512, 1024, 2048, 4096}, []int{128, 256, 512, 1024}, false)
}

// benchChunkLatency runs chunkLatency for every precision, N in ns, G in
// gs and P in Auto, 4, 8, 16, contiguous or interleaved.
func benchChunkLatency(b *testing.B, ns, gs []int, interleaved bool) {
	for _, prec := range precisions(chunkLatency[float32], chunkLatency[float64]) {
		for _, n := range ns {
			for _, g := range gs {
				var l tridiag.Layout // contiguous
				if interleaved {
					l = tridiag.Interleaved(g)
				}
				for _, p := range []int{0, 4, 8, 16} {
					name := fmt.Sprintf("%s/N=%d/G=%d/P%d", prec.name, n, g, p)
					if p == 0 {
						name = fmt.Sprintf("%s/N=%d/G=%d/auto", prec.name, n, g)
					}
					b.Run(name, func(b *testing.B) { prec.run(b, n, g, p, l) })
				}
			}
		}
	}
}

// chunkLatency times Auto's plan (p = 0) or the partition kernel with
// chunks of p rows on g systems of n rows in layout l (the zero Layout:
// contiguous).
func chunkLatency[T tridiag.Float](b *testing.B, n, g, p int, l tridiag.Layout) {
	shape := tridiag.Shape{N: n, G: g, Layout: l}
	pl, err := NewPlan[T](dev, shape, tridiag.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer pl.Close()
	if p > 0 {
		kp, err := newSharedPartitionPlan(gdev, pl.spec, elemSize[T]() == 8, p)
		if err != nil {
			b.Skip(err)
		}
		pl.kp = kp
	}
	h := make([]T, n*g)
	bufs := make([]*cuda.Buffer[T], 6)
	for i := range bufs {
		for k := range h {
			h[k] = T([]float64{-1, 4, -1, 1, 0, 1}[i])
		}
		if bufs[i], err = cuda.Upload(dev, h); err != nil {
			b.Fatal(err)
		}
		defer bufs[i].Free()
	}
	var med time.Duration
	for b.Loop() {
		ts, err := pl.Time(context.Background(), clk.Timer(), bufs[0], bufs[1], bufs[2], bufs[3], bufs[4], bufs[5], 3, 21)
		if err != nil {
			b.Fatal(err)
		}
		slices.Sort(ts)
		med = ts[len(ts)/2]
	}
	b.ReportMetric(float64(med.Nanoseconds())/1e3, "kernel-µs")
}
