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

// BenchmarkFactor times the stored factorizations apart from their
// solves: factor (a, b, c read, the factors written) and solve with
// NRHS = 1, 4, 16 (the factors read once a group of columns, d read and
// x written per column), for LU without pivoting (lu), gttrf (gt), Auto's
// mix (auto, all LU on these dominant systems) and L·D·Lᵀ (ldlt, the SPD
// path); oneshot is the plan's ordinary solve of one right-hand side
// (Auto) for comparison. The factors are interleaved whatever the batch
// layout; the right-hand sides are in the batch's layout, interleaved
// (thread per system, coalesced) or contiguous (system g's rows
// adjacent). solve-nrhs=k runs the row kernels' default variant (groupOf,
// depthOf); variants/nrhs=k,pC,dD runs every variant of solveVariants
// that takes C ≤ k columns at a time; staged-nrhs=k, on contiguous
// batches, the staged kernels (canStage). MRows/s counts rows × right-hand
// sides; %limit is the bytes the kernel must move (factors once, d and x
// per column; oneshot: a, b, c, d, x) over the device-to-device copy
// bandwidth. Run on the GPU machine with
//
//	go test -tags cuda -c ./internal/gpu/tridiaggpu && ./tridiaggpu.test -test.run '^$' -test.bench Factor -test.benchtime 3x
//
// (-test.bench 'Factor/.*/variants' for the variants alone).
func BenchmarkFactor(b *testing.B) {
	bw, err := gpuclock.CopyBandwidth(dev, 1<<30, 5)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("%s: device-to-device copy %.0f GB/s (read+write)", dev.Name(), bw/1e9)
	b.Run("f32", func(b *testing.B) { benchFactorPrecision[float32](b, bw) })
	b.Run("f64", func(b *testing.B) { benchFactorPrecision[float64](b, bw) })
}

// factorBenchShapes are the batches BenchmarkFactor times.
var factorBenchShapes = []struct {
	n, g       int
	contiguous bool
}{{256, 65536, false}, {256, 65536, true}, {4096, 4096, false}}

// factorBenchNRHS are the numbers of right-hand sides it times.
var factorBenchNRHS = []int{1, 4, 16}

func benchFactorPrecision[T tridiag.Float](b *testing.B, bw float64) {
	for _, sh := range factorBenchShapes {
		shape := tridiag.Shape{N: sh.n, G: sh.g, Layout: tridiag.Interleaved(sh.g)}
		layout := "interleaved"
		if sh.contiguous {
			shape.Layout, layout = tridiag.Contiguous(sh.n), "contiguous"
		}
		L := shape.Normalize().Len()
		maxNRHS := factorBenchNRHS[len(factorBenchNRHS)-1]
		bufs := factorBenchBuffers[T](b, L, maxNRHS)
		b.Run(fmt.Sprintf("N=%d,G=%d,%s", sh.n, sh.g, layout), func(b *testing.B) {
			b.Run("oneshot", func(b *testing.B) { benchOneShot(b, shape, bw, bufs) })
			for _, m := range []struct {
				name string
				alg  tridiag.Algorithm
			}{{"lu", tridiag.Thomas}, {"gt", tridiag.GTSV}, {"auto", tridiag.Auto}, {"ldlt", tridiag.LDLT}} {
				b.Run(m.name, func(b *testing.B) { benchFactorMode(b, shape, m.alg, bw, bufs) })
			}
		})
	}
}

// factorBenchBuffers uploads a, b, c (one batch, diagonally dominant and
// symmetric positive definite when c is read as both off-diagonals), d
// (nrhs batches) and x (as large), freed when b ends.
func factorBenchBuffers[T tridiag.Float](b *testing.B, L, nrhs int) []*cuda.Buffer[T] {
	r := rand.New(rand.NewPCG(29, 30))
	bufs := make([]*cuda.Buffer[T], 5)
	for i, n := range []int{L, L, L, nrhs * L, nrhs * L} {
		host := make([]T, n)
		for k := range host {
			host[k] = T(r.Float64()*2 - 1)
			if i == 1 {
				host[k] += 4
			}
		}
		var err error
		if bufs[i], err = cuda.Upload(dev, host); err != nil {
			b.Fatal(err)
		}
		buf := bufs[i]
		b.Cleanup(func() { _ = buf.Free() })
	}
	return bufs
}

