//go:build cuda

package krylovgpu

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/krylov"
	"github.com/bandsolve/bandsolve/sparse"
)

// krylovLengths are the vector lengths of the Space tests: below a warp,
// odd, and more than one full reduction grid.
var krylovLengths = []int{1, 2, 1000, 1<<20 + 3}

// krylovModes runs f on a space in both completion modes.
func krylovModes(t *testing.T, n int, f func(t *testing.T, sp *Space)) {
	for _, deferred := range []bool{false, true} {
		name := fmt.Sprintf("n=%d/sync", n)
		if deferred {
			name = fmt.Sprintf("n=%d/deferred", n)
		}
		t.Run(name, func(t *testing.T) {
			sp, err := NewSpace(dev, n)
			require.NoError(t, err)
			defer sp.Close()
			require.NoError(t, sp.SetDeferred(deferred))
			f(t, sp)
			require.NoError(t, sp.Sync())
		})
	}
}

// kryVec returns a vector of sp holding host.
func kryVec(t *testing.T, sp *Space, host []float64) *cuda.Buffer[float64] {
	t.Helper()
	v, err := sp.New()
	require.NoError(t, err)
	t.Cleanup(func() { sp.Free(v) })
	require.NoError(t, v.CopyFrom(host))
	return v
}

// kryGet downloads v (after the space's work on it).
func kryGet[T float32 | float64](t *testing.T, sp *Space, v *cuda.Buffer[T]) []T {
	t.Helper()
	require.NoError(t, sp.Sync())
	h := make([]T, v.Len())
	require.NoError(t, v.CopyTo(h))
	return h
}

// kryRandom returns n values from U(−s, s).
func kryRandom(r *rand.Rand, n int, s float64) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = s * (2*r.Float64() - 1)
	}
	return v
}

// kryBitsEqual asserts that got and want are the same bit for bit (NaN
// payloads aside).
func kryBitsEqual(t *testing.T, want, got []float64, what string) {
	t.Helper()
	require.Equal(t, len(want), len(got), what)
	for i := range want {
		same := math.Float64bits(want[i]) == math.Float64bits(got[i]) || math.IsNaN(want[i]) && math.IsNaN(got[i])
		if !same {
			require.Failf(t, "not bit-identical", "%s: entry %d of %d: want %v (%#x), got %v (%#x)", what, i, len(want),
				want[i], math.Float64bits(want[i]), got[i], math.Float64bits(got[i]))
		}
	}
}

// fmaFree reports whether Go rounds a*b+c twice on this platform (it may
// fuse on arm64, ppc64 and s390x), so that host results are bit-comparable
// with the kernels compiled with -fmad=false.
func fmaFree() bool { return runtime.GOARCH == "amd64" || runtime.GOARCH == "386" }

