//go:build cuda

package ilugpu

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/ilu"
	"github.com/bandsolve/bandsolve/internal/gpu/gputest"
	"github.com/bandsolve/bandsolve/krylov/problems"
	"github.com/bandsolve/bandsolve/sparse"
)

var dev *cuda.Device

func TestMain(m *testing.M) {
	dev = gputest.Open("ilugpu")
	gputest.Run(m, dev)
}

type problem struct {
	name string
	a    *sparse.CSR
	spd  bool // IC(0) applies
}

func suite(t *testing.T) []problem {
	gl, err := problems.GraphLaplacian(3001, 0.01, 7)
	require.NoError(t, err)
	return []problem{
		{"poisson-2d-37", problems.Poisson2D(37), true},
		// Levels of up to 2,700 rows: wide launches and chains.
		{"poisson-3d-60", problems.Poisson3D(60), true},
		{"anisotropic-2d-41", problems.Anisotropic2D(41, 1e-3, 100, 3), true},
		{"convection-diffusion-45", problems.ConvectionDiffusion2D(45, 100), false},
		{"graph-laplacian-3001", gl, true},
	}
}

// gpuFactors factors a on the GPU and returns the values and the shift.
func gpuFactors(t *testing.T, a *sparse.CSR, kind ilu.Kind, opts ilu.Options) ([]float64, float64, error) {
	pat, err := ilu.Analyze(a, kind)
	require.NoError(t, err)
	f, err := New(dev, pat, opts)
	require.NoError(t, err)
	defer func() { require.NoError(t, f.Close()) }()
	require.Equal(t, programmed, f.Programmed())
	if err := f.Factor(a.Val); err != nil {
		return nil, 0, err
	}
	v, err := f.Download()
	require.NoError(t, err)
	return v, f.Shift(), nil
}

func cpuFactor(kind ilu.Kind) func(*sparse.CSR, ilu.Options) (*ilu.Factors, error) {
	if kind == ilu.KindIC0 {
		return ilu.IC0
	}
	return ilu.ILU0
}

// TestFactorsBitForBit: the GPU's ILU(0) and IC(0) factors are the CPU's
// bit for bit, programmed and by merge walks, with chains and wide levels
// mixed, every level a launch, and everything in one chain.
func TestFactorsBitForBit(t *testing.T) {
	defer func(c int, p bool) { chainRows, programmed = c, p }(chainRows, programmed)
	for _, programmed = range []bool{true, false} {
		testFactorsBitForBit(t)
	}
}

func testFactorsBitForBit(t *testing.T) {
	for _, pr := range suite(t) {
		for _, kind := range []ilu.Kind{ilu.KindILU0, ilu.KindIC0} {
			if kind == ilu.KindIC0 && !pr.spd {
				continue
			}
			want, err := cpuFactor(kind)(pr.a, ilu.Options{})
			require.NoError(t, err, "%s %s", pr.name, kind)
			for _, rows := range []int{DefaultChainRows, -1, math.MaxInt32} {
				if rows == -1 && pr.a.N > 100000 {
					continue // one launch a level: thousands of launches
				}
				chainRows = rows
				got, shift, err := gpuFactors(t, pr.a, kind, ilu.Options{})
				require.NoError(t, err, "%s %s chain rows %d programmed %t", pr.name, kind, rows, programmed)
				require.Zero(t, shift)
				wantVal := want.LU().Val
				require.Len(t, got, len(wantVal))
				for k := range got {
					if math.Float64bits(got[k]) != math.Float64bits(wantVal[k]) {
						require.Failf(t, "factors differ", "%s %s chain rows %d programmed %t: entry %d: GPU %v, CPU %v",
							pr.name, kind, rows, programmed, k, got[k], wantVal[k])
					}
				}
			}
		}
	}
}

