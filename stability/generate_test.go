package stability

import (
	"math"
	"slices"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
)

func isRandSVD(t Type) bool { return t >= 8 && t <= 11 }

func TestTypesAndNames(t *testing.T) {
	classic := Types(false)
	require.Len(t, classic, NumClassic+NumToeplitz)
	all := Types(true)
	require.Len(t, all, NumTypes)
	for i, ty := range all[:TypeKS16] {
		assert.Equal(t, Type(i+1), ty)
	}
	// Both listings end with the Toeplitz readings.
	assert.Equal(t, Toeplitz(), classic[NumClassic:])
	assert.Equal(t, Toeplitz(), all[TypeKS16:])
	assert.Equal(t, []Type{Type2T, Type6T, Type14T, Type16T}, Toeplitz())
	for _, ty := range all {
		assert.True(t, ty.Valid())
		assert.Equal(t, ty >= Type2T, ty.IsToeplitz(), "type %s", ty.Name())
	}
	ks := KleinStrzodka()
	require.Len(t, ks, NumExtended)
	assert.Equal(t, Types(false)[:14], ks[:14])
	assert.Equal(t, Type(16), ks[14]) // their 15: zero diagonal
	assert.Equal(t, TypeKS16, ks[15]) // their 16: tridiag(1, 1e-8, 1)
	assert.NotContains(t, ks, Type(15))
	assert.Equal(t, []Type{17, 18, 19, 20}, ks[16:])

	seen, seenNames := map[string]bool{}, map[string]bool{}
	for _, ty := range all {
		s := ty.String()
		assert.NotEmpty(t, s)
		assert.False(t, seen[s], "duplicate description %q", s)
		seen[s] = true
		name := ty.Name()
		assert.False(t, seenNames[name], "duplicate name %q", name)
		seenNames[name] = true
		back, err := ParseType(name)
		require.NoError(t, err, name)
		assert.Equal(t, ty, back, name)
	}
	assert.Equal(t, "U(-1,1)", Type(1).String())
	assert.Equal(t, "lesp", Type(3).String())
	assert.Equal(t, "randsvd mode 2", Type(8).String())
	assert.Equal(t, "randsvd mode 3", Type(9).String())
	assert.Equal(t, "randsvd mode 1", Type(10).String())
	assert.Equal(t, "randsvd mode 4", Type(11).String())
	assert.Equal(t, "dorr(1e-4)", Type(13).String())
	assert.Equal(t, "Toeplitz diag 1e-8", Type14T.String())
	assert.Equal(t, "Type(0)", Type(0).String())
	assert.Equal(t, "Type(26)", Type(26).String())
	assert.False(t, Type(0).Valid())
	assert.False(t, Type(26).Valid())
	assert.False(t, Type(26).Random())
	assert.False(t, Type(26).IsToeplitz())

	for name, want := range map[string]Type{"1": 1, "14": 14, "21": TypeKS16, "2T": Type2T, "6t": Type6T, " 14T ": Type14T, "16T": Type16T} {
		got, err := ParseType(name)
		require.NoError(t, err, "%q", name)
		assert.Equal(t, want, got, "%q", name)
	}
	assert.Equal(t, "14T", Type14T.Name())
	assert.Equal(t, "21", TypeKS16.Name())
	assert.Equal(t, "Type(0)", Type(0).Name())
	for _, bad := range []string{"", "0", "22", "25", "1T", "15T", "T", "14TT", "x", "-1"} {
		_, err := ParseType(bad)
		require.ErrorIs(t, err, ErrInvalid, "%q", bad)
	}
}

func TestGenerateInvalid(t *testing.T) {
	for _, ty := range []Type{0, -1, 26} {
		_, err := Generate(ty, 10, 1)
		require.ErrorIs(t, err, ErrInvalid)
	}
	for _, ty := range Types(true) {
		_, err := Generate(ty, 1, 1)
		require.ErrorIs(t, err, ErrInvalid, "type %d", ty)
		_, err = Generate(ty, 0, 1)
		require.ErrorIs(t, err, ErrInvalid, "type %d", ty)
	}
}

func TestGenerateAllSizesDeterministic(t *testing.T) {
	for _, ty := range Types(true) {
		for _, n := range []int{MinN, 3, 7, 64, 100, 513} {
			m, err := Generate(ty, n, 7)
			require.NoError(t, err, "type %d n %d", ty, n)
			require.Len(t, m.A, n)
			require.Len(t, m.B, n)
			require.Len(t, m.C, n)
			require.Equal(t, n, m.N())
			assert.Zero(t, m.A[0], "type %d n %d: A[0]", ty, n)
			assert.Zero(t, m.C[n-1], "type %d n %d: C[n-1]", ty, n)
			for i := range n {
				for _, v := range []float64{m.A[i], m.B[i], m.C[i]} {
					require.False(t, math.IsNaN(v) || math.IsInf(v, 0), "type %d n %d row %d", ty, n, i)
				}
			}
			if isRandSVD(ty) && n > 100 {
				continue // O(n³); determinism is checked on the smaller sizes
			}
			again, err := Generate(ty, n, 7)
			require.NoError(t, err)
			assert.True(t, equalMatrices(m, again), "type %d n %d not deterministic", ty, n)
			other, err := Generate(ty, n, 8)
			require.NoError(t, err)
			if ty.Random() {
				assert.False(t, equalMatrices(m, other), "type %d n %d ignores the seed", ty, n)
			} else {
				assert.True(t, equalMatrices(m, other), "type %d n %d depends on the seed", ty, n)
			}
		}
	}
}

