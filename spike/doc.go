// Package spike is the truncated SPIKE solver for banded systems A·x = b
// (Li, Seidl, Serban and Negrut, "SPIKE::GPU", 2014; papers/
// spike-gpu-li2014.txt), on the CPU, generic over float32 and float64. It
// is both a direct solver for diagonally dominant matrices and the
// preconditioner of an outer BiCGStab(2) iteration (package krylov) for
// matrices that are not.
//
// # The algorithm, step by step
//
// A is split into P partitions of consecutive rows (Partitions, §4). With
// A_i the diagonal block of partition i, B_i = A[r₁−K:r₁, r₁:r₁+K] the
// K×K block that couples the last K rows of partition i to the next one and
// C_{i+1} = A[r₁:r₁+K, r₁−K:r₁] the block that couples the first K rows of
// partition i+1 back (r₁ the boundary), A = D·S with D = diag(A_1 … A_P)
// and S the spike matrix (Eq. 2–3). Factor does, per partition and in
// parallel:
//
//  1. A_i = L_i·U_i without pivoting, with diagonal boosting
//     (banded.FactorLURange; §3);
//  2. the bottom K×K block of the right spike, V_i⁽ᵇ⁾ = U_bb⁻¹·L_bb⁻¹·B_i,
//     where L_bb and U_bb are the bottom K×K blocks of the factors (Eq. 3a,
//     3b, §2.2): since [0; B_i] is zero above its last K rows, only those
//     blocks take part;
//  3. the top K×K block of the left spike, W_i⁽ᵗ⁾ = L̃_tt⁻¹·Ũ_tt⁻¹·C_i,
//     from a UL factorization A_i = Ũ_i·L̃_i (Eq. 3b, 3c, §2.2), using only
//     its top K×K blocks. Options.ULBlock = 0 factors the whole partition
//     (exact W_i⁽ᵗ⁾); ULBlock = l factors only the top-left l×l block, as
//     SPIKE::GPU does with l = 2K (§4). The top-left blocks of a UL
//     factorization depend on the whole block (UL eliminates from the
//     bottom up, so the lower rows' Schur complement reaches the top), so
//     ULBlock = l gives the exact left spike of the truncated block
//     A_i[0:l, 0:l] instead of that of A_i: an approximation whose error
//     decays with l like the spikes themselves (fast for dominant A);
//
// and per interface i (between partitions i and i+1):
//
//  4. the reduced K×K matrix R̄_i = I − W_{i+1}⁽ᵗ⁾·V_i⁽ᵇ⁾ (Eq. 11a), factored
//     by dense LU with partial pivoting.
//
// Solve then does
//
//  5. g = D⁻¹·b, one banded solve per partition (Eq. 4);
//  6. per interface, R̄_i·x_{i+1}⁽ᵗ⁾ = g_{i+1}⁽ᵗ⁾ − W_{i+1}⁽ᵗ⁾·g_i⁽ᵇ⁾ (Eq. 11b) and
//     x_i⁽ᵇ⁾ = g_i⁽ᵇ⁾ − V_i⁽ᵇ⁾·x_{i+1}⁽ᵗ⁾ (Eq. 11c);
//  7. purification of the right-hand side: b̃_i = b_i − [C_i·x_{i−1}⁽ᵇ⁾; 0]
//     − [0; B_i·x_{i+1}⁽ᵗ⁾] (Eq. 12);
//  8. x_i = A_i⁻¹·b̃_i, one banded solve per partition.
//
// Steps 6–8 are exact for the reduced system without its off-diagonal
// blocks: truncated SPIKE neglects V_i⁽ᵗ⁾ and W_i⁽ᵇ⁾ (Eq. 7–8), which decay
// geometrically with the partition size for diagonally dominant A (§2.2).
// Each step is a separate function over plain arrays (band storage of
// package banded, K×K dense blocks in column-major order) so that a GPU
// implementation can mirror it kernel by kernel.
//
// # Accuracy as a direct solver
//
// The truncation neglects spike blocks that decay geometrically with the
// partition size measured in units of K, faster for larger d. On the
// random bands of banded.Random (N = 2000, K = 16, TestErrorTrends) the
// error against LU with partial pivoting at P = 16 (125-row partitions)
// grows from 4e-16 at d = 4 to 6e-11 at d = 1 and 5e-5 at d = 0.3, and at
// d = 1 from 1e-16 (P ≤ 8) to 4e-6 (P = 32) and 8e-4 (P = 62, 32-row
// partitions). With ULBlock = 2K the approximate W_i⁽ᵗ⁾ dominates: about
// 1e-7 at d = 1 for any P ≤ 16. Use the factorization directly only where
// these numbers are acceptable, otherwise as a preconditioner.
//
// With P = 1 there are no spikes and Solve is a plain banded LU solve.
// Options.Method = BlockJacobi keeps steps 1 and 5 only: the
// banded-block-diagonal (BBD) preconditioner of Fig. 4, SPIKE without the
// coupling.
//
// # Boosted pivots and refinement
//
// The block factorizations do not pivot: a pivot smaller than
// τ = BoostTol·max|a_ij| of its block is replaced by ±τ (diagonal boosting,
// §3), and an exactly singular reduced matrix R̄_i gets the same treatment.
// The factors are then those of a perturbed matrix, and the plain solve
// can be far off (a zero leading pivot: backward error 1e-3 and more). So
// Factorization.Solve refines by default (Options.Refine,
// banded.RefineBoosted): when some pivot was boosted, it measures the
// normwise backward error η = ‖b − A·x‖∞ / (‖A‖∞‖x‖∞ + ‖b‖∞) of the
// solution against a copy of A (residuals in float64) and, above the
// tolerance (10³·ε of the element type unless Options.Refine.Tol says
// otherwise), improves it by iterative refinement and then BiCGStab(2)
// preconditioned by the factorization itself (banded.Refine). If η still
// misses the tolerance, Solve fails with banded.ErrNotRefined naming the
// backward error reached; x holds the best solution found.
// banded.RefineAlways does the same after every solve, boosts or not, which
// also repairs the truncation error of many partitions and the growth of
// elimination without pivoting on bands that are not diagonally dominant;
// banded.RefineOff returns the plain solve. A small backward error does not
// make x accurate when A is ill-conditioned or singular (a boosted zero
// pivot of a singular matrix refines to a huge x with a small η): check
// the condition number too (banded.CondEst, banded.Check).
//
// # As a preconditioner
//
// Preconditioner applies the factorization inside krylov.BiCGStab2 in
// float64 or in mixed precision (factors in float32, residuals in float64:
// the strategy of §4); SolveIterative runs the whole solve on a banded or
// any other operator (a sparse matrix reordered to a band, for instance).
package spike