// singular returns the n×n matrix 4·I with the blocks [[1, b], [b, 1]]
// on rows r, r+1 and on rows n−2, n−1 (r+1 < n−2): with b = 1 ILU(0)
// meets zero pivots on rows r+1 and n−1, both on the second level, and
// must report r+1.
func singular(n, r int, b float64) *sparse.CSR {
	c := sparse.NewCOO(n, n, n+4)
	for i := range n {
		c.Add(i, i, 4)
	}
	for _, k := range []int{r, n - 2} {
		c.Add(k, k, -3) // duplicates add up: 1 on the diagonal
		c.Add(k+1, k+1, -3)
		c.Add(k, k+1, b)
		c.Add(k+1, k, b)
	}
	a, err := c.ToCSR()
	if err != nil {
		panic(err)
	}
	return a
}

// TestPivotErrorsAreTheCPUs: a zero pivot (ILU(0)), a negative one
// (IC(0)) and a NaN value give the CPU's error, word for word; AutoShift
// finds the CPU's shift and factors.
func TestPivotErrorsAreTheCPUs(t *testing.T) {
	nan := singular(300, 40, 0.5)
	for k := range nan.Val {
		if nan.Val[k] == 0.5 { // (40, 41): row 41 fails
			nan.Val[k] = math.NaN()
			break
		}
	}
	for _, tc := range []struct {
		name string
		a    *sparse.CSR
		kind ilu.Kind
		want error
	}{
		{"ilu-zero-pivot", singular(300, 123, 1), ilu.KindILU0, ilu.ErrZeroPivot},
		{"ic-negative-pivot", singular(300, 77, 2), ilu.KindIC0, ilu.ErrNotPositive},
		{"ilu-nan", nan, ilu.KindILU0, ilu.ErrZeroPivot},
	} {
		_, cpuErr := cpuFactor(tc.kind)(tc.a, ilu.Options{})
		require.ErrorIs(t, cpuErr, tc.want, tc.name)
		_, _, gpuErr := gpuFactors(t, tc.a, tc.kind, ilu.Options{})
		require.ErrorIs(t, gpuErr, tc.want, tc.name)
		require.Equal(t, cpuErr.Error(), gpuErr.Error(), tc.name)

		opts := ilu.Options{AutoShift: true}
		want, cpuErr := cpuFactor(tc.kind)(tc.a, opts)
		got, shift, gpuErr := gpuFactors(t, tc.a, tc.kind, opts)
		if cpuErr != nil {
			require.Error(t, gpuErr, tc.name)
			require.Equal(t, cpuErr.Error(), gpuErr.Error(), tc.name)
			continue
		}
		require.NoError(t, gpuErr, tc.name)
		require.Positive(t, shift, tc.name)
		require.Equal(t, want.Shift(), shift, tc.name)
		for k, v := range want.LU().Val {
			require.Equal(t, math.Float64bits(v), math.Float64bits(got[k]), "%s entry %d", tc.name, k)
		}
	}
}

// TestRefactorAndShapes: the factorization is reusable with new values of
// the same pattern, values on the device give the same factors, and a
// wrong number of values is refused.
func TestRefactorAndShapes(t *testing.T) {
	a := problems.ConvectionDiffusion2D(30, 10)
	pat, err := ilu.Analyze(a, ilu.KindILU0)
	require.NoError(t, err)
	f, err := New(dev, pat, ilu.Options{Shift: 0.01})
	require.NoError(t, err)
	defer func() { require.NoError(t, f.Close()) }()
	require.ErrorIs(t, f.Factor(a.Val[1:]), ilu.ErrShape)
	_, err = f.Download()
	require.Error(t, err)

	b := a.Clone()
	for k := range b.Val {
		b.Val[k] *= 1 + 0.001*float64(k%7)
	}
	for _, m := range []*sparse.CSR{a, b} {
		want, err := ilu.ILU0(m, ilu.Options{Shift: 0.01})
		require.NoError(t, err)
		require.NoError(t, f.Factor(m.Val))
		got, err := f.Download()
		require.NoError(t, err)
		require.Equal(t, want.LU().Val, got)

		dv, err := cuda.Upload(dev, m.Val)
		require.NoError(t, err)
		require.NoError(t, f.FactorDevice(dv))
		require.NoError(t, dv.Free())
		got, err = f.Download()
		require.NoError(t, err)
		require.Equal(t, want.LU().Val, got)
	}
}
