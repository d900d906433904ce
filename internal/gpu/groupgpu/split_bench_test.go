//go:build cuda

package groupgpu

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"testing"
	"time"

	"gorgonia.org/cu"

	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/internal/gpu/gpuclock"
	"github.com/bandsolve/bandsolve/internal/gpu/tridiaggpu"
	"github.com/bandsolve/bandsolve/tridiag"
)

// BenchmarkSplitSystems times batches whose systems are split by rows
// across the first 1, 2 and 4 GPUs of the host (SplitPlan, the data
// resident, each part interleaved: the lines of a grid decomposed along
// the systems' axis), and, on one GPU, Auto's plan of the whole batch:
//
//   - pascal: 128×128 systems of 4096 rows, FP64 (PaScaL_TDMA's case; its
//     published times are 4.225 ms on 2 and 2.221 ms on 4 H200s);
//   - long: one FP64 system of 2^27 rows.
//
// The time is the host's wall time of SolveDevice (the reduce on every
// GPU, the exchange, the reduced solve on the first GPU, the expand, the
// status read), the median of the calls. It reports ms a solve, MRows/s,
// the speed-up over the split on one GPU and %limit: the five arrays'
// bytes against the summed device-to-device copy bandwidths of the GPUs
// (gpuclock.CopyBandwidth). Run with
//
//	go test -tags cuda -c -o groupgpu.test ./internal/gpu/groupgpu
//	./groupgpu.test -test.run '^$' -test.bench SplitSystems -test.benchtime 10x
func BenchmarkSplitSystems(b *testing.B) {
	bws := make([]float64, all.Len())
	for i := range bws {
		var err error
		if bws[i], err = gpuclock.CopyBandwidth(all.Device(i), 1<<30, 5); err != nil {
			b.Fatal(err)
		}
	}
	for _, c := range []struct {
		name string
		n, g int
	}{{"pascal", 4096, 128 * 128}, {"long", 1 << 27, 1}} {
		b.Run(c.name+"/auto", func(b *testing.B) {
			shape := tridiag.Shape{N: c.n, G: c.g, Layout: tridiag.Interleaved(c.g)}
			p, err := tridiaggpu.NewPlan[float64](dev, shape, tridiag.Options{SkipFiniteCheck: true})
			if err != nil {
				b.Fatal(err)
			}
			defer p.Close()
			b.Logf("%s", p.Describe())
			bufs := benchBuffers(b, []*cuda.Device{dev}, []tridiag.Shape{shape})
			defer freeAll(bufs)
			sec := wallMedian(b, func() error {
				return p.SolveDevice(context.Background(), bufs[0][0], bufs[1][0], bufs[2][0], bufs[3][0], bufs[4][0])
			})
			reportSplit(b, c.n, c.g, 1, sec, bws)
		})
		one := 0.0
		for _, gpus := range []int{1, 2, 4} {
			if gpus > all.Len() {
				break
			}
			b.Run(fmt.Sprintf("%s/gpus=%d", c.name, gpus), func(b *testing.B) {
				shapes := make([]tridiag.Shape, gpus)
				for k := range shapes {
					n := c.n*(k+1)/gpus - c.n*k/gpus
					shapes[k] = tridiag.Shape{N: n, G: c.g, Layout: tridiag.Interleaved(c.g)}
				}
				devs := all.Devices()[:gpus]
				p, err := newSplitPlan[float64](devs, shapes)
				if err != nil {
					b.Fatal(err)
				}
				defer p.Close()
				b.Logf("%s", p.Describe())
				bufs := benchBuffers(b, devs, shapes)
				defer freeAll(bufs)
				sec := wallMedian(b, func() error {
					return p.SolveDevice(context.Background(), bufs[0], bufs[1], bufs[2], bufs[3], bufs[4])
				})
				if gpus == 1 {
					one = sec
				}
				reportSplit(b, c.n, c.g, gpus, sec, bws)
				if one > 0 {
					b.ReportMetric(one/sec, "speedup")
				}
			})
		}
	}
}

// benchBuffers makes a, b, c, d, x of each part on its device: random,
// diagonally dominant (b = U(−1,1)+4).
func benchBuffers(b *testing.B, devs []*cuda.Device, shapes []tridiag.Shape) [5][]*cuda.Buffer[float64] {
	var bufs [5][]*cuda.Buffer[float64]
	for k, sh := range shapes {
		host := make([]float64, sh.Len())
		r := rand.New(rand.NewPCG(uint64(k), 5))
		for i := range bufs {
			for j := range host {
				host[j] = r.Float64()*2 - 1
				if i == 1 {
					host[j] += 4
				}
			}
			buf, err := cuda.Upload(devs[k], host)
			if err != nil {
				b.Fatal(err)
			}
			bufs[i] = append(bufs[i], buf)
		}
	}
	return bufs
}

func freeAll(bufs [5][]*cuda.Buffer[float64]) {
	for _, l := range bufs {
		Free(l)
	}
}

// wallMedian calls solve twice to warm up, then b.N times five, and
// returns the median wall time of a call in seconds.
func wallMedian(b *testing.B, solve func() error) float64 {
	for range 2 {
		if err := solve(); err != nil {
			b.Fatal(err)
		}
	}
	var ts []time.Duration
	for b.Loop() {
		for range 5 {
			t0 := time.Now()
			if err := solve(); err != nil {
				b.Fatal(err)
			}
			ts = append(ts, time.Since(t0))
		}
	}
	sort.Slice(ts, func(i, j int) bool { return ts[i] < ts[j] })
	return ts[len(ts)/2].Seconds()
}

