package main

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/npy"
)

// withRHS writes k right-hand sides for bt's systems as one .npy file
// with a last axis of k (the shape of the coefficients, then k), and
// returns its path and the columns, each in bt's layout.
func withRHS(t *testing.T, bt *batch, dir string, oneD bool, k int, seed uint64) (string, [][]float64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 11))
	L := bt.n * bt.g
	cols := make([][]float64, k)
	data := make([]float64, L*k)
	for r := range cols {
		cols[r] = make([]float64, L)
		for e := range cols[r] {
			v := 2*rng.Float64() - 1
			cols[r][e] = v
			data[e*k+r] = v
		}
	}
	path := filepath.Join(dir, "d3.npy")
	require.NoError(t, npy.WriteFile(path, append(bt.shape(oneD), k), data))
	return path, cols
}

// rhsColumn returns column r of x, read in the shape of the coefficients
// followed by k.
func rhsColumn(x []float64, k, r int) []float64 {
	out := make([]float64, len(x)/k)
	for e := range out {
		out[e] = x[e*k+r]
	}
	return out
}

// solveArgs replaces the -d of files by d.
func solveArgs(files []string, d string, extra ...string) []string {
	var args []string
	for i := 0; i < len(files); i += 2 {
		if files[i] == "-d" {
			args = append(args, "-d", d)
		} else {
			args = append(args, files[i], files[i+1])
		}
	}
	return append(args, extra...)
}

// TestSolveManyRHS: a d with one more axis than the coefficients holds
// several right-hand sides, solved with one factorization: x has d's
// shape, every column solves its system (the residual), and matches the
// command's solve of that column alone (bit for bit with gtsv, whose
// factored solve is gtsv's; within rounding for thomas's factors); the
// summary says nrhs. Every layout, 1-D, cyclic, -const.
func TestSolveManyRHS(t *testing.T) {
	cases := []struct {
		name        string
		n, g        int
		oneD        bool
		interleaved bool
		extra       []string
		exact       bool
	}{
		{"contiguous", 33, 5, false, false, nil, false},
		{"gtsv", 33, 5, false, false, []string{"-algorithm", "gtsv"}, true},
		{"thomas f32", 40, 3, false, false, []string{"-algorithm", "thomas", "-precision", "f32"}, false},
		{"interleaved", 20, 4, false, true, []string{"-layout", "interleaved"}, false},
		{"1-D", 50, 1, true, false, nil, false},
		{"cyclic", 30, 3, false, false, []string{"-cyclic", "-algorithm", "gtsv"}, true},
		{"pcr column by column", 32, 3, false, false, []string{"-algorithm", "pcr"}, true},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			bt := randomBatch(tc.n, tc.g, tc.interleaved, uint64(100+i))
			files := bt.write(t, dir, tc.oneD)
			const k = 3
			d3, cols := withRHS(t, bt, dir, tc.oneD, k, uint64(i))
			out := filepath.Join(dir, "x.npy")
			code, _, errOut := runCmd(t, append([]string{"solve", "-o", out}, solveArgs(files, d3, tc.extra...)...)...)
			require.Equal(t, 0, code, errOut)
			assert.Contains(t, errOut, " nrhs=3 ")
			shape, x := readX(t, out)
			assert.Equal(t, append(bt.shape(tc.oneD), k), shape)
			cyclic := strings.Contains(tc.name, "cyclic")
			tol := 1e-12
			if strings.Contains(tc.name, "f32") {
				tol = 1e-4
			}
			for r := range k {
				xr := rhsColumn(x, k, r)
				col := *bt
				col.d = cols[r]
				assert.Less(t, col.residual(xr, cyclic, nil), tol, "column %d", r)
				// The same column alone.
				dr := filepath.Join(dir, "dr.npy")
				require.NoError(t, npy.WriteFile(dr, bt.shape(tc.oneD), cols[r]))
				xOne := filepath.Join(dir, "x1.npy")
				code, _, errOut := runCmd(t, append([]string{"solve", "-o", xOne}, solveArgs(files, dr, tc.extra...)...)...)
				require.Equal(t, 0, code, errOut)
				assert.NotContains(t, errOut, "nrhs=")
				_, want := readX(t, xOne)
				if tc.exact {
					assert.Equal(t, want, xr, "column %d", r)
				} else {
					assert.InDeltaSlice(t, want, xr, 10*tol, "column %d", r)
				}
			}
		})
	}
	// -const: d of (G, N, K).
	dir := t.TempDir()
	bt := randomBatch(25, 4, false, 7)
	for k := range bt.a {
		bt.a[k], bt.b[k], bt.c[k] = -1, 4, -1.5
	}
	d3, cols := withRHS(t, bt, dir, false, 2, 9)
	out := filepath.Join(dir, "x.npy")
	code, _, errOut := runCmd(t, "solve", "-const", "-1, 4, -1.5", "-d", d3, "-o", out)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, errOut, "N=25 G=4 nrhs=2 ")
	shape, x := readX(t, out)
	assert.Equal(t, []int{4, 25, 2}, shape)
	for r := range 2 {
		col := *bt
		col.d = cols[r]
		assert.Less(t, col.residual(rhsColumn(x, 2, r), false, []float64{-1, 4, -1.5}), 1e-12)
	}
}

