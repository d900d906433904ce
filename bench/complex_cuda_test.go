//go:build cuda

package bench

import (
	"bytes"
	"context"
	"errors"
	"math/cmplx"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/internal/gpu/tridiaggpu"
	"github.com/bandsolve/bandsolve/tridiag"
)

// openTestBackend opens the bench's GPU backend (device 0, cuSPARSE when
// it loads) or skips.
func openTestBackend(t *testing.T) *cudaBackend {
	t.Helper()
	openTestDevice(t).Close()
	g, err := openGPU(0, 64<<20, os.Getenv("BANDSOLVE_CUSPARSE"))
	require.NoError(t, err)
	t.Cleanup(g.Close)
	return g.(*cudaBackend)
}

// relErr is max_i |x_i − ref_i| / max_i |ref_i| over the batch's rows.
func relErr[T tridiag.Complex](c Case, x, ref []T) float64 {
	l := c.TridiagLayout()
	var num, den float64
	for g := 0; g < c.G; g++ {
		for i := 0; i < c.N; i++ {
			k := l.Index(i, g)
			num = max(num, cmplx.Abs(complex128(x[k]-ref[k])))
			den = max(den, cmplx.Abs(complex128(ref[k])))
		}
	}
	return num / den
}

// TestGPUComplexAgainstCPU solves complex cases with this module's GPU
// complex plans (Auto, Thomas, GTSV) and every cuSPARSE complex peer that
// applies, and compares each solution with the CPU's complex GTSV
// (partial pivoting): relative error within 1e-4 in complex64 and 1e-11
// in complex128 on well-conditioned matrices (the complex-shifted
// Laplacian, |λ| ≥ 1, and the dominant one).
func TestGPUComplexAgainstCPU(t *testing.T) {
	be := openTestBackend(t)
	if be.peer == nil {
		t.Logf("no cuSPARSE peer: %v", be.peerErr)
	}
	t.Run("complex64", func(t *testing.T) { testGPUComplexAgainstCPU[complex64](t, be, C64, 1e-4) })
	t.Run("complex128", func(t *testing.T) { testGPUComplexAgainstCPU[complex128](t, be, C128, 1e-11) })
}

func testGPUComplexAgainstCPU[T tridiag.Complex](t *testing.T, be *cudaBackend, prec string, tol float64) {
	ctx := context.Background()
	for _, c := range []Case{
		{N: 256, G: 64, Layout: Contiguous, Precision: prec},
		{N: 128, G: 512, Layout: Interleaved, Precision: prec},
		{N: 4096, G: 1, Layout: Contiguous, Precision: prec},
		{N: 64, G: 100, Layout: Strided, Precision: prec},
		{N: 256, G: 128, Layout: Interleaved, Precision: prec, Constant: true},
		{N: 256, G: 64, Layout: Contiguous, Precision: prec, Constant: true},
	} {
		for _, m := range []string{Toeplitz, Dominant} {
			name := c.String() + "/" + m
			h, err := newCaseData[T](c, m, 5)
			require.NoError(t, err)
			ref := make([]T, c.Len())
			cpu, err := tridiag.NewPlan[T](tridiag.DefaultCPU(), c.Shape(), tridiag.Options{Algorithm: tridiag.GTSV})
			require.NoError(t, err)
			if c.Constant {
				require.NoError(t, cpu.SolveConst(ctx, h.ka, h.kb, h.kc, h.d, ref))
			} else {
				require.NoError(t, cpu.Solve(ctx, h.a, h.b, h.c, h.d, ref))
			}
			require.NoError(t, cpu.Close())

			dd := &deviceData[T]{}
			require.NoError(t, dd.uploadCase(be.dev, h))
			hx := make([]T, c.Len())
			for _, algo := range []tridiag.Algorithm{tridiag.Auto, tridiag.Thomas, tridiag.GTSV, tridiag.Partition} {
				p, err := tridiaggpu.NewComplexPlan[T](be.dev, c.Shape(), tridiag.Options{Algorithm: algo})
				if algo == tridiag.Partition && errors.Is(err, tridiag.ErrShape) {
					continue // a system larger than a block holds
				}
				require.NoError(t, err, name)
				if c.Constant {
					err = p.SolveDeviceConst(ctx, h.ka, h.kb, h.kc, dd.d, dd.x)
				} else {
					err = p.SolveDevice(ctx, dd.a, dd.b, dd.c, dd.d, dd.x)
				}
				require.NoError(t, err, "%s gpu:%s", name, algo)
				require.NoError(t, p.Close())
				require.NoError(t, dd.x.CopyTo(hx))
				e := relErr(c, hx, ref)
				t.Logf("%s gpu:%s: relative error %.1e", name, algo, e)
				assert.Less(t, e, tol, "%s gpu:%s", name, algo)
			}

			// The cuSPARSE peers, each checked against the CPU's solution
			// through the check hook of runCusparse.
			errs := map[string]float64{}
			check := func(r *Result, x *cuda.Buffer[T]) {
				if !r.OK() {
					return
				}
				require.NoError(t, x.CopyTo(hx))
				errs[r.Solver] = relErr(c, hx, ref)
			}
			gr := gpuRun{cusparse: true, warmup: 1, reps: 2, check: true, progress: func(string) {}}
			rs := runCusparse(be, h, dd, gr, check)
			require.Len(t, rs, len(cusparseNames(c)), name)
			for _, r := range rs {
				if be.peer == nil {
					assert.NotEmpty(t, r.Err)
					continue
				}
				require.True(t, r.OK(), "%s %s: %s", name, r.Solver, r.Err)
				t.Logf("%s %s: relative error %.1e, %.0f MRows/s", name, r.Solver, errs[r.Solver], r.MRows)
				assert.Less(t, errs[r.Solver], tol, "%s %s", name, r.Solver)
			}
			dd.free()
		}
	}
}

