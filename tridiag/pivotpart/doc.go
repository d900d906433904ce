// Package pivotpart solves a tridiagonal system by the partition method
// with partial pivoting: the rows are cut into partitions, every
// partition is eliminated on its own by Gaussian elimination with row
// interchanges (LAPACK gtsv's rule), the partitions' boundary unknowns are
// found from a small tridiagonal coarse system solved with partial
// pivoting too, and every partition is then solved again with its
// neighbours' values known.
//
// It is written as the GPU kernels run it (ptx/src/ppart.cuh), one thread
// per partition: every stage is "for every partition, in parallel", each
// partition's work depends on nothing but its own rows (and, in Stage 3,
// two values of the coarse solution), and every product is rounded on its
// own (T(...) around it) so that Go never fuses a multiply-add. The GPU
// kernels match it bit for bit.
//
// # Partitions
//
// Row i reads a_i·x_{i−1} + b_i·x_i + c_i·x_{i+1} = d_i, with a_0 and
// c_{n−1} never read. With m rows per partition (4, 8, 16 or 32;
// DefaultRows gives 16), partition k holds rows s = k·m ≤ i < e =
// min(s + m, n): the last partition has the 1 to m rows left. A system of
// at most m rows is one partition: its solution is SolveDirect's bit for
// bit on finite inputs.
//
// # Stage 1: a partition's spikes and coarse rows
//
// T_k is the partition's m×m block of the matrix: its couplings a_s to
// x_{s−1} and c_{e−1} to x_e are dropped. The LU of T_k with partial
// pivoting (at step i rows i and i+1 are interchanged when the
// sub-diagonal entry is larger in magnitude than the current diagonal
// entry; the interchange fills the second super-diagonal; a division by a
// pivot is a product by its reciprocal, one reciprocal a row: the kernels
// divide four times fewer) is applied to
// three right-hand sides at once:
//
//	T_k·y = d[s:e],  T_k·v = a_s·e_0,  T_k·w = c_{e−1}·e_{m−1}
//
// (a_s = 0 for the first partition and c_{e−1} = 0 for the last: v or w
// is then zero, computed as the others are), so that the partition's
// solution is x = y − v·x_{s−1} − w·x_e; y, v and w of every row are kept
// for Stage 3. Its first
// and last rows give two equations in x_{s−1}, x_s, x_{e−1}, x_e, which
// FactorPartition returns as Spikes and CoarseRows combines without a
// division by a spike into two rows of a tridiagonal system:
//
//	row 2k   (x_s):     α = w_{m−1}/σ, β = −w_0/σ, σ = max(|w_0|, |w_{m−1}|)
//	         (α·v_0 + β·v_{m−1})·x_{s−1} + α·x_s + β·x_{e−1} = α·y_0 + β·y_{m−1}
//	row 2k+1 (x_{e−1}): γ = v_{m−1}/τ, δ = −v_0/τ, τ = max(|v_0|, |v_{m−1}|)
//	         γ·x_s + δ·x_{e−1} + (γ·w_0 + δ·w_{m−1})·x_e = γ·y_0 + δ·y_{m−1}
//
// with α = 1, β = 0 when σ = 0 and γ = 0, δ = 1 when τ = 0. Row 2k is free
// of x_e and row 2k+1 of x_{s−1} (those coefficients are zero in exact
// arithmetic and are not formed), and one of α, β (and of γ, δ) is ±1.
//
// A last partition of one row has a single coarse row, its own equation
// a_s·x_{s−1} + b_s·x_s = d_s. The first row of the first partition and the
// last row of the last one (of two rows or more) are identity rows (coefficient 1 on their own unknown, right side 0):
// x_0 and x_{n−1} are no neighbour's boundary value, so Stage 3 does not
// need them, and the combinations above are degenerate there whenever
// the partition's block without its last (first) row is singular — on a
// zero diagonal of even order the first partition's two rows are then the
// same equation and the coarse system is singular although the matrix is
// not (TestCoarseRowChoices: types 16 and 16T break down at N = 512 with
// the combinations at the ends, and solve with identity rows).
//
// # Stage 2: the coarse system
//
// In the order x_{s_0}, x_{e_0−1}, x_{s_1}, … the 2P rows (2P − 1 with a
// last partition of one row) are tridiagonal.
// Up to DefaultDirect(m) = 2m² rows (NewWorkspaceDirect sets another
// size) they are solved by SolveDirect (tri.GTSV's operations), above by
// Solve itself with the
// same m, recursively; SolveWith takes any CoarseSolver instead. The rows
// are not scaled: dividing every coarse row by its largest coefficient
// (scaled partial pivoting) changed no error of the stability suite by
// more than a factor 2 at N = 512 and 4096 with m = 16, and made the
// worst random cases with m = 4 worse (TestCoarseRowChoices).
//
// # Stage 3: the partitions' unknowns
//
// With x_{s−1} and x_e from the coarse solution (0 for the first and the
// last partition), every partition forms x_i = (y_i − v_i·x_{s−1}) −
// w_i·x_e, first and last rows included (CombinePartition); a partition of
// one row takes its coarse unknown. Solving every partition again with
// its neighbours' values moved to the right side (what a kernel that keeps
// no y, v, w between the stages would do) is no more accurate: on the
// suite at N = 512 and 4096 its error is within a factor 1.4 of this one
// either way (TestCoarseRowChoices).
//
// # Accuracy
//
// With m = 16 the relative error on the stability suite's types (FP64,
// N = 512 and 4096) is mostly within 10× of GTSV's wherever GTSV's is
// below 1, but not always: 12× on type 1 and 81× on type 16 (zero
// diagonal) for some seeds (the GPU's TestPartitionPivotSuite, seeds
// 100–103); the tests hold it within 100× (TestSuite, TestRandom) and log
// what exceeds 10×. The error grows with the number of partitions, since
// the likelier it is that one partition's own block is nearly singular:
// on type 1 (U(−1,1)), 5.1e−10 against GTSV's 1.7e−14 at N = 2^14 and
// 1.8e−9 against 2.2e−13 at N = 2^20 with m = 16, where m = 32 gives
// 3.2e−14 and 6.0e−12 (TestLargeSystems; -long for 2^20). The coarse rows are exact
// combinations of the partition's equations, but they are formed from
// spikes whose size grows with the condition of T_k, and their
// combination cancels; small partitions are more often nearly singular,
// and with m = 4 and 8 (and, more rarely, 32) the error on random
// systems (types 1, 4, 5, 10) exceeds GTSV's by factors up to 10⁵ (m = 4),
// the backward error reaching 10⁶ unit roundoffs (TestRandom logs them).
//
// # Breakdown
//
// A zero or non-finite pivot (tri.BadDivisor) of a partition's LU or of
// the coarse solve is reported as a *tri.PivotError wrapping
// tri.ErrZeroPivot, and x is not written. Its Row is the original row: the
// smallest such row of Stage 1 (a partition's step i is row s+i), else the
// row that the coarse row stands for (CoarseRow: a partition's first or
// last row). A partition's block can be singular where the matrix is not
// (TestBlockSingularGlobalRegular): the method then breaks down where
// GTSV solves. A solution that overflows without a bad pivot is returned
// as it is (the tridiag CPU device reports it as
// tridiag.ErrNonFiniteResult).
package pivotpart
