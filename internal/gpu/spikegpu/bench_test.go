//go:build cuda

package spikegpu

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"gorgonia.org/cu"

	"github.com/bandsolve/bandsolve/banded"
	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/spike"
	"github.com/bandsolve/bandsolve/tridiag"
	"github.com/bandsolve/bandsolve/tuning"
)

// BenchmarkSpikeGPU times Plan.Factor and Solve (synchronous calls,
// wall clock: launches, kernels and the status readback) for N = 10⁶,
// d = 1 and K = 2, 16, 64, 100 in FP32 and FP64, with the partitions of
// package tuning. K = 100, d = 1 is the case of Fig. 5b of Li et al.
// (2014); the host reference is LAPACK gbsv at 3.7 s for it
// (bench/anchors/banded-h200.csv). Metrics: ms-factor, ms-solve, the
// partitions P and the relative residual ‖b − A·x‖∞/(‖A‖∞‖x‖∞) of the
// solution.
func BenchmarkSpikeGPU(b *testing.B) {
	const n = 1_000_000
	for _, k := range []int{2, 16, 64, 100} {
		m := banded.Random[float64](n, k, 1, rand.New(rand.NewPCG(uint64(k), 7)))
		m32 := banded.Convert[float32](m)
		auto := tuning.SpikeKernelAuto
		benchSpike(b, fmt.Sprintf("f64/N=%d/K=%d", n, k), m, spike.Options{}, auto)
		benchSpike(b, fmt.Sprintf("f32/N=%d/K=%d", n, k), m32, spike.Options{}, auto)
		// The kernel that is not the default for K, and SPIKE::GPU's UL
		// of the top-left 2K×2K blocks only.
		if k <= tuning.SpikeWindowMaxK {
			other, name := tuning.SpikeKernelWide, "wide"
			if auto.Wide(k) {
				other, name = tuning.SpikeKernelWindow, "window"
			}
			benchSpike(b, fmt.Sprintf("f64/N=%d/K=%d/%s", n, k, name), m, spike.Options{}, other)
			benchSpike(b, fmt.Sprintf("f32/N=%d/K=%d/%s", n, k, name), m32, spike.Options{}, other)
		}
		if k >= 16 {
			ul := spike.Options{ULBlock: spike.PaperULBlock(k)}
			benchSpike(b, fmt.Sprintf("f64/N=%d/K=%d/ul2K", n, k), m, ul, auto)
			benchSpike(b, fmt.Sprintf("f32/N=%d/K=%d/ul2K", n, k), m32, ul, auto)
		}
	}
}

// BenchmarkSpikeGPUBlocked times the blocked path (K above
// tuning.SpikeWideMaxK; ptx/src/band_blocked.cuh) like BenchmarkSpikeGPU:
// N = 10⁵ and 10⁶, K = 200, 300, 500, d = 1, FP64 and FP32, the partitions
// of package tuning (at least 16K rows each). ms-factor and ms-solve are
// wall times of the synchronous calls; ms-<stage> come from CUDA events.
// In FP32, K = 200 is below the limit (238): the shared-memory kernels,
// with the blocked path forced beside them for comparison.
func BenchmarkSpikeGPUBlocked(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			for _, k := range []int{200, 300, 500} {
				// Matrices are made inside the sub-benchmark, so that a
				// -test.bench filter skips their generation too.
				b.Run(fmt.Sprintf("K=%d", k), func(b *testing.B) {
					m := banded.Random[float64](n, k, 1, rand.New(rand.NewPCG(uint64(k), 9)))
					auto := tuning.SpikeKernelAuto
					benchSpike(b, "f64", m, spike.Options{}, auto)
					m32 := banded.Convert[float32](m)
					m = nil
					benchSpike(b, "f32", m32, spike.Options{}, auto)
					if !tuning.SpikeBlocked(dev.Properties(), k, 4, auto) {
						benchSpike(b, "f32-blocked", m32, spike.Options{}, tuning.SpikeKernelBlocked)
					}
				})
			}
		})
	}
}

// BenchmarkSpikeHostPivot is the host reference of BenchmarkSpikeGPUBlocked:
// banded.FactorPivot (LU with partial pivoting, O(N·K²), one thread) and its
// solve, d = 1, FP64, for N = 10⁵ with K = 200, 300, 500 and N = 10⁶ with
// K = 200 only (the others take minutes: about 10× the N = 10⁵ times).
func BenchmarkSpikeHostPivot(b *testing.B) {
	type sc struct{ n, k int }
	for _, c := range []sc{{100_000, 200}, {100_000, 300}, {100_000, 500}, {1_000_000, 200}} {
		n, k := c.n, c.k
		b.Run(fmt.Sprintf("f64/N=%d/K=%d", n, k), func(b *testing.B) {
			m := banded.Random[float64](n, k, 1, rand.New(rand.NewPCG(uint64(k), 9)))
			rhs := make([]float64, n)
			for i := range rhs {
				rhs[i] = math.Sin(float64(i))
			}
			var tf, ts time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				c := m.Clone()
				t0 := time.Now()
				lu, err := banded.FactorPivot(c)
				if err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				x := append([]float64(nil), rhs...)
				lu.Solve(x)
				tf += t1.Sub(t0)
				ts += time.Since(t1)
			}
			ms := func(d time.Duration) float64 { return d.Seconds() * 1e3 / float64(b.N) }
			b.ReportMetric(ms(tf), "ms-factor")
			b.ReportMetric(ms(ts), "ms-solve")
		})
	}
}

