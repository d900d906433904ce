package sptrsv

import (
	"context"
	"fmt"
	"sync/atomic"
)

// SolveSyncFreeCSR solves T x = b synchronization-free on the rows of the
// triangle (CSR), the CPU twin of the GPU's row-wise kernel: the workers
// take the rows in the order of the dependencies (ascending for Lower,
// descending for Upper) from a ticket counter; for each entry of its row a
// worker waits until the row it depends on is marked solved, yielding
// with runtime.Gosched while it waits, and subtracts its term; then it
// writes x[i] and marks row i solved. The terms are taken in the order of
// the row's columns, as SolveSequential takes them, so x is
// SolveSequential's, bit for bit. No wait lasts forever: every row with a
// smaller ticket has been taken by a running worker and waits only on rows
// with smaller tickets still. x may be b. It returns ctx's error when ctx
// is done before the solve ends.
func SolveSyncFreeCSR[T Float](ctx context.Context, an *Analysis, b, x []T) error {
	if err := checkVectors(an, b, x); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("sptrsv: row-wise synchronization-free solve not started: %w", err)
	}
	val, diag := values[T](an)
	n := an.n
	ready := make([]atomic.Bool, n)
	// x[j] is written before ready[j] is set (atomic.Bool's store and
	// load order it).
	var t tickets
	ok := runTickets(ctx, an, &t, func(i int) bool {
		s := b[i]
		for p := an.rowPtr[i]; p < an.rowPtr[i+1]; p++ {
			if p == an.diagPos[i] {
				continue
			}
			j := an.col[p]
			if !t.wait(ready[j].Load) {
				return false
			}
			s -= val[p] * x[j]
		}
		x[i] = s / diag[i]
		ready[i].Store(true)
		return true
	})
	if !ok {
		return fmt.Errorf("sptrsv: row-wise synchronization-free solve stopped: %w", ctx.Err())
	}
	return nil
}
