package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/internal/memguard"
	"github.com/bandsolve/bandsolve/npy"
)

// fuzzMemory caps what a fuzzed command may allocate, so that a declared
// size the memory guard lets through cannot take the machine.
const fuzzMemory = 256 << 20

// npyBytes encodes an array for the seed corpus.
func npyBytes[T npy.Float](shape []int, data []T) []byte {
	var buf bytes.Buffer
	if err := npy.Write(&buf, shape, data); err != nil {
		panic(err)
	}
	return buf.Bytes()
}

// checkOutcome holds what every run of the command must satisfy: an exit
// status of 0, 1 or 2, and a failure told in one line on stderr that
// starts with the command's name.
func checkOutcome(t *testing.T, cmd string, code int, stderr string) {
	t.Helper()
	require.Contains(t, []int{exitOK, exitFail, exitUsage}, code, stderr)
	if code == exitOK {
		return
	}
	lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
	last := lines[len(lines)-1]
	require.True(t, strings.HasPrefix(last, "bandsolve "+cmd+": "), "error line %q", last)
}

// FuzzSolve runs the solve command's whole path (files → headers →
// plan → solve → output) on fuzzed .npy files: d, and one file used for
// a, b and c; mode picks -const or the files, the layout, the algorithm,
// the precision and -cyclic. Whatever the input, the command must end
// with a status and one line, and a success must leave a readable x of
// d's shape in the precision it reports.
func FuzzSolve(f *testing.F) {
	d := npyBytes([]int{2, 4}, []float64{1, 2, 3, 4, 5, 6, 7, 8})
	coef := npyBytes([]int{2, 4}, []float32{4, 4, 4, 4, 4, 4, 4, 4})
	f.Add(d, coef, uint8(0))
	f.Add(d, coef, uint8(1))
	f.Add(npyBytes([]int{5}, []float32{1, 0, -1, 2, 3}), npyBytes([]int{5}, []float32{0, 0, 0, 0, 0}), uint8(0x55))
	f.Add(d, npyBytes([]int{4, 2}, []float64{1, 2, 3, 4, 5, 6, 7, 8}), uint8(0x22))
	f.Add(npyHeader("<f8", 1<<40), coef, uint8(3))
	f.Add([]byte{}, []byte{}, uint8(0xff))
	algorithms := []string{"auto", "thomas", "gtsv", "cr", "pcr", "wangmou", "tpr", "partition"}
	precisions := []string{"auto", "f32", "f64", "auto"}
	defer memguard.SetLimit(memguard.SetLimit(fuzzMemory))
	f.Fuzz(func(t *testing.T, dData, coefData []byte, mode uint8) {
		dir := t.TempDir()
		dPath, cPath, out := filepath.Join(dir, "d.npy"), filepath.Join(dir, "coef.npy"), filepath.Join(dir, "x.npy")
		require.NoError(t, os.WriteFile(dPath, dData, 0o644))
		require.NoError(t, os.WriteFile(cPath, coefData, 0o644))
		args := []string{"solve", "-d", dPath, "-o", out}
		if mode&1 == 0 {
			args = append(args, "-a", cPath, "-b", cPath, "-c", cPath)
		} else {
			args = append(args, "-const", "-1,4,-1")
		}
		if mode&2 != 0 {
			args = append(args, "-layout", "interleaved")
		}
		if mode&4 != 0 {
			args = append(args, "-cyclic")
		}
		args = append(args, "-algorithm", algorithms[int(mode>>3)%len(algorithms)], "-precision", precisions[int(mode>>6)])
		code, _, stderr := runCmd(t, args...)
		checkOutcome(t, "solve", code, stderr)
		if code != exitOK {
			return
		}
		dh, err := npy.ReadHeader(bytes.NewReader(dData))
		require.NoError(t, err, "solved from a d that does not read")
		xh, err := npy.ReadFileHeader(out)
		require.NoError(t, err)
		require.Equal(t, dh.Shape, xh.Shape)
		wantF32 := strings.Contains(stderr, "precision=f32")
		require.Equal(t, wantF32, xh.IsFloat32(), "x's dtype %s against %q", xh.DType, stderr)
		_, _, _, err = npy.ReadAny(bytes.NewReader(mustRead(t, out)))
		require.NoError(t, err)
	})
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}

// FuzzBandedNPY runs banded on a fuzzed (2K+1, N) band file and, when
// mode says so, a fuzzed right-hand side file, with each method.
func FuzzBandedNPY(f *testing.F) {
	band := npyBytes([]int{3, 4}, []float64{0, 1, 1, 1, 4, 4, 4, 4, 1, 1, 1, 0})
	f.Add(band, npyBytes([]int{4}, []float64{1, 2, 3, 4}), uint8(0))
	f.Add(band, []byte{}, uint8(1))
	f.Add(npyBytes([]int{3, 4}, []float32{0, 1, 1, 1, 4, 4, 4, 4, 1, 1, 1, 0}), npyBytes([]int{4}, []float32{1, 2, 3, 4}), uint8(2))
	f.Add(npyBytes([]int{3, 2}, []float64{0, 2, 1, 4, 2, 0}), npyBytes([]int{2}, []float64{1, 1}), uint8(5)) // [[1,2],[2,4]]: singular
	f.Add(npyBytes([]int{1, 3}, []float64{0, 0, 0}), []byte{}, uint8(4))
	f.Add(append(npyHeader("<f8", 3, 1<<30), make([]byte, 64)...), []byte{}, uint8(0))
	methods := []string{"direct", "pivot", "iterative", "direct"}
	defer memguard.SetLimit(memguard.SetLimit(fuzzMemory))
	f.Fuzz(func(t *testing.T, ab, rhs []byte, mode uint8) {
		dir := t.TempDir()
		abPath, rhsPath, out := filepath.Join(dir, "ab.npy"), filepath.Join(dir, "b.npy"), filepath.Join(dir, "x.npy")
		require.NoError(t, os.WriteFile(abPath, ab, 0o644))
		args := []string{"banded", "-npy", abPath, "-o", out, "-method", methods[mode&3], "-maxiter", "50"}
		if mode&4 != 0 {
			require.NoError(t, os.WriteFile(rhsPath, rhs, 0o644))
			args = append(args, "-rhs", rhsPath)
		}
		code, _, stderr := runCmd(t, args...)
		checkOutcome(t, "banded", code, stderr)
		if code != exitOK {
			return
		}
		h, err := npy.ReadHeader(bytes.NewReader(ab))
		require.NoError(t, err)
		xh, err := npy.ReadFileHeader(out)
		require.NoError(t, err)
		require.Equal(t, []int{h.Shape[1]}, xh.Shape)
	})
}
