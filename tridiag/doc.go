// Package tridiag solves batches of tridiagonal linear systems.
//
// A batch holds G systems of N rows each. System g, row i reads
//
//	a[i]·x[i−1] + b[i]·x[i] + c[i]·x[i+1] = d[i]
//
// where a is the sub-diagonal, b the diagonal and c the super-diagonal.
// All four arrays have one entry per row; a[0] and c[N−1] of each system
// are ignored (they must still be finite) unless the plan is cyclic, in
// which case they are the corner entries A[0][N−1] and A[N−1][0] of a
// periodic system. This is the convention of LAPACK's gtsv with padded
// off-diagonals, and of cuSPARSE's gtsv2.
//
// Where the rows of the batch live in memory is given by a Layout:
// contiguous (system g occupies g·N … g·N+N−1), interleaved (row i of
// system g at i·G+g) or general strides, so that lines of a 2-D or 3-D
// row-major array can be solved along any axis without a transpose.
//
// Work is organised around a Plan: made once for a shape, precision,
// layout and algorithm on a Device, then reused for many solves (the object
// a time-stepper keeps). The CPU device is always available; the CUDA
// device lives in package cuda behind the cuda build tag.
//
// Algorithms: Thomas, Thomas with partial pivoting (LAPACK gtsv semantics),
// cyclic reduction (package cr), parallel cyclic reduction (package pcr),
// Wang–Mou (package wangmou) and tree partitioning reduction (package tpr),
// following Diéguez et al., "Tree Partitioning Reduction: A New Parallel
// Partition Method for Solving Tridiagonal Systems", ACM TOMS 2019; and,
// for symmetric positive definite systems, LDLT (L·D·Lᵀ, LAPACK ptsv
// semantics), which reads b and c only.
//
// Errors are never silent: mismatched lengths, non-finite input, a zero
// pivot in a non-pivoting algorithm, a singular matrix in the pivoting
// one and a pivot that is not positive in LDLT are reported with the
// system and row (see BatchError).
//
// # Factor once, solve many
//
// When the matrix stays and the right-hand sides change (an implicit
// time-stepper with fixed coefficients, an ADI sweep, inverse iteration),
// Plan.Factor factors the batch once and Factors.Solve solves it for each
// new d, a forward and a back substitution (without a division for
// Thomas's factors, which store 1/u): Thomas's LU keeps three values a row (24 bytes in float64), gttrf's (GTSV, and the
// systems Auto pivots) four and a byte, LDLT's two; cyclic plans keep
// T⁻¹u for Sherman–Morrison. The factorization follows the plan's
// options, system by system for Auto, and its breakdowns are reported
// with system and row as Solve reports them. Several right-hand sides go
// in one call, Factors.SolveMany or, without keeping the factors,
// Plan.SolveMany: column r is a whole batch in the plan's layout at
// d[r·L : (r+1)·L], L = Shape.Len() (column-major over batches, as
// cuSPARSE's gtsv2 takes its columns), and each system's factors are read
// once for all its columns. Each column's solution is the one-column
// solve's, bit for bit; the gttrf and LDLT solutions are also Plan.Solve's
// bit for bit. A device's solver factors by implementing Factorer (and
// ManySolver for Plan.SolveMany); the CPU's does.
//
// # Accuracy check
//
// A solve that meets no zero pivot can still return garbage: a singular
// matrix (periodic or Neumann Laplacians) whose elimination rounds its
// last pivot to 1e-16 instead of 0 gives x of order 1e14. Plan.Check and
// Plan.CheckConst (or Options.Check, which runs them after every solve)
// measure each system in float64 on the CPU, whatever the device and
// layout: the normwise backward error η = ‖d − A·x‖∞ / (‖A‖∞‖x‖∞ + ‖d‖∞)
// and κ̂, an O(N) estimate of the condition number ‖A‖∞‖A⁻¹‖∞ as LAPACK's
// gtcon computes it (Hager–Higham, through an LU factorization with
// partial pivoting; Sherman–Morrison for cyclic systems). A system fails
// when η exceeds Options.Tol (default 10³·ε of the precision,
// DefaultTol) or when κ̂·ε ≥ 1/2 (no digit of x can be trusted); its
// Status carries the Flags and both numbers, and a *BatchError lists the
// failed systems. The check costs several solves per system (about six
// times a Thomas solve: go test ./tridiag -bench Check), so it is off by
// default; the bandsolve command always runs it.
//
// # Ragged batches
//
// A RaggedPlan solves systems of different lengths in one call (neuron
// cables of different compartment counts, the lines of an adaptive
// mesh): NewRaggedPlan takes the list of lengths, and the systems are
// stored one after another, system g at rows off[g] … off[g]+len[g]−1 of
// a, b, c, d and x, off the prefix sums of the lengths (RaggedPlan.Offsets).
// Every system is solved as a Plan of its own length solves it, with the
// same Options, bits and errors (the *BatchError names the system and its
// row within it). On the CPU the workers share the systems by rows, not by
// count. A device solves ragged batches when its backend implements
// RaggedBackend; the GPU does not yet, and NewRaggedPlan refuses it with
// ErrOptions.
//
// # Complex systems
//
// Plans of complex64 and complex128 use the same API as real ones:
// NewPlan[complex128], Solve, SolveConst, SolveMany, Check, Options.Check,
// the same layouts, cyclic option and errors. The element type of Plan,
// Batch and Solver is Scalar (Float or Complex); Float stays the real
// constraint, so every existing caller, solver and device compiles
// unchanged. A device's backend solves complex systems when it implements
// ComplexBackend (NewSolverC64, NewSolverC128) besides Backend: the
// optional interface leaves the GPU backends as they are, and NewPlan
// refuses a complex plan on a device whose backend lacks it with an error
// wrapping ErrOptions that names the device. A parallel ComplexPlan type
// would have given the same safety at the price of a second API for the
// same domain.
//
// On the CPU, complex plans take Thomas, GTSV, Partition (the partition
// method without pivoting, partition.SolveC, chunks of
// partition.DefaultChunk(N) rows) and Auto, in every layout, with
// constant coefficients and cyclic systems (Sherman–Morrison with the
// splitting of the real solve). GTSV pivots as LAPACK's zgtsv does,
// by Cabs1 = |re| + |im|, not by the modulus: Cabs1 costs no square root
// and lies within √2 of the modulus. Auto keeps the real rule with Cabs1
// as the measure: each system is eliminated by Thomas with the test
// Cabs1(a[i]·c[i−1]/u[i−1]) ≤ 2·Cabs1(b[i]) in the same sweep, which
// bounds |L|·|U| ≤ (1+4√2)·|A| in modulus; matrices diagonally dominant by
// modulus pass it, and a system that fails it, or meets a zero pivot, is
// solved by GTSV. Input with NaN or ±Inf in its real or imaginary part is
// refused with the array, system and row. The other algorithms (CR, PCR,
// Wang–Mou, TPR, PartitionPivot) and LDLT (whose complex analogue
// is Hermitian, not symmetric) refuse complex plans with ErrOptions, and
// so does Plan.Factor; Plan.SolveMany solves column by column. The
// accuracy check measures complex systems in complex128: norms of moduli,
// ‖A‖∞ = max |a[i]| + |b[i]| + |c[i]|, and κ̂ from LU with partial
// pivoting by Cabs1 and the complex Hager–Higham estimator (LAPACK's
// zlacn2) on A⁻¹ and A⁻ᴴ.
package tridiag
