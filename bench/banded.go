package bench

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/bandsolve/bandsolve/banded"
	"github.com/bandsolve/bandsolve/spike"
)

// Names of the banded grids (BandGrid).
const (
	// GridBanded is the sweep of single banded systems of the issue:
	// N = 10⁴, 10⁵, 10⁶, K = 2, 10, 50, 100, 200, 500, d = 0.2, 0.6,
	// 1.0, 1.2.
	GridBanded = "banded"
	// GridBandedQuick is a small version of it for a smoke test.
	GridBandedQuick = "banded-quick"
	// GridPentadiag is batches of pentadiagonal systems (K = 2) against
	// cuSPARSE gpsvInterleavedBatch, the cases of
	// bench/anchors/banded-h200.csv.
	GridPentadiag = "pentadiag"
)

// BandGrids lists the banded grid names.
func BandGrids() []string { return []string{GridBanded, GridBandedQuick, GridPentadiag} }

// isBandGrid reports whether every comma-separated name is a banded grid.
func isBandGrid(name string) bool {
	for _, n := range strings.Split(name, ",") {
		ok := false
		for _, g := range BandGrids() {
			ok = ok || strings.TrimSpace(n) == g
		}
		if !ok {
			return false
		}
	}
	return true
}

// Direct is the degree of diagonal dominance from which the banded sweep
// uses truncated SPIKE as a direct solver; below it, where truncated SPIKE
// alone is not exact, BiCGStab(2) preconditioned by SPIKE (Li et al.
// 2014, §4–§5).
const Direct = 1.0

// BandTol is the relative residual the iterative solves of the banded
// sweep stop at.
const BandTol = 1e-10

// BandMaxIter bounds the BiCG steps of the GPU's iterative solves.
const BandMaxIter = 500

// IterRows is the least number of rows per SPIKE partition of the
// preconditioner of the iterative solves (d < Direct), 16K where that is
// more (spike.PreconditionerPartitions: with d < 1 the spikes need not
// decay, and the truncated preconditioner of the short partitions tuning
// picks for speed lets BiCGStab(2) diverge on random matrices with d = 0.2
// and K = 2, 10: bandsolve bench -device cuda -grid banded -band-d 0.2
// -band-k 2,10).
const IterRows = spike.PreconditionerRows

// iterPartitions is the largest number of partitions of the iterative
// solves' preconditioner: spike.PreconditionerPartitions.
func iterPartitions(n, k int) int { return spike.PreconditionerPartitions(n, k) }

// BandCase is one case of the banded grids: G systems of order N and
// half-bandwidth K with degree of diagonal dominance D, in a precision.
// G = 1 is one system (the banded sweep), G > 1 a batch in the
// interleaved layout (the pentadiag grid).
type BandCase struct {
	N, K, G   int
	D         float64
	Precision string
}

// String describes the case, e.g. "f64 N=1000000 K=100 d=1".
func (c BandCase) String() string {
	if c.G > 1 {
		return fmt.Sprintf("%s N=%d K=%d G=%d", c.Precision, c.N, c.K, c.G)
	}
	return fmt.Sprintf("%s N=%d K=%d d=%s", c.Precision, c.N, c.K, fmtD(c.D))
}

// Batch reports whether the case is a batch of systems.
func (c BandCase) Batch() bool { return c.G > 1 }

// ElemSize is 4 for F32 and 8 for F64.
func (c BandCase) ElemSize() int64 {
	if c.Precision == F32 {
		return 4
	}
	return 8
}

// Rows is N·G.
func (c BandCase) Rows() int64 { return int64(c.N) * int64(max(c.G, 1)) }

// BandBytes is the size of one copy of the band in the case's precision,
// (2K+1)·N·G elements.
func (c BandCase) BandBytes() int64 { return int64(2*c.K+1) * c.Rows() * c.ElemSize() }