func TestKrylovSpace(t *testing.T) {
	for _, n := range krylovLengths {
		krylovModes(t, n, func(t *testing.T, sp *Space) {
			r := rand.New(rand.NewPCG(uint64(n), 7))
			host := krylov.HostSpace{N: n}
			xh, yh, zh := kryRandom(r, n, 1), kryRandom(r, n, 3), kryRandom(r, n, 1e-3)
			x, y, z := kryVec(t, sp, xh), kryVec(t, sp, yh), kryVec(t, sp, zh)

			// New gives zeros; Copy and Zero.
			w, err := sp.New()
			require.NoError(t, err)
			defer sp.Free(w)
			kryBitsEqual(t, make([]float64, n), kryGet(t, sp, w), "New")
			require.NoError(t, sp.Copy(w, y))
			kryBitsEqual(t, yh, kryGet(t, sp, w), "Copy")
			nan := make([]float64, n)
			for i := range nan {
				nan[i] = math.NaN()
			}
			require.NoError(t, w.CopyFrom(nan))
			require.NoError(t, sp.Zero(w))
			kryBitsEqual(t, make([]float64, n), kryGet(t, sp, w), "Zero over NaN")

			// Axpby against HostSpace, including β = 0 over NaN (not read)
			// and x = y.
			for _, c := range []struct {
				alpha, beta float64
				nanY, alias bool
			}{{0.7, 1, false, false}, {-1.3, 0, true, false}, {2.5, -0.25, false, false}, {1, 0, true, false},
				{1.5, -0.5, false, true}, {-2, 1, false, true}} {
				what := fmt.Sprintf("Axpby(%g, x, %g, y) NaN y %v alias %v", c.alpha, c.beta, c.nanY, c.alias)
				want := append([]float64(nil), zh...)
				if c.nanY {
					copy(want, nan)
				}
				require.NoError(t, w.CopyFrom(want))
				if c.alias {
					require.NoError(t, host.Axpby(c.alpha, want, c.beta, want))
					require.NoError(t, sp.Axpby(c.alpha, w, c.beta, w))
				} else {
					require.NoError(t, host.Axpby(c.alpha, xh, c.beta, want))
					require.NoError(t, sp.Axpby(c.alpha, x, c.beta, w))
				}
				got := kryGet(t, sp, w)
				if fmaFree() {
					kryBitsEqual(t, want, got, what)
				} else {
					assert.InDeltaSlice(t, want, got, 1e-15*8, what)
				}
			}

			// Dots: one pair, the Gram matrix of three vectors (six pairs,
			// as BiCGStab2's MR step), more pairs than one launch takes,
			// and more than the mapped results area holds.
			vecs := []*cuda.Buffer[float64]{x, y, z, w}
			hvecs := [][]float64{xh, yh, zh, kryRandom(r, n, 10)}
			require.NoError(t, w.CopyFrom(hvecs[3]))
			gram := [][2]int{{0, 0}, {0, 1}, {0, 2}, {1, 1}, {1, 2}, {2, 2}}
			sets := map[string][][2]int{"one": {{0, 1}}, "gram": gram}
			for _, k := range []int{11, 70} {
				var pairs [][2]int
				for range k {
					pairs = append(pairs, [2]int{r.IntN(4), r.IntN(4)})
				}
				sets[fmt.Sprint(k)] = pairs
			}
			for name, pairs := range sets {
				xs, ys := make([]*cuda.Buffer[float64], len(pairs)), make([]*cuda.Buffer[float64], len(pairs))
				hx, hy := make([][]float64, len(pairs)), make([][]float64, len(pairs))
				for k, p := range pairs {
					xs[k], ys[k], hx[k], hy[k] = vecs[p[0]], vecs[p[1]], hvecs[p[0]], hvecs[p[1]]
				}
				want := make([]float64, len(pairs))
				require.NoError(t, host.Dots(hx, hy, want))
				got := make([]float64, len(pairs))
				require.NoError(t, sp.Dots(xs, ys, got))
				for k := range pairs {
					// Relative to Σ|x_i·y_i|, the scale of the rounding
					// errors of any summation order.
					scale := 0.0
					for i := range n {
						scale += math.Abs(hx[k][i] * hy[k][i])
					}
					assert.LessOrEqualf(t, math.Abs(got[k]-want[k]), 1e-13*scale, "Dots %s pair %d %v: gpu %v host %v", name, k, pairs[k], got[k], want[k])
				}
				for range 3 {
					again := make([]float64, len(pairs))
					require.NoError(t, sp.Dots(xs, ys, again))
					kryBitsEqual(t, got, again, "Dots "+name+" repeated")
				}
			}

			// A NaN anywhere gives a NaN inner product.
			nan[n/2] = math.NaN()
			for i := range nan {
				if i != n/2 {
					nan[i] = 1
				}
			}
			require.NoError(t, w.CopyFrom(nan))
			out := make([]float64, 2)
			require.NoError(t, sp.Dots([]*cuda.Buffer[float64]{w, x}, []*cuda.Buffer[float64]{x, x}, out))
			assert.True(t, math.IsNaN(out[0]), "NaN in a vector: %v", out[0])
			assert.False(t, math.IsNaN(out[1]))
			require.NoError(t, sp.Dots(nil, nil, nil))
		})
	}
}

func TestKrylovSpaceErrors(t *testing.T) {
	sp, err := NewSpace(dev, 100)
	require.NoError(t, err)
	defer sp.Close()
	other, err := NewSpace(dev, 101)
	require.NoError(t, err)
	defer other.Close()
	x, err := sp.New()
	require.NoError(t, err)
	defer sp.Free(x)
	long, err := other.New()
	require.NoError(t, err)
	defer other.Free(long)

	_, err = NewSpace(dev, 0)
	assert.ErrorIs(t, err, krylov.ErrDimension)
	assert.ErrorIs(t, sp.Copy(x, long), krylov.ErrDimension)
	assert.ErrorIs(t, sp.Axpby(1, x, 1, nil), krylov.ErrDimension)
	assert.ErrorIs(t, sp.Zero(long), krylov.ErrDimension)
	assert.ErrorIs(t, sp.Dots([]*cuda.Buffer[float64]{x}, []*cuda.Buffer[float64]{x, x}, make([]float64, 1)), krylov.ErrDimension)
	assert.ErrorIs(t, sp.Dots([]*cuda.Buffer[float64]{x}, []*cuda.Buffer[float64]{long}, make([]float64, 1)), krylov.ErrDimension)
	view, err := long.Slice(1, 100)
	require.NoError(t, err)
	require.NoError(t, sp.Copy(view, x), "a view of the right length is a vector of the space")
	freed, err := sp.New()
	require.NoError(t, err)
	sp.Free(freed)
	assert.ErrorIs(t, sp.Zero(freed), krylov.ErrDimension)

	closed, err := NewSpace(dev, 100)
	require.NoError(t, err)
	require.NoError(t, closed.Close())
	assert.ErrorIs(t, closed.Zero(x), cuda.ErrClosed)
	_, err = closed.New()
	assert.ErrorIs(t, err, cuda.ErrClosed)
}

