package spike

import (
	"errors"
	"fmt"
	"runtime"

	"github.com/bandsolve/bandsolve/banded"
)

// ErrPartitions is wrapped by the errors about a partitioning that cannot
// be used: P < 1, P > N, or a partition shorter than 2K rows.
var ErrPartitions = errors.New("spike: bad partitioning")

// Partitions returns the bounds of P partitions of N rows as SPIKE::GPU
// chooses them (§4): with N = P·⌊N/P⌋ + P_r, the first P_r partitions have
// ⌊N/P⌋ + 1 rows and the others ⌊N/P⌋. Partition i is rows
// [bounds[i], bounds[i+1]), so len(bounds) = P+1, bounds[0] = 0 and
// bounds[P] = N. It panics unless 1 ≤ P ≤ N.
func Partitions(n, p int) []int {
	if p < 1 || p > n {
		panic(fmt.Sprintf("spike: Partitions(%d, %d): want 1 ≤ P ≤ N", n, p))
	}
	q, r := n/p, n%p
	b := make([]int, p+1)
	for i := 0; i < p; i++ {
		size := q
		if i < r {
			size++
		}
		b[i+1] = b[i] + size
	}
	return b
}

// CheckPartitions reports whether P partitions of an N×N matrix of
// half-bandwidth K can be used: 1 ≤ P ≤ N and, when P > 1, every partition
// has at least 2K rows (its top and bottom K×K blocks must not overlap).
// The error wraps ErrPartitions and names the sizes.
func CheckPartitions(n, k, p int) error {
	if err := banded.CheckShape(n, k); err != nil {
		return err
	}
	if p < 1 || p > n {
		return fmt.Errorf("%w: P=%d partitions for N=%d rows, want 1 ≤ P ≤ N", ErrPartitions, p, n)
	}
	if p == 1 {
		return nil
	}
	if small := n / p; small < 2*k || small < 1 {
		return fmt.Errorf("%w: P=%d partitions of N=%d rows have %d rows (the shortest), fewer than 2K=%d for K=%d; use at most P=%d",
			ErrPartitions, p, n, small, 2*k, k, maxPartitions(n, k))
	}
	return nil
}

// maxPartitions is the largest P whose partitions all have ≥ 2K rows.
func maxPartitions(n, k int) int {
	if k == 0 {
		return n
	}
	return max(1, n/(2*k))
}

// Partition sizes used by ChoosePartitions.
const (
	// MinPartitionRows is the fewest rows ChoosePartitions gives a
	// partition (unless that leaves one partition only).
	MinPartitionRows = 1024
	// MinPartitionRowsPerK: ChoosePartitions also keeps partitions at
	// least this many times K rows long, so that the spikes have room to
	// decay before the truncation (§2.2).
	MinPartitionRowsPerK = 8
)

// ChoosePartitions returns the number of partitions Factor uses on the CPU
// when Options.Partitions is 0: one partition per worker (workers ≤ 0
// means GOMAXPROCS), but no more than leave every partition
// max(MinPartitionRows, MinPartitionRowsPerK·K) rows, and at least 1. On
// one worker it is 1, a plain banded LU solve, which is exact. More
// partitions than workers only cost accuracy on a CPU; the GPU side picks
// its own count (package tuning), where the number of thread blocks to keep
// busy matters.
func ChoosePartitions(n, k, workers int) int {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	rows := max(MinPartitionRows, MinPartitionRowsPerK*k, 2*k, 1)
	p := min(workers, n/rows)
	return max(1, p)
}

// Partition sizes of PreconditionerPartitions.
const (
	// PreconditionerRows is the fewest rows PreconditionerPartitions
	// gives a partition.
	PreconditionerRows = 2048
	// PreconditionerRowsPerK: PreconditionerPartitions also keeps
	// partitions at least this many times K rows long.
	PreconditionerRowsPerK = 16
)

// PreconditionerPartitions returns the largest number of partitions, at
// least 1, that leaves every partition max(PreconditionerRows,
// PreconditionerRowsPerK·K) rows: the count to use when truncated SPIKE
// preconditions a band that is not diagonally dominant (d < 1). There the
// spikes need not decay within a short partition, and the truncation can
// make the preconditioner useless: for random bands with d = 0.2 and
// K = 2, N = 10⁶, BiCGStab(2) converges in 1 (float64) or 5 (mixed
// precision) steps with partitions of 667 rows and does not converge in
// 100 steps with partitions of 67 rows, which is what a GPU's tuning picks
// for speed (tuning.SpikePartitions). Pass it as Options.Partitions, on
// every device (NewPlan), or take the minimum with the device's choice.
func PreconditionerPartitions(n, k int) int {
	return max(1, n/max(PreconditionerRows, PreconditionerRowsPerK*k))
}