// BytesMoved is the least traffic of one batched solve: the 2K+1
// coefficients and the right-hand side read once and the solution written
// once, (2K+3) elements a row.
func (c BandCase) BytesMoved() int64 { return int64(2*c.K+3) * c.Rows() * c.ElemSize() }

// Iterative reports whether the GPU solves the case with BiCGStab(2)
// rather than directly (single systems with D < Direct).
func (c BandCase) Iterative() bool { return c.G <= 1 && c.D < Direct }

// fmtD prints a degree of dominance with up to two decimals.
func fmtD(d float64) string { return strconv.FormatFloat(d, 'f', -1, 64) }

// BandSweep lists the values of a banded sweep; empty lists take the
// grid's.
type BandSweep struct {
	N, K []int
	D    []float64
}

// BandGrid returns the cases of a banded grid in the precisions asked
// for (nil: both), with the lists of sw replacing the grid's where set:
//
//   - banded: N = 10⁴, 10⁵, 10⁶, K = 2, 10, 50, 100, 200, 500, d = 0.2,
//     0.6, 1.0, 1.2, in FP64, and in FP32 where d ≥ 1 (the direct solve;
//     below, the iteration is FP64 with an FP32 preconditioner whatever
//     the precision);
//   - banded-quick: N = 10⁴, 10⁵, K = 2, 50, 200, 500, d = 0.6, 1;
//   - pentadiag: K = 2, (N, G) = (256, 65536), (1024, 16384), (4096,
//     4096), FP32 and FP64.
//
// Cases come ordered by N, then K, then d, so that the host estimates
// grow from measured smaller cases. Several names may be joined with
// commas; an unknown name gives nil.
func BandGrid(name string, precisions map[string]bool, sw BandSweep) []BandCase {
	want := func(p string) bool { return precisions == nil || precisions[p] }
	var out []BandCase
	for _, g := range strings.Split(name, ",") {
		g = strings.TrimSpace(g)
		var ns, ks []int
		var ds []float64
		switch g {
		case GridBanded:
			ns, ks, ds = []int{1e4, 1e5, 1e6}, []int{2, 10, 50, 100, 200, 500}, []float64{0.2, 0.6, 1.0, 1.2}
		case GridBandedQuick:
			ns, ks, ds = []int{1e4, 1e5}, []int{2, 50, 200, 500}, []float64{0.6, 1.0}
		case GridPentadiag:
			for _, p := range []string{F32, F64} {
				if !want(p) {
					continue
				}
				for _, c := range [][2]int{{256, 65536}, {1024, 16384}, {4096, 4096}} {
					out = append(out, BandCase{N: c[0], K: 2, G: c[1], D: 1, Precision: p})
				}
			}
			continue
		default:
			return nil
		}
		if len(sw.N) > 0 {
			ns = sw.N
		}
		if len(sw.K) > 0 {
			ks = sw.K
		}
		if len(sw.D) > 0 {
			ds = sw.D
		}
		for _, n := range ns {
			for _, k := range ks {
				for _, d := range ds {
					for _, p := range []string{F64, F32} {
						if !want(p) || (p == F32 && d < Direct) {
							continue
						}
						out = append(out, BandCase{N: n, K: k, G: 1, D: d, Precision: p})
					}
				}
			}
		}
	}
	seen := map[BandCase]bool{}
	uniq := out[:0]
	for _, c := range out {
		if !seen[c] {
			seen[c] = true
			uniq = append(uniq, c)
		}
	}
	return uniq
}

// parseInts reads a comma-separated list of positive integers (1e6 and
// 10^6 allowed).
func parseInts(s string) ([]int, error) {
	var out []int
	for _, f := range splitList(s) {
		if b, e, ok := strings.Cut(f, "^"); ok {
			if b != "10" {
				return nil, fmt.Errorf("bad count %q", f)
			}
			f = "1e" + e
		}
		v, err := strconv.ParseFloat(f, 64)
		if err != nil || v < 1 || v != math.Trunc(v) || v > math.MaxInt32 {
			return nil, fmt.Errorf("bad count %q", f)
		}
		out = append(out, int(v))
	}
	return out, nil
}

