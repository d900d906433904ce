//go:build cuda

package bandedgpu

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/bandsolve/bandsolve/banded"
	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/internal/gpu/gpuclock"
	"github.com/bandsolve/bandsolve/tridiag"
)

// BenchmarkBandBatch measures the batched banded kernels (K = 2) on the
// cases of the cuSPARSE gpsvInterleavedBatch anchors: the kernel the plan
// picks (auto: prefetch depth 16 in FP32, 8 in FP64) and other depths
// (dN), in both layouts. Reported:
// MRows/s = N·G / median time, %copy = floor bytes (2K+3 elements per row)
// per second over the device's copy bandwidth, %moved = the bytes the
// kernel issues per second over it. Run on the GPU machine with
//
//	./bandedgpu.test -test.run '^$' -test.bench BandBatch -test.benchtime 1x
//
// bench's BenchmarkBandBatch puts the default kernel beside cuSPARSE.
func BenchmarkBandBatch(b *testing.B) {
	bw := bandCopyBandwidth(b)
	cases := []struct{ n, g int }{{256, 65536}, {1024, 16384}, {4096, 4096}}
	// Prefetch depths of the variants (0: the plan's default kernel).
	variants := map[string][]int{
		"f32": {0, 4, 24},
		"f64": {0, 4},
	}
	for _, prec := range []string{"f32", "f64"} {
		for _, c := range cases {
			for _, lay := range []banded.Layout{banded.Interleaved, banded.Contiguous} {
				for _, depth := range variants[prec] {
					if lay == banded.Contiguous && depth != 0 && depth != 4 {
						continue
					}
					vname := "auto"
					if depth != 0 {
						vname = fmt.Sprintf("d%d", depth)
					}
					name := fmt.Sprintf("%s/N=%d/G=%d/%v/%s", prec, c.n, c.g, lay, vname)
					b.Run(name, func(b *testing.B) {
						opts := Options{depth: depth}
						if prec == "f32" {
							benchBandBatch[float32](b, c.n, 2, c.g, lay, opts, bw)
						} else {
							benchBandBatch[float64](b, c.n, 2, c.g, lay, opts, bw)
						}
					})
				}
			}
		}
	}
}

var (
	bandBWOnce sync.Once
	bandBW     float64
)

func bandCopyBandwidth(b *testing.B) float64 {
	bandBWOnce.Do(func() {
		var err error
		if bandBW, err = gpuclock.CopyBandwidth(dev, 1<<30, 20); err != nil {
			b.Fatal(err)
		}
		fmt.Printf("# %s: device-to-device copy %.0f GB/s (bytes read + written, 1 GiB, median of 20)\n", dev.Name(), bandBW/1e9)
	})
	return bandBW
}

// bandBenchData is a batch of pentadiagonal-like systems: off-diagonals
// U(−1,1), diagonal 2K+1 + U(0,1) (diagonally dominant, no boosts).
func bandBenchData[T tridiag.Float](n, k, g int, layout banded.Layout) (a, d []T) {
	r := rand.New(rand.NewPCG(uint64(n), uint64(g)))
	w := (2*k + 1) * n
	a, d = make([]T, w*g), make([]T, n*g)
	for s := 0; s <= 2*k; s++ {
		for j := 0; j < n; j++ {
			i := j + s - k
			for q := 0; q < g; q++ {
				var v T
				if i >= 0 && i < n {
					if s == k {
						v = T(float64(2*k+1) + r.Float64())
					} else {
						v = T(r.Float64()*2 - 1)
					}
				}
				e := s*n + j
				if layout == banded.Interleaved {
					a[e*g+q] = v
				} else {
					a[q*w+e] = v
				}
			}
		}
	}
	for i := range d {
		d[i] = T(r.Float64()*2 - 1)
	}
	return a, d
}

// bandBenchDataOf is bandBenchData for a real T, complexBenchData for a
// complex one.
func bandBenchDataOf[T banded.Scalar](n, k, g int, layout banded.Layout) (a, d []T) {
	var ha, hd any
	switch any(*new(T)).(type) {
	case float32:
		ha, hd = bandBenchData[float32](n, k, g, layout)
	case float64:
		ha, hd = bandBenchData[float64](n, k, g, layout)
	case complex64:
		ha, hd = complexBenchData[complex64](n, k, g, layout)
	case complex128:
		ha, hd = complexBenchData[complex128](n, k, g, layout)
	}
	return ha.([]T), hd.([]T)
}