func TestKrylovConvert(t *testing.T) {
	for _, n := range krylovLengths {
		krylovModes(t, n, func(t *testing.T, sp *Space) {
			r := rand.New(rand.NewPCG(uint64(n), 11))
			xh := kryRandom(r, n, 1e3)
			// Values that round to ±Inf, to 0, and a NaN, where there is room.
			special := []float64{1e40, -1e-50, math.NaN(), math.Inf(-1), 3.4028235677973366e38, 1e-45}
			for i, v := range special {
				if i < n {
					xh[n-1-i] = v
				}
			}
			x := kryVec(t, sp, xh)
			x32, err := cuda.Alloc[float32](dev, n)
			require.NoError(t, err)
			defer x32.Free()
			y, err := sp.New()
			require.NoError(t, err)
			defer sp.Free(y)
			for _, scale := range []float64{1, 0x1p-7, 0x1p30, 0.1} {
				require.NoError(t, sp.ToFloat32(scale, x, x32))
				got32 := kryGet(t, sp, x32)
				want32 := make([]float32, n)
				for i, v := range xh {
					want32[i] = float32(v * scale)
				}
				for i := range want32 {
					if math.Float32bits(want32[i]) != math.Float32bits(got32[i]) && !(want32[i] != want32[i] && got32[i] != got32[i]) {
						require.Failf(t, "ToFloat32", "scale %g entry %d (%v): want %v, got %v", scale, i, xh[i], want32[i], got32[i])
					}
				}
				require.NoError(t, sp.FromFloat32(1/scale, x32, y))
				want := make([]float64, n)
				for i, v := range want32 {
					want[i] = float64(v) * (1 / scale)
				}
				kryBitsEqual(t, want, kryGet(t, sp, y), fmt.Sprintf("FromFloat32 scale %g", 1/scale))
			}

			// Element-wise products in both precisions.
			dh := kryRandom(r, n, 2)
			d := kryVec(t, sp, dh)
			xf := kryRandom(r, n, 1)
			xv := kryVec(t, sp, xf)
			require.NoError(t, sp.Mul(d, xv, y))
			want := make([]float64, n)
			for i := range want {
				want[i] = dh[i] * xf[i]
			}
			kryBitsEqual(t, want, kryGet(t, sp, y), "Mul")
			require.NoError(t, sp.Mul(d, xv, xv))
			kryBitsEqual(t, want, kryGet(t, sp, xv), "Mul in place")
			d32, err := cuda.Alloc[float32](dev, n)
			require.NoError(t, err)
			defer d32.Free()
			y32, err := cuda.Alloc[float32](dev, n)
			require.NoError(t, err)
			defer y32.Free()
			require.NoError(t, sp.ToFloat32(1, d, d32))
			require.NoError(t, sp.ToFloat32(1, x, x32))
			require.NoError(t, sp.Mul32(d32, x32, y32))
			got32 := kryGet(t, sp, y32)
			for i := range got32 {
				w := float32(dh[i]) * float32(xh[i])
				if math.Float32bits(w) != math.Float32bits(got32[i]) && !(w != w && got32[i] != got32[i]) {
					require.Failf(t, "Mul32", "entry %d: want %v, got %v", i, w, got32[i])
				}
			}

			// AbsMax: the largest magnitude, Inf, NaN.
			fin := kryRandom(r, n, 5)
			fin[r.IntN(n)] = -7.25
			require.NoError(t, y.CopyFrom(fin))
			m, err := sp.AbsMax(y)
			require.NoError(t, err)
			assert.Equal(t, 7.25, m)
			fin[r.IntN(n)] = math.Inf(-1)
			require.NoError(t, y.CopyFrom(fin))
			m, err = sp.AbsMax(y)
			require.NoError(t, err)
			assert.True(t, math.IsInf(m, 1), "AbsMax with −Inf: %v", m)
			fin[r.IntN(n)] = math.NaN()
			require.NoError(t, y.CopyFrom(fin))
			m, err = sp.AbsMax(y)
			require.NoError(t, err)
			assert.True(t, math.IsNaN(m), "AbsMax with NaN: %v", m)
		})
	}
}

