// Package ilu computes the zero-fill incomplete factorizations that
// precondition the Krylov methods of package krylov: ILU(0), the
// incomplete LU factorization of a general matrix on its own sparsity
// pattern, and IC(0), the incomplete Cholesky factorization of a
// symmetric positive definite matrix on the pattern of its lower triangle
// (Naumov, "Parallel incomplete-LU and Cholesky factorization in the
// preconditioned iterative methods on the GPU", NVR-2012-003, the pipeline
// of sptrsv-levelset-naumov2012).
//
// # The factorizations
//
// ILU(0) computes a unit lower triangular L and an upper triangular U with
// the pattern of A's strict lower and upper triangles (and A's diagonal
// for U) such that (L·U)ᵢⱼ = aᵢⱼ at every stored position (i, j) of A. The
// two factors are stored together in A's pattern, L's entries below the
// diagonal and U's on and above it, the layout of cuSPARSE's csrilu02.
// IC(0) computes a lower triangular L with the pattern of A's lower
// triangle such that (L·Lᵀ)ᵢⱼ = aᵢⱼ at every stored position of that
// triangle; A's upper triangle is not read.
//
// Both are computed row by row, in the IKJ form: row i is updated with the
// finished rows k < i it holds an entry for. Row i therefore depends on
// exactly the rows that the lower triangular solve with L makes it depend
// on, and the rows of one level set of L's pattern (sptrsv's analysis) are
// independent: the factorization runs level after level, the rows of a
// wide level spread over goroutines, the schedule a GPU kernel follows
// with a thread block or warp per row. The analysis (pattern, diagonal
// positions, level sets) is done once; Refactor recomputes the values for
// a matrix with the same pattern.
//
// # Pivots and shifts
//
// A zero pivot uᵢᵢ (ILU(0)) or a non-positive one (IC(0), where lᵢᵢ² ≤ 0)
// stops the factorization with an error that names the row. The usual
// remedy is a diagonal shift: Options.Shift factors A + Shift·diag(A)
// instead of A (every diagonal entry scaled by 1 + Shift), and
// Options.AutoShift retries a failing factorization with the relative
// shifts 10⁻³, 10⁻² and 10⁻¹ and reports the one used (Factors.Shift).
// The shifted factors are a preconditioner for A itself: a Krylov method
// still solves with A.
//
// # Preconditioning
//
// NewPreconditioner turns the factors into M⁻¹ = U⁻¹L⁻¹ (ILU(0)) or
// L⁻ᵀL⁻¹ (IC(0)): two triangular solves through sptrsv plans, with any
// sptrsv.Algorithm, in float64 (a krylov.Preconditioner[[]float64]) or in
// float32 (for krylov.NewMixedPrecision).
package ilu
