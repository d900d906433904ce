//go:build cuda

package bench

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"sort"
	"testing"
	"time"

	"github.com/bandsolve/bandsolve/banded"
	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/internal/gpu/bandedgpu"
	"github.com/bandsolve/bandsolve/internal/gpu/gpuclock"
	"github.com/bandsolve/bandsolve/tridiag"
)

// BenchmarkBandBatch puts bandsolve's batched banded solver (one thread per
// system, LU without pivoting; bandedgpu.BatchPlan with its default kernel)
// beside cuSPARSE's gpsvInterleavedBatch in the same process, on the
// pentadiagonal (K = 2) cases of bench/anchors/banded-h200.csv: the
// interleaved layout, coefficients [1 −4 10 −4 1] in every row (as the
// anchors), random right-hand sides. Both are timed with CUDA events,
// median of 15 after 3 warm-ups; cuSPARSE's six arrays are restored before
// each call outside the timed region (it may overwrite them). Reported:
// MRows/s = N·G / time and %copy = the floor of 2K+3 = 7 elements per row
// (read 5 coefficients and d, write x) per second over the device's
// copy bandwidth. One summary line per case starts with BANDBATCH. Run
// with
//
//	./bench.test -test.run '^$' -test.bench BandBatch -test.benchtime 1x
func BenchmarkBandBatch(b *testing.B) {
	dev := openTestDevice(b)
	bw, err := gpuclock.CopyBandwidth(dev, 1<<30, 20)
	if err != nil {
		b.Fatal(err)
	}
	var peer *cusparsePeer
	lib, lerr := loadCusparse(os.Getenv("BANDSOLVE_CUSPARSE"), func(l *cusparseLib) error {
		var e error
		peer, e = newCusparsePeer(dev, l)
		return e
	})
	if lerr == nil {
		defer peer.close()
		fmt.Printf("# cuSPARSE %s from %s\n", peer.versionString(), lib.path)
	} else {
		fmt.Printf("# no cuSPARSE: %v\n", lerr)
	}
	fmt.Printf("# %s: device-to-device copy %.0f GB/s (read+written, 1 GiB, median of 20)\n", dev.Name(), bw/1e9)
	fmt.Printf("# BANDBATCH prec N G | bandsolve µs MRows/s %%copy | gpsvInterleavedBatch µs MRows/s %%copy | speed-up | max|Δx|/max|x|\n")
	for _, prec := range []string{"f32", "f64"} {
		for _, c := range []struct{ n, g int }{{256, 65536}, {1024, 16384}, {4096, 4096}} {
			var r bandRow
			r.prec, r.n, r.g = prec, c.n, c.g
			b.Run(fmt.Sprintf("%s/N=%d/G=%d", prec, c.n, c.g), func(b *testing.B) {
				if prec == "f32" {
					benchBandVsGpsv[float32](b, dev, peer, c.n, c.g, bw, &r)
				} else {
					benchBandVsGpsv[float64](b, dev, peer, c.n, c.g, bw, &r)
				}
			})
			fmt.Printf("BANDBATCH %s %5d %6d | %9.1f %8.0f %5.1f%% | %9.1f %8.0f %5.1f%% | %5.2f× | %.1e\n",
				r.prec, r.n, r.g, r.ours.Seconds()*1e6, r.mrows(r.ours), r.frac(r.ours, bw),
				r.gpsv.Seconds()*1e6, r.mrows(r.gpsv), r.frac(r.gpsv, bw), r.gpsv.Seconds()/r.ours.Seconds(), r.diff)
		}
	}
}

type bandRow struct {
	prec       string
	n, g, elem int
	ours, gpsv time.Duration
	diff       float64
}

func (r *bandRow) mrows(t time.Duration) float64 {
	if t <= 0 {
		return math.NaN()
	}
	return float64(r.n) * float64(r.g) / t.Seconds() / 1e6
}

func (r *bandRow) frac(t time.Duration, bw float64) float64 {
	if t <= 0 {
		return math.NaN()
	}
	return 100 * float64(7*r.n*r.g*r.elem) / t.Seconds() / bw
}