func TestUniformFamilySharesDraws(t *testing.T) {
	const n, seed = 200, 11
	gen := func(ty Type) Matrix {
		m, err := Generate(ty, n, seed)
		require.NoError(t, err)
		return m
	}
	base := gen(1)
	for i := range n {
		assert.True(t, base.B[i] >= -1 && base.B[i] < 1)
		if i > 0 {
			assert.True(t, base.A[i] >= -1 && base.A[i] < 1)
		}
	}

	// Type 4: only the sub-diagonal entry of row n/2+1 (1-based) changes.
	m4 := gen(4)
	assert.Equal(t, base.B, m4.B)
	assert.Equal(t, base.C, m4.C)
	for i := range n {
		if i == n/2 {
			assert.Equal(t, base.A[i]*1e-50, m4.A[i])
			assert.NotZero(t, m4.A[i])
		} else {
			assert.Equal(t, base.A[i], m4.A[i])
		}
	}

	// Type 12: every sub-diagonal entry scaled by 1e-50.
	m12 := gen(12)
	assert.Equal(t, base.B, m12.B)
	assert.Equal(t, base.C, m12.C)
	for i := 1; i < n; i++ {
		assert.Equal(t, base.A[i]*1e-50, m12.A[i])
	}

	// Constant-diagonal types keep type 1's off-diagonals.
	for ty, diag := range map[Type]float64{2: 1e8, 6: 64, 14: 1e-8, 16: 0} {
		m := gen(ty)
		assert.Equal(t, base.A, m.A, "type %d", ty)
		assert.Equal(t, base.C, m.C, "type %d", ty)
		for i := range n {
			assert.Equal(t, diag, m.B[i], "type %d", ty)
		}
	}

	// Type 20: tridiag(-1, 4, c) with c from U(-1,1).
	m20 := gen(20)
	assert.Equal(t, base.C, m20.C)
	for i := range n {
		assert.Equal(t, 4.0, m20.B[i])
		if i > 0 {
			assert.Equal(t, -1.0, m20.A[i])
		}
	}
}

func TestType5HalfZeros(t *testing.T) {
	const n = 1000
	base, err := Generate(1, n, 3)
	require.NoError(t, err)
	m, err := Generate(5, n, 3)
	require.NoError(t, err)
	assert.Equal(t, base.B, m.B)
	zeros := 0
	for i := range n {
		// Every entry is either zero or type 1's.
		if m.A[i] != 0 {
			assert.Equal(t, base.A[i], m.A[i])
		}
		if m.C[i] != 0 {
			assert.Equal(t, base.C[i], m.C[i])
		}
		if i > 0 && m.A[i] == 0 {
			zeros++
		}
		if i < n-1 && m.C[i] == 0 {
			zeros++
		}
	}
	frac := float64(zeros) / float64(2*(n-1))
	assert.InDelta(t, 0.5, frac, 0.05, "zero fraction %v", frac)
}

func TestLesp(t *testing.T) {
	const n = 10
	m, err := Generate(3, n, 0)
	require.NoError(t, err)
	for i := range n { // 0-based row i is row j = i+1
		assert.Equal(t, -float64(2*i+5), m.B[i]) // -5, -7, ..., -(2n+3)
		if i > 0 {
			assert.Equal(t, 1/float64(i+1), m.A[i]) // 1/2 .. 1/n
			assert.InDelta(t, 1, m.A[i]*m.C[i-1], 1e-15)
		}
		if i < n-1 {
			assert.Equal(t, float64(i+2), m.C[i]) // 2 .. n
		}
	}
	assert.Equal(t, -float64(2*n+3), m.B[n-1])

	// Eigenvalues real and inside [-2n-3.5, -4.5] (up to the end effects:
	// within the Gershgorin set of the similar symmetric matrix).
	var eig mat.Eigen
	require.True(t, eig.Factorize(dense(m), mat.EigenNone))
	vals := eig.Values(nil)
	re := make([]float64, len(vals))
	for i, v := range vals {
		assert.InDelta(t, 0, imag(v), 1e-8)
		re[i] = real(v)
	}
	sort.Float64s(re)
	assert.Greater(t, re[0], -2*float64(n)-5.0)
	assert.Less(t, re[n-1], -3.0)
	assert.InDelta(t, -2*float64(n)-3.5, re[0], 1)
	assert.InDelta(t, -4.5, re[n-1], 1)
	// The similar symmetric matrix has unit off-diagonals: compare spectra.
	s := mat.NewSymDense(n, nil)
	for i := range n {
		s.SetSym(i, i, m.B[i])
		if i > 0 {
			s.SetSym(i, i-1, 1)
		}
	}
	var es mat.EigenSym
	require.True(t, es.Factorize(s, false))
	sym := es.Values(nil)
	for i := range n {
		assert.InDelta(t, sym[i], re[i], 1e-8)
	}
}