// complexBenchData is a batch of complex systems: off-diagonal parts
// U(−1,1), diagonal 2K+1 + U(0,1) + i·U(−1,1) (diagonally dominant: the
// pivoting kernel interchanges no rows).
func complexBenchData[T banded.Complex](n, k, g int, layout banded.Layout) (a, d []T) {
	r := rand.New(rand.NewPCG(uint64(n), uint64(g)))
	u := func() float64 { return r.Float64()*2 - 1 }
	w := (2*k + 1) * n
	a, d = make([]T, w*g), make([]T, n*g)
	for s := 0; s <= 2*k; s++ {
		for j := 0; j < n; j++ {
			i := j + s - k
			for q := 0; q < g; q++ {
				var v complex128
				if i >= 0 && i < n {
					if s == k {
						v = complex(float64(2*k+1)+r.Float64(), u())
					} else {
						v = complex(u(), u())
					}
				}
				e := s*n + j
				if layout == banded.Interleaved {
					a[e*g+q] = T(v)
				} else {
					a[q*w+e] = T(v)
				}
			}
		}
	}
	for i := range d {
		d[i] = T(complex(u(), u()))
	}
	return a, d
}

func medianDuration(ts []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ts...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// bandBenchLast keeps the last host data, which the next variants reuse.
var bandBenchLast struct {
	key  string
	a, d any
}

func benchBandBatch[T banded.Scalar](b *testing.B, n, k, g int, layout banded.Layout, opts Options, bw float64) {
	ctx := context.Background()
	key := fmt.Sprintf("%d/%d/%d/%v/%T", n, k, g, layout, *new(T))
	if bandBenchLast.key != key {
		bandBenchLast.key = ""
		bandBenchLast.a, bandBenchLast.d = nil, nil
		ha, hd := bandBenchDataOf[T](n, k, g, layout)
		bandBenchLast.key, bandBenchLast.a, bandBenchLast.d = key, ha, hd
	}
	ha, hd := bandBenchLast.a.([]T), bandBenchLast.d.([]T)
	a, err := cuda.Upload(dev, ha)
	if err != nil {
		b.Fatal(err)
	}
	defer a.Free()
	d, err := cuda.Upload(dev, hd)
	if err != nil {
		b.Fatal(err)
	}
	defer d.Free()
	x, err := cuda.Alloc[T](dev, n*g)
	if err != nil {
		b.Fatal(err)
	}
	defer x.Free()
	p, err := NewBatchPlan[T](dev, n, k, g, layout, opts)
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	var med time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ts, err := p.Time(ctx, gpuclock.BackToBack, a, d, x, 3, 15)
		if err != nil {
			b.Fatal(err)
		}
		med = medianDuration(ts)
	}
	moved, floor := p.Bytes()
	sec := med.Seconds()
	b.ReportMetric(float64(n)*float64(g)/sec/1e6, "MRows/s")
	b.ReportMetric(100*float64(floor)/sec/bw, "%copy")
	b.ReportMetric(100*float64(moved)/sec/bw, "%moved")
	b.ReportMetric(float64(med.Microseconds()), "µs")
	b.Logf("kernel %s, %d threads/block, moved %.1f MB (floor %.1f MB)", p.Kernel(), p.threads, float64(moved)/1e6, float64(floor)/1e6)
}

