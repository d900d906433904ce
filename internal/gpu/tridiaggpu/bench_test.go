//go:build cuda

package tridiaggpu

import (
	"context"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"sort"
	"testing"
	"time"

	"gorgonia.org/cu"

	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/internal/gpu/gpuclock"
	"github.com/bandsolve/bandsolve/tridiag"
	"github.com/bandsolve/bandsolve/tridiag/pcr"
	"github.com/bandsolve/bandsolve/tuning"
)

// These benchmarks explore kernel configurations for large batches
// (N·G = 2^24 rows) to choose Auto's rules; bandsolve bench is the
// instrument for reported figures. Run on the GPU machine with
//
//	./tridiaggpu.test -test.run '^$' -test.bench Batch -test.benchtime 3x

// variant builds a kernel plan for a spec.
type variant struct {
	name        string
	interleaved bool
	make        func(spec tridiag.Spec, f64 bool) (kernelPlan, error)
	// constant: time constant solves (a = −1, b = 2.5, c = −1; the limit
	// is d read and x written).
	constant bool
}

func fromRegistry(alg tridiag.Algorithm) func(tridiag.Spec, bool) (kernelPlan, error) {
	return func(spec tridiag.Spec, f64 bool) (kernelPlan, error) {
		mk, ok := algorithms[alg]
		if !ok {
			return nil, fmt.Errorf("%s not registered", alg)
		}
		spec.Algorithm = alg
		return mk(gdev, spec, f64)
	}
}

// hybridTPS is the PCR→Thomas hybrid with tps threads per system: log2(tps)
// PCR steps, then each thread runs Thomas on N/tps rows in shared memory.
func hybridTPS(tps int) func(tridiag.Spec, bool) (kernelPlan, error) {
	return func(spec tridiag.Spec, f64 bool) (kernelPlan, error) {
		elem := reductionElem(f64)
		cfg, err := tuning.PCRLaunch(gdev.props, spec.N, elem)
		if err != nil {
			return nil, err
		}
		spb := max(1, 256/tps)
		for spb > 1 && tuning.PCRSharedBytes(spec.N, elem, spb) > gdev.props.MaxShared() {
			spb /= 2
		}
		cfg.ThreadsPerSystem, cfg.SystemsPerBlock, cfg.Threads = tps, spb, tps*spb
		cfg.SharedBytes = tuning.PCRSharedBytes(spec.N, elem, spb)
		steps := min(bits.Len(uint(tps))-1, pcr.Steps(spec.N))
		return &pcrPlan{cfg: cfg, hybrid: true, steps: steps}, nil
	}
}

func variants() []variant {
	v := []variant{
		{"thomas-interleaved", true, fromRegistry(tridiag.Thomas), false},
		{"gtsv-interleaved", true, fromRegistry(tridiag.GTSV), false},
		{"thomas", false, fromRegistry(tridiag.Thomas), false},
		{"pcr", false, fromRegistry(tridiag.PCR), false},
		{"cr", false, fromRegistry(tridiag.CR), false},
		{"tpr", false, fromRegistry(tridiag.TPR), false},
		{"wangmou", false, fromRegistry(tridiag.WangMou), false},
	}
	for _, tps := range []int{4, 8, 16, 32, 64, 128} {
		v = append(v, variant{fmt.Sprintf("hybrid-tps%d", tps), false, hybridTPS(tps), false})
	}
	v = append(v, variant{"partition", false, fromRegistry(tridiag.Partition), false},
		variant{"partition-interleaved", true, fromRegistry(tridiag.Partition), false})
	for _, p := range tuning.PartitionChunks {
		v = append(v, variant{fmt.Sprintf("partition-p%d", p), false, partitionChunk(p), false})
	}
	return v
}

// partitionChunk is the partition method with chunks of p rows.
func partitionChunk(p int) func(tridiag.Spec, bool) (kernelPlan, error) {
	return func(spec tridiag.Spec, f64 bool) (kernelPlan, error) {
		return newPartitionPlanChunk(gdev, spec, f64, p)
	}
}

