//go:build cuda

package bench

import (
	"context"
	"fmt"
	"math"
	"os"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gorgonia.org/cu"

	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/gpu"
	"github.com/bandsolve/bandsolve/ilu"
	"github.com/bandsolve/bandsolve/internal/gpu/ilugpu"
	"github.com/bandsolve/bandsolve/krylov"
	"github.com/bandsolve/bandsolve/krylov/problems"
	"github.com/bandsolve/bandsolve/sparse"
)

// testPeer loads cuSPARSE for dev, skipping the test without it.
func testPeer(t testing.TB, dev *cuda.Device) *cusparsePeer {
	var peer *cusparsePeer
	lib, err := loadCusparse(os.Getenv("BANDSOLVE_CUSPARSE"), func(l *cusparseLib) error {
		var e error
		peer, e = newCusparsePeer(dev, l)
		return e
	})
	if err != nil {
		t.Skipf("no cuSPARSE: %v", err)
	}
	t.Cleanup(peer.close)
	t.Logf("cuSPARSE %s from %s", peer.versionString(), lib.path)
	return peer
}

// csFactors runs cuSPARSE's factorization of a and returns its values.
func csFactors(t testing.TB, peer *cusparsePeer, a *sparse.CSR, kind ilu.Kind) []float64 {
	s, err := peer.newCsILU(a, kind)
	require.NoError(t, err)
	defer s.close()
	_, err = s.analyse()
	require.NoError(t, err)
	require.NoError(t, peer.dev.Do(func() error {
		if err := s.restore(); err != nil {
			return err
		}
		if err := s.factor(); err != nil {
			return err
		}
		row, err := s.zeroPivot()
		if err == nil && row >= 0 {
			err = fmt.Errorf("zero pivot at row %d", row)
		}
		return err
	}))
	v, err := s.values()
	require.NoError(t, err)
	return v
}

// factorDiff is the largest |ours − theirs| / |ours| over the factors'
// entries (IC(0): the lower triangle, which is all csric02 defines).
func factorDiff(a *sparse.CSR, f *ilu.Factors, theirs []float64) float64 {
	pat, ours := f.Pattern(), f.LU().Val
	worst := 0.0
	for k, v := range ours {
		q := k
		if pat.Src != nil {
			q = int(pat.Src[k])
		}
		worst = max(worst, math.Abs(v-theirs[q])/max(math.Abs(v), math.SmallestNonzeroFloat64))
	}
	return worst
}

// TestCusparseILUPeer: csrilu02 and csric02 compute the factors of package
// ilu (to rounding), so that the peer does the same mathematics.
func TestCusparseILUPeer(t *testing.T) {
	dev := openTestDevice(t)
	peer := testPeer(t, dev)
	for _, tc := range []struct {
		name string
		a    *sparse.CSR
		kind ilu.Kind
	}{
		{"poisson-2d/ic0", problems.Poisson2D(47), ilu.KindIC0},
		{"poisson-2d/ilu0", problems.Poisson2D(47), ilu.KindILU0},
		{"convection-diffusion/ilu0", problems.ConvectionDiffusion2D(43, 100), ilu.KindILU0},
	} {
		factor := ilu.ILU0
		if tc.kind == ilu.KindIC0 {
			factor = ilu.IC0
		}
		f, err := factor(tc.a, ilu.Options{})
		require.NoError(t, err)
		require.Less(t, factorDiff(tc.a, f, csFactors(t, peer, tc.a, tc.kind)), 1e-12, tc.name)
	}
}

// iluProblem is a matrix of the factorization and preconditioning
// benchmarks, at the sizes of Naumov's suite.
type iluProblem struct {
	name string
	a    *sparse.CSR
	kind ilu.Kind
}

func iluProblems(t testing.TB) []iluProblem {
	gl, err := problems.GraphLaplacian(1_000_000, 1e-3, 1)
	require.NoError(t, err)
	return []iluProblem{
		{"poisson-2d-1000²", problems.Poisson2D(1000), ilu.KindIC0},
		{"poisson-3d-100³", problems.Poisson3D(100), ilu.KindIC0},
		{"anisotropic-2d-1000²", problems.Anisotropic2D(1000, 1e-3, 100, 1), ilu.KindIC0},
		{"graph-laplacian-10⁶", gl, ilu.KindIC0},
		{"poisson-2d-1000²", problems.Poisson2D(1000), ilu.KindILU0},
		{"convection-diffusion-1000²", problems.ConvectionDiffusion2D(1000, 100), ilu.KindILU0},
	}
}

func median(d []time.Duration) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

