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
// A General has separate bandwidths, KL sub-diagonals and KU
// super-diagonals (LAPACK's gbsv, SciPy's solve_banded((KL, KU), ab, b)),
// and keeps a_ij (−KU ≤ i−j ≤ KL) at Data[(KU+i−j)·N + j]: row KU+i−j,
// column j of an (KL+KU+1)×N row-major array, which is SciPy's ab exactly
// (and Band's storage when KL = KU = K). Band.ToGeneral and
// General.ToBand (K = max(KL, KU), zero padded) convert between the two;
// GeneralFromDense, GeneralFromCOO and GeneralFromBanded build one from
// other storage. A General is solved by LU with partial pivoting only
// (the factorizations without pivoting and SPIKE work on a Band).
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
// FactorPivot (of a Band) and FactorPivotGeneral (of a General) return a
// PivotLU with its own storage of 2·KL+KU+1 rows of N, LAPACK gbtrf's
// layout (KL extra super-diagonals for fill-in; 3K+1 rows for a Band),
// and gbtrf's interchanges; PivotLU.Solve and SolveMulti are gbtrs, and
// SolveTrans and SolveTransMulti gbtrs with trans = 'T'. A Band is
// factored as the General with KL = KU = K: one implementation.
//
// # Batches
//
// A Batch holds G systems of one shape, Contiguous (system after system)
// or Interleaved (element e of system g at e·G + g, for one GPU thread per
// system); right-hand sides and solutions follow the same layout (see
// Layout). SolveBatch solves all systems in parallel on the CPU and
// reports per-system failures (system, row, cause) and boosts.
//
// # Ragged batches
//
// A RaggedBatch holds systems of one half-bandwidth K and different
// orders, stored one after another (Offsets: system g's rows start at
// off[g], its storage at (2K+1)·off[g]); SolveRagged solves each system as
// SolveBatch solves a batch of that one system (the same bits, boosts,
// refinement, check and failures, named by the system's index and its row
// within it), spreading the systems over the goroutines by rows.
//
// # Refinement and the accuracy check
//
// Boosting makes the factors those of a perturbed matrix, and the plain
// solve may then be far off (a zero leading pivot: a backward error of
// 1e-3). Refine improves such a solution to a normwise backward error
// η = ‖b − A·x‖∞ / (‖A‖∞‖x‖∞ + ‖b‖∞) of at most a tolerance (10³·ε by
// default): a few steps of iterative refinement with residuals in
// float64, then BiCGStab(2) (package krylov) preconditioned by the
// factors; it fails with ErrNotRefined and the backward error reached
// when that is not enough. SolveBatch refines the systems whose
// factorization boosted a pivot by default (BatchOptions.Refine; RefineAlways
// refines any system above the tolerance, RefineOff none), and so does
// package spike's Factorization.Solve. A small backward error is not an
// accurate x when A is ill-conditioned: CondEst estimates κ∞(A) as
// LAPACK's gbcon does (LU with partial pivoting in float64, Hager–Higham
// estimator with PivotLU.Solve and SolveTrans), and Check (or
// BatchOptions.Check) judges a solution on both, with the per-system
// Status of package tridiag. CondEstGeneral, CheckGeneral and
// BackwardErrorGeneral do the same for a General (the Band functions
// call them on the Band's storage).
//
// # Complex systems
//
// Band, General, Batch and RaggedBatch take complex64 and complex128 as
// well as float32 and float64 (Scalar). Complex systems are solved by LU
// with partial pivoting only: FactorPivot and FactorPivotGeneral choose
// each pivot by the largest |re| + |im|, as LAPACK's zgbtrf does;
// PivotLU.Solve, SolveTrans (Aᵀ) and SolveConjTrans (Aᴴ, gbtrs with
// trans = 'C') solve with the factors; SolveBatch, SolveRagged and a CPU
// BatchPlan need BatchOptions.Pivot (else ErrOption). BackwardError,
// CondEst (zgbcon's estimate in complex128) and Check use the moduli of
// the entries and give the Status verdicts of the real check.
// Boosting, refinement and SPIKE are real only.
//
// # Errors
//
// Errors about sizes wrap ErrShape. Factorization failures are *RowError
// values naming the row (and column) and wrapping ErrNonFinite,
// ErrZeroPivot or ErrSingular; batches wrap them in SystemError inside a
// *BatchError (tridiag's types, shared by every batch of the module).
// Solves take no error: they panic with an error wrapping ErrShape on a
// right-hand side of the wrong length. Options out of range wrap
// ErrOption.
//
// # Helpers
//
// MulVec (residuals), NormMax/Norm1/NormInf/NormFrob, DiagonalDominance
// (the degree d of Li et al.), Random (their synthetic test matrices),
// Convert between precisions, and conversions from and to gonum matrices,
// dense slices and COO triplets; General has MulVec, NormMax, Norm1,
// NormInf, DiagonalDominanceGeneral and ConvertGeneral.
package banded
