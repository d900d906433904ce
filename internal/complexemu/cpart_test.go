//go:build cudaemu

package complexemu

import (
	"errors"
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/tridiag"
	"github.com/bandsolve/bandsolve/tridiag/partition"
)

// TestPartitionKernel runs the complex partition kernel on the families
// (with a zero pivot in a chunk, a zero row of the reduced system and an
// infinite right-hand side planted where the batch is large enough), in
// every layout, with array and constant coefficients, one and several
// systems a block, with and without the growth test and the redo flags,
// and requires partition.SolveC's (SolveBoundedC's) bits and rows: the
// row of a failed system in status, or its redo flag with its x untouched.
func TestPartitionKernel(t *testing.T) {
	testPartitionKernel[complex64](t)
	testPartitionKernel[complex128](t)
}

func testPartitionKernel[T tridiag.Complex](t *testing.T) {
	for _, n := range []int{1, 2, 3, 16, 17, 33, 37, 300, 1000, 3000} {
		for _, g := range []int{1, 7, 40} {
			if n*g > 40000 {
				continue
			}
			layouts := map[string]tridiag.Layout{
				"contiguous":  tridiag.Contiguous(n),
				"interleaved": tridiag.Interleaved(g),
				"rows-gaps":   tridiag.Strided(g+3, 1),
				"sys-gaps":    tridiag.Strided(1, n+5),
			}
			for lname, l := range layouts {
				for _, spb := range []int{1, 3} {
					for _, bounded := range []bool{false, true} {
						for _, constant := range []bool{false, true} {
							name := fmt.Sprintf("%T/N=%d/G=%d/%s/spb=%d/bounded=%t/const=%t", T(0), n, g, lname, spb, bounded, constant)
							checkPartitionKernel[T](t, name, tridiag.Shape{N: n, G: g, Layout: l}, spb, bounded, constant)
						}
					}
				}
			}
		}
	}
}

func checkPartitionKernel[T tridiag.Complex](t *testing.T, name string, shape tridiag.Shape, spb int, bounded, constant bool) {
	n, g, l := shape.N, shape.G, shape.Layout
	m := (g-1)*l.BatchStride + (n-1)*l.ElemStride + 1
	r := rand.New(rand.NewPCG(uint64(n), uint64(g)))
	a, b, c, d, x := make([]T, m), make([]T, m), make([]T, m), make([]T, m), make([]T, m)
	for s := range g {
		for i := range n {
			k := l.Index(i, s)
			fa, fb, fc, fd := family(r, s%5, i)
			a[k], b[k], c[k], d[k] = T(fa), T(fb), T(fc), T(fd)
		}
	}
	if g > 2 && n > 40 {
		b[l.Index(17, 2)] = 0                                             // a chunk's pivot
		a[l.Index(33, 1)], b[l.Index(33, 1)], c[l.Index(33, 1)] = 0, 0, 0 // a reduced row
		d[l.Index(5, 0)] = T(complex(math.Inf(1), 0))                     // x not finite
	}
	const untouched = 12345
	for i := range x {
		x[i] = untouched
	}
	k0 := l.Index(0, 0)
	ln := PartitionLaunch[T]{Shape: shape, Systems: spb, D: d, X: x, Constant: constant, Bounded: bounded, Redo: bounded,
		CA: a[k0], CB: b[k0], CC: c[k0]}
	if !constant {
		ln.A, ln.B, ln.C = a, b, c
	}
	status, redo := ln.Run()
	sa, sb, sc, sd, xs := make([]T, n), make([]T, n), make([]T, n), make([]T, n), make([]T, n)
	for s := range g {
		for i := range n {
			k := l.Index(i, s)
			if constant {
				sa[i], sb[i], sc[i] = a[k0], b[k0], c[k0]
			} else {
				sa[i], sb[i], sc[i] = a[k], b[k], c[k]
			}
			sd[i] = d[k]
		}
		var err error
		if bounded {
			err = partition.SolveBoundedC(sa, sb, sc, sd, xs, partition.DefaultChunk(n), nil)
		} else {
			err = partition.SolveC(sa, sb, sc, sd, xs, partition.DefaultChunk(n), nil)
		}
		row := -1
		var pe *tridiag.PivotError
		if errors.As(err, &pe) {
			row = pe.Row
		} else {
			require.NoError(t, err, name)
			for i, v := range xs {
				if cmplx.IsNaN(complex128(v)) || cmplx.IsInf(complex128(v)) {
					row = i
					break
				}
			}
		}
		if bounded {
			require.Equal(t, row >= 0, redo[s] != 0, "%s: system %d (twin's row %d)", name, s, row)
			require.Zero(t, status[s], "%s: system %d", name, s)
		} else {
			require.Equal(t, row, int(status[s])-1, "%s: system %d", name, s)
		}
		for i := range n {
			got := x[l.Index(i, s)]
			switch {
			case bounded && row >= 0:
				require.Equal(t, T(untouched), got, "%s: flagged system %d row %d", name, s, i)
			case row >= 0:
				require.True(t, cmplx.IsNaN(complex128(got)), "%s: failed system %d row %d = %v", name, s, i, got)
			default:
				require.True(t, sameBits(got, xs[i]), "%s: system %d row %d = %v, the twin's %v", name, s, i, got, xs[i])
			}
		}
	}
	require.Equal(t, !bounded && anyNonZero(status[:g]), status[g] != 0, name)
}

func anyNonZero(v []int32) bool {
	for _, c := range v {
		if c != 0 {
			return true
		}
	}
	return false
}