// kryJacobi32 is a float32 Jacobi preconditioner on the space's stream,
// counting its calls.
type kryJacobi32 struct {
	sp    *Space
	d     *cuda.Buffer[float32]
	calls int
}

func (j *kryJacobi32) apply(_ context.Context, r, z *cuda.Buffer[float32]) error {
	j.calls++
	return j.sp.Mul32(j.d, r, z)
}

func TestKrylovMixedPrecision(t *testing.T) {
	for _, n := range krylovLengths {
		krylovModes(t, n, func(t *testing.T, sp *Space) {
			r := rand.New(rand.NewPCG(uint64(n), 13))
			dh := kryRandom(r, n, 4)
			d32h := make([]float32, n)
			for i, v := range dh {
				d32h[i] = float32(v)
			}
			d32, err := cuda.Upload(dev, d32h)
			require.NoError(t, err)
			defer d32.Free()
			jac := &kryJacobi32{sp: sp, d: d32}
			mp, err := NewMixedPrecision(sp, jac.apply)
			require.NoError(t, err)
			defer mp.Close()
			hostMP := krylov.NewMixedPrecision(n, func(_ context.Context, r, z []float32) error {
				for i := range r {
					z[i] = d32h[i] * r[i]
				}
				return nil
			})
			z, err := sp.New()
			require.NoError(t, err)
			defer sp.Free(z)
			// Scales that take r far outside float32's range both ways.
			for _, s := range []float64{1, 1e-200, 1e200, 1e-300} {
				rh := kryRandom(r, n, s)
				rv := kryVec(t, sp, rh)
				want := make([]float64, n)
				require.NoError(t, hostMP.Apply(context.Background(), rh, want))
				require.NoError(t, mp.Apply(context.Background(), rv, z))
				kryBitsEqual(t, want, kryGet(t, sp, z), fmt.Sprintf("MixedPrecision, r of size %g", s))
				kryBitsEqual(t, rh, kryGet(t, sp, rv), "MixedPrecision leaves r")
			}
			// r = 0: z = 0 without a float32 solve; NaN: ErrNonFinite.
			calls := jac.calls
			zero := kryVec(t, sp, make([]float64, n))
			require.NoError(t, z.CopyFrom(dh))
			require.NoError(t, mp.Apply(context.Background(), zero, z))
			kryBitsEqual(t, make([]float64, n), kryGet(t, sp, z), "MixedPrecision of 0")
			assert.Equal(t, calls, jac.calls)
			bad := kryRandom(r, n, 1)
			bad[n-1] = math.NaN()
			assert.ErrorIs(t, mp.Apply(context.Background(), kryVec(t, sp, bad), z), krylov.ErrNonFinite)
			bad[n-1] = math.Inf(1)
			assert.ErrorIs(t, mp.Apply(context.Background(), kryVec(t, sp, bad), z), krylov.ErrNonFinite)
		})
	}
}

// kryMatrix is a CSR test matrix (columns in any order).
type kryMatrix struct {
	name   string
	n, m   int
	rowPtr []int32
	col    []int32
	val    []float64
}

// kryRandomCSR returns an n×m matrix with rows of 0 to 2·avg entries at
// random distinct columns (unsorted), a fraction empty of empty rows, and
// row long (if ≥ 0) with longLen entries.
func kryRandomCSR(r *rand.Rand, name string, n, m, avg int, empty float64, long, longLen int) kryMatrix {
	a := kryMatrix{name: name, n: n, m: m, rowPtr: make([]int32, n+1)}
	for i := range n {
		k := r.IntN(2*avg + 1)
		if r.Float64() < empty {
			k = 0
		}
		if i == long {
			k = longLen
		}
		for _, j := range r.Perm(m)[:min(k, m)] {
			a.col = append(a.col, int32(j))
			a.val = append(a.val, 2*r.Float64()-1)
		}
		a.rowPtr[i+1] = int32(len(a.col))
	}
	return a
}

func kryFromSparse(name string, s *sparse.CSR) kryMatrix {
	return kryMatrix{name: name, n: s.N, m: s.M, rowPtr: s.RowPtr, col: s.Col, val: s.Val}
}

// mulRef is y = A·x summed in entry order from 0, and Σ|a_ij·x_j| per row.
func (a kryMatrix) mulRef(x []float64) (y, scale []float64) {
	y, scale = make([]float64, a.n), make([]float64, a.n)
	for i := range a.n {
		s := 0.0
		for p := a.rowPtr[i]; p < a.rowPtr[i+1]; p++ {
			s += a.val[p] * x[a.col[p]]
			scale[i] += math.Abs(a.val[p] * x[a.col[p]])
		}
		y[i] = s
	}
	return y, scale
}

