//go:build cuda

package gpu_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/gpu"
	"github.com/bandsolve/bandsolve/ilu"
	"github.com/bandsolve/bandsolve/krylov"
	"github.com/bandsolve/bandsolve/krylov/problems"
	"github.com/bandsolve/bandsolve/sparse"
)

// gpuKrylov solves A x = b on dev with method (krylov.CG or
// krylov.BiCGStab), preconditioned by pre (nil: none), every vector on the
// device; it returns the result, x and the time of the solve.
func gpuKrylov(t testing.TB, dev *cuda.Device, a *sparse.CSR, b []float64, pre *gpu.ILUPreconditioner,
	method func(context.Context, krylov.Space[*cuda.Buffer[float64]], krylov.Operator[*cuda.Buffer[float64]],
		krylov.Preconditioner[*cuda.Buffer[float64]], *cuda.Buffer[float64], *cuda.Buffer[float64], krylov.Options) (krylov.Result, error),
	opt krylov.Options) (krylov.Result, []float64, time.Duration) {
	sp, err := gpu.NewSpace(dev, a.N)
	require.NoError(t, err)
	defer sp.Close()
	csr, err := gpu.UploadSparse(dev, a)
	require.NoError(t, err)
	defer csr.Close()
	op, err := sp.Operator(csr)
	require.NoError(t, err)
	db, err := cuda.Upload(dev, b)
	require.NoError(t, err)
	defer db.Free()
	dx, err := cuda.Upload(dev, make([]float64, a.N)) // x₀ = 0
	require.NoError(t, err)
	defer dx.Free()
	var m krylov.Preconditioner[*cuda.Buffer[float64]]
	if pre != nil {
		m = pre
	}
	start := time.Now()
	res, err := method(context.Background(), sp, op, m, db, dx, opt)
	took := time.Since(start)
	require.NoError(t, err)
	x := make([]float64, a.N)
	require.NoError(t, dx.CopyTo(x))
	return res, x, took
}

// TestILUPreconditionedKrylovOnGPU: IC(0)-CG and ILU(0)-BiCGStab with every
// vector on the GPU and the triangular solves of the GPU take the CPU
// reference's iterations (±1) and meet the tolerance, with fewer
// iterations than without the preconditioner.
func TestILUPreconditionedKrylovOnGPU(t *testing.T) {
	dev, err := gpu.Open(0)
	require.NoError(t, err)
	defer dev.Close()
	opt := krylov.Options{Tol: 1e-8}
	for _, tc := range []struct {
		name   string
		a      *sparse.CSR
		cg     bool
		factor func(*sparse.CSR, ilu.Options) (*ilu.Factors, error)
	}{
		{"poisson-2d", problems.Poisson2D(120), true, ilu.IC0},
		{"convection-diffusion", problems.ConvectionDiffusion2D(120, 100), false, ilu.ILU0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := problems.OnesRHS(tc.a)
			f, err := tc.factor(tc.a, ilu.Options{})
			require.NoError(t, err)
			cpuPre, err := ilu.NewPreconditioner[float64](f, nil, 0)
			require.NoError(t, err)
			defer cpuPre.Close()
			hostSp := krylov.HostSpace{N: tc.a.N}
			hostOp, err := krylov.NewCSROperator[[]float64](nil, tc.a)
			require.NoError(t, err)
			xCPU := make([]float64, tc.a.N)
			method := krylov.BiCGStab[*cuda.Buffer[float64]]
			var ref krylov.Result
			if tc.cg {
				method = krylov.CG[*cuda.Buffer[float64]]
				ref, err = krylov.CG[[]float64](context.Background(), hostSp, hostOp, cpuPre, b, xCPU, opt)
			} else {
				ref, err = krylov.BiCGStab[[]float64](context.Background(), hostSp, hostOp, cpuPre, b, xCPU, opt)
			}
			require.NoError(t, err)
			pre, err := gpu.NewILUPreconditioner(dev, f, gpu.TrsvOptions{})
			require.NoError(t, err)
			defer pre.Close()
			res, x, _ := gpuKrylov(t, dev, tc.a, b, pre, method, opt)
			require.InDelta(t, ref.Iterations, res.Iterations, 1, "iterations: GPU %d, CPU %d", res.Iterations, ref.Iterations)
			require.LessOrEqual(t, res.Residual, 1e-8)
			for i := range x {
				require.InDelta(t, 1, x[i], 1e-5, "row %d", i)
			}
			plain, _, _ := gpuKrylov(t, dev, tc.a, b, nil, method, opt)
			require.Less(t, res.Iterations, plain.Iterations)
			lo, up := pre.Algorithms()
			t.Logf("%s: %d iterations preconditioned (CPU %d), %d without; triangular solves %s, %s",
				tc.name, res.Iterations, ref.Iterations, plain.Iterations, lo, up)
		})
	}
}