// autoWithout is Auto's partition plan on the device with the switches of
// cfg (the kernels it turns off left out of the choice).
func autoWithout(cfg config) func(tridiag.Spec, bool) (kernelPlan, error) {
	return func(spec tridiag.Spec, f64 bool) (kernelPlan, error) {
		return newPartitionPlan(newGPU(dev, cfg), spec, f64)
	}
}

// lanesSystems is the lanes kernel with spb systems a block (0: its
// default).
func lanesSystems(spb int) func(tridiag.Spec, bool) (kernelPlan, error) {
	return func(spec tridiag.Spec, f64 bool) (kernelPlan, error) {
		return newLanesPlan(gdev, spec, f64, spb)
	}
}

// gathered is the plan that gathers interleaved systems into contiguous
// ones and solves those.
func gathered(spec tridiag.Spec, f64 bool) (kernelPlan, error) {
	return newTransposePlan(gdev, spec, f64)
}

// benchRows is the rows of every batch the throughput benchmarks time.
const benchRows = 1 << 24

// benchPrecisions measures the device-to-device copy bandwidth (the limit
// that %limit compares with), then runs f32 and f64 as the sub-benchmarks
// "f32" and "f64", each on its own random buffers of benchRows rows from
// seed (randomBuffers), freed when it ends.
func benchPrecisions(b *testing.B, seed uint64, f32 func(*testing.B, batchBench[float32]), f64 func(*testing.B, batchBench[float64])) {
	bw, err := gpuclock.CopyBandwidth(dev, 1<<30, 5)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("%s: device-to-device copy %.0f GB/s (read+write)", dev.Name(), bw/1e9)
	b.Run("f32", func(b *testing.B) { f32(b, batchBench[float32]{bw, randomBuffers[float32](b, benchRows, seed)}) })
	b.Run("f64", func(b *testing.B) { f64(b, batchBench[float64]{bw, randomBuffers[float64](b, benchRows, seed)}) })
}

// batchBench times variants of one precision on batches of benchRows rows
// held in bufs (randomBuffers), against the copy bandwidth bw.
type batchBench[T tridiag.Float] struct {
	bw   float64
	bufs []*cuda.Buffer[T]
}

// run times v on benchRows/n systems of n rows as the sub-benchmark
// "N=<n>/<name>".
func (bb batchBench[T]) run(b *testing.B, n int, name string, v variant) {
	b.Run(fmt.Sprintf("N=%d/%s", n, name), func(b *testing.B) {
		benchVariant(b, v, n, benchRows/n, bb.bw, bb.bufs)
	})
}

// BenchmarkBatch times every variant (variants) on 2^24-row batches of
// systems of 64 to 4096 rows.
func BenchmarkBatch(b *testing.B) {
	benchPrecisions(b, 1, benchPrecision[float32], benchPrecision[float64])
}

func benchPrecision[T tridiag.Float](b *testing.B, bb batchBench[T]) {
	for _, n := range []int{64, 256, 1024, 4096} {
		for _, v := range variants() {
			bb.run(b, n, v.name, v)
		}
	}
}

// BenchmarkSegments compares, for 2^24-row batches of systems from 2048 to
// 65536 rows, one block per system (where it fits) with segments of 1024,
// 2048 and 4096 rows, each with the cluster kernels (where Q is a cluster
// size) and with the global-memory kernel:
//
//	./tridiaggpu.test -test.run '^$' -test.bench Segments -test.benchtime 3x
func BenchmarkSegments(b *testing.B) {
	benchPrecisions(b, 3, benchSegments[float32], benchSegments[float64])
}

func benchSegments[T tridiag.Float](b *testing.B, bb batchBench[T]) {
	seg := func(m int, clusters bool) func(tridiag.Spec, bool) (kernelPlan, error) {
		return func(spec tridiag.Spec, f64 bool) (kernelPlan, error) {
			sp, err := newSegmentPlan(newGPU(dev, config{noClusters: !clusters}), spec, f64, m)
			if err == nil && sp.cfg.Cluster != clusters {
				return nil, fmt.Errorf("no cluster of %d segments", sp.cfg.Segments)
			}
			return sp, err
		}
	}
	for _, n := range []int{2048, 4096, 8192, 16384, 32768, 65536} {
		vs := []variant{{"whole", false, partitionChunk(16), false}}
		for _, m := range []int{1024, 2048, 4096} {
			if m < n {
				vs = append(vs, variant{fmt.Sprintf("seg%d-cluster", m), false, seg(m, true), false},
					variant{fmt.Sprintf("seg%d-global", m), false, seg(m, false), false})
			}
		}
		vs = append(vs, variant{"auto", false, fromRegistry(tridiag.Partition), false})
		for _, v := range vs {
			bb.run(b, n, v.name, v)
		}
	}
}

