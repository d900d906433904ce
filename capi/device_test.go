//go:build cuda

package main

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/gpu"
	"github.com/bandsolve/bandsolve/tridiag"
)

// TestSolveBandedDevice: bandsolve_solve_banded_device's solve
// (solveBandedDevice) on device buffers against the CPU's gbsv on host
// copies (solveBandedSlices): bandwidths equal and not (padded to K),
// diagonal systems, bands too wide for the GPU kernel and n = 1 (solved
// on the host), several right-hand sides, in place, on the legacy
// default stream and on a non-blocking one, with a singular system and
// one with a NaN in b in the batch.
func TestSolveBandedDevice(t *testing.T) {
	t.Run("float32", testSolveBandedDevice[float32])
	t.Run("float64", testSolveBandedDevice[float64])
}

func testSolveBandedDevice[T tridiag.Float](t *testing.T) {
	dev, err := openDevice(0)
	require.NoError(t, err)
	s, err := dev.NewStream()
	require.NoError(t, err)
	defer s.Close()
	r := rand.New(rand.NewPCG(5, 6))
	for _, c := range []struct{ n, kl, ku, g, nrhs int }{
		{9, 1, 1, 5, 1},
		{10, 2, 1, 6, 2},
		{12, 0, 3, 4, 3},
		{12, 3, 0, 4, 1},
		{40, 8, 8, 70, 2},
		{30, 2, 7, 33, 1},
		{7, 0, 0, 5, 2},
		{1, 0, 0, 4, 2},      // n = 1: on the host
		{50, 9, 4, 6, 2},     // K > MaxBatchK: on the host
		{20, 1, 1, 1, 1},     // one system
		{300, 4, 2, 1000, 1}, // a batch over several blocks
		{1000, 2, 2, 3, 4},   // long systems
		{64, 10, 10, 4, 1},   // wide: on the host
		{33, gpu.MaxBatchK, 0, 9, 2},
	} {
		for _, inPlace := range []bool{false, true} {
			for _, onStream := range []bool{false, true} {
				what := fmt.Sprintf("N=%d KL=%d KU=%d G=%d nrhs=%d in place %v stream %v", c.n, c.kl, c.ku, c.g, c.nrhs, inPlace, onStream)
				sh := bandShape{n: c.n, kl: c.kl, ku: c.ku, g: c.g, nrhs: c.nrhs}
				ab, b := bandedBatch[T](r, sh)
				want := make([]T, len(b))
				wantErr := solveBandedSlices(sh, ab, b, want, true)
				dab, err := cuda.Upload(dev, ab)
				require.NoError(t, err, what)
				db, err := cuda.Upload(dev, b)
				require.NoError(t, err, what)
				dx := db
				if !inPlace {
					dx, err = cuda.Alloc[T](dev, len(b))
					require.NoError(t, err, what)
				}
				var h uintptr
				if onStream {
					h = streamHandle(s)
				}
				gotErr := solveBandedDevice(0, isF64[T](), sh, bandPointers{ab: uint64(dab.Ptr()), b: uint64(db.Ptr()), x: uint64(dx.Ptr()), stream: h})
				require.Equal(t, statusOf(wantErr), statusOf(gotErr), "%s: %v / %v", what, wantErr, gotErr)
				var wbe, gbe *tridiag.BatchError
				if errors.As(wantErr, &wbe) {
					require.ErrorAs(t, gotErr, &gbe, what)
					ws, gs := wbe.Status(), gbe.Status()
					require.Len(t, gs, len(ws), what)
					for i := range ws {
						// A NaN in b: the CPU names its row, the GPU the
						// first row of x that is not finite.
						assert.Equal(t, ws[i] != 0, gs[i] != 0, "%s: info[%d] = %d, CPU %d", what, i, gs[i], ws[i])
					}
				}
				got := make([]T, len(b))
				require.NoError(t, dx.CopyTo(got), what)
				for i := range want {
					if math.IsNaN(float64(want[i])) {
						require.True(t, math.IsNaN(float64(got[i])), "%s: x[%d] = %v, want NaN", what, i, got[i])
						continue
					}
					// The same operations: equal values.
					require.True(t, want[i] == got[i], "%s: x[%d] = %v, CPU %v", what, i, got[i], want[i])
				}
				back := make([]T, len(ab))
				require.NoError(t, dab.CopyTo(back), what)
				for i := range ab {
					require.Equal(t, math.Float64bits(float64(ab[i])), math.Float64bits(float64(back[i])), "%s: ab[%d] is only read", what, i)
				}
				require.NoError(t, dab.Free())
				require.NoError(t, db.Free())
				if !inPlace {
					require.NoError(t, dx.Free())
				}
			}
		}
	}
	assert.LessOrEqual(t, len(bandPool), bandPoolSize, "the idle plans kept")
}