// parseFloats reads a comma-separated list of non-negative numbers.
func parseFloats(s string) ([]float64, error) {
	var out []float64
	for _, f := range splitList(s) {
		v, err := strconv.ParseFloat(f, 64)
		if err != nil || !(v >= 0) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("bad number %q", f)
		}
		out = append(out, v)
	}
	return out, nil
}

// BandResult is one solver's timing of one banded case.
type BandResult struct {
	BandCase
	// Solver is e.g. "gpu:spike" (truncated SPIKE, direct),
	// "gpu:bicgstab2+spike32" (BiCGStab(2) preconditioned by SPIKE in
	// FP32), "cpu:gbsv" (banded LU with partial pivoting, one thread),
	// "cpu:spike" (truncated SPIKE on all cores), "gpu:bandbatch",
	// "cusparse:gpsvInterleavedBatch".
	Solver string
	// P is the number of SPIKE partitions (0: not SPIKE).
	P int
	// Factor, Solve and Total are medians over the repetitions of the
	// factorization, the solve (the whole iteration for iterative
	// solvers) and their sum per repetition; batched solvers have Total
	// only.
	Factor, Solve, Total time.Duration
	// Reps is the number of timed repetitions.
	Reps int
	// Iter is the number of BiCGStab(2) steps (krylov.Result.Iterations),
	// −1 for direct solvers.
	Iter int
	// Resid is the true relative residual ‖b − A·x‖₂/‖b‖₂ of the
	// solution, computed in float64 on the host; −1 when not checked.
	Resid float64
	// MRows is N·G / Total / 1e6.
	MRows float64
	// Fraction is, for batches, (BytesMoved / Total) / the device's copy
	// bandwidth; 0 otherwise.
	Fraction float64
	// Speedup is the reference's Total over this one's: the host LU
	// (cpu:gbsv, FP64) of the same N, K, d for single systems, cuSPARSE
	// gpsvInterleavedBatch of the same case for batches; 0 when there is
	// none. SpeedupEst says the reference time was estimated (Est), not
	// measured.
	Speedup    float64
	SpeedupEst bool
	// VsAnchor is the anchor's time over this one's, where measured
	// anchors (-anchors, bench/anchors/banded-h200.csv: LAPACK gbsv on a
	// host, gpsvInterleavedBatch on an H200) hold the case; 0 otherwise.
	VsAnchor float64
	// Est is, for a host solver skipped for time, its estimated time.
	Est time.Duration
	// Err says why there is no timing ("skipped: …", "K > limit …") or
	// what went wrong; "" when fine.
	Err string
	// Note says more: kernel, boosted pivots, …
	Note string
	// Prov says where and when it was measured (read from a CSV).
	Prov Provenance
}

// OK reports whether the result holds a timing.
func (r BandResult) OK() bool { return r.Err == "" && r.Total > 0 }

// bandRef is the reference solver of a case for the speed-up.
func bandRef(c BandCase) string {
	if c.Batch() {
		return "cusparse:gpsvInterleavedBatch"
	}
	return "cpu:gbsv"
}