// TestGPUComplexCase runs the bench's complex GPU path on a few cases of
// each matrix: every complex algorithm timed, its backward error within
// the precision's limit, the other algorithms "unsupported".
func TestGPUComplexCase(t *testing.T) {
	be := openTestBackend(t)
	algos := append([]tridiag.Algorithm{tridiag.Auto}, tridiag.Algorithms()...)
	for _, prec := range []string{C64, C128} {
		for _, c := range []Case{
			{N: 512, G: 256, Layout: Interleaved, Precision: prec},
			{N: 2048, G: 32, Layout: Contiguous, Precision: prec},
			{N: 512, G: 256, Layout: Contiguous, Precision: prec, Constant: true},
		} {
			for _, m := range Matrices() {
				gr := gpuRun{algos: algos, cusparse: true, warmup: 1, reps: 3, check: true, progress: func(string) {}}
				var rs []Result
				if prec == C64 {
					h, err := newCaseData[complex64](c, m, 2)
					require.NoError(t, err)
					rs = be.RunC64(context.Background(), h, gr)
				} else {
					h, err := newCaseData[complex128](c, m, 2)
					require.NoError(t, err)
					rs = be.RunC128(context.Background(), h, gr)
				}
				require.Len(t, rs, len(algos)+len(cusparseNames(c)))
				for _, r := range rs {
					switch {
					case strings.HasPrefix(r.Solver, "gpu:"):
						a, err := tridiag.ParseAlgorithm(strings.TrimPrefix(r.Solver, "gpu:"))
						require.NoError(t, err)
						if a != tridiag.Auto && a != tridiag.Thomas && a != tridiag.GTSV && a != tridiag.Partition {
							assert.True(t, strings.HasPrefix(r.Err, "unsupported"), "%v %s: %s", c, r.Solver, r.Err)
							continue
						}
						if a == tridiag.Partition && strings.HasPrefix(r.Err, "unsupported") {
							continue // systems longer than a block holds
						}
						require.True(t, r.OK(), "%v %s %s: %s", c, m, r.Solver, r.Err)
						assert.Less(t, r.Resid, residLimit(prec), "%v %s %s", c, m, r.Solver)
						assert.Less(t, r.Fraction, 1.5, "%v %s faster than copying", c, r.Solver)
					case be.peer != nil && r.OK():
						// cuSPARSE's solvers without pivoting may lose
						// accuracy on the diffusion matrix; its result is
						// reported, not judged, there.
						if m != Diffusion {
							assert.Less(t, r.Resid, residLimit(prec), "%v %s %s", c, m, r.Solver)
						}
					}
					t.Logf("%v %s %s: %s MRows/s, %s of the limit, resid %s %s", c, m, r.Solver, fmtMRows(r.MRows), fmtFraction(r.Fraction), fmtResid(r), r.Err)
				}
			}
		}
	}
}

// TestMainGPUComplexQuick runs `bandsolve bench -precision complex` on the
// quick grid: this module's complex plans and the cuSPARSE complex peers
// side by side in the table and the CSV.
func TestMainGPUComplexQuick(t *testing.T) {
	openTestDevice(t).Close()
	csvPath := filepath.Join(t.TempDir(), "out.csv")
	var stdout, stderr bytes.Buffer
	code := Main([]string{"-device", "cuda", "-grid", "quick", "-precision", "complex", "-algorithms", "auto,thomas,gtsv",
		"-reps", "3", "-warmup", "1", "-csv", csvPath, "-copy-bytes", "256M", "-host-copy-bytes", "64M", "-q"}, &stdout, &stderr)
	t.Log(stdout.String())
	require.Equal(t, 0, code, "stderr: %s", stderr.String())
	f, err := os.Open(csvPath)
	require.NoError(t, err)
	defer f.Close()
	rs, err := ReadCSV(f)
	require.NoError(t, err)
	timed := map[string]int{}
	for _, r := range rs {
		require.True(t, r.Complex(), "%v", r.Case)
		if !r.OK() {
			continue
		}
		timed[prefix(r.Solver)]++
		assert.Less(t, r.Resid, residLimit(r.Precision)*10, "%v %s", r.Case, r.Solver)
		if prefix(r.Solver) == "gpu" {
			assert.Less(t, r.Fraction, 1.5, "%v %s faster than copying", r.Case, r.Solver)
		}
	}
	assert.Equal(t, 3*len(Grid("quick")), timed["gpu"], "auto, thomas and gtsv on every complex case")
	assert.Positive(t, timed["cpu"])
	if strings.Contains(stdout.String(), ", cuSPARSE ") { // the note of a peer that loaded
		assert.Positive(t, timed["cusparse"], "cuSPARSE loaded but no complex peer timed")
	}
	assert.Contains(t, stdout.String(), "cusparse:")
}