func medianTime(ts []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ts...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func benchBandVsGpsv[T tridiag.Float](b *testing.B, dev *cuda.Device, peer *cusparsePeer, n, g int, bw float64, r *bandRow) {
	const k = 2
	ctx := context.Background()
	r.elem = 4
	if _, ok := any(T(0)).(float64); ok {
		r.elem = 8
	}
	coef := [5]T{1, -4, 10, -4, 1} // a_{i,i−2} … a_{i,i+2}
	// Tall-and-thin storage, interleaved: storage column s holds a_{j+s−K, j}
	// = coefficient of offset (j) − (j+s−K) = K−s from row j+s−K's view.
	band := make([]T, (2*k+1)*n*g)
	for s := 0; s <= 2*k; s++ {
		v := coef[2*k-s]
		for j := 0; j < n; j++ {
			if i := j + s - k; i < 0 || i >= n {
				continue
			}
			row := band[(s*n+j)*g : (s*n+j+1)*g]
			for q := range row {
				row[q] = v
			}
		}
	}
	rng := rand.New(rand.NewPCG(uint64(n), uint64(g)))
	rhs := make([]T, n*g)
	for i := range rhs {
		rhs[i] = T(rng.Float64()*2 - 1)
	}
	up := func(v []T) *cuda.Buffer[T] {
		buf, err := cuda.Upload(dev, v)
		if err != nil {
			b.Fatal(err)
		}
		return buf
	}
	var xOurs, xGpsv []T
	{
		a, d := up(band), up(rhs)
		x, err := cuda.Alloc[T](dev, n*g)
		if err != nil {
			b.Fatal(err)
		}
		p, err := bandedgpu.NewBatchPlan[T](dev, n, k, g, banded.Interleaved, bandedgpu.Options{})
		if err != nil {
			b.Fatal(err)
		}
		ts, err := p.Time(ctx, gpuclock.BackToBack, a, d, x, 3, 15)
		if err != nil {
			b.Fatal(err)
		}
		r.ours = medianTime(ts)
		xOurs = make([]T, n*g)
		if err := x.CopyTo(xOurs); err != nil {
			b.Fatal(err)
		}
		b.Logf("bandsolve kernel %s", p.Kernel())
		_ = p.Close()
		for _, buf := range []*cuda.Buffer[T]{a, d, x} {
			_ = buf.Free()
		}
	}
	if peer != nil {
		diag := func(off int) []T { // row-indexed diagonal a_{i,i+off}, interleaved
			v := make([]T, n*g)
			for i := 0; i < n; i++ {
				if i+off < 0 || i+off >= n {
					continue
				}
				row := v[i*g : (i+1)*g]
				for q := range row {
					row[q] = coef[off+2]
				}
			}
			return v
		}
		host := [][]T{diag(-2), diag(-1), diag(0), diag(1), diag(2), rhs}
		var work, saved []*cuda.Buffer[T]
		var restores []devCopy
		for _, h := range host {
			w, s := up(h), up(h)
			work, saved = append(work, w), append(saved, s)
			restores = append(restores, devCopy{dst: w.Ptr(), src: s.Ptr(), bytes: int64(len(h)) * int64(r.elem)})
		}
		call := &gpsvCall{f64: r.elem == 8, ds: work[0].Ptr(), dl: work[1].Ptr(), d: work[2].Ptr(), du: work[3].Ptr(),
			dw: work[4].Ptr(), x: work[5].Ptr(), m: n, batch: g}
		ts, err := peer.gpsvTime(call, restores, 3, 15)
		if err != nil {
			b.Logf("gpsvInterleavedBatch: %v", err)
		} else {
			r.gpsv = medianTime(ts)
			xGpsv = make([]T, n*g)
			if err := work[5].CopyTo(xGpsv); err != nil {
				b.Fatal(err)
			}
		}
		for _, buf := range append(work, saved...) {
			_ = buf.Free()
		}
	}
	r.diff = math.NaN()
	if xGpsv != nil {
		var dx, xn float64
		for i := range xOurs {
			dx = math.Max(dx, math.Abs(float64(xOurs[i]-xGpsv[i])))
			xn = math.Max(xn, math.Abs(float64(xGpsv[i])))
		}
		r.diff = dx / xn
	}
	b.ReportMetric(r.mrows(r.ours), "MRows/s")
	b.ReportMetric(r.frac(r.ours, bw), "%copy")
	if r.gpsv > 0 {
		b.ReportMetric(r.mrows(r.gpsv), "gpsv-MRows/s")
		b.ReportMetric(r.frac(r.gpsv, bw), "gpsv-%copy")
	}
}