func TestKrylovCSR(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	mats := []kryMatrix{
		{name: "1x1", n: 1, m: 1, rowPtr: []int32{0, 1}, col: []int32{0}, val: []float64{2.5}},
		{name: "empty", n: 10, m: 10, rowPtr: make([]int32, 11)},
		kryRandomCSR(r, "random-empty-rows-long-row", 1000, 1000, 3, 0.3, 417, 900),
		kryRandomCSR(r, "wide-rows", 5000, 5000, 40, 0.05, 0, 5000),
		kryRandomCSR(r, "rectangular", 300, 700, 6, 0.1, 299, 700),
		kryFromSparse("5-point-300", sparse.ConvectionDiffusion2D(300, 50, 20)),
	}
	for _, a := range mats {
		t.Run(a.name, func(t *testing.T) {
			var g *CSR
			var err error
			if a.n == a.m {
				g, err = UploadCSR(dev, a.rowPtr, a.col, a.val)
			} else {
				g, err = UploadSparse(dev, &sparse.CSR{N: a.n, M: a.m, RowPtr: a.rowPtr, Col: a.col, Val: a.val})
			}
			require.NoError(t, err)
			defer g.Close()
			assert.Equal(t, a.n, g.Rows())
			assert.Equal(t, a.m, g.Cols())
			assert.Equal(t, len(a.val), g.NNZ())
			t.Logf("%d×%d, %d entries, %d threads per row by default", a.n, a.m, len(a.val), g.ThreadsPerRow())
			xh := kryRandom(r, a.m, 1)
			x, err := cuda.Upload(dev, xh)
			require.NoError(t, err)
			defer x.Free()
			y, err := cuda.Alloc[float64](dev, a.n)
			require.NoError(t, err)
			defer y.Free()
			want, scale := a.mulRef(xh)
			nan := make([]float64, a.n)
			for i := range nan {
				nan[i] = math.NaN()
			}
			maxLen := 0
			for i := range a.n {
				maxLen = max(maxLen, int(a.rowPtr[i+1]-a.rowPtr[i]))
			}
			for _, tpr := range []int{g.ThreadsPerRow(), 1, 2, 4, 8, 16, 32} {
				require.NoError(t, g.SetThreadsPerRow(tpr))
				require.NoError(t, y.CopyFrom(nan)) // every row must be written
				require.NoError(t, g.Apply(context.Background(), x, y))
				got := make([]float64, a.n)
				require.NoError(t, y.CopyTo(got))
				if tpr == 1 && fmaFree() {
					kryBitsEqual(t, want, got, "one thread per row")
					continue
				}
				for i := range got {
					tol := float64(maxLen+5) * 0x1p-52 * scale[i]
					if !(math.Abs(got[i]-want[i]) <= tol) {
						require.Failf(t, "CSR product", "%d threads per row, row %d: want %v, got %v (tolerance %g)", tpr, i, want[i], got[i], tol)
					}
				}
			}

			// Float32 product, against the same sums in float32.
			require.NoError(t, g.SetThreadsPerRow(1))
			x32h := make([]float32, a.m)
			for i, v := range xh {
				x32h[i] = float32(v)
			}
			x32, err := cuda.Upload(dev, x32h)
			require.NoError(t, err)
			defer x32.Free()
			y32, err := cuda.Alloc[float32](dev, a.n)
			require.NoError(t, err)
			defer y32.Free()
			require.NoError(t, g.Apply32(context.Background(), x32, y32))
			got32 := make([]float32, a.n)
			require.NoError(t, y32.CopyTo(got32))
			for i := range a.n {
				var s float32
				for p := a.rowPtr[i]; p < a.rowPtr[i+1]; p++ {
					s += float32(a.val[p]) * x32h[a.col[p]]
				}
				if fmaFree() {
					require.Equalf(t, math.Float32bits(s), math.Float32bits(got32[i]), "float32 product row %d: want %v, got %v", i, s, got32[i])
				} else {
					require.InDelta(t, s, got32[i], 1e-5*float64(maxLen+1)*(1+scale[i]))
				}
			}
		})
	}

	// A space's operator gives the same bits as the matrix's own Apply.
	a := sparse.ConvectionDiffusion2D(200, 10, 0)
	g, err := UploadSparse(dev, a)
	require.NoError(t, err)
	defer g.Close()
	for _, deferred := range []bool{false, true} {
		sp, err := NewSpace(dev, a.N)
		require.NoError(t, err)
		require.NoError(t, sp.SetDeferred(deferred))
		op, err := sp.Operator(g)
		require.NoError(t, err)
		xh := kryRandom(r, a.N, 1)
		x := kryVec(t, sp, xh)
		y1, y2 := kryVec(t, sp, make([]float64, a.N)), kryVec(t, sp, make([]float64, a.N))
		require.NoError(t, op.Apply(context.Background(), x, y1))
		require.NoError(t, g.Apply(context.Background(), x, y2))
		kryBitsEqual(t, kryGet(t, sp, y2), kryGet(t, sp, y1), "Space.Operator")
		assert.ErrorIs(t, op.Apply(context.Background(), x, x), krylov.ErrDimension)
		_, err = sp.Operator(&CSR{dev: dev, n: a.N, m: a.N + 1})
		assert.ErrorIs(t, err, krylov.ErrDimension)
		require.NoError(t, sp.Close())
	}

	// Malformed structures are refused before they reach a kernel.
	for name, m := range map[string]kryMatrix{
		"column out of range": {n: 2, rowPtr: []int32{0, 1, 2}, col: []int32{0, 2}, val: []float64{1, 1}},
		"negative column":     {n: 2, rowPtr: []int32{0, 1, 2}, col: []int32{0, -1}, val: []float64{1, 1}},
		"decreasing rowPtr":   {n: 2, rowPtr: []int32{0, 2, 1}, col: []int32{0, 1}, val: []float64{1, 1}},
		"short val":           {n: 2, rowPtr: []int32{0, 1, 2}, col: []int32{0, 1}, val: []float64{1}},
		"no rows":             {n: 0, rowPtr: []int32{0}},
	} {
		_, err := UploadCSR(dev, m.rowPtr, m.col, m.val)
		assert.ErrorIs(t, err, krylov.ErrDimension, name)
	}
	assert.Error(t, g.SetThreadsPerRow(3))
}

