//go:build cudaemu

package bandemu

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/banded"
)

func bits[T Float](v T) uint64 {
	if is64[T]() {
		return math.Float64bits(float64(v))
	}
	return uint64(math.Float32bits(float32(v)))
}

func eps[T Float]() float64 {
	if is64[T]() {
		return 0x1p-52
	}
	return 0x1p-23
}

// randBand fills a band with U(−1,1) entries plus dom on the diagonal; the
// corner slots outside the matrix hold NaN so that a kernel reading them
// shows.
func randBand[T Float](r *rand.Rand, n, k int, dom float64) *banded.Band[T] {
	m := &banded.Band[T]{N: n, K: k, Data: make([]T, (2*k+1)*n)}
	for s := 0; s <= 2*k; s++ {
		for j := 0; j < n; j++ {
			i := j + s - k
			v := T(math.NaN())
			if i >= 0 && i < n {
				v = T(r.Float64()*2 - 1)
				if i == j {
					v += T(dom)
				}
			}
			m.Data[s*n+j] = v
		}
	}
	return m
}

type layout struct {
	name        string
	interleaved bool
}

var layouts = []layout{{"interleaved", true}, {"contiguous", false}}

// pack lays out G systems in a batch layout; it returns a, d and the strides.
func pack[T Float](ms []*banded.Band[T], ds [][]T, lay layout) (a, d []T, aes, abs, des, dbs int64) {
	g := len(ms)
	n, k := ms[0].N, ms[0].K
	w := (2*k + 1) * n
	a, d = make([]T, w*g), make([]T, n*g)
	if lay.interleaved {
		aes, abs, des, dbs = int64(g), 1, int64(g), 1
	} else {
		aes, abs, des, dbs = 1, int64(w), 1, int64(n)
	}
	for s, m := range ms {
		for e, v := range m.Data {
			a[int64(e)*aes+int64(s)*abs] = v
		}
		for i, v := range ds[s] {
			d[int64(i)*des+int64(s)*dbs] = v
		}
	}
	return
}

type cpuResult[T Float] struct {
	x      []T
	boosts int
	err    error
}

// cpuSolve is the CPU twin: FactorLURange then SolveLURange.
func cpuSolve[T Float](m *banded.Band[T], d []T, tol float64) cpuResult[T] {
	c := &banded.Band[T]{N: m.N, K: m.K, Data: append([]T(nil), m.Data...)}
	b, err := banded.FactorLURange(c, 0, m.N, banded.FactorOptions{BoostTol: tol})
	x := append([]T(nil), d...)
	if err == nil {
		banded.SolveLURange(c, 0, m.N, x)
	}
	return cpuResult[T]{x: x, boosts: b.Count(), err: err}
}

func resolveTol[T Float](tol float64) float64 {
	if tol == 0 {
		return eps[T]()
	}
	return tol
}

// kindOf maps a CPU error to the kernel's status kind.
func kindOf(err error) (kind, row, col int) {
	var re *banded.RowError
	if !errors.As(err, &re) {
		return 0, 0, 0
	}
	switch {
	case errors.Is(err, banded.ErrNonFinite) && re.Row == re.Col:
		// Either an entry on the diagonal or a pivot: both have row = col;
		// the caller distinguishes them.
		return -1, re.Row, re.Col
	case errors.Is(err, banded.ErrNonFinite):
		return 1, re.Row, re.Col
	case errors.Is(err, banded.ErrZeroPivot):
		return 3, re.Row, re.Col
	}
	return 0, 0, 0
}

type batchCase[T Float] struct {
	ms  []*banded.Band[T]
	ds  [][]T
	tol float64
}