// TestSolveManyRHSFailures: with several right-hand sides a system that
// breaks down is reported once, NaN in all its columns, x written; a
// system that fails the accuracy check in its columns fails the command
// without writing x; shapes that fit neither a batch nor a batch with
// right-hand sides are named.
func TestSolveManyRHSFailures(t *testing.T) {
	dir := t.TempDir()
	bt := randomBatch(8, 2, false, 5)
	bt.b[bt.idx(0, 1)] = 0
	files := bt.write(t, dir, false)
	d3, cols := withRHS(t, bt, dir, false, 4, 3)
	out := filepath.Join(dir, "x.npy")
	code, _, errOut := runCmd(t, append([]string{"solve", "-o", out}, solveArgs(files, d3, "-algorithm", "thomas")...)...)
	assert.Equal(t, exitFail, code)
	assert.Contains(t, errOut, "1 of 2 systems failed; system 1, row 0: zero pivot at row 0")
	assert.Contains(t, errOut, "NaN")
	_, x := readX(t, out)
	for r := range 4 {
		xr := rhsColumn(x, 4, r)
		sys0 := &batch{n: 8, g: 1, a: bt.a[:8], b: bt.b[:8], c: bt.c[:8], d: cols[r][:8]}
		assert.Less(t, sys0.residual(xr[:8], false, nil), 1e-12)
		for _, v := range xr[8:] {
			assert.True(t, math.IsNaN(v))
		}
	}
	// Auto pivots for that system.
	code, _, errOut = runCmd(t, append([]string{"solve", "-o", out}, solveArgs(files, d3)...)...)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, errOut, "algorithm=auto (thomas, gtsv for the systems that fail its pivot growth test or break down; last solve: gtsv for 1 of 2 systems)")

	// tridiag(1, 1e−8, 1) without pivoting fails the accuracy check.
	tiny := randomBatch(512, 1, false, 5)
	dTiny := filepath.Join(dir, "tiny.npy")
	data := make([]float64, 512*2)
	for i := range data {
		data[i] = tiny.d[i/2]
	}
	require.NoError(t, npy.WriteFile(dTiny, []int{1, 512, 2}, data))
	require.NoError(t, os.Remove(out))
	code, _, errOut = runCmd(t, "solve", "-const", "1,1e-8,1", "-d", dTiny, "-o", out, "-pivoting", "never")
	assert.Equal(t, exitFail, code, errOut)
	assert.Contains(t, errOut, "accuracy check failed for 1 of 1 systems (system 0): backward error")
	assert.NoFileExists(t, out)
	code, _, errOut = runCmd(t, "solve", "-const", "1,1e-8,1", "-d", dTiny, "-o", out)
	require.Equal(t, 0, code, errOut)

	// Shapes.
	wide := filepath.Join(dir, "wide.npy")
	require.NoError(t, npy.WriteFile(wide, []int{2, 8, 3}, make([]float64, 48)))
	narrow := filepath.Join(dir, "narrow.npy")
	require.NoError(t, npy.WriteFile(narrow, []int{2, 7}, make([]float64, 14)))
	withC := solveArgs(files, wide)
	for i := range withC {
		if withC[i] == "-c" {
			withC[i+1] = narrow
		}
	}
	code, _, errOut = runCmd(t, append([]string{"solve", "-o", out}, withC...)...)
	assert.Equal(t, exitFail, code)
	assert.Contains(t, errOut, "narrow.npy: shape (2, 7) does not match the shape (2, 8) of the systems in "+wide+" (-d, with 3 right-hand sides in its last axis)")
	none := filepath.Join(dir, "none.npy")
	require.NoError(t, npy.WriteFile(none, []int{2, 8, 0}, []float64{}))
	code, _, errOut = runCmd(t, append([]string{"solve", "-o", out}, solveArgs(files, none)...)...)
	assert.Equal(t, exitFail, code)
	assert.Contains(t, errOut, "none.npy: shape (2, 8, 0) holds no right-hand side in its last axis")
	four := filepath.Join(dir, "four.npy")
	require.NoError(t, npy.WriteFile(four, []int{2, 8, 1, 1}, make([]float64, 16)))
	code, _, errOut = runCmd(t, append([]string{"solve", "-o", out}, solveArgs(files, four)...)...)
	assert.Equal(t, exitFail, code)
	assert.Contains(t, errOut, "four.npy: shape (2, 8, 1, 1) has 4 dimensions")
}

