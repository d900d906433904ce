package route

import (
	"github.com/bandsolve/bandsolve/tridiag"
	"github.com/bandsolve/bandsolve/tuning"
)

// Auto's algorithm order: tridiag.Auto on a GPU tries the algorithms of
// the first row of autoOrders that accepts the problem, in the row's
// order, and runs the first whose kernels take the batch. The partition
// method comes first everywhere: it stages systems through shared memory
// with coalesced loads in any layout. Thomas (one thread a system) is the
// fallback for systems too long for shared memory; only large interleaved
// batches, whose systems fill the GPU one a thread, reach it without the
// reductions of PCR and TPR in between.
//
// H100, FP32 N = 256 interleaved, 2^24 rows: the partition method at 58%
// of the limit against 21% for Thomas (go test -tags cuda -run '^$'
// -bench '^BenchmarkBatch$' ./internal/gpu/tridiaggpu).

// autoRow is a row of Auto's table.
type autoRow struct {
	name string
	// accepts reports whether the row applies to problem p on device d.
	accepts func(d tuning.Device, p Problem) bool
	order   []tridiag.Algorithm
}

// autoOrders is Auto's table, first match wins.
var autoOrders = []autoRow{
	{
		// Interleaved batches of at least 8·32 systems an SM (eight
		// warps an SM at one system a thread): enough for Thomas to fill
		// the GPU.
		name: "large-interleaved",
		accepts: func(d tuning.Device, p Problem) bool {
			return p.interleaved() && p.G >= 8*d.SMs*32
		},
		order: []tridiag.Algorithm{tridiag.Partition, tridiag.Thomas},
	},
	{
		name:    "default",
		accepts: func(tuning.Device, Problem) bool { return true },
		order:   []tridiag.Algorithm{tridiag.Partition, tridiag.PCR, tridiag.TPR, tridiag.Thomas},
	},
}

// interleaved reports whether p's layout is tridiag.Interleaved(G):
// batch stride 1, element stride G.
func (p Problem) interleaved() bool { return p.BatchStride == 1 && p.ElemStride == p.G }

// AutoOrder returns the algorithms tridiag.Auto tries on device d for
// problem p, best first: the first whose GPU kernels take the batch runs
// it. Only p's shape and layout matter (N, G, the strides). The slice is
// the caller's.
func AutoOrder(d tuning.Device, p Problem) []tridiag.Algorithm {
	for _, r := range autoOrders {
		if r.accepts(d, p) {
			return append([]tridiag.Algorithm(nil), r.order...)
		}
	}
	return nil
}