func runBatch[T Float](t *testing.T, bc batchCase[T], lay layout, variant int, threads int, what string) {
	t.Helper()
	g := len(bc.ms)
	n, k := bc.ms[0].N, bc.ms[0].K
	a, d, aes, abs, des, dbs := pack(bc.ms, bc.ds, lay)
	x := make([]T, len(d))
	gp := Pad(g)
	for gp%threads != 0 {
		gp += 32
	}
	work := make([]T, (k+1)*n*gp)
	status := make([]int32, 4*g+1)
	b := Batch{N: n, K: k, G: g, AES: aes, ABS: abs, DES: des, DBS: dbs, Tol: resolveTol[T](bc.tol), Flags: 0,
		Variant: variant, Threads: threads}
	if bc.tol < 0 {
		b.Tol = -1
	}
	require.NoError(t, SolveBatch(b, a, d, x, work, status), what)
	flag := status[4*g]
	var wantFlag int32
	for s := 0; s < g; s++ {
		want := cpuResult[T]{}
		want = cpuSolve(bc.ms[s], bc.ds[s], bc.tol)
		row, kind, col, nb := status[s], status[g+s], status[2*g+s], status[3*g+s]
		if want.err != nil {
			wantFlag |= 1
			wk, wr, wc := kindOf(want.err)
			require.NotZero(t, wk, "%s: system %d: unexpected CPU error %v", what, s, want.err)
			if wk == -1 {
				assert.Contains(t, []int32{1, 2}, kind, "%s: system %d: kind for %v", what, s, want.err)
			} else {
				assert.Equal(t, int32(wk), kind, "%s: system %d: kind for %v", what, s, want.err)
			}
			assert.Equal(t, int32(wr+1), row, "%s: system %d: row for %v", what, s, want.err)
			assert.Equal(t, int32(wc+1), col, "%s: system %d: col for %v", what, s, want.err)
			for i := 0; i < n; i++ {
				v := x[int64(i)*des+int64(s)*dbs]
				if !math.IsNaN(float64(v)) {
					t.Errorf("%s: system %d failed but x[%d] = %v", what, s, i, v)
					break
				}
			}
			continue
		}
		assert.Zero(t, kind, "%s: system %d: kind", what, s)
		assert.Equal(t, int32(want.boosts), nb, "%s: system %d: boosts", what, s)
		if want.boosts > 0 {
			wantFlag |= 2
		}
		for i := 0; i < n; i++ {
			v := x[int64(i)*des+int64(s)*dbs]
			if bits(v) != bits(want.x[i]) {
				t.Errorf("%s: system %d row %d: kernel %v, CPU %v", what, s, i, v, want.x[i])
				return
			}
		}
	}
	assert.Equal(t, wantFlag, flag, "%s: flag", what)
}

func randSystems[T Float](r *rand.Rand, n, k, g int, dom float64) batchCase[T] {
	bc := batchCase[T]{}
	for s := 0; s < g; s++ {
		bc.ms = append(bc.ms, randBand[T](r, n, k, dom))
		d := make([]T, n)
		for i := range d {
			d[i] = T(r.Float64()*2 - 1)
		}
		bc.ds = append(bc.ds, d)
	}
	return bc
}

func testBatch[T Float](t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for k := 1; k <= 8; k++ {
		for _, n := range []int{1, 2, 3, 7, 9, 30, 100} {
			if k >= n && n > 1 {
				// K ≥ N is no band matrix (banded.CheckShape); N = 1 with
				// K ≥ 1 too.
				continue
			}
			if n == 1 {
				continue
			}
			for _, g := range []int{1, 3, 37} {
				for _, dom := range []float64{float64(2 * k), 0} {
					bc := randSystems[T](r, n, k, g, dom)
					for _, lay := range layouts {
						runBatch(t, bc, lay, 0, 32, fmt.Sprintf("K=%d N=%d G=%d dom=%g %s", k, n, g, dom, lay.name))
					}
				}
			}
		}
	}
}

func TestBatchF32(t *testing.T) { testBatch[float32](t) }
func TestBatchF64(t *testing.T) { testBatch[float64](t) }

func testVariants[T Float](t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{3, 4, 5, 8, 33} {
		bc := randSystems[T](r, n, 2, 70, 1)
		vs := []int{4, 24}
		if is64[T]() {
			vs = []int{4}
		}
		for _, v := range vs {
			for _, lay := range layouts {
				runBatch(t, bc, lay, v, 64, fmt.Sprintf("variant %d N=%d %s", v, n, lay.name))
			}
		}
	}
}