// BenchmarkILUFactor times the numeric ILU(0)/IC(0) factorization on the
// GPU (ilugpu: warm, CUDA events, A's values loaded from the device)
// against cuSPARSE csrilu02/csric02 in the same process (values restored
// outside the timing), with each one's analysis and the CPU's
// factorization (all cores) apart, and prints one table row a problem.
//
//	./bench.test -test.run '^$' -test.bench ILUFactor -test.benchtime 1x
func BenchmarkILUFactor(b *testing.B) {
	dev := openTestDevice(b)
	peer := testPeer(b, dev)
	fmt.Printf("# %s, cuSPARSE %s\n", dev.Name(), peer.versionString())
	fmt.Printf("# ILUFACTOR problem kind n nnz levels | ours: programmed, analysis(host+upload) ms, factor ms | cuSPARSE: analysis ms factor ms | speed-up | CPU factor ms | max rel diff\n")
	for _, pr := range iluProblems(b) {
		b.Run(pr.name+"/"+pr.kind.String(), func(b *testing.B) {
			factor := ilu.ILU0
			if pr.kind == ilu.KindIC0 {
				factor = ilu.IC0
			}
			start := time.Now()
			f, err := factor(pr.a, ilu.Options{})
			require.NoError(b, err)
			cpu := time.Since(start)

			start = time.Now()
			pat, err := ilu.Analyze(pr.a, pr.kind)
			require.NoError(b, err)
			g, err := ilugpu.New(dev, pat, ilu.Options{})
			require.NoError(b, err)
			defer g.Close()
			aval, err := cuda.Upload(dev, pr.a.Val)
			require.NoError(b, err)
			defer aval.Free()
			ourAnalysis := time.Since(start)
			require.NoError(b, g.FactorDevice(aval))
			var ours []time.Duration
			require.NoError(b, dev.Do(func() error {
				var e error
				ours, e = cuda.TimeEvents(g.Stream(), 2, 10, nil, func() error { return g.Enqueue(g.Stream(), aval.Ptr(), 0) }, nil)
				return e
			}))
			got, err := g.Download()
			require.NoError(b, err)
			require.Equal(b, f.LU().Val, got, "GPU factors are the CPU's")

			s, err := peer.newCsILU(pr.a, pr.kind)
			require.NoError(b, err)
			defer s.close()
			theirAnalysis, err := s.analyse()
			require.NoError(b, err)
			theirs, err := s.timeFactor(2, 10)
			require.NoError(b, err)
			tv, err := s.values()
			require.NoError(b, err)
			diff := factorDiff(pr.a, f, tv)

			o, t := median(ours), median(theirs)
			b.ReportMetric(float64(o.Microseconds())/1e3, "ms")
			b.ReportMetric(float64(t.Microseconds())/1e3, "cusparse-ms")
			fmt.Printf("ILUFACTOR %s %s %d %d %d | %t %.2f %.3f | %.2f %.3f | %.2f | %.1f | %.1e\n", pr.name, pr.kind,
				pr.a.N, pr.a.NNZ(), len(pat.LevelPtr)-1, g.Programmed(), ms(ourAnalysis), ms(o), ms(theirAnalysis), ms(t), t.Seconds()/o.Seconds(), ms(cpu), diff)
		})
	}
}

func ms(d time.Duration) float64 { return d.Seconds() * 1e3 }

// csPrecond is the preconditioner a CUDA user builds from cuSPARSE:
// csrilu02/csric02 factors and two SpSV solves a step (L then U, or L
// then Lᵀ through SpSV's transpose), with its own input and output
// vectors.
type csPrecond struct {
	fact          *csILU
	lower, upper  *spsv
	in, mid, out  *cuda.Buffer[float64]
	setupAnalysis time.Duration
}

// newCsPrecond factors a with cuSPARSE and analyses both triangles; it
// returns the preconditioner and the setup time (analyses and
// factorization, waited for).
func newCsPrecond(t testing.TB, peer *cusparsePeer, a *sparse.CSR, kind ilu.Kind) (*csPrecond, time.Duration) {
	p := &csPrecond{}
	var err error
	for _, v := range []**cuda.Buffer[float64]{&p.in, &p.mid, &p.out} {
		*v, err = cuda.Alloc[float64](peer.dev, a.N)
		require.NoError(t, err)
	}
	start := time.Now()
	p.fact, err = peer.newCsILU(a, kind)
	require.NoError(t, err)
	_, err = p.fact.analyse()
	require.NoError(t, err)
	require.NoError(t, peer.dev.Do(func() error {
		if err := p.fact.restore(); err != nil {
			return err
		}
		return p.fact.factor()
	}))
	n, nnz := a.N, a.NNZ()
	p.lower, err = peer.newSpsv(true, n, nnz, p.fact.rowPtr, p.fact.col, p.fact.val, p.in.Ptr(), p.mid.Ptr(), false, kind == ilu.KindILU0)
	require.NoError(t, err)
	if kind == ilu.KindIC0 {
		p.upper, err = peer.newSpsv(true, n, nnz, p.fact.rowPtr, p.fact.col, p.fact.val, p.mid.Ptr(), p.out.Ptr(), false, false)
		require.NoError(t, err)
		p.upper.trans = true
	} else {
		p.upper, err = peer.newSpsv(true, n, nnz, p.fact.rowPtr, p.fact.col, p.fact.val, p.mid.Ptr(), p.out.Ptr(), true, false)
		require.NoError(t, err)
	}
	_, err = p.lower.analyse()
	require.NoError(t, err)
	_, err = p.upper.analyse()
	require.NoError(t, err)
	return p, time.Since(start)
}

