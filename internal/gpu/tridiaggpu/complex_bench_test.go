//go:build cuda

package tridiaggpu

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

// BenchmarkComplex times the complex plans on interleaved batches of
// N = 256, G = 65536 and N = 4096, G = 4096: Thomas, GTSV and Auto on
// systems dominant by modulus (Auto runs Thomas), and Auto on damped
// Helmholtz systems (-helmholtz: GTSV for most). %limit compares the
// bytes of a, b, c, d and x (complex64: 8 B an element, complex128: 16 B)
// with the device-to-device copy bandwidth:
//
//	./tridiaggpu.test -test.run '^$' -test.bench Complex -test.benchtime 3x
func BenchmarkComplex(b *testing.B) {
	bw, err := gpuclock.CopyBandwidth(dev, 1<<30, 5)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("%s: device-to-device copy %.0f GB/s (read+write)", dev.Name(), bw/1e9)
	b.Run("complex64", func(b *testing.B) { benchComplex[complex64](b, bw) })
	b.Run("complex128", func(b *testing.B) { benchComplex[complex128](b, bw) })
}

func benchComplex[T tridiag.Complex](b *testing.B, bw float64) {
	for _, sz := range []struct{ n, g int }{{256, 65536}, {4096, 4096}} {
		shape := tridiag.Shape{N: sz.n, G: sz.g, Layout: tridiag.Interleaved(sz.g)}
		for _, fam := range []int{0, 3} {
			bufs := complexBenchBuffers[T](b, shape, fam)
			cases := []struct {
				name string
				opts tridiag.Options
			}{{"thomas", tridiag.Options{Algorithm: tridiag.Thomas}}, {"gtsv", tridiag.Options{Algorithm: tridiag.GTSV}}, {"auto", tridiag.Options{}}}
			if fam != 0 {
				cases = cases[2:]
			}
			for _, c := range cases {
				name := fmt.Sprintf("N=%d/G=%d/%s", sz.n, sz.g, c.name)
				if fam != 0 {
					name += "-helmholtz"
				}
				b.Run(name, func(b *testing.B) {
					p, err := NewComplexPlan[T](dev, shape, c.opts)
					if err != nil {
						b.Fatal(err)
					}
					defer p.Close()
					var all []time.Duration
					for b.Loop() {
						ts, err := p.Time(context.Background(), cuda.EventTimer(nil), bufs[0], bufs[1], bufs[2], bufs[3], bufs[4], 1, 5)
						if err != nil {
							b.Fatal(err)
						}
						all = append(all, ts...)
					}
					sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
					med := all[len(all)/2].Seconds()
					rows := float64(sz.n * sz.g)
					b.ReportMetric(rows/med/1e6, "MRows/s")
					b.ReportMetric(rows*5*float64(2*complexPartSize[T]())/med/bw*100, "%limit")
					b.ReportMetric(med*1e6, "µs")
				})
			}
			for _, buf := range bufs {
				_ = buf.Free()
			}
		}
	}
}

// complexBenchBuffers uploads a batch of family fam (cfamily) and an
// output buffer: a, b, c, d, x.
func complexBenchBuffers[T tridiag.Complex](b *testing.B, shape tridiag.Shape, fam int) []*cuda.Buffer[T] {
	r := rand.New(rand.NewPCG(7, uint64(fam)))
	m := shape.Len()
	host := [4][]T{make([]T, m), make([]T, m), make([]T, m), make([]T, m)}
	for g := range shape.G {
		for i := range shape.N {
			k := shape.Layout.Index(i, g)
			a, bb, c, d := cfamily(r, fam, i)
			host[0][k], host[1][k], host[2][k], host[3][k] = T(a), T(bb), T(c), T(d)
		}
	}
	var bufs []*cuda.Buffer[T]
	for _, h := range host {
		buf, err := cuda.Upload(dev, h)
		if err != nil {
			b.Fatal(err)
		}
		bufs = append(bufs, buf)
	}
	x, err := cuda.Alloc[T](dev, m)
	if err != nil {
		b.Fatal(err)
	}
	return append(bufs, x)
}

// BenchmarkComplexPartition times the complex partition kernels against
// the kernels of a thread a system on systems dominant by modulus: N =
// 256, G = 65536; N = 4096, G = 4096; N = 65536, G = 256, contiguous and
// interleaved; Partition (the partition kernels: refused where a system
// does not fit a block), Auto (as it chooses; its description is
// logged) and Thomas. %limit as in BenchmarkComplex:
//
//	./tridiaggpu.test -test.run '^$' -test.bench ComplexPartition -test.benchtime 3x
func BenchmarkComplexPartition(b *testing.B) {
	bw, err := gpuclock.CopyBandwidth(dev, 1<<30, 5)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("%s: device-to-device copy %.0f GB/s (read+write)", dev.Name(), bw/1e9)
	b.Run("complex64", func(b *testing.B) { benchComplexPartition[complex64](b, bw) })
	b.Run("complex128", func(b *testing.B) { benchComplexPartition[complex128](b, bw) })
}

func benchComplexPartition[T tridiag.Complex](b *testing.B, bw float64) {
	for _, sz := range []struct{ n, g int }{{256, 65536}, {4096, 4096}, {65536, 256}} {
		for _, lname := range []string{"contiguous", "interleaved"} {
			l := tridiag.Contiguous(sz.n)
			if lname == "interleaved" {
				l = tridiag.Interleaved(sz.g)
			}
			shape := tridiag.Shape{N: sz.n, G: sz.g, Layout: l}
			bufs := complexBenchBuffers[T](b, shape, 0)
			for _, c := range []struct {
				name string
				opts tridiag.Options
			}{{"partition", tridiag.Options{Algorithm: tridiag.Partition}}, {"auto", tridiag.Options{}}, {"thomas", tridiag.Options{Algorithm: tridiag.Thomas}}} {
				b.Run(fmt.Sprintf("N=%d/G=%d/%s/%s", sz.n, sz.g, lname, c.name), func(b *testing.B) {
					p, err := NewComplexPlan[T](dev, shape, c.opts)
					if err != nil {
						b.Skip(err)
					}
					defer p.Close()
					b.Log(p.Describe())
					var all []time.Duration
					for b.Loop() {
						ts, err := p.Time(context.Background(), cuda.EventTimer(nil), bufs[0], bufs[1], bufs[2], bufs[3], bufs[4], 1, 5)
						if err != nil {
							b.Fatal(err)
						}
						all = append(all, ts...)
					}
					sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
					med := all[len(all)/2].Seconds()
					rows := float64(sz.n * sz.g)
					b.ReportMetric(rows/med/1e6, "MRows/s")
					b.ReportMetric(rows*5*float64(2*complexPartSize[T]())/med/bw*100, "%limit")
					b.ReportMetric(med*1e6, "µs")
				})
			}
			for _, buf := range bufs {
				_ = buf.Free()
			}
		}
	}
}