// kryProblem is the end-to-end test problem: the 5-point
// convection–diffusion operator on an m×m grid, its rows scaled by random
// factors in [0.5, 2] (so that Jacobi preconditioning matters), and a
// random right-hand side.
type kryProblem struct {
	a      *sparse.CSR
	invDia []float64
	b      []float64
}

func newKryProblem(m int, bx, by float64, seed uint64) kryProblem {
	a := sparse.ConvectionDiffusion2D(m, bx, by)
	r := rand.New(rand.NewPCG(seed, 1))
	p := kryProblem{a: a, invDia: make([]float64, a.N), b: kryRandom(r, a.N, 1)}
	for i := range a.N {
		s := 0.5 + 1.5*r.Float64()
		for q := a.RowPtr[i]; q < a.RowPtr[i+1]; q++ {
			a.Val[q] *= s
		}
		p.invDia[i] = 1 / a.At(i, i)
	}
	return p
}

// hostSolve runs BiCGStab2 on the CPU, Jacobi-preconditioned in float64
// or (mixed) float32.
func (p kryProblem) hostSolve(mixed bool, opt krylov.Options) (krylov.Result, []float64, error) {
	n := p.a.N
	op := krylov.OperatorFunc[[]float64](func(_ context.Context, x, y []float64) error { return p.a.MulVec(x, y) })
	var pc krylov.Preconditioner[[]float64] = krylov.PreconditionerFunc[[]float64](func(_ context.Context, r, z []float64) error {
		for i := range r {
			z[i] = p.invDia[i] * r[i]
		}
		return nil
	})
	if mixed {
		d32 := make([]float32, n)
		for i, v := range p.invDia {
			d32[i] = float32(v)
		}
		pc = krylov.NewMixedPrecision(n, func(_ context.Context, r, z []float32) error {
			for i := range r {
				z[i] = d32[i] * r[i]
			}
			return nil
		})
	}
	x := make([]float64, n)
	res, err := krylov.BiCGStab2(context.Background(), krylov.HostSpace{N: n}, op, pc, p.b, x, opt)
	return res, x, err
}

// gpuSolver holds the GPU side of a kryProblem.
type gpuSolver struct {
	sp    *Space
	a     *CSR
	op    krylov.Operator[*cuda.Buffer[float64]]
	pc    krylov.Preconditioner[*cuda.Buffer[float64]]
	b, x  *cuda.Buffer[float64]
	frees []func()
}