// setSpeedups fills Speedup of each result from the reference solver of
// its case in rs (the host LU of the same N, K, d in any precision for
// single systems, gpsv of the same case for batches), measured or, for
// the host LU, estimated.
func setSpeedups(rs []BandResult) {
	key := func(c BandCase) BandCase {
		if !c.Batch() {
			c.Precision = ""
		}
		return c
	}
	type ref struct {
		t   time.Duration
		est bool
	}
	refs := map[BandCase]ref{}
	anchors := map[BandCase]time.Duration{}
	for _, r := range rs {
		if prefix(r.Solver) == "anchor" && r.Total > 0 {
			anchors[key(r.BandCase)] = r.Total
		}
		if r.Solver != bandRef(r.BandCase) {
			continue
		}
		switch {
		case r.OK():
			refs[key(r.BandCase)] = ref{t: r.Total}
		case r.Est > 0:
			if _, ok := refs[key(r.BandCase)]; !ok {
				refs[key(r.BandCase)] = ref{t: r.Est, est: true}
			}
		}
	}
	for i := range rs {
		r := &rs[i]
		if t, ok := anchors[key(r.BandCase)]; ok && r.OK() && prefix(r.Solver) != "anchor" {
			r.VsAnchor = t.Seconds() / r.Total.Seconds()
		}
		f, ok := refs[key(r.BandCase)]
		if !ok || !r.OK() || r.Solver == bandRef(r.BandCase) || prefix(r.Solver) == "anchor" {
			continue
		}
		r.Speedup = f.t.Seconds() / r.Total.Seconds()
		r.SpeedupEst = f.est
	}
}

// summarizeSplit returns the medians of the factor, solve and total
// (factor+solve per repetition) times.
func summarizeSplit(factor, solve []time.Duration) (f, s, t time.Duration) {
	tot := make([]time.Duration, len(factor))
	for i := range factor {
		tot[i] = factor[i]
		if i < len(solve) {
			tot[i] += solve[i]
		}
	}
	f, _, _ = summarize(factor)
	if len(solve) > 0 {
		s, _, _ = summarize(solve)
	}
	t, _, _ = summarize(tot)
	return f, s, t
}

// randomBand returns a matrix distributed like banded.Random(n, k, d):
// off-diagonal entries uniform in [−1, 1), a_ii = d·Σ_{j≠i}|a_ij| (1 for a
// row without off-diagonal entries), generated in parallel with one
// generator per chunk of columns seeded from seed, so the matrix depends
// on the seed and the shape only, not on the number of goroutines.
func randomBand(n, k int, d float64, seed uint64) *banded.Band[float64] {
	m, err := banded.New[float64](n, k)
	if err != nil {
		panic(err)
	}
	const chunk = 1 << 14
	chunks := (n + chunk - 1) / chunk
	parallelFor(chunks, func(c int) {
		j0, j1 := c*chunk, min(n, (c+1)*chunk)
		rng := rand.New(rand.NewPCG(seed, uint64(c)))
		for s := 0; s <= 2*k; s++ {
			if s == k {
				continue
			}
			for j := j0; j < j1; j++ {
				if i := j + s - k; i >= 0 && i < n {
					m.Data[s*n+j] = 2*rng.Float64() - 1
				}
			}
		}
	})
	parallelFor(chunks, func(c int) {
		for i := c * chunk; i < min(n, (c+1)*chunk); i++ {
			var off float64
			for j := max(0, i-k); j <= min(n-1, i+k); j++ {
				if j != i {
					off += math.Abs(m.Data[(k+i-j)*n+j])
				}
			}
			if off == 0 {
				m.Data[k*n+i] = 1
			} else {
				m.Data[k*n+i] = d * off
			}
		}
	})
	return m
}

// randomVec returns n values uniform in [−1, 1).
func randomVec(n int, seed uint64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	v := make([]float64, n)
	for i := range v {
		v[i] = 2*rng.Float64() - 1
	}
	return v
}

// parallelFor calls f(0) … f(n−1) on GOMAXPROCS goroutines.
func parallelFor(n int, f func(i int)) {
	w := min(n, runtime.GOMAXPROCS(0))
	if w <= 1 {
		for i := 0; i < n; i++ {
			f(i)
		}
		return
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	next := 0
	for range w {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if i >= n {
					return
				}
				f(i)
			}
		}()
	}
	wg.Wait()
}