// randomBuffers uploads six arrays of rows random values (a, b, c, d, x
// and a saved d), freed when b ends: one set for every N and variant of a
// benchmark, random per index and diagonally dominant (b = U(−1,1)+4)
// whatever the layout.
func randomBuffers[T tridiag.Float](b *testing.B, rows int, seed uint64) []*cuda.Buffer[T] {
	r := rand.New(rand.NewPCG(seed, seed+1))
	host := make([]T, rows)
	bufs := make([]*cuda.Buffer[T], 6)
	for i := range bufs {
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

func benchVariant[T tridiag.Float](b *testing.B, v variant, n, g int, bw float64, bufs []*cuda.Buffer[T]) {
	shape := tridiag.Shape{N: n, G: g}
	if v.interleaved {
		shape.Layout = tridiag.Interleaved(g)
	}
	p, err := NewPlan[T](dev, shape, tridiag.Options{Algorithm: tridiag.Thomas})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	kp, err := v.make(p.spec, elemSize[T]() == 8)
	if err != nil {
		b.Skip(err)
	}
	p.kp = kp
	if d, ok := kp.(describer); ok {
		b.Logf("%s", d.describe())
	}
	if wb := kp.workBytes(); wb > 0 {
		if p.work != 0 {
			_ = dev.Enqueue(func() error { return cu.MemFree(p.work) })
		}
		if p.work, err = dev.AllocBytes(wb); err != nil {
			b.Fatal(err)
		}
	}
	var all []time.Duration
	arrays := 5.0
	if v.constant {
		arrays = 2
	}
	for b.Loop() {
		var ts []time.Duration
		if v.constant {
			ts, err = p.TimeConst(context.Background(), cuda.EventTimer(nil), -1, 2.5, -1, bufs[3], bufs[4], bufs[5], 1, 5)
		} else {
			ts, err = p.Time(context.Background(), cuda.EventTimer(nil), bufs[0], bufs[1], bufs[2], bufs[3], bufs[4], bufs[5], 1, 5)
		}
		if err != nil {
			b.Fatal(err)
		}
		all = append(all, ts...)
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	med := all[len(all)/2].Seconds()
	rows := float64(n * g)
	b.ReportMetric(rows/med/1e6, "MRows/s")
	b.ReportMetric(rows*arrays*float64(elemSize[T]())/med/bw*100, "%limit")
	b.ReportMetric(med*1e6, "µs")
}

// BenchmarkSmallCall measures a device-resident solve as a time-stepper
// sees it: from the call to SolveDevice until its result is complete and
// checked on the host (launches, status readback, synchronisation).
func BenchmarkSmallCall(b *testing.B) {
	for _, sz := range []struct{ n, g int }{{128, 1}, {512, 8}, {1024, 64}, {4096, 64}} {
		for _, alg := range []tridiag.Algorithm{tridiag.Auto, tridiag.Thomas, tridiag.PCR, tridiag.CR, tridiag.TPR} {
			b.Run(fmt.Sprintf("N=%d/G=%d/%s", sz.n, sz.g, alg), func(b *testing.B) {
				shape := tridiag.Shape{N: sz.n, G: sz.g}
				p, err := NewPlan[float32](dev, shape, tridiag.Options{Algorithm: alg})
				if err != nil {
					b.Skip(err)
				}
				defer p.Close()
				timeSmallCalls(b, p, sz.n*sz.g)
			})
		}
	}
}

// timeSmallCalls times Start and Wait of pl on a random diagonally
// dominant batch of rows rows: µs/call (call to checked result),
// enqueue-µs (host time of Start) and kernel-µs (the kernels alone, median
// of CUDA-event times on the stream).
func timeSmallCalls[T tridiag.Float](b *testing.B, pl *Plan[T], rows int) {
	bufs := randomBuffers[T](b, rows, 1)
	ctx := context.Background()
	var enqueue time.Duration
	for b.Loop() {
		t0 := time.Now()
		w, err := pl.Start(ctx, bufs[0], bufs[1], bufs[2], bufs[3], bufs[4])
		if err != nil {
			b.Fatal(err)
		}
		enqueue += time.Since(t0)
		if err := w.Wait(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/1e3/float64(b.N), "µs/call")
	b.ReportMetric(float64(enqueue.Nanoseconds())/1e3/float64(b.N), "enqueue-µs")
	b.StopTimer()
	times, err := pl.Time(ctx, cuda.EventTimer(nil), bufs[0], bufs[1], bufs[2], bufs[3], bufs[4], bufs[5], 3, 21)
	if err != nil {
		b.Fatal(err)
	}
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	b.ReportMetric(float64(times[len(times)/2].Nanoseconds())/1e3, "kernel-µs")
}

// BenchmarkCompletion measures the floor under every small call: one
// one-thread kernel (signal_done) enqueued and waited for, by polling the
// mapped completion word (what solves do) or by cuStreamSynchronize.
func BenchmarkCompletion(b *testing.B) {
	p, err := NewPlan[float32](dev, tridiag.Shape{N: 4, G: 1}, tridiag.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	what := func() string { return "signal" }
	b.Run("poll", func(b *testing.B) {
		for b.Loop() {
			if err := dev.Enqueue(func() error { return p.sig.Enqueue(dev, p.stream, p.flagPtr()) }); err != nil {
				b.Fatal(err)
			}
			if _, err := p.sig.Wait(dev, p.stream, what); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/1e3/float64(b.N), "µs/call")
	})
	b.Run("sync", func(b *testing.B) {
		for b.Loop() {
			if err := dev.Enqueue(func() error {
				if err := p.sig.Enqueue(dev, p.stream, p.flagPtr()); err != nil {
					return err
				}
				return p.stream.Synchronize()
			}); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/1e3/float64(b.N), "µs/call")
	})
}

// BenchmarkInterleaved times the shared-memory partition kernel on 2^24-row
// interleaved batches with every number of systems per block that fits
// (Auto's rule keeps at least one 32-byte sector of systems per row), to
// choose that rule, next to Auto (the lanes kernel up to its largest N):
//
//	./tridiaggpu.test -test.run '^$' -test.bench Interleaved -test.benchtime 3x
func BenchmarkInterleaved(b *testing.B) {
	benchPrecisions(b, 5, benchInterleaved[float32], benchInterleaved[float64])
}

func benchInterleaved[T tridiag.Float](b *testing.B, bb batchBench[T]) {
	f64 := elemSize[T]() == 8
	elem := reductionElem(f64)
	for _, n := range []int{64, 128, 256, 512, 1024, 2048, 4096} {
		for spb := 1; spb <= 64; spb *= 2 {
			mk := func(spec tridiag.Spec, f64 bool) (kernelPlan, error) {
				pp, err := newSharedPartitionPlan(gdev, spec, f64, 16)
				if err != nil {
					return nil, err
				}
				cfg := pp.cfg
				cfg.SystemsPerBlock, cfg.Threads = spb, spb*cfg.ThreadsPerSystem
				cfg.SharedBytes = tuning.PartitionSharedBytes(n, 16, elem, spb, true)
				if cfg.Threads > 1024 || cfg.SharedBytes > gdev.props.MaxShared() {
					return nil, fmt.Errorf("spb %d does not fit", spb)
				}
				pp.cfg, pp.constCfg = cfg, nil
				err = dev.Enqueue(func() error {
					var err error
					pp.direct, err = gdev.prepareDirect(pp.kernel.Kernel(), cfg.Blocks(spec.G), cfg.Threads, cfg.SharedBytes)
					return err
				})
				return pp, err
			}
			bb.run(b, n, fmt.Sprintf("spb=%d", spb), variant{"partition-interleaved", true, mk, false})
		}
		for _, spb := range tuning.PartitionLanesSystems {
			bb.run(b, n, fmt.Sprintf("lanes%d", spb), variant{"lanes-interleaved", true, lanesSystems(spb), false})
		}
		bb.run(b, n, "shared", variant{"shared-interleaved", true, autoWithout(config{noLanesKernel: true}), false})
		bb.run(b, n, "auto", variant{"auto-interleaved", true, fromRegistry(tridiag.Partition), false})
		// Gathered into contiguous systems (what Auto does beyond one
		// block), to see where it would pay below that.
		bb.run(b, n, "transposed", variant{"transposed-interleaved", true, gathered, false})
	}
}

// BenchmarkLanesStream compares, on 2^24-row interleaved batches, the
// streamed lanes kernel (a persistent grid copying its next 8 systems
// while it solves the current ones) with the lanes kernel, to set
// tuning.PreferLanesStream:
//
//	./tridiaggpu.test -test.run '^$' -test.bench LanesStream -test.benchtime 3x
func BenchmarkLanesStream(b *testing.B) {
	benchPrecisions(b, 5, benchLanesStream[float32], benchLanesStream[float64])
}

func benchLanesStream[T tridiag.Float](b *testing.B, bb batchBench[T]) {
	f64 := elemSize[T]() == 8
	stream := func(spec tridiag.Spec, f64 bool) (kernelPlan, error) {
		pp, err := newLanesPlan(gdev, spec, f64, 0)
		if err != nil {
			return nil, err
		}
		return newLanesStreamPlan(gdev, spec, f64, pp)
	}
	for _, n := range []int{64, 128, 256, 512, 1024} {
		if n > tuning.PartitionLanesMaxN(reductionElem(f64)) {
			continue
		}
		bb.run(b, n, "lanes", variant{"lanes", true, lanesSystems(0), false})
		bb.run(b, n, "stream", variant{"lanes-stream", true, stream, false})
	}
}

// BenchmarkLanesSegments compares, on 2^24-row interleaved batches, the
// lanes segment kernel (segments of 512, 256 and 128 rows; general and
// constant coefficients) with the plan that gathers the systems into
// contiguous ones, and for N ≤ 2048 with the plan Auto makes without it
// (the lanes kernel or one block a system in place), to set
// tuning.LanesSegmentMinN and LanesSegmentRows:
//
//	./tridiaggpu.test -test.run '^$' -test.bench LanesSegments -test.benchtime 3x
func BenchmarkLanesSegments(b *testing.B) {
	benchPrecisions(b, 5, benchLanesSegments[float32], benchLanesSegments[float64])
}

func benchLanesSegments[T tridiag.Float](b *testing.B, bb batchBench[T]) {
	for _, n := range []int{1024, 2048, 4096, 8192, 16384, 32768, 65536} {
		for _, constant := range []bool{false, true} {
			kind := "general"
			if constant {
				kind = "const"
			}
			// lseg: segments of m rows, spb systems a block (0: the
			// tuning's), three passes whatever Q when threePass.
			lseg := func(m, spb int, threePass bool) variant {
				return variant{"lseg", true, func(spec tridiag.Spec, f64 bool) (kernelPlan, error) {
					return newLanesSegPlanWith(gdev, spec, f64, m, spb, threePass)
				}, constant}
			}
			for _, m := range []int{512, 256, 128} {
				bb.run(b, n, fmt.Sprintf("%s/lseg-M%d", kind, m), lseg(m, 0, false))
			}
			// Three passes where one would do (no block waits for
			// others), and 128-byte rows (twice the systems a block).
			if !constant && n <= 16384 {
				for _, m := range []int{512, 128} {
					bb.run(b, n, fmt.Sprintf("%s/lseg-M%d-3pass", kind, m), lseg(m, 0, true))
				}
				bb.run(b, n, kind+"/lseg-M256-128B", lseg(256, int(128/elemSize[T]()), false))
			}
			bb.run(b, n, kind+"/gathered", variant{"gathered", true, gathered, constant})
			if n <= 2048 {
				bb.run(b, n, kind+"/in-place", variant{"in-place", true, autoWithout(config{noLanesSegments: true}), constant})
			}
		}
	}
}

// BenchmarkStream compares, for contiguous batches of 2^24 rows, the
// streaming partition kernel (a persistent grid, the next system loading
// while a block solves the current one) with the plan Auto makes without
// it (one block per system, or segments where that leaves one block per
// SM) and with the one-block kernel:
//
//	./tridiaggpu.test -test.run '^$' -test.bench Stream -test.benchtime 3x
func BenchmarkStream(b *testing.B) {
	benchPrecisions(b, 5,
		func(b *testing.B, bb batchBench[float32]) { benchStream(b, bb, []int{1024, 2048, 4096, 7168, 8192}) },
		func(b *testing.B, bb batchBench[float64]) { benchStream(b, bb, []int{1024, 2048, 3072, 3584, 4096}) })
}

func benchStream[T tridiag.Float](b *testing.B, bb batchBench[T], ns []int) {
	stream := func(spec tridiag.Spec, f64 bool) (kernelPlan, error) {
		other, err := newSharedPartitionPlan(gdev, spec, f64, 16)
		if err != nil {
			return nil, err
		}
		return newStreamPlan(gdev, spec, f64, other)
	}
	whole := func(spec tridiag.Spec, f64 bool) (kernelPlan, error) {
		return newSharedPartitionPlan(gdev, spec, f64, 16)
	}
	for _, n := range ns {
		bb.run(b, n, "stream", variant{"stream", false, stream, false})
		bb.run(b, n, "nostream", variant{"nostream", false, autoWithout(config{noStreamKernel: true}), false})
		bb.run(b, n, "whole", variant{"whole", false, whole, false})
	}
}

// BenchmarkConstStream compares, for constant solves of 2^24 rows, the
// constant streaming kernel (Auto's block and every block size it takes)
// with Auto and Auto without it ("nocstream": the one-shot constant kernel
// partition_const_p16, or the lanes kernel for interleaved batches where
// Auto takes it), contiguous and interleaved.
func BenchmarkConstStream(b *testing.B) {
	benchPrecisions(b, 7, benchConstStream[float32], benchConstStream[float64])
}

func benchConstStream[T tridiag.Float](b *testing.B, bb batchBench[T]) {
	noCStream := autoWithout(config{noConstStream: true})
	auto := func(spec tridiag.Spec, f64 bool) (kernelPlan, error) { return newPartitionPlan(gdev, spec, f64) }
	f64 := elemSize[T]() == 8
	for _, n := range []int{64, 128, 256, 512, 1024, 2048, 4096} {
		g := benchRows / n
		for _, il := range []bool{false, true} {
			lay, l := "contiguous", tridiag.Contiguous(n)
			if il {
				lay, l = "interleaved", tridiag.Interleaved(g)
			}
			bb.run(b, n, lay+"/auto", variant{"auto", il, auto, true})
			bb.run(b, n, lay+"/nocstream", variant{"nocstream", il, noCStream, true})
			spec := tridiag.Spec{Shape: tridiag.Shape{N: n, G: g, Layout: l}.Normalize()}
			for spb := 1; spb <= cstreamBound(b, n, false, f64); spb *= 2 {
				if dev.Enqueue(func() error { _, _, err := constStreamLaunch(gdev, spec, f64, spb); return err }) != nil {
					continue // not a block this kernel takes for N
				}
				bb.run(b, n, fmt.Sprintf("%s/cstream-spb%d", lay, spb), variant{"cstream", il, constStreamPlan(spb), true})
			}
		}
	}
}

// BenchmarkInterleavedConst compares, on 2^24-row interleaved batches of
// constant-coefficient systems, Auto's plan with the lanes kernel solving
// the constant systems itself (d alone loaded, 64- or 128-byte rows of
// adjacent systems), to set the constant path of interleaved batches:
//
//	./tridiaggpu.test -test.run '^$' -test.bench InterleavedConst -test.benchtime 3x
func BenchmarkInterleavedConst(b *testing.B) {
	benchPrecisions(b, 5, benchInterleavedConst[float32], benchInterleavedConst[float64])
}

func benchInterleavedConst[T tridiag.Float](b *testing.B, bb batchBench[T]) {
	for _, n := range []int{64, 128, 256, 512, 1024, 2048, 4096} {
		bb.run(b, n, "auto", variant{"auto-interleaved", true, fromRegistry(tridiag.Partition), true})
		for _, spb := range tuning.PartitionLanesSystems {
			bb.run(b, n, fmt.Sprintf("lanes%d", spb), variant{"lanes-interleaved", true, lanesSystems(spb), true})
		}
	}
}
