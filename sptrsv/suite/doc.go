// Package suite generates the lower-triangular matrices on which the sparse
// triangular solvers of package sptrsv are tested and benchmarked. The
// generators reproduce the structures of the matrix suites of the SpTRSV
// papers (Naumov 2012; Liu et al. 2016, Table 3; Picciau et al. 2016) at
// their sizes, up to 10⁷ rows: lower triangles of 2-D and 3-D Poisson
// matrices (5-, 7- and 27-point stencils, natural and RCM orders), a
// FEM-like triangulation, a dense lower triangle, power-law dependency
// graphs with hundreds of levels (like webbase-1M or wiki-Talk),
// road-network-like graphs with tens of wide levels (like road_usa), a
// matrix of two wide levels (like nlpkkt160), and banded triangles.
//
// Every generator returns a square *sparse.CSR lower triangle, diagonal
// included and stored last in each row, whose columns are sorted. The same
// arguments (and seed) give the same matrix, bit for bit: the random ones
// draw from math/rand/v2's PCG seeded with the seed.
//
// # Levels
//
// The level of row i is 1 + the largest level of the rows j < i that row i
// depends on (its off-diagonal columns); a row with no off-diagonal entry
// has level 1. The number of levels is the largest level: the number of
// steps of a level-scheduled solve. Levels and LevelSizes compute it.
//
// # Values
//
// Every triangle L is strictly diagonally dominant by rows with a positive
// diagonal and ratio at least 2: Σ_{j<i} |l_ij| ≤ l_ii / 2 on every row. So
// D⁻¹L = I − N with ‖N‖∞ ≤ 1/2, ‖(D⁻¹L)⁻¹‖∞ ≤ 2 and κ∞(D⁻¹L) ≤ 3: the
// solves are well conditioned after diagonal scaling, and forward
// substitution is componentwise stable. The Poisson factors keep the
// stencil's values (−1 off the diagonal, the stencil's centre 4, 6 or 26 on
// it, which meets the ratio in natural order); in RCM order a row with
// more than half of its neighbours numbered before it gets the diagonal
// 2·Σ_{j<i}|l_ij| instead (only the 27-point stencil has such rows). The
// other generators draw their off-diagonal
// values from U(−1, 1) (Banded uses −1) and set l_ii = 1 + 2·Σ_{j<i} |l_ij|.
//
// # Sets
//
// Fixed is the fixed benchmark set of the SpTRSV targets (issue 25, at full
// size: up to 10⁷ rows, some seconds to generate); Small holds a variant of
// each with at most 10⁵ rows for tests, and Structures adds small
// instances of the other generators. Each Case records the n, nnz and
// number of levels its generator gives.
//
// # Real matrices
//
// ReadReal and Real read the SuiteSparse matrices that Debian packages ship
// (add32, g20, g4 from libsuperlu-dist-dev; jgl009, lund_a, pores_1,
// utm300 from r-cran-matrix), which scripts/fetch-suitesparse.sh fetches
// into a folder (the tests look in testdata/suitesparse and skip where it
// is empty). They are general matrices of 9 to 4960 rows; Real gives the
// lower and the upper triangle of each, diagonal included, as cases of
// Triangle Lower and Upper, with the matrix's values: they are not made
// dominant, and where the matrix has a zero or missing diagonal entry
// (jgl009) the triangle is singular.
package suite
