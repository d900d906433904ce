//go:build cuda

package bench

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/internal/gpu/gpuclock"
	"github.com/bandsolve/bandsolve/internal/gpu/tridiaggpu"
	"github.com/bandsolve/bandsolve/tridiag"
)

func openTestDevice(t testing.TB) *cuda.Device {
	t.Helper()
	n, err := cuda.Count()
	if err != nil || n == 0 {
		t.Skipf("no CUDA device (%v)", err)
	}
	dev, err := cuda.Open(0)
	require.NoError(t, err)
	t.Cleanup(func() { _ = dev.Close() })
	return dev
}

func TestGPUCopyBandwidth(t *testing.T) {
	dev := openTestDevice(t)
	bw, err := gpuclock.CopyBandwidth(dev, 256<<20, 10)
	require.NoError(t, err)
	t.Logf("%s: device-to-device copy %.0f GB/s (read+written)", dev.Name(), bw/1e9)
	assert.Greater(t, bw, 100e9, "a data-centre GPU copies faster than 100 GB/s")
	assert.Less(t, bw, 20e12)
}

// TestGPUTime checks Plan.Time against SolveDevice: same solution, d
// restored between repetitions, sensible times.
func TestGPUTime(t *testing.T) {
	dev := openTestDevice(t)
	c := Case{N: 1024, G: 256, Layout: Contiguous, Precision: F64}
	h, err := newHostData[float64](c, Dominant, 1)
	require.NoError(t, err)
	up := func(v []float64) *cuda.Buffer[float64] {
		b, err := cuda.Upload(dev, v)
		require.NoError(t, err)
		t.Cleanup(func() { _ = b.Free() })
		return b
	}
	a, b, cc, d, dSaved := up(h.a), up(h.b), up(h.c), up(h.d), up(h.d)
	x := up(make([]float64, c.Len()))
	p, err := tridiaggpu.NewPlan[float64](dev, c.Shape(), tridiag.Options{})
	require.NoError(t, err)
	defer p.Close()
	clk, err := gpuclock.New(dev)
	require.NoError(t, err)
	defer clk.Close()
	times, err := p.Time(context.Background(), clk.Timer(), a, b, cc, d, d, dSaved, 2, 5) // in place: needs the restore
	require.NoError(t, err)
	require.Len(t, times, 5)
	for _, tm := range times {
		assert.Positive(t, tm)
		assert.Less(t, tm.Seconds(), 1.0)
	}
	hx := make([]float64, c.Len())
	require.NoError(t, d.CopyTo(hx))
	assert.Less(t, h.backwardError(hx), 1e-12, "in-place solve after 7 restores")
	_, err = p.Time(context.Background(), clk.Timer(), a, b, cc, d, x, d, 0, 1)
	assert.Error(t, err, "dSaved must differ from d")
	times, err = p.TimeConst(context.Background(), clk.Timer(), 0.5, 4, -0.5, d, x, dSaved, 1, 3)
	require.NoError(t, err)
	assert.Len(t, times, 3)
}

func TestGPUCusparseLoads(t *testing.T) {
	dev := openTestDevice(t)
	var p *cusparsePeer
	lib, err := loadCusparse(os.Getenv("BANDSOLVE_CUSPARSE"), func(l *cusparseLib) error {
		var e error
		p, e = newCusparsePeer(dev, l)
		return e
	})
	if err != nil {
		t.Skip(err)
	}
	defer p.close()
	t.Logf("loaded %s, cuSPARSE %s", lib.path, p.versionString())
}

func TestMainGPUQuick(t *testing.T) {
	openTestDevice(t)
	dir := t.TempDir()
	csvPath := filepath.Join(dir, "out.csv")
	var stdout, stderr bytes.Buffer
	code := Main([]string{"-device", "cuda", "-grid", "quick", "-reps", "3", "-warmup", "1",
		"-csv", csvPath, "-plots", filepath.Join(dir, "plots"), "-copy-bytes", "256M", "-host-copy-bytes", "64M"}, &stdout, &stderr)
	t.Log(stdout.String())
	require.Equal(t, 0, code, "stderr: %s", stderr.String())
	f, err := os.Open(csvPath)
	require.NoError(t, err)
	defer f.Close()
	rs, err := ReadCSV(f)
	require.NoError(t, err)
	timed := 0
	for _, r := range rs {
		if strings.HasPrefix(r.Solver, "gpu:") && r.OK() {
			timed++
			assert.Positive(t, r.Fraction)
			assert.Less(t, r.Fraction, 1.5, "%v %s faster than copying", r.Case, r.Solver)
			assert.Less(t, r.Resid, residLimit(r.Precision)*10, "%v %s", r.Case, r.Solver)
		}
		if strings.HasPrefix(r.Solver, "cusparse:") && r.OK() {
			assert.Less(t, r.Resid, residLimit(r.Precision)*10, "%v %s", r.Case, r.Solver)
		}
	}
	assert.Positive(t, timed, "no GPU solver timed")
}

func BenchmarkGPUSolve(b *testing.B) {
	dev := openTestDevice(b)
	for _, c := range []Case{
		{N: 256, G: 65536, Layout: Interleaved, Precision: F32},
		{N: 256, G: 65536, Layout: Contiguous, Precision: F32},
		{N: 4096, G: 4096, Layout: Contiguous, Precision: F64},
		{N: 128, G: 1, Layout: Contiguous, Precision: F32},
	} {
		for _, algo := range append([]tridiag.Algorithm{tridiag.Auto}, tridiag.Algorithms()...) {
			b.Run(c.String()+"/"+algo.String(), func(b *testing.B) {
				if c.Precision == F32 {
					benchGPU[float32](b, dev, c, algo)
				} else {
					benchGPU[float64](b, dev, c, algo)
				}
			})
		}
	}
}

// benchGPU times SolveDevice, which includes the status readback and
// synchronization (what a caller of SolveDevice waits for).
func benchGPU[T tridiag.Float](b *testing.B, dev *cuda.Device, c Case, algo tridiag.Algorithm) {
	p, err := tridiaggpu.NewPlan[T](dev, c.Shape(), tridiag.Options{Algorithm: algo, SkipFiniteCheck: true})
	if err != nil {
		b.Skip(err)
	}
	defer p.Close()
	h, err := newHostData[T](c, Toeplitz, 1)
	require.NoError(b, err)
	var bufs []*cuda.Buffer[T]
	for _, v := range [][]T{h.a, h.b, h.c, h.d, make([]T, c.Len())} {
		buf, err := cuda.Upload(dev, v)
		require.NoError(b, err)
		defer buf.Free()
		bufs = append(bufs, buf)
	}
	ctx := context.Background()
	require.NoError(b, p.SolveDevice(ctx, bufs[0], bufs[1], bufs[2], bufs[3], bufs[4]))
	b.SetBytes(c.BytesMoved())
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := p.SolveDevice(ctx, bufs[0], bufs[1], bufs[2], bufs[3], bufs[4]); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(c.Rows())*float64(b.N)/b.Elapsed().Seconds()/1e6, "MRows/s")
}