func benchSpike[T tridiag.Float](b *testing.B, name string, m *banded.Band[T], opts spike.Options, kern tuning.SpikeKernel) {
	ctx := context.Background()
	da, err := cuda.Upload(dev, m.Data)
	if err != nil {
		b.Fatal(err)
	}
	defer da.Free()
	rhs := make([]T, m.N)
	for i := range rhs {
		rhs[i] = T(math.Sin(float64(i)))
	}
	db, err := cuda.Upload(dev, rhs)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Free()
	dx, err := cuda.Alloc[T](dev, m.N)
	if err != nil {
		b.Fatal(err)
	}
	defer dx.Free()
	p, err := newPlan[T](dev, m.N, m.K, opts, kern)
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	b.Run(name, func(b *testing.B) {
		// Warm up (module load, shared-memory opt-in).
		if err := p.Factor(ctx, da); err != nil {
			b.Fatal(err)
		}
		if err := p.Solve(ctx, db, dx); err != nil {
			b.Fatal(err)
		}
		var tf, ts time.Duration
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			t0 := time.Now()
			if err := p.Factor(ctx, da); err != nil {
				b.Fatal(err)
			}
			t1 := time.Now()
			if err := p.Solve(ctx, db, dx); err != nil {
				b.Fatal(err)
			}
			tf += t1.Sub(t0)
			ts += time.Since(t1)
		}
		b.StopTimer()
		x := make([]T, m.N)
		if err := dx.CopyTo(x); err != nil {
			b.Fatal(err)
		}
		ax := make([]T, m.N)
		m.MulVec(x, ax)
		var rmax, xmax float64
		for i := range x {
			rmax = math.Max(rmax, math.Abs(float64(rhs[i]-ax[i])))
			xmax = math.Max(xmax, math.Abs(float64(x[i])))
		}
		st, err := stageTimes(p, da, db, dx)
		if err != nil {
			b.Fatal(err)
		}
		for _, name := range []string{"copy", "ulblock", "LU", "UL", "tips", "rform", "reduced", "vcopy", "sweep", "rsolve"} {
			if v, ok := st[name]; ok {
				b.ReportMetric(v, "ms-"+name)
			}
		}
		ms := func(d time.Duration) float64 { return d.Seconds() * 1e3 / float64(b.N) }
		b.ReportMetric(ms(tf), "ms-factor")
		b.ReportMetric(ms(ts), "ms-solve")
		b.ReportMetric(ms(tf+ts), "ms-factor+solve")
		b.ReportMetric(float64(p.P()), "P")
		b.ReportMetric(rmax/(m.NormInf()*xmax), "resid")
	})
}

// stageTimes runs one factorization and one solve with a CUDA event
// recorded after every stage and returns each stage's milliseconds
// (stages of the same name summed: the two sweeps of a solve).
func stageTimes[T tridiag.Float](p *Plan[T], da, db, dx *cuda.Buffer[T]) (map[string]float64, error) {
	ctx := context.Background()
	type mark struct {
		name string
		ev   cu.Event
	}
	var marks []mark
	defer func() {
		_ = dev.Enqueue(func() error {
			for i := range marks {
				_ = cu.DestroyEvent(&marks[i].ev)
			}
			return nil
		})
	}()
	record := func(name string) error {
		ev, err := cu.MakeEvent(cu.DefaultEvent)
		if err != nil {
			return err
		}
		marks = append(marks, mark{name, ev})
		return ev.Record(p.stream)
	}
	out := map[string]float64{}
	for _, run := range []func() error{
		func() error { return p.Factor(ctx, da) },
		func() error { return p.Solve(ctx, db, dx) },
	} {
		marks = marks[:0]
		if err := dev.Enqueue(func() error { return record("start") }); err != nil {
			return nil, err
		}
		p.onStage = record
		err := run()
		p.onStage = nil
		if err != nil {
			return nil, err
		}
		if err := dev.Enqueue(func() error {
			if err := p.stream.Synchronize(); err != nil {
				return err
			}
			for i := 1; i < len(marks); i++ {
				ms, err := marks[i-1].ev.Elapsed(marks[i].ev)
				if err != nil {
					return err
				}
				out[marks[i].name] += float64(ms)
			}
			for i := range marks {
				_ = cu.DestroyEvent(&marks[i].ev)
			}
			return nil
		}); err != nil {
			return nil, err
		}
	}
	marks = nil
	return out, nil
}