func reportSplit(b *testing.B, n, g, gpus int, sec float64, bws []float64) {
	bw := 0.0
	for _, v := range bws[:gpus] {
		bw += v
	}
	rows := float64(n) * float64(g)
	b.ReportMetric(sec*1e3, "ms")
	b.ReportMetric(rows/sec/1e6, "MRows/s")
	b.ReportMetric(rows*5*8/sec/bw*100, "%limit")
}

// BenchmarkSplitHuge solves one FP64 system of 2^31 rows (86 GB of a, b,
// c, d and x: more than one 80 GB GPU holds) split evenly across every
// GPU of the host (at least two, each with room for its part): −x[i−1] +
// 4x[i] − x[i+1] = 1, the arrays filled on the GPUs. It reports what
// BenchmarkSplitSystems does and the worst backward error of a row,
// |r_i| / (‖A‖∞·|x_i| + |d_i|) with ‖A‖∞ = 6, of the first and last three
// rows of every part and five rows spread through it, read back with
// their neighbours. Run with
//
//	./groupgpu.test -test.run '^$' -test.bench SplitHuge -test.benchtime 3x
func BenchmarkSplitHuge(b *testing.B) {
	P := all.Len()
	if P < 2 {
		b.Skipf("needs 2 GPUs, the host has %d", P)
	}
	const rows = 1 << 31
	shapes := make([]tridiag.Shape, P)
	devs := all.Devices()
	for k := range shapes {
		n := rows*(k+1)/P - rows*k/P
		shapes[k] = tridiag.Shape{N: n, G: 1}
		free, _, err := devs[k].MemInfo()
		if err != nil {
			b.Fatal(err)
		}
		if need := int64(n) * 8 * 5 * 11 / 10; free < need {
			b.Skipf("%s has %d GB free, a part needs %d GB", devs[k].Name(), free>>30, need>>30)
		}
	}
	p, err := newSplitPlan[float64](devs, shapes)
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	b.Logf("%s", p.Describe())
	var bufs [5][]*cuda.Buffer[float64]
	for k, sh := range shapes {
		for i, v := range []float64{-1, 4, -1, 1, 0} {
			buf, err := cuda.Alloc[float64](devs[k], sh.N)
			if err != nil {
				b.Fatal(err)
			}
			defer buf.Free()
			if err := fill64(buf, v); err != nil {
				b.Fatal(err)
			}
			bufs[i] = append(bufs[i], buf)
		}
	}
	solve := func() error {
		return p.SolveDevice(context.Background(), bufs[0], bufs[1], bufs[2], bufs[3], bufs[4])
	}
	sec := wallMedian(b, solve)
	bws := make([]float64, P)
	for i := range bws {
		if bws[i], err = gpuclock.CopyBandwidth(devs[i], 1<<30, 5); err != nil {
			b.Fatal(err)
		}
	}
	reportSplit(b, rows, 1, P, sec, bws)
	// Rows to check: each part's first and last 3 and 5 spread inside,
	// with their neighbours.
	// Reading the parts whole would move 17 GB: single rows are read.
	host := make([]float64, 1)
	read := func(k, i int) float64 {
		sl, err := bufs[4][k].Slice(i, 1)
		if err != nil {
			b.Fatal(err)
		}
		if err := sl.CopyTo(host); err != nil {
			b.Fatal(err)
		}
		return host[0]
	}
	worst := 0.0
	for k, sh := range shapes {
		idx := []int{0, 1, 2, sh.N - 3, sh.N - 2, sh.N - 1}
		for j := 1; j <= 5; j++ {
			idx = append(idx, sh.N*j/6)
		}
		for _, i := range idx {
			xm := readAt(k, i-1, shapes, read)
			x0 := read(k, i)
			xp := readAt(k, i+1, shapes, read)
			r := 1 - (-xm + 4*x0 - xp)
			worst = math.Max(worst, math.Abs(r)/(6*math.Abs(x0)+1))
		}
	}
	b.ReportMetric(worst, "backward-error")
}

// readAt is x at row i of part k, following into the neighbouring parts
// (0 outside the system).
func readAt(k, i int, shapes []tridiag.Shape, read func(k, i int) float64) float64 {
	for i < 0 {
		if k == 0 {
			return 0
		}
		k--
		i += shapes[k].N
	}
	for i >= shapes[k].N {
		if k == len(shapes)-1 {
			return 0
		}
		i -= shapes[k].N
		k++
	}
	return read(k, i)
}

// fill64 sets every element of buf to v with two strided 32-bit memsets
// (the low and the high word of each float64).
func fill64(buf *cuda.Buffer[float64], v float64) error {
	bits := math.Float64bits(v)
	return buf.Device().Enqueue(func() error {
		for w, word := range []uint64{bits & 0xffffffff, bits >> 32} {
			if err := cu.MemsetD2D32(buf.Ptr()+cu.DevicePtr(4*w), 8, uint(word), 1, int64(buf.Len())); err != nil {
				return err
			}
		}
		return nil
	})
}
