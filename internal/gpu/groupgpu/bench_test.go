//go:build cuda

package groupgpu

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"
	"time"

	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/internal/gpu/gpuclock"
	"github.com/bandsolve/bandsolve/tridiag"
)

// BenchmarkGroupBatch times batches of 2^26 rows (N = 256, G = 2^18
// FP32; N = 4096, G = 2^14 FP64), contiguous and interleaved, split over
// the first 1, 2 and 4 GPUs of the host (as many as it has), the data
// resident on the GPUs. Each GPU's solve is timed with CUDA events on
// its own stream, all GPUs at once; the group's time is the slowest
// GPU's median (gpu-µs), and wall-µs is the host's time of SolveDevice
// (start on every GPU, wait for all, status checked). It reports MRows/s
// of the group's time, the speed-up over one GPU and %limit: the five
// arrays' bytes against the sum of the GPUs' device-to-device copy
// bandwidths (gpuclock.CopyBandwidth, as the single-GPU benchmarks
// measure it). Run on a 2- or 4-GPU machine with
//
//	go test -tags cuda -c -o groupgpu.test ./internal/gpu/groupgpu
//	./groupgpu.test -test.run '^$' -test.bench GroupBatch -test.benchtime 3x
func BenchmarkGroupBatch(b *testing.B) {
	bws := make([]float64, all.Len())
	for i := range bws {
		var err error
		if bws[i], err = gpuclock.CopyBandwidth(all.Device(i), 1<<30, 5); err != nil {
			b.Fatal(err)
		}
		b.Logf("%s: device-to-device copy %.0f GB/s (read+write)", all.Device(i).Name(), bws[i]/1e9)
	}
	b.Run("f32/N=256", func(b *testing.B) { benchGroup[float32](b, 256, 1<<18, bws) })
	b.Run("f64/N=4096", func(b *testing.B) { benchGroup[float64](b, 4096, 1<<14, bws) })
}

func benchGroup[T tridiag.Float](b *testing.B, n, g int, bws []float64) {
	for _, lname := range []string{"contiguous", "interleaved"} {
		one := 0.0
		for _, gpus := range []int{1, 2, 4} {
			if gpus > all.Len() {
				break
			}
			b.Run(fmt.Sprintf("%s/gpus=%d", lname, gpus), func(b *testing.B) {
				shape := tridiag.Shape{N: n, G: g}
				if lname == "interleaved" {
					shape.Layout = tridiag.Interleaved(g)
				}
				sec := timeGroup[T](b, shape, gpus)
				if gpus == 1 {
					one = sec
				}
				bw := 0.0
				for _, v := range bws[:gpus] {
					bw += v
				}
				rows := float64(n * g)
				b.ReportMetric(rows/sec/1e6, "MRows/s")
				b.ReportMetric(rows*5*float64(elemSize[T]())/sec/bw*100, "%limit")
				if one > 0 {
					b.ReportMetric(one/sec, "speedup")
				}
			})
		}
	}
}

// elemSize is the size in bytes of T.
func elemSize[T tridiag.Float]() int {
	var v T
	if _, ok := any(v).(float32); ok {
		return 4
	}
	return 8
}

// timeGroup returns the group time in seconds of Auto's solve of shape
// on the first gpus GPUs (the slowest GPU's median of event times, all
// GPUs timed at once), and reports it with the host's wall time of
// SolveDevice.
func timeGroup[T tridiag.Float](b *testing.B, shape tridiag.Shape, gpus int) float64 {
	grp, err := cuda.NewGroup(all.Devices()[:gpus]...)
	if err != nil {
		b.Fatal(err)
	}
	defer grp.Close()
	p, err := NewPlan[T](grp, shape, tridiag.Options{SkipFiniteCheck: true})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	b.Logf("%s", p.Describe())
	// Six arrays a share: a, b, c, d, x and d saved; random per share and
	// diagonally dominant (b = U(−1,1)+4).
	var bufs [6][]*cuda.Buffer[T]
	for i := range bufs {
		if bufs[i], err = p.Alloc(); err != nil {
			b.Fatal(err)
		}
		defer Free(bufs[i])
	}
	for k, sh := range p.Shares() {
		host := make([]T, sh.Shape.Len())
		r := rand.New(rand.NewPCG(uint64(k), 7))
		for i := range bufs {
			for j := range host {
				host[j] = T(r.Float64()*2 - 1)
				if i == 1 {
					host[j] += 4
				}
			}
			if err := bufs[i][k].CopyFrom(host); err != nil {
				b.Fatal(err)
			}
		}
	}
	ctx := context.Background()
	plans := p.Plans()
	var gpuTimes []time.Duration
	var wall []time.Duration
	for b.Loop() {
		med := make([]time.Duration, len(plans))
		errs := make([]error, len(plans))
		each(len(plans), func(k int) {
			ts, err := plans[k].Time(ctx, cuda.EventTimer(nil), bufs[0][k], bufs[1][k], bufs[2][k], bufs[3][k], bufs[4][k], bufs[5][k], 1, 5)
			if err != nil {
				errs[k] = err
				return
			}
			sort.Slice(ts, func(i, j int) bool { return ts[i] < ts[j] })
			med[k] = ts[len(ts)/2]
		})
		for _, err := range errs {
			if err != nil {
				b.Fatal(err)
			}
		}
		slowest := med[0]
		for _, m := range med {
			slowest = max(slowest, m)
		}
		gpuTimes = append(gpuTimes, slowest)
		for range 3 {
			t0 := time.Now()
			if err := p.SolveDevice(ctx, bufs[0], bufs[1], bufs[2], bufs[3], bufs[4]); err != nil {
				b.Fatal(err)
			}
			wall = append(wall, time.Since(t0))
		}
	}
	median := func(ts []time.Duration) time.Duration {
		sort.Slice(ts, func(i, j int) bool { return ts[i] < ts[j] })
		return ts[len(ts)/2]
	}
	g, w := median(gpuTimes), median(wall)
	b.ReportMetric(float64(g.Nanoseconds())/1e3, "gpu-µs")
	b.ReportMetric(float64(w.Nanoseconds())/1e3, "wall-µs")
	return g.Seconds()
}