// TestSolveSPD: -spd solves symmetric positive definite systems by ldlt
// from -b and -c (and -a when given, which must be c shifted), as
// -algorithm ldlt does, in every layout, cyclic, float32, -const, and
// with several right-hand sides; a system that is not positive definite
// is named with its row; the flags that contradict -spd are refused.
func TestSolveSPD(t *testing.T) {
	for i, tc := range []struct {
		name        string
		interleaved bool
		extra       []string
		tol         float64
	}{
		{"contiguous", false, nil, 1e-12},
		{"interleaved", true, []string{"-layout", "interleaved"}, 1e-12},
		{"cyclic", false, []string{"-cyclic"}, 1e-12},
		{"f32", false, []string{"-precision", "f32"}, 1e-4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			cyclic := strings.Contains(tc.name, "cyclic")
			bt := randomBatch(30, 4, tc.interleaved, uint64(200+i)).symmetric(cyclic)
			files := bt.write(t, dir, false)
			noA := files[2:] // -b, -c, -d
			out := filepath.Join(dir, "x.npy")
			code, _, errOut := runCmd(t, append(append([]string{"solve", "-o", out, "-spd"}, noA...), tc.extra...)...)
			require.Equal(t, 0, code, errOut)
			assert.Contains(t, errOut, " algorithm=ldlt ")
			_, x := readX(t, out)
			assert.Less(t, bt.residual(x, cyclic, nil), tc.tol)
			for _, args := range [][]string{
				append([]string{"-spd"}, files...),                     // -a given, symmetric
				append([]string{"-algorithm", "ldlt"}, files...),       // the same algorithm by name
				append([]string{"-algorithm", "ldlt"}, noA...),         // without -a
				append([]string{"-spd", "-algorithm", "ldlt"}, noA...), // both
			} {
				x2 := filepath.Join(dir, "x2.npy")
				code, _, errOut := runCmd(t, append(append([]string{"solve", "-o", x2}, args...), tc.extra...)...)
				require.Equal(t, 0, code, "%v: %s", args, errOut)
				_, got := readX(t, x2)
				assert.Equal(t, x, got, "%v", args)
			}
			// Several right-hand sides.
			d3, cols := withRHS(t, bt, dir, false, 2, 5)
			code, _, errOut = runCmd(t, append(append([]string{"solve", "-o", out, "-spd"}, solveArgs(noA, d3)...), tc.extra...)...)
			require.Equal(t, 0, code, errOut)
			assert.Contains(t, errOut, " nrhs=2 ")
			assert.Contains(t, errOut, " algorithm=ldlt precision=")
			_, x = readX(t, out)
			for r := range 2 {
				col := *bt
				col.d = cols[r]
				assert.Less(t, col.residual(rhsColumn(x, 2, r), cyclic, nil), tc.tol)
			}
		})
	}

	dir := t.TempDir()
	bt := randomBatch(6, 3, false, 9).symmetric(false)
	bt.b[bt.idx(2, 1)] = -1 // system 1 is indefinite from row 2 on
	files := bt.write(t, dir, false)
	out := filepath.Join(dir, "x.npy")
	code, _, errOut := runCmd(t, append([]string{"solve", "-o", out, "-spd"}, files...)...)
	assert.Equal(t, exitFail, code)
	assert.Contains(t, errOut, "1 of 3 systems failed; system 1, row 2: not positive definite at row 2")
	_, x := readX(t, out)
	assert.True(t, math.IsNaN(x[bt.idx(0, 1)]))
	assert.False(t, math.IsNaN(x[bt.idx(0, 0)]))

	// -a that is not c shifted.
	bt.b[bt.idx(2, 1)] = 4
	bt.a[bt.idx(3, 2)] += 0.5
	files = bt.write(t, dir, false)
	code, _, errOut = runCmd(t, append([]string{"solve", "-o", out, "-spd"}, files...)...)
	assert.Equal(t, exitFail, code)
	assert.Contains(t, errOut, "a.npy: the systems are not symmetric: a of system 2, row 3 is")
	assert.Contains(t, errOut, "(-spd takes a[i] = c[i−1]; leave -a out to take it so)")
	code, _, errOut = runCmd(t, append([]string{"solve", "-o", out, "-spd"}, files[2:]...)...)
	assert.Equal(t, 0, code, errOut)

	// -const.
	dPath := filepath.Join(dir, "d.npy")
	code, _, errOut = runCmd(t, "solve", "-spd", "-const", "-1, 3, -1", "-d", dPath, "-o", out)
	require.Equal(t, 0, code, errOut)
	_, x = readX(t, out)
	assert.Less(t, bt.residual(x, false, []float64{-1, 3, -1}), 1e-12)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-spd", "-const", "-1, 3, -2"}, `-const "-1, 3, -2" with ldlt: the sub-diagonal -1 is not the super-diagonal -2 (a symmetric matrix has a = c)`},
		{[]string{"-spd", "-algorithm", "gtsv", "-const", "-1, 3, -1"}, "-spd solves by ldlt: it does not combine with -algorithm gtsv"},
		{[]string{"-spd", "-pivoting", "always", "-const", "-1, 3, -1"}, "-pivoting always with -algorithm ldlt, which does not pivot"},
		{[]string{"-spd", "-b", files[3]}, "missing -c (give -b and -c, or -const \"c,b,c\")"},
	} {
		code, _, errOut := runCmd(t, append(append([]string{"solve", "-o", out}, tc.args...), "-d", dPath)...)
		assert.Equal(t, exitUsage, code, "%v: %s", tc.args, errOut)
		assert.Contains(t, errOut, tc.want, "%v", tc.args)
	}
}
