//go:build cudaemu

package partemu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// Part flags of the segment kernels' mode (SEG_KEEP_A, SEG_KEEP_C,
// SEG_RED_ROWS of segment.cuh), as tridiaggpu.PartPlan passes them.
const (
	keepA   = 4
	keepC   = 8
	redRows = 16
)

// TestPartsMatchWhole cuts interleaved batches at segment boundaries into
// parts and runs each part as tridiaggpu.PartPlan does: Reduce with the
// part flags into its block of the reduced rows (row after row), then
// Expand from the same solution of the reduced rows. Every reduced row
// and every x must equal, bit for bit, those of the whole systems'
// three-pass launch (Reduce, Expand), whose reduced rows are stored system
// after system; both the segment kernel and the lanes segment kernel.
func TestPartsMatchWhole(t *testing.T) {
	for _, c := range []struct {
		m, g, lanes int
		parts       []int // segments a part; the last part's last segment is short by short rows
		short       int
	}{
		{1024, 3, 0, []int{1, 2, 1}, 300},
		{1024, 2, 0, []int{2, 1}, 0},
		{512, 19, 8, []int{1, 1, 2}, 77},
		{512, 16, 16, []int{3, 1}, 500},
	} {
		t.Run(fmt.Sprintf("M=%d G=%d lanes=%d parts=%v", c.m, c.g, c.lanes, c.parts), func(t *testing.T) {
			testPartsF[float64](t, c.m, c.g, c.lanes, c.parts, c.short)
			testPartsF[float32](t, c.m, c.g, c.lanes, c.parts, c.short)
		})
	}
}

func testPartsF[T Float](t *testing.T, m, g, lanes int, segs []int, short int) {
	q := 0
	for _, s := range segs {
		q += s
	}
	n := q*m - short
	r := rand.New(rand.NewPCG(uint64(n), uint64(g)))
	// The whole batch, interleaved: row i of system s at i·G + s.
	A, B, C, D := make([]T, n*g), make([]T, n*g), make([]T, n*g), make([]T, n*g)
	for i := range A {
		A[i], C[i], D[i] = T(r.Float64()*2-1), T(r.Float64()*2-1), T(r.Float64()*2-1)
		B[i] = T(math.Abs(float64(A[i]))+math.Abs(float64(C[i]))+0.5+r.Float64()) * T(1-2*r.IntN(2))
	}
	whole := Plan{N: n, G: g, M: m, ES: int64(g), BS: 1, Lanes: lanes}
	ws := NewWorkspace[T](whole)
	st := make([]int32, g+2)
	x := make([]T, n*g)
	k := Coeffs[T]{A: A, B: B, C: C}
	require.NoError(t, Launch(whole, Reduce, k, D, x, st, ws, Options{Seed: 1}))
	// A solution of the reduced rows to expand from: any values serve.
	for i := range ws.XR {
		ws.XR[i] = T(r.Float64()*2 - 1)
	}
	require.NoError(t, Launch(whole, Expand, k, D, x, st, ws, Options{Seed: 2}))

	// The parts, reduced rows row after row: reduced row j of system s at
	// j·G + s.
	R := 2 * q
	red := [4][]T{make([]T, R*g), make([]T, R*g), make([]T, R*g), make([]T, R*g)}
	xr := make([]T, R*g)
	for s := range g {
		for j := range R {
			xr[j*g+s] = ws.XR[s*R+j]
		}
	}
	xp := make([]T, n*g)
	row, rr := 0, 0
	for pi, sp := range segs {
		rows := min(sp*m, n-row)
		flags := redRows
		if pi > 0 {
			flags |= keepA
		}
		if pi < len(segs)-1 {
			flags |= keepC
		}
		part := Plan{N: rows, G: g, M: m, ES: int64(g), BS: 1, Lanes: lanes}
		pws := NewWorkspace[T](part)
		off, end := row*g, (row+rows)*g
		pk := Coeffs[T]{A: A[off:end], B: B[off:end], C: C[off:end]}
		at := func(s []T) []T { return s[rr*g : (rr+2*sp)*g] }
		pws.RA, pws.RB, pws.RC, pws.RD, pws.XR = at(red[0]), at(red[1]), at(red[2]), at(red[3]), at(xr)
		pst := make([]int32, g+2)
		require.NoError(t, Launch(part, Reduce|flags, pk, D[off:end], xp[off:end], pst, pws, Options{Seed: 3}))
		require.NoError(t, Launch(part, Expand|flags, pk, D[off:end], xp[off:end], pst, pws, Options{Seed: 4}))
		require.Equal(t, int32(0), pst[g], "part %d status flag", pi)
		row, rr = row+rows, rr+2*sp
	}
	for i, w := range [][]T{ws.RA, ws.RB, ws.RC, ws.RD} {
		got := make([]T, R*g)
		for s := range g {
			for j := range R {
				got[s*R+j] = red[i][j*g+s]
			}
		}
		sameBits(t, fmt.Sprintf("%T reduced array %c", T(0), "abcd"[i]), got, w, false)
	}
	sameBits(t, fmt.Sprintf("%T x", T(0)), xp, x, false)
}