func TestKMSInverse(t *testing.T) {
	const n, rho = 10, 0.5
	m, err := Generate(7, n, 0)
	require.NoError(t, err)
	k := mat.NewDense(n, n, nil)
	for i := range n {
		for j := range n {
			k.Set(i, j, math.Pow(rho, math.Abs(float64(i-j))))
		}
	}
	var p mat.Dense
	p.Mul(dense(m), k)
	for i := range n {
		for j := range n {
			want := 0.0
			if i == j {
				want = 1
			}
			assert.InDelta(t, want, p.At(i, j), 1e-12, "(%d,%d)", i, j)
		}
	}
}

func TestDorr(t *testing.T) {
	// n = 3: h = 1/4, m = 2, theta/h² = 16e-4 =: s.
	m, err := Generate(13, 3, 0)
	require.NoError(t, err)
	s := 1e-4 * 16
	assert.InDelta(t, -s-1, m.C[0], 1e-15)  // row 1: super = -s - (0.5-0.25)·4
	assert.InDelta(t, 2*s+1, m.B[0], 1e-15) // diag = -(sub + super)
	assert.InDelta(t, -s, m.A[1], 1e-15)    // row 2 (= m): sub = -s
	assert.InDelta(t, -s, m.C[1], 1e-15)    //   super = -s - 0
	assert.InDelta(t, 2*s, m.B[1], 1e-15)
	assert.InDelta(t, -s-1, m.A[2], 1e-15) // row 3 (> m): sub = -s + (0.5-0.75)·4
	assert.InDelta(t, 2*s+1, m.B[2], 1e-15)

	for _, n := range []int{64, 513} {
		m, err := Generate(13, n, 0)
		require.NoError(t, err)
		for i := range n {
			assert.LessOrEqual(t, m.A[i], 0.0)
			assert.LessOrEqual(t, m.C[i], 0.0)
			off := math.Abs(m.A[i]) + math.Abs(m.C[i])
			assert.GreaterOrEqual(t, m.B[i], off*(1-1e-15), "row %d not diagonally dominant", i)
		}
		assert.Greater(t, m.B[0], math.Abs(m.C[0])) // strict at the ends
		assert.Greater(t, m.B[n-1], math.Abs(m.A[n-1]))
	}

	// Ill-conditioned even at a modest size.
	m64, err := Generate(13, 64, 0)
	require.NoError(t, err)
	sv := singularValues(dense(m64))
	assert.Greater(t, sv[0]/sv[len(sv)-1], 1e10)
}

func TestClement(t *testing.T) {
	for _, n := range []int{6, 7} {
		m, err := Generate(15, n, 0)
		require.NoError(t, err)
		for i := range n {
			assert.Zero(t, m.B[i])
			if i > 0 {
				assert.Equal(t, float64(n-i), m.A[i]) // n-1, ..., 1
			}
			if i < n-1 {
				assert.Equal(t, float64(i+1), m.C[i]) // 1, ..., n-1
			}
		}
		var eig mat.Eigen
		require.True(t, eig.Factorize(dense(m), mat.EigenNone))
		var got []float64
		for _, v := range eig.Values(nil) {
			assert.InDelta(t, 0, imag(v), 1e-6)
			got = append(got, real(v))
		}
		var want []float64
		for k := n - 1; k >= -(n - 1); k -= 2 {
			want = append(want, float64(k))
		}
		sort.Float64s(got)
		sort.Float64s(want)
		assert.InDeltaSlice(t, want, got, 1e-6, "n=%d", n)
	}
}

func TestConstantTypes(t *testing.T) {
	const n = 9
	cases := map[Type][3]float64{
		17:       {1, 1e8, 1},
		18:       {-1, 4, -1},
		19:       {-1, 4, 1},
		TypeKS16: {1, 1e-8, 1},
	}
	for ty, want := range cases {
		m, err := Generate(ty, n, 5)
		require.NoError(t, err)
		for i := range n {
			assert.Equal(t, want[1], m.B[i], "type %d", ty)
			if i > 0 {
				assert.Equal(t, want[0], m.A[i], "type %d", ty)
			}
			if i < n-1 {
				assert.Equal(t, want[2], m.C[i], "type %d", ty)
			}
		}
	}
}

func TestMulVec(t *testing.T) {
	m, err := Generate(1, 17, 2)
	require.NoError(t, err)
	x := make([]float64, 17)
	for i := range x {
		x[i] = float64(i) - 8.5
	}
	var y mat.VecDense
	y.MulVec(dense(m), mat.NewVecDense(17, slices.Clone(x)))
	assert.InDeltaSlice(t, y.RawVector().Data, m.MulVec(x), 1e-14)
	assert.Panics(t, func() { m.MulVec(x[:3]) })
}