func newGPUSolver(tb testing.TB, p kryProblem, deferred, mixed bool) *gpuSolver {
	n := p.a.N
	g := &gpuSolver{}
	var err error
	g.sp, err = NewSpace(dev, n)
	require.NoError(tb, err)
	require.NoError(tb, g.sp.SetDeferred(deferred))
	g.a, err = UploadSparse(dev, p.a)
	require.NoError(tb, err)
	g.op, err = g.sp.Operator(g.a)
	require.NoError(tb, err)
	g.b, err = cuda.Upload(dev, p.b)
	require.NoError(tb, err)
	g.x, err = g.sp.New()
	require.NoError(tb, err)
	d, err := cuda.Upload(dev, p.invDia)
	require.NoError(tb, err)
	g.frees = append(g.frees, func() { _ = d.Free() })
	if mixed {
		d32, err := cuda.Alloc[float32](dev, n)
		require.NoError(tb, err)
		g.frees = append(g.frees, func() { _ = d32.Free() })
		require.NoError(tb, g.sp.ToFloat32(1, d, d32))
		mp, err := NewMixedPrecision(g.sp, func(_ context.Context, r, z *cuda.Buffer[float32]) error { return g.sp.Mul32(d32, r, z) })
		require.NoError(tb, err)
		g.frees = append(g.frees, func() { _ = mp.Close() })
		g.pc = mp
	} else {
		g.pc = krylov.PreconditionerFunc[*cuda.Buffer[float64]](func(_ context.Context, r, z *cuda.Buffer[float64]) error { return g.sp.Mul(d, r, z) })
	}
	return g
}

func (g *gpuSolver) solve(opt krylov.Options) (krylov.Result, error) {
	if err := g.sp.Zero(g.x); err != nil {
		return krylov.Result{}, err
	}
	return krylov.BiCGStab2(context.Background(), g.sp, g.op, g.pc, g.b, g.x, opt)
}

func (g *gpuSolver) close() {
	for _, f := range g.frees {
		f()
	}
	g.sp.Free(g.x)
	_ = g.b.Free()
	_ = g.a.Close()
	_ = g.sp.Close()
}

func TestKrylovBiCGStab2(t *testing.T) {
	// About 10^5 rows, convection-dominated enough that the iteration
	// count is insensitive to the order of summation (on the CPU, summing
	// the inner products and the rows of the product in other orders moved
	// it by at most 2 here; the pure diffusion problem moves by tens).
	p := newKryProblem(316, 200, 100, 42)
	opt := krylov.Options{Tol: 1e-10, MaxIter: 5000}
	for _, c := range []struct {
		name            string
		deferred, mixed bool
		slack           int // allowed difference in iterations from the host's
	}{
		{"float64-jacobi/sync", false, false, 2},
		{"float64-jacobi/deferred", true, false, 2},
		// A float32 preconditioner adds rounding noise that moves the
		// residual replacements: other summation orders moved the count by
		// up to 16 steps of about 550 (on the CPU, and on the H100: 566
		// host, 550 GPU).
		{"mixed-jacobi/deferred", true, true, 30},
	} {
		t.Run(c.name, func(t *testing.T) {
			t0 := time.Now()
			hres, hx, herr := p.hostSolve(c.mixed, opt)
			th := time.Since(t0)
			require.NoError(t, herr)
			g := newGPUSolver(t, p, c.deferred, c.mixed)
			defer g.close()
			t0 = time.Now()
			gres, gerr := g.solve(opt)
			tg := time.Since(t0)
			t.Logf("host: %d steps, residual %.3g, %v; GPU: %d steps, residual %.3g, %v (%d operator, %d preconditioner applications)",
				hres.Iterations, hres.Residual, th, gres.Iterations, gres.Residual, tg, gres.OperatorApplies, gres.PreconditionerApplies)
			require.NoError(t, gerr)
			require.True(t, gres.Converged)
			assert.LessOrEqual(t, gres.Residual, 1e-10)
			assert.InDelta(t, hres.Iterations, gres.Iterations, float64(c.slack), "iterations host vs GPU")

			// The true residual of the GPU's x, on the host, and its
			// distance from the host's x.
			x := kryGet(t, g.sp, g.x)
			ax := make([]float64, len(x))
			require.NoError(t, p.a.MulVec(x, ax))
			var rr, bb, dd, xx float64
			for i := range x {
				rr += (p.b[i] - ax[i]) * (p.b[i] - ax[i])
				bb += p.b[i] * p.b[i]
				dd += (x[i] - hx[i]) * (x[i] - hx[i])
				xx += hx[i] * hx[i]
			}
			assert.LessOrEqual(t, math.Sqrt(rr/bb), 1.01e-10, "true residual on the host")
			assert.LessOrEqual(t, math.Sqrt(dd/xx), 1e-4, "GPU and host solutions")

			// Deterministic: a second solve takes the same steps to the
			// same residual.
			again, err := g.solve(opt)
			require.NoError(t, err)
			assert.Equal(t, gres.Iterations, again.Iterations)
			assert.Equal(t, gres.Residual, again.Residual)
		})
	}
}

// timeSteps runs solve b.N times, each stopping at its step limit
// (krylov.ErrNotConverged; any other outcome fails b), and reports the
// steps a second and the µs a step.
func timeSteps(b *testing.B, solve func() (krylov.Result, error)) {
	total := 0
	for range b.N {
		res, err := solve()
		if !errors.Is(err, krylov.ErrNotConverged) {
			b.Fatal(err)
		}
		total += res.Iterations
	}
	sec := b.Elapsed().Seconds()
	b.ReportMetric(float64(total)/sec, "steps/s")
	b.ReportMetric(sec/float64(total)*1e6, "µs/step")
}

