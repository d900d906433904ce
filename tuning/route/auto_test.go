package route

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/bandsolve/bandsolve/tridiag"
	"github.com/bandsolve/bandsolve/tuning"
)

// TestAutoOrder pins Auto's algorithm order: the partition method first,
// then PCR, TPR and Thomas; the partition method and Thomas alone for
// interleaved batches of at least 8·32 systems an SM (33792 on an H100,
// 4096 on a GTX 980), whatever the system length.
func TestAutoOrder(t *testing.T) {
	all := []tridiag.Algorithm{tridiag.Partition, tridiag.PCR, tridiag.TPR, tridiag.Thomas}
	large := []tridiag.Algorithm{tridiag.Partition, tridiag.Thomas}
	interleaved := func(n, g int) Problem {
		l := tridiag.Interleaved(g)
		return Problem{N: n, G: g, Elem: 4, ElemStride: l.ElemStride, BatchStride: l.BatchStride}
	}
	contiguous := func(n, g int) Problem {
		l := tridiag.Contiguous(n)
		return Problem{N: n, G: g, Elem: 8, ElemStride: l.ElemStride, BatchStride: l.BatchStride}
	}
	cases := []struct {
		d    tuning.Device
		p    Problem
		want []tridiag.Algorithm
	}{
		{tuning.H100, interleaved(256, 33792), large},
		{tuning.H100, interleaved(256, 33791), all},
		{tuning.H100, interleaved(1<<20, 1<<16), large},
		{tuning.H100, contiguous(256, 1<<16), all},
		{tuning.H100, contiguous(1, 1<<20), all},
		// Batch stride 1 but rows further apart than G: not tridiag.Interleaved(G).
		{tuning.H100, Problem{N: 256, G: 1 << 16, Elem: 4, ElemStride: 1<<16 + 1, BatchStride: 1}, all},
		{tuning.GTX980, interleaved(64, 4096), large},
		{tuning.GTX980, interleaved(64, 4095), all},
		{tuning.H200, interleaved(4096, 33792), large},
	}
	for _, c := range cases {
		name := fmt.Sprintf("%s N=%d G=%d strides %d/%d", c.d.Name, c.p.N, c.p.G, c.p.ElemStride, c.p.BatchStride)
		got := AutoOrder(c.d, c.p)
		assert.Equal(t, c.want, got, name)
		if len(got) > 0 {
			got[0] = tridiag.Thomas // the caller's copy
			assert.Equal(t, c.want, AutoOrder(c.d, c.p), name)
		}
	}
}