// bandedBatch draws a batch of bandsolve_solve_banded's storage: entries
// from U(−1, 1) and NaN in the slots outside the matrix (never read), a
// weak diagonal (the factorization interchanges rows), with system 1
// singular (a zero column) and a NaN in b of system 2 when the batch has
// them.
func bandedBatch[T tridiag.Float](r *rand.Rand, s bandShape) (ab, b []T) {
	rows := s.kl + s.ku + 1
	ab = make([]T, rows*s.n*s.g)
	for i := range ab {
		row, j := i/s.n%rows, i%s.n
		if d := row - s.ku; j+d < 0 || j+d >= s.n {
			ab[i] = T(math.NaN())
			continue
		}
		ab[i] = T(2*r.Float64() - 1)
	}
	// Each diagonal entry ±0.3 times the rest of its row: pivoting
	// interchanges rows at most steps, and the solutions stay far from
	// overflow in float32.
	for sys := range s.g {
		m := ab[sys*rows*s.n : (sys+1)*rows*s.n]
		for i := range s.n {
			var off float64
			for j := max(0, i-s.kl); j <= min(s.n-1, i+s.ku); j++ {
				if j != i {
					off += math.Abs(float64(m[(s.ku+i-j)*s.n+j]))
				}
			}
			v := 0.3 * off
			if off == 0 {
				v = 1
			}
			if r.IntN(2) == 0 {
				v = -v
			}
			m[s.ku*s.n+i] = T(v)
		}
	}
	b = make([]T, s.n*s.nrhs*s.g)
	for i := range b {
		b[i] = T(2*r.Float64() - 1)
	}
	if s.g > 1 {
		c := s.n / 2
		for row := range rows {
			ab[1*rows*s.n+row*s.n+c] = 0
		}
	}
	if s.g > 2 {
		b[2*s.n*s.nrhs+(s.n-1)*s.nrhs] = T(math.NaN())
	}
	return ab, b
}

// streamHandle is a stream's CUstream handle.
func streamHandle(s *cuda.Stream) uintptr {
	h := s.Handle()
	return *(*uintptr)(unsafe.Pointer(&h))
}

// TestSolveBandedDeviceErrors: buffers the GPU cannot take fail with
// BANDSOLVE_ERR_ARGUMENT before anything is solved.
func TestSolveBandedDeviceErrors(t *testing.T) {
	dev, err := openDevice(0)
	require.NoError(t, err)
	buf, err := cuda.Alloc[float64](dev, 64)
	require.NoError(t, err)
	defer buf.Free()
	sh := bandShape{n: 4, kl: 1, ku: 1, g: 2, nrhs: 1}
	p := uint64(buf.Ptr())
	err = solveBandedDevice(0, true, sh, bandPointers{ab: p + 4, b: p, x: p})
	assert.Equal(t, statusArgument, statusOf(err), "a misaligned ab: %v", err)
	assert.Contains(t, fmt.Sprint(err), "ab")
}
