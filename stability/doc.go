// Package stability generates the tridiagonal test matrices used for
// numerical-stability studies of tridiagonal solvers, computes reference
// solutions far more accurate than float64, and measures the error of a
// computed solution.
//
// # Matrix types
//
// Types 1..16 are the classic suite of Chang et al. (SC'12), reproduced as
// Table 9 of the TPR paper (Diéguez et al.). In the list below a, b and c are
// the sub-, main and super-diagonal and U(-1,1) is the uniform distribution
// on [-1,1):
//
//	 1  a, b, c from U(-1,1)
//	 2  b = 1e8, a, c from U(-1,1)
//	 3  gallery('lesp', n)
//	 4  as 1, the sub-diagonal entry of row n/2+1 (1-based) multiplied by 1e-50
//	 5  as 1, each off-diagonal entry zero with probability 1/2
//	 6  b = 64, a, c from U(-1,1)
//	 7  inv(gallery('kms', n, 0.5))
//	 8  gallery('randsvd', n, 1e15, 2, 1, 1)  (one small singular value)
//	 9  gallery('randsvd', n, 1e15, 3, 1, 1)  (geometric singular values)
//	10  gallery('randsvd', n, 1e15, 1, 1, 1)  (one large singular value)
//	11  gallery('randsvd', n, 1e15, 4, 1, 1)  (arithmetic singular values)
//	12  as 1, every sub-diagonal entry multiplied by 1e-50
//	13  gallery('dorr', n, 1e-4)
//	14  b = 1e-8, a, c from U(-1,1)
//	15  gallery('clement', n, 0)
//	16  b = 0, a, c from U(-1,1)
//
// Klein & Strzodka (ICPP 2021, Table 1) use a 20-matrix set: their 1..14 are
// the classic 1..14, their 15 is the classic 16 (zero diagonal; clement is
// not in their set), their 16 is tridiag(1, 1e-8, 1), and they add 17..20.
// This package keeps the classic numbering for 1..16, uses the
// Klein–Strzodka numbers for 17..20 and gives their type 16 the extra number
// 21 (TypeKS16):
//
//	17  tridiag(1, 1e8, 1)
//	18  tridiag(-1, 4, -1)
//	19  tridiag(-1, 4, 1)
//	20  tridiag(-1, 4, c) with c from U(-1,1)
//	21  tridiag(1, 1e-8, 1)  ("ks16", type 16 of the 20-matrix set)
//
// tridiag(s, d, u) has constant sub-diagonal s, diagonal d and super-diagonal
// u.
//
// # Two readings of types 2, 6, 14 and 16
//
// Table 9 describes types 2, 6, 14 and 16 as "a Toeplitz matrix, main
// diagonal is …, off-diagonal elements are from U(-1,1)". Types 2, 6, 14
// and 16 are the entry-wise reading (every off-diagonal entry drawn on its
// own); the Toeplitz reading, one value from U(-1,1) for the whole
// sub-diagonal and one for the whole super-diagonal, is four types of its
// own, named 2T, 6T, 14T and 16T (Type2T .. Type16T):
//
//	2T   tridiag(a, 1e8, c)   a, c from U(-1,1)
//	6T   tridiag(a, 64, c)
//	14T  tridiag(a, 1e-8, c)
//	16T  tridiag(a, 0, c)
//
// Only the Toeplitz reading has Table 9's condition numbers for types 14
// and 16 (1.14e67 and 7.1e191): with r = max(|a|,|c|)/min(|a|,|c|) the
// condition number of 14T and 16T grows like r^(n/2), while the
// entry-wise types 14 and 16 stay near 1e11 at n = 512.
//
// Name gives a type's name (the number, or "14T") and ParseType reads it.
// Types(false) lists 1..16, Types(true) lists 1..21, both followed by the
// Toeplitz readings 2T, 6T, 14T, 16T (Toeplitz lists those alone), and
// KleinStrzodka lists the 20-matrix set in its own order
// (1..14, 16, 21, 17..20), so that KleinStrzodka()[k-1] is their type k.
//
// All random draws come from a math/rand/v2 PCG source seeded by the seed
// given to Generate, so a matrix is a deterministic function of (type, n,
// seed). Types 1, 4, 5 and 12 draw the same numbers in the same order, so for
// one seed they differ only by the stated modification of type 1; the
// off-diagonals of types 2, 6, 14 and 16 are those of type 1 as well. The
// Toeplitz readings take the first two draws as a and c, so for one seed
// 2T, 6T, 14T and 16T differ only in the diagonal.
//
// # Reference solutions
//
// NewProblem draws a solution x from U(-1,1), rounds the matrix to the
// working precision T, forms d = A_T x exactly (math/big.Rat) and rounds it
// to T, and then solves the rounded system A_T x* = d_T by Gaussian
// elimination with partial pivoting in math/big.Float. The precision starts
// at 512 bits and is doubled until two successive precisions agree far
// beyond float64 accuracy, so X is the exact solution of the rounded system
// rounded to float64 even for the very ill-conditioned types. Exact
// singularity is detected separately and reported as ErrSingular.
//
// The rounding to T is part of the problem: in float32, 1e-50 underflows to
// zero, so types 4 and 12 lose the scaled entries, and the singular values
// of the randsvd types move by the float32 rounding of the entries.
//
// # Error measure
//
// RelError returns ||xhat - x||_2 / ||x||_2, the measure of Table 7 and 8 of
// the TPR paper.
package stability