// BenchmarkBandBatchCpivot measures the complex pivoting kernels
// (band_batch_cpivot_*) beside the real ones (band_batch_pivot_*, the
// same algorithm in float32 and float64) on N = 256, G = 65536 and N =
// 1024, G = 16384, K = 2 and 8, both layouts, dominant systems (no
// interchanges). Metrics as BenchmarkBandBatch's: %copy is the floor
// (2K+3 elements a row: 8 bytes an element for complex64, 16 for
// complex128) over the copy bandwidth, the share of the memory limit. Run
// on the GPU machine with
//
//	./bandedgpu.test -test.run '^$' -test.bench BandBatchCpivot -test.benchtime 1x
func BenchmarkBandBatchCpivot(b *testing.B) {
	bw := bandCopyBandwidth(b)
	cases := []struct{ n, g int }{{256, 65536}, {1024, 16384}}
	for _, prec := range []string{"c64", "c128", "f32", "f64"} {
		for _, c := range cases {
			for _, k := range []int{2, 8} {
				for _, lay := range []banded.Layout{banded.Interleaved, banded.Contiguous} {
					b.Run(fmt.Sprintf("%s/N=%d/G=%d/K=%d/%v", prec, c.n, c.g, k, lay), func(b *testing.B) {
						opts := Options{Pivot: true}
						switch prec {
						case "c64":
							benchBandBatch[complex64](b, c.n, k, c.g, lay, opts, bw)
						case "c128":
							benchBandBatch[complex128](b, c.n, k, c.g, lay, opts, bw)
						case "f32":
							benchBandBatch[float32](b, c.n, k, c.g, lay, opts, bw)
						default:
							benchBandBatch[float64](b, c.n, k, c.g, lay, opts, bw)
						}
					})
				}
			}
		}
	}
}

// BenchmarkBandPartitions times the window-sliding kernels on one band
// matrix of N = 10⁶ rows split into P partitions (as truncated SPIKE
// would): the LU factorization, the UL factorization, and a solve with one
// right-hand side (both sweeps), each a synchronous call (launch, kernel,
// status readback).
func BenchmarkBandPartitions(b *testing.B) {
	ctx := context.Background()
	const n = 1_000_000
	for _, k := range []int{2, 8, 32, 64} {
		for _, parts := range []int{132, 528} {
			b.Run(fmt.Sprintf("f64/N=%d/K=%d/P=%d", n, k, parts), func(b *testing.B) {
				m := banded.Random[float64](n, k, 1, rand.New(rand.NewPCG(uint64(k), uint64(parts))))
				band, err := cuda.Upload(dev, m.Data)
				if err != nil {
					b.Fatal(err)
				}
				defer band.Free()
				work, err := cuda.Alloc[float64](dev, len(m.Data))
				if err != nil {
					b.Fatal(err)
				}
				defer work.Free()
				rhs := make([]float64, n)
				for i := range rhs {
					rhs[i] = 1
				}
				x, err := cuda.Upload(dev, rhs)
				if err != nil {
					b.Fatal(err)
				}
				defer x.Free()
				pp, err := NewPartitions[float64](dev, n, k, partitionBounds(n, parts))
				if err != nil {
					b.Fatal(err)
				}
				defer pp.Close()
				var lu, ul, sv time.Duration
				timed := func(d *time.Duration, f func() error) {
					t0 := time.Now()
					if err := f(); err != nil {
						b.Fatal(err)
					}
					*d += time.Since(t0)
				}
				restore := func() {
					if err := work.CopyFromBuffer(band); err != nil {
						b.Fatal(err)
					}
				}
				for i := 0; i < b.N; i++ {
					restore()
					timed(&lu, func() error {
						_, err := pp.FactorLU(ctx, work, banded.FactorOptions{})
						return err
					})
					timed(&sv, func() error { return pp.SolveLU(ctx, work, x, 1, n, SweepBoth) })
					restore()
					timed(&ul, func() error {
						_, err := pp.FactorUL(ctx, work, banded.FactorOptions{})
						return err
					})
				}
				per := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1e3 / float64(b.N) }
				b.ReportMetric(per(lu), "ms-LU")
				b.ReportMetric(per(ul), "ms-UL")
				b.ReportMetric(per(sv), "ms-solve")
			})
		}
	}
}

// BenchmarkBandBatchK measures the batched kernel of every half-bandwidth
// K = 1…8 on N = 1024, G = 16384, interleaved.
func BenchmarkBandBatchK(b *testing.B) {
	bw := bandCopyBandwidth(b)
	for _, prec := range []string{"f32", "f64"} {
		for k := 1; k <= MaxBatchK; k++ {
			b.Run(fmt.Sprintf("%s/K=%d", prec, k), func(b *testing.B) {
				if prec == "f32" {
					benchBandBatch[float32](b, 1024, k, 16384, banded.Interleaved, Options{}, bw)
				} else {
					benchBandBatch[float64](b, 1024, k, 16384, banded.Interleaved, Options{}, bw)
				}
			})
		}
	}
}
