// Package banded holds banded matrices in the "tall and thin" column-major
// storage of SPIKE::GPU (Li et al. 2014, §4) and their CPU solvers: LU with
// partial pivoting (LAPACK gbsv semantics, the accuracy oracle) and LU and
// UL without pivoting with diagonal boosting (the factorizations truncated
// SPIKE uses on its diagonal blocks), single or batched.
//
// # Storage
//
// A Band of order N and half-bandwidth K keeps a_ij (|i−j| ≤ K) at
// Data[(K+i−j)·N + j]: storage column K is the diagonal, column K−t the
// t-th super-diagonal, column K+t the t-th sub-diagonal, each contiguous.
//
// # Factorizations without pivoting (in place, on a diagonal block)
//
//   - FactorLURange: A_block = L·U. The multipliers of the unit lower L
//     replace the sub-diagonal entries (storage columns K+1…2K); U replaces
//     the diagonal and super-diagonal entries (columns 0…K).
//   - FactorULRange: A_block = U·L, eliminating from the bottom-right
//     corner. The multipliers of the unit upper U replace the
//     super-diagonal entries (columns 0…K−1); L, with its diagonal, replaces
//     the diagonal and sub-diagonal entries (columns K…2K).
//
// Both boost pivots smaller than τ = BoostTol·max|a_ij| of the block (see
// FactorOptions) and report the boosted rows; SolveLURange/SolveULRange
// (and their Multi variants for several right-hand sides) apply them.
// Entries coupling the block to the rest of the matrix are untouched.
//
// # LU with partial pivoting
//
// FactorPivot returns a PivotLU with its own storage of 3K+1 columns (K
// extra super-diagonals for fill-in, like LAPACK's 2·KL+KU+1 rows) and
// gbtrf's interchanges; PivotLU.Solve is gbtrs.
//
// # Batches
//
// A Batch holds G systems of one shape, Contiguous (system after system)
// or Interleaved (element e of system g at e·G + g, for one GPU thread per
// system); right-hand sides and solutions follow the same layout (see
// Layout). SolveBatch solves all systems in parallel on the CPU and
// reports per-system failures (system, row, cause) and boosts.
//
// # Errors
//
// Errors about sizes wrap ErrShape. Factorization failures are *RowError
// values naming the row (and column) and wrapping ErrNonFinite,
// ErrZeroPivot or ErrSingular; batches wrap them in SystemError inside a
// *BatchError. Solves take no error: they panic with an error wrapping
// ErrShape on a right-hand side of the wrong length.
//
// # Helpers
//
// MulVec (residuals), NormMax/Norm1/NormInf/NormFrob, DiagonalDominance
// (the degree d of Li et al.), Random (their synthetic test matrices),
// Convert between precisions, and conversions from and to gonum matrices,
// dense slices and COO triplets.
package banded