// BenchmarkPCGPoisson1000 times CG to 10⁻⁸ on the 2-D Laplacian 1000²
// (b = A·1) on the GPU, without a preconditioner and with IC(0) (its
// factorization on the CPU and its analysis on the GPU not counted),
// reporting iterations and time per iteration.
//
//	go test -tags cuda ./gpu -run '^$' -bench PCGPoisson1000 -benchtime 1x
func BenchmarkPCGPoisson1000(b *testing.B) {
	dev, err := gpu.Open(0)
	require.NoError(b, err)
	defer dev.Close()
	a := problems.Poisson2D(1000)
	rhs := problems.OnesRHS(a)
	f, err := ilu.IC0(a, ilu.Options{})
	require.NoError(b, err)
	pre, err := gpu.NewILUPreconditioner(dev, f, gpu.TrsvOptions{})
	require.NoError(b, err)
	defer pre.Close()
	opt := krylov.Options{Tol: 1e-8, MaxIter: 5000}
	for _, tc := range []struct {
		name string
		pre  *gpu.ILUPreconditioner
	}{{"none", nil}, {"ic0", pre}} {
		b.Run(tc.name, func(b *testing.B) {
			var res krylov.Result
			var took time.Duration
			for range b.N {
				res, _, took = gpuKrylov(b, dev, a, rhs, tc.pre, krylov.CG[*cuda.Buffer[float64]], opt)
			}
			b.ReportMetric(float64(res.Iterations), "iterations")
			b.ReportMetric(took.Seconds()*1e3/float64(res.Iterations), "ms/iteration")
			b.ReportMetric(took.Seconds()*1e3, "ms")
		})
	}
}

// TestFactorILUOnGPU: the preconditioner factored on the GPU applies the
// CPU's factors, so that CG/BiCGStab take the same iterations to the same
// bits as with the host factors, before and after a Refactor; a pivot
// failure is the CPU's error.
func TestFactorILUOnGPU(t *testing.T) {
	dev, err := gpu.Open(0)
	require.NoError(t, err)
	defer dev.Close()
	opt := krylov.Options{Tol: 1e-8}
	for _, tc := range []struct {
		name string
		a    *sparse.CSR
		kind ilu.Kind
	}{
		{"poisson-2d", problems.Poisson2D(61), ilu.KindIC0},
		{"convection-diffusion", problems.ConvectionDiffusion2D(59, 100), ilu.KindILU0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			method := krylov.BiCGStab[*cuda.Buffer[float64]]
			factor := ilu.ILU0
			if tc.kind == ilu.KindIC0 {
				method, factor = krylov.CG[*cuda.Buffer[float64]], ilu.IC0
			}
			b := problems.OnesRHS(tc.a)
			pre, err := gpu.FactorILU(dev, tc.a, tc.kind, ilu.Options{}, gpu.TrsvOptions{})
			require.NoError(t, err)
			defer pre.Close()
			scaled := tc.a.Clone()
			for k := range scaled.Val {
				scaled.Val[k] *= 1 + 0.01*float64(k%5)
			}
			for round, a := range []*sparse.CSR{tc.a, scaled} {
				if round > 0 {
					require.NoError(t, pre.Refactor(a.Val))
				}
				f, err := factor(a, ilu.Options{})
				require.NoError(t, err)
				host, err := gpu.NewILUPreconditioner(dev, f, gpu.TrsvOptions{})
				require.NoError(t, err)
				want, xWant, _ := gpuKrylov(t, dev, a, b, host, method, opt)
				require.NoError(t, host.Close())
				got, x, _ := gpuKrylov(t, dev, a, b, pre, method, opt)
				require.Equal(t, want.Iterations, got.Iterations, "round %d", round)
				require.Equal(t, xWant, x, "round %d", round)
				require.Less(t, got.Residual, 1e-8)
			}
		})
	}
	bad := problems.Poisson2D(20)
	for k := range bad.Val {
		if bad.Val[k] == 4 {
			bad.Val[k] = 0.1 // the first diagonal entry: l₀₀² > 0, l₁₁² < 0
			break
		}
	}
	_, cpuErr := ilu.IC0(bad, ilu.Options{})
	require.ErrorIs(t, cpuErr, ilu.ErrNotPositive)
	_, err = gpu.FactorILU(dev, bad, ilu.KindIC0, ilu.Options{}, gpu.TrsvOptions{})
	require.ErrorIs(t, err, ilu.ErrNotPositive)
	require.Equal(t, cpuErr.Error(), err.Error())
}