func TestVariantsF32(t *testing.T) { testVariants[float32](t) }
func TestVariantsF64(t *testing.T) { testVariants[float64](t) }

// Breakdowns: zero pivots (boosted, or reported with boosting off), tiny
// pivots boosted only by the full norm, NaN and Inf entries.
func testBreakdown[T Float](t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, k := range []int{1, 2, 3, 5} {
		n := 40
		bc := randSystems[T](r, n, k, 9, float64(2*k))
		// 1: zero first pivot; 2: zero pivot at row 17 (after elimination:
		// set the entry so that the pivot is exactly zero is hard, so zero
		// the whole row and column 17's diagonal block entries instead).
		bc.ms[1].Set(0, 0, 0)
		for j := max(0, 17-k); j <= min(n-1, 17+k); j++ {
			bc.ms[2].Set(17, j, 0)
		}
		// 3: a tiny pivot below τ only once the large entry at the end is
		// read (the fast path's running norm does not know it yet).
		bc.ms[3].Set(5, 5, T(1e-3)*T(eps[T]()))
		bc.ms[3].Set(n-1, n-1, 1e3)
		// 4: NaN entry; 5: Inf entry; 6: NaN in d only.
		bc.ms[4].Set(20, 20-k, T(math.NaN()))
		bc.ms[5].Set(3, 3+k, T(math.Inf(-1)))
		bc.ds[6][11] = T(math.NaN())
		// 7: NaN and a zero pivot before it: the scan reports the NaN.
		bc.ms[7].Set(0, 0, 0)
		bc.ms[7].Set(30, 30, T(math.NaN()))
		// 8: overflow of a pivot.
		mf := math.MaxFloat32
		if is64[T]() {
			mf = math.MaxFloat64
		}
		big := T(mf)
		bc.ms[8].Set(10, 10, big)
		bc.ms[8].Set(11, 10, big)
		bc.ms[8].Set(10, 11, -big)
		for _, tol := range []float64{0, -1, 1e-3} {
			bc.tol = tol
			for _, lay := range layouts {
				runBatch(t, bc, lay, 0, 32, fmt.Sprintf("breakdown K=%d tol=%g %s", k, tol, lay.name))
			}
		}
	}
}

func TestBreakdownF32(t *testing.T) { testBreakdown[float32](t) }
func TestBreakdownF64(t *testing.T) { testBreakdown[float64](t) }

// randBounds splits [0, n) into p partitions of at least minLen rows.
func randBounds(r *rand.Rand, n, p, minLen int) []int32 {
	b := []int32{0}
	left := n
	for q := p; q > 0; q-- {
		l := left / q
		if q > 1 && l > minLen {
			l += r.IntN(l/2+1) - l/4
			l = max(l, minLen)
		}
		if q == 1 {
			l = left
		}
		left -= l
		b = append(b, b[len(b)-1]+int32(l))
	}
	return b
}