// BenchmarkKrylovGPU times BiCGStab(2) steps (krylov.Result.Iterations:
// two per cycle, each with two products and two preconditioner
// applications) for the 5-point convection–diffusion operator with
// N = 10^6 unknowns and a Jacobi preconditioner, on the GPU (synchronous,
// deferred, float32 preconditioner through MixedPrecision) and on the
// host; then the building blocks: the CSR product for each number of
// threads per row, an axpy and the six inner products of the MR step.
func BenchmarkKrylovGPU(b *testing.B) {
	p := newKryProblem(1000, 200, 100, 1)
	n := p.a.N
	// A tolerance that is never met: every solve runs steps steps.
	const steps = 100
	opt := krylov.Options{Tol: 1e-300, MaxIter: steps}
	for _, c := range []struct {
		name            string
		deferred, mixed bool
	}{{"sync", false, false}, {"deferred", true, false}, {"deferred-mixed32", true, true}} {
		b.Run(c.name, func(b *testing.B) {
			g := newGPUSolver(b, p, c.deferred, c.mixed)
			defer g.close()
			if _, err := g.solve(opt); !errors.Is(err, krylov.ErrNotConverged) {
				b.Fatal(err)
			}
			b.ResetTimer()
			timeSteps(b, func() (krylov.Result, error) { return g.solve(opt) })
		})
	}
	b.Run("host", func(b *testing.B) {
		hopt := krylov.Options{Tol: 1e-300, MaxIter: 10}
		timeSteps(b, func() (krylov.Result, error) {
			res, _, err := p.hostSolve(false, hopt)
			return res, err
		})
	})

	// Building blocks, 50 calls per b.N on a deferred space, waited for.
	const calls = 50
	sp, err := NewSpace(dev, n)
	require.NoError(b, err)
	defer sp.Close()
	a, err := UploadSparse(dev, p.a)
	require.NoError(b, err)
	defer a.Close()
	op, err := sp.Operator(a)
	require.NoError(b, err)
	vs := make([]*cuda.Buffer[float64], 3)
	for i := range vs {
		vs[i], err = sp.New()
		require.NoError(b, err)
		defer sp.Free(vs[i])
		require.NoError(b, vs[i].CopyFrom(p.b))
	}
	require.NoError(b, sp.SetDeferred(true))
	perCall := func(b *testing.B, bytes float64, f func() error) {
		for range 3 {
			require.NoError(b, f())
		}
		require.NoError(b, sp.Sync())
		b.ResetTimer()
		for range b.N {
			for range calls {
				if err := f(); err != nil {
					b.Fatal(err)
				}
			}
			if err := sp.Sync(); err != nil {
				b.Fatal(err)
			}
		}
		sec := b.Elapsed().Seconds() / float64(b.N*calls)
		b.ReportMetric(sec*1e6, "µs/call")
		b.ReportMetric(bytes/sec/1e9, "GB/s")
	}
	spmvBytes := float64(12*a.NNZ() + 4*(n+1) + 8*n + 8*n) // values, columns, row pointers, x once, y
	for _, tpr := range []int{1, 2, 4, 8, 16, 32} {
		b.Run(fmt.Sprintf("spmv-tpr%d", tpr), func(b *testing.B) {
			require.NoError(b, a.SetThreadsPerRow(tpr))
			perCall(b, spmvBytes, func() error { return op.Apply(context.Background(), vs[0], vs[1]) })
		})
	}
	require.NoError(b, a.SetThreadsPerRow(1<<threadsPerRowShift(a.NNZ(), n)))
	b.Run("axpy", func(b *testing.B) {
		perCall(b, 24*float64(n), func() error { return sp.Axpby(1e-3, vs[0], 1, vs[1]) })
	})
	b.Run("dots-gram6", func(b *testing.B) {
		xs := []*cuda.Buffer[float64]{vs[0], vs[0], vs[0], vs[1], vs[1], vs[2]}
		ys := []*cuda.Buffer[float64]{vs[0], vs[1], vs[2], vs[1], vs[2], vs[2]}
		out := make([]float64, 6)
		perCall(b, 24*float64(n), func() error { return sp.Dots(xs, ys, out) })
	})
	b.Run("dots-1", func(b *testing.B) {
		out := make([]float64, 1)
		xs := []*cuda.Buffer[float64]{vs[0]}
		perCall(b, 8*float64(n), func() error { return sp.Dots(xs, xs, out) })
	})
}