// Apply sets z = U⁻¹L⁻¹r through the preconditioner's own vectors.
func (p *csPrecond) Apply(ctx context.Context, r, z *cuda.Buffer[float64]) error {
	peer := p.fact.p
	return peer.dev.Do(func() error {
		if err := cu.MemcpyDtoD(p.in.Ptr(), r.Ptr(), 8*int64(r.Len())); err != nil {
			return err
		}
		if err := p.lower.solve(); err != nil {
			return err
		}
		if err := p.upper.solve(); err != nil {
			return err
		}
		if err := peer.stream.Synchronize(); err != nil {
			return err
		}
		return cu.MemcpyDtoD(z.Ptr(), p.out.Ptr(), 8*int64(z.Len()))
	})
}

func (p *csPrecond) close() {
	p.lower.close()
	p.upper.close()
	p.fact.close()
	for _, v := range []*cuda.Buffer[float64]{p.in, p.mid, p.out} {
		_ = v.Free()
	}
}

// krylovOnGPU runs CG (IC(0)) or BiCGStab (ILU(0)) on the device from
// x₀ = 0 to tol with the preconditioner m (nil: none); the method's
// breakdowns are returned, not failed on.
func krylovOnGPU(t testing.TB, dev *cuda.Device, a *sparse.CSR, kind ilu.Kind, m krylov.Preconditioner[*cuda.Buffer[float64]], tol float64) (krylov.Result, time.Duration, error) {
	sp, err := gpu.NewSpace(dev, a.N)
	require.NoError(t, err)
	defer sp.Close()
	csr, err := gpu.UploadSparse(dev, a)
	require.NoError(t, err)
	defer csr.Close()
	op, err := sp.Operator(csr)
	require.NoError(t, err)
	db, err := cuda.Upload(dev, problems.OnesRHS(a))
	require.NoError(t, err)
	defer db.Free()
	dx, err := cuda.Alloc[float64](dev, a.N)
	require.NoError(t, err)
	defer dx.Free()
	require.NoError(t, dx.CopyFrom(make([]float64, a.N)))
	method := krylov.BiCGStab[*cuda.Buffer[float64]]
	if kind == ilu.KindIC0 {
		method = krylov.CG[*cuda.Buffer[float64]]
	}
	start := time.Now()
	res, err := method(context.Background(), sp, op, m, db, dx, krylov.Options{Tol: tol, MaxIter: 20000})
	return res, time.Since(start), err
}

// BenchmarkPreconditionedKrylov times the whole preconditioned solve to
// 10⁻⁸ (CG with IC(0), BiCGStab with ILU(0), b = A·1, x₀ = 0, every vector
// on the GPU, the same Krylov code): this module's pipeline (the GPU
// factorization and Auto's triangular solves), the cuSPARSE pipeline
// (csric02/csrilu02 and SpSV) and no preconditioner, with the setup
// (analyses and factorization) apart.
//
//	./bench.test -test.run '^$' -test.bench PreconditionedKrylov -test.benchtime 1x
func BenchmarkPreconditionedKrylov(b *testing.B) {
	dev := openTestDevice(b)
	peer := testPeer(b, dev)
	fmt.Printf("# %s, cuSPARSE %s\n", dev.Name(), peer.versionString())
	fmt.Printf("# PCG problem kind n | pipeline: setup ms, iterations, ms/iteration, solve ms, total ms\n")
	for _, pr := range iluProblems(b) {
		if pr.name == "graph-laplacian-10⁶" || pr.name == "anisotropic-2d-1000²" {
			// A chain of 10⁶ levels, and a problem of the same levels as
			// the Poisson one: left to the factorization benchmark.
			continue
		}
		b.Run(pr.name+"/"+pr.kind.String(), func(b *testing.B) {
			start := time.Now()
			ours, err := gpu.FactorILU(dev, pr.a, pr.kind, ilu.Options{}, gpu.TrsvOptions{})
			require.NoError(b, err)
			defer ours.Close()
			ourSetup := time.Since(start)
			theirs, theirSetup := newCsPrecond(b, peer, pr.a, pr.kind)
			defer theirs.close()
			lo, up := ours.Algorithms()
			for _, run := range []struct {
				name  string
				m     krylov.Preconditioner[*cuda.Buffer[float64]]
				setup time.Duration
			}{{fmt.Sprintf("bandsolve(%s,%s)", lo, up), ours, ourSetup}, {"cusparse", theirs, theirSetup}, {"none", nil, 0}} {
				res, took, err := krylovOnGPU(b, dev, pr.a, pr.kind, run.m, 1e-8)
				outcome := ""
				if err != nil {
					outcome = " (" + err.Error() + ")"
				}
				fmt.Printf("PCG %s %s %d | %s: %.1f, %d, %.3f, %.1f, %.1f%s\n", pr.name, pr.kind, pr.a.N, run.name,
					ms(run.setup), res.Iterations, ms(took)/float64(max(1, res.Iterations)), ms(took), ms(run.setup+took), outcome)
			}
		})
	}
}