// bandResidual is ‖b − A·x‖₂/‖b‖₂ in float64 (NaN when x holds a NaN).
func bandResidual(a *banded.Band[float64], b, x []float64) float64 {
	n, k := a.N, a.K
	const chunk = 1 << 14
	chunks := (n + chunk - 1) / chunk
	rr := make([]float64, chunks)
	bb := make([]float64, chunks)
	parallelFor(chunks, func(c int) {
		var r2, b2 float64
		for i := c * chunk; i < min(n, (c+1)*chunk); i++ {
			s := b[i]
			for j := max(0, i-k); j <= min(n-1, i+k); j++ {
				s -= a.Data[(k+i-j)*n+j] * x[j]
			}
			r2 += s * s
			b2 += b[i] * b[i]
		}
		rr[c], bb[c] = r2, b2
	})
	var r2, b2 float64
	for c := range rr {
		r2 += rr[c]
		b2 += bb[c]
	}
	if b2 == 0 {
		return math.Sqrt(r2)
	}
	return math.Sqrt(r2 / b2)
}

// bandCSR returns the CSR arrays (int32 row pointers and columns) of the
// band of a, every entry of the band stored, columns ascending.
func bandCSR(a *banded.Band[float64]) (rowPtr, col []int32, val []float64) {
	n, k := a.N, a.K
	rowPtr = make([]int32, n+1)
	for i := 0; i < n; i++ {
		rowPtr[i+1] = rowPtr[i] + int32(min(n-1, i+k)-max(0, i-k)+1)
	}
	nnz := int(rowPtr[n])
	col, val = make([]int32, nnz), make([]float64, nnz)
	const chunk = 1 << 14
	parallelFor((n+chunk-1)/chunk, func(c int) {
		for i := c * chunk; i < min(n, (c+1)*chunk); i++ {
			p := rowPtr[i]
			for j := max(0, i-k); j <= min(n-1, i+k); j++ {
				col[p], val[p] = int32(j), a.Data[(k+i-j)*n+j]
				p++
			}
		}
	})
	return rowPtr, col, val
}

// pentaBatch returns the interleaved tall-and-thin storage of G copies of
// the pentadiagonal matrix with rows [1 −4 10 −4 1] (the anchors'
// coefficients, d = 1), the five row-indexed diagonals cuSPARSE's gpsv
// takes (ds, dl, d, du, dw, each interleaved), and a random right-hand
// side.
func pentaBatch(n, g int, seed uint64) (band []float64, diags [5][]float64, rhs []float64) {
	const k = 2
	coef := [5]float64{1, -4, 10, -4, 1} // a_{i,i−2} … a_{i,i+2}
	band = make([]float64, (2*k+1)*n*g)
	for s := 0; s <= 2*k; s++ {
		v := coef[2*k-s] // storage column s holds a_{j+s−K, j}: offset K−s from its row
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
	for o := -2; o <= 2; o++ {
		v := make([]float64, n*g)
		for i := 0; i < n; i++ {
			if i+o < 0 || i+o >= n {
				continue
			}
			row := v[i*g : (i+1)*g]
			for q := range row {
				row[q] = coef[o+2]
			}
		}
		diags[o+2] = v
	}
	return band, diags, randomVec(n*g, seed)
}

// pentaResidual is ‖b − A·x‖₂/‖b‖₂ over a whole interleaved batch of the
// pentaBatch matrix, in float64.
func pentaResidual(n, g int, b, x []float64) float64 {
	coef := [5]float64{1, -4, 10, -4, 1}
	var r2, b2 float64
	for i := 0; i < n; i++ {
		for q := 0; q < g; q++ {
			s := b[i*g+q]
			for o := -2; o <= 2; o++ {
				if j := i + o; j >= 0 && j < n {
					s -= coef[o+2] * x[j*g+q]
				}
			}
			r2 += s * s
			b2 += b[i*g+q] * b[i*g+q]
		}
	}
	return math.Sqrt(r2 / b2)
}
