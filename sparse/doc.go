// Package sparse prepares general sparse matrices for the truncated-SPIKE
// preconditioner (Li et al. 2014, §3): sparse storage (COO, CSR), Matrix
// Market input and output, Harwell–Boeing input, and the reorderings that
// turn a sparse matrix into a narrow, diagonally heavy band:
//
//  1. MaxProductMatching, a row permutation Q that maximises the product of
//     the magnitudes of the diagonal entries of QA (the idea of MC64, job 5,
//     Duff & Koster), with the dual-based scalings;
//  2. RCM, reverse Cuthill–McKee on the pattern of QA + (QA)ᵀ, applied
//     symmetrically so the diagonal stays on the diagonal;
//  3. DropOff, the smallest half-bandwidth K that keeps a fraction δ of the
//     squared Frobenius norm (Eq. 13);
//  4. BlockRCM, a second RCM pass inside each diagonal block of a partition
//     into P near-equal blocks, giving each block its own half-bandwidth.
//
// Reorder runs the whole pipeline and records the bandwidth after every
// stage; ToBand converts the result to banded storage for the solvers of
// package banded.
//
// # Permutation convention
//
// Every permutation in this package is a "gather" list: perm[new] = old.
// perm[i] is the old index of the row (or column) that becomes row i. So
// A.Permute(rowPerm, colPerm) returns B with
//
//	B[i][j] = A[rowPerm[i]][colPerm[j]],
//
// and a vector is permuted as v'[i] = v[perm[i]]. InversePerm turns a
// gather list into the other convention (inv[old] = new).
//
// # Index types
//
// CSR uses int32 row pointers and column indices, the layout cuSPARSE and
// hand-written CUDA kernels take as they are; a CSR matrix therefore holds
// fewer than 2³¹ nonzeros and at most 2³¹−1 rows and columns. COO, which is
// only used for assembly and input/output, uses int.
package sparse