func testWindow[T Float](t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, k := range []int{1, 2, 3, 8, 33, 64} {
		for _, tc := range []struct{ n, p int }{{k + 1, 1}, {3*k + 5, 2}, {200, 3}, {613, 5}} {
			if tc.n <= k {
				continue
			}
			n := tc.n
			if k > 8 && n > 3*k+5 {
				continue // the emulated blocks of K² threads are slow
			}
			bounds := randBounds(r, n, tc.p, 1)
			doms, tols := []float64{float64(2 * k), 0.5}, []float64{0, -1}
			if k > 8 {
				doms, tols = []float64{float64(2 * k)}, []float64{0}
			}
			for _, dom := range doms {
				for _, ul := range []bool{false, true} {
					for _, tol := range tols {
						m := randBand[T](r, n, k, dom)
						for i := range m.Data {
							if math.IsNaN(float64(m.Data[i])) {
								m.Data[i] = 0
							}
						}
						if tc.p > 1 && dom > 1 {
							// A zero pivot at the start of the second partition.
							m.Set(int(bounds[1]), int(bounds[1]), 0)
						}
						what := fmt.Sprintf("window K=%d N=%d P=%d dom=%g ul=%v tol=%g", k, n, tc.p, dom, ul, tol)
						cpu := &banded.Band[T]{N: n, K: k, Data: append([]T(nil), m.Data...)}
						gpu := append([]T(nil), m.Data...)
						status := make([]int32, 4*tc.p+1)
						threads := max(32, min(k*k, 1024))
						gtol := resolveTol[T](tol)
						if tol < 0 {
							gtol = -1
						}
						FactorWindow(gpu, n, k, bounds, ul, gtol, status, threads)
						var flag int32
						failed := make([]bool, tc.p)
						for p := 0; p < tc.p; p++ {
							r0, r1 := int(bounds[p]), int(bounds[p+1])
							var bs banded.Boosts
							var err error
							if ul {
								bs, err = banded.FactorULRange(cpu, r0, r1, banded.FactorOptions{BoostTol: tol})
							} else {
								bs, err = banded.FactorLURange(cpu, r0, r1, banded.FactorOptions{BoostTol: tol})
							}
							st := status[4*p : 4*p+4]
							if err != nil {
								failed[p] = true
								flag |= 1
								wk, wr, wc := kindOf(err)
								if wk == -1 {
									assert.Contains(t, []int32{1, 2}, st[0], "%s: partition %d kind", what, p)
								} else {
									assert.Equal(t, int32(wk), st[0], "%s: partition %d kind (%v)", what, p, err)
								}
								assert.Equal(t, []int32{int32(wr + 1), int32(wc + 1)}, []int32{st[1], st[2]}, "%s: partition %d row, col (%v)", what, p, err)
							} else {
								assert.Zero(t, st[0], "%s: partition %d kind", what, p)
							}
							assert.Equal(t, int32(bs.Count()), st[3], "%s: partition %d boosts", what, p)
							if bs.Count() > 0 {
								flag |= 2
							}
						}
						assert.Equal(t, flag, status[4*tc.p], "%s: flag", what)
						for i := range gpu {
							if bits(gpu[i]) != bits(cpu.Data[i]) {
								t.Errorf("%s: storage %d (col %d row %d): kernel %v, CPU %v", what, i, i/n, i%n, gpu[i], cpu.Data[i])
								break
							}
						}
						// Solves: 1 and K+3 right-hand sides, every sweep.
						for _, nrhs := range []int{1, k + 3} {
							ldb := n + 3
							b0 := make([]T, ldb*nrhs)
							for i := range b0 {
								b0[i] = T(r.Float64()*2 - 1)
							}
							for _, cpb := range []int{1, 2} {
								gb := append([]T(nil), b0...)
								SolveWindow(gpu, n, k, bounds, ul, gb, nrhs, ldb, 3, cpb)
								cb := append([]T(nil), b0...)
								for p := 0; p < tc.p; p++ {
									if failed[p] {
										continue
									}
									r0, r1 := int(bounds[p]), int(bounds[p+1])
									for c := 0; c < nrhs; c++ {
										seg := cb[c*ldb+r0 : c*ldb+r1]
										if ul {
											banded.SolveULRange(cpu, r0, r1, seg)
										} else {
											banded.SolveLURange(cpu, r0, r1, seg)
										}
									}
								}
							outer:
								for p := 0; p < tc.p; p++ {
									if failed[p] {
										continue
									}
									for c := 0; c < nrhs; c++ {
										for i := int(bounds[p]); i < int(bounds[p+1]); i++ {
											if bits(gb[c*ldb+i]) != bits(cb[c*ldb+i]) {
												t.Errorf("%s nrhs=%d cpb=%d: column %d row %d: kernel %v, CPU %v", what, nrhs, cpb, c, i, gb[c*ldb+i], cb[c*ldb+i])
												break outer
											}
										}
									}
								}
								for c := 0; c < nrhs; c++ {
									for i := n; i < ldb; i++ {
										assert.Equal(t, bits(b0[c*ldb+i]), bits(gb[c*ldb+i]), "%s: padding row %d touched", what, i)
									}
								}
							}
						}
					}
				}
			}
		}
	}
}

func TestWindowF32(t *testing.T) { testWindow[float32](t) }
func TestWindowF64(t *testing.T) { testWindow[float64](t) }