// benchOneShot times the plan's ordinary solve (Auto) of one right-hand
// side.
func benchOneShot[T tridiag.Float](b *testing.B, shape tridiag.Shape, bw float64, bufs []*cuda.Buffer[T]) {
	p, err := NewPlan[T](dev, shape, tridiag.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	b.Logf("%s", p.Describe())
	L := shape.Normalize().Len()
	view := func(buf *cuda.Buffer[T], off int) *cuda.Buffer[T] {
		v, err := buf.Slice(off, L)
		if err != nil {
			b.Fatal(err)
		}
		return v
	}
	d, x, save := view(bufs[3], 0), view(bufs[4], 0), view(bufs[3], L)
	var all []time.Duration
	for b.Loop() {
		ts, err := p.Time(context.Background(), cuda.EventTimer(nil), bufs[0], bufs[1], bufs[2], d, x, save, 1, 5)
		if err != nil {
			b.Fatal(err)
		}
		all = append(all, ts...)
	}
	reportFactorBench[T](b, all, shape, 1, 5, bw)
}

// benchFactorMode times the factor and the solves of one algorithm.
func benchFactorMode[T tridiag.Float](b *testing.B, shape tridiag.Shape, alg tridiag.Algorithm, bw float64, bufs []*cuda.Buffer[T]) {
	spec := tridiag.Spec{Shape: shape.Normalize(), Options: tridiag.Options{Algorithm: alg}}
	mode, err := factorModeOf(spec, alg)
	if err != nil {
		b.Fatal(err)
	}
	f, err := newFactors[T](gdev, spec, mode, false)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	f.stage = stageOff // solve-nrhs=k: the row kernels; staged-nrhs=k below
	a := bufs[0].Ptr()
	if mode == modePT {
		a = 0
	}
	if err := f.factorDevice(a, bufs[1].Ptr(), bufs[2].Ptr(), 0, 0, 0); err != nil {
		b.Fatal(err)
	}
	coef := 3.0
	if mode == modePT {
		coef = 2
	}
	planes := float64(mode.planes())
	pivBytes := 0.0
	if mode.pivots() {
		pivBytes = 1.0 / float64(elemSize[T]())
	}
	b.Run("factor", func(b *testing.B) {
		launch, err := f.factorLauncher(a, bufs[1].Ptr(), bufs[2].Ptr(), 0, 0, 0)
		if err != nil {
			b.Fatal(err)
		}
		all := timeLaunch(b, f, launch)
		reportFactorBench[T](b, all, shape, 1, coef+planes+pivBytes, bw)
	})
	for _, nrhs := range factorBenchNRHS {
		b.Run(fmt.Sprintf("solve-nrhs=%d", nrhs), func(b *testing.B) {
			launch, err := f.solveLauncher(nrhs, bufs[3].Ptr(), bufs[4].Ptr())
			if err != nil {
				b.Fatal(err)
			}
			all := timeLaunch(b, f, launch)
			if err := f.solveStatus(nrhs); err != nil {
				b.Fatal(err)
			}
			// Values moved per row and right-hand side.
			reportFactorBench[T](b, all, shape, nrhs, 2+(planes+pivBytes)/float64(nrhs), bw)
		})
	}
	if f.canStage() {
		for _, nrhs := range factorBenchNRHS {
			b.Run(fmt.Sprintf("staged-nrhs=%d", nrhs), func(b *testing.B) {
				f.stage = stageOn
				defer func() { f.stage = stageOff }()
				launch, err := f.solveLauncher(nrhs, bufs[3].Ptr(), bufs[4].Ptr())
				if err != nil {
					b.Fatal(err)
				}
				all := timeLaunch(b, f, launch)
				if err := f.solveStatus(nrhs); err != nil {
					b.Fatal(err)
				}
				reportFactorBench[T](b, all, shape, nrhs, 2+(planes+pivBytes)/float64(nrhs), bw)
			})
		}
	}
	b.Run("variants", func(b *testing.B) {
		defer func() { f.group, f.depth = 0, 0 }()
		for _, nrhs := range factorBenchNRHS {
			for _, v := range solveVariants(mode) {
				if v.group > nrhs || (v.group == 1 && nrhs > 1) {
					continue
				}
				b.Run(fmt.Sprintf("nrhs=%d,p%d,d%d", nrhs, v.group, v.depth), func(b *testing.B) {
					f.group, f.depth = v.group, v.depth
					launch, err := f.solveLauncher(nrhs, bufs[3].Ptr(), bufs[4].Ptr())
					if err != nil {
						b.Fatal(err)
					}
					all := timeLaunch(b, f, launch)
					if err := f.solveStatus(nrhs); err != nil {
						b.Fatal(err)
					}
					reportFactorBench[T](b, all, shape, nrhs, 2+(planes+pivBytes)/float64(nrhs), bw)
				})
			}
		}
	})
}

// timeLaunch times launch back to back on the factors' stream.
func timeLaunch[T tridiag.Float](b *testing.B, f *gpuFactors[T], launch func() error) []time.Duration {
	var all []time.Duration
	for b.Loop() {
		var ts []time.Duration
		if err := dev.Enqueue(func() error {
			var err error
			ts, err = gpuclock.BackToBack(f.stream, 1, 5, nil, launch)
			return err
		}); err != nil {
			b.Fatal(err)
		}
		all = append(all, ts...)
	}
	return all
}

// reportFactorBench reports the median of ts: rows × nrhs per second,
// and the fraction of the copy bandwidth bw that moving values elements
// of T per row and right-hand side takes.
func reportFactorBench[T tridiag.Float](b *testing.B, ts []time.Duration, shape tridiag.Shape, nrhs int, values, bw float64) {
	sort.Slice(ts, func(i, j int) bool { return ts[i] < ts[j] })
	med := ts[len(ts)/2].Seconds()
	rows := float64(shape.N) * float64(shape.G) * float64(nrhs)
	b.ReportMetric(rows/med/1e6, "MRows/s")
	b.ReportMetric(rows*values*float64(elemSize[T]())/med/bw*100, "%limit")
	b.ReportMetric(med*1e6, "µs")
}
