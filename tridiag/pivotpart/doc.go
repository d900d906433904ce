// Package pivotpart solves a tridiagonal system by the partition method
// with partial pivoting: the rows are cut into partitions, every
// partition eliminates its interior unknowns by Gaussian elimination with
// row interchanges, which leaves two rows in its first and last unknowns
// (the coarse rows), the coarse rows of all partitions form a tridiagonal
// system solved with partial pivoting too, every partition then finds its
// interior unknowns from its rows and the coarse solution, and the
// solution is refined once with a residual formed in about twice the
// working precision.
//
// It is written as the GPU kernels run it (ptx/src/ppart.cuh), one thread
// per partition: every stage is "for every partition, in parallel", each
// partition's work depends on nothing but its own rows (and, in Stage 3,
// four values of the coarse solution), and every product is rounded on
// its own (T(...) around it) so that Go never fuses a multiply-add; the
// one fused multiply-add is explicit (math.FMA in Residual, fma on the
// GPU). The kernels are to match it bit for bit.
//
// # Partitions
//
// Row i reads a_i·x_{i−1} + b_i·x_i + c_i·x_{i+1} = d_i, with a_0 and
// c_{n−1} never read. With m rows per partition (4, 8, 16 or 32;
// DefaultRows gives 16), partition k holds rows s = k·m ≤ i < e =
// min(s + m, n): the last partition has the 1 to m rows left. Its first
// and last unknowns x_s and x_{e−1} are its coarse unknowns, x_{s+1} …
// x_{e−2} its interior ones. A system of at most m rows is solved by
// SolveDirect (Gaussian elimination with partial pivoting, LAPACK gtsv's
// rule) and not refined.
//
// # Stage 1: a partition's coarse rows
//
// PartitionRows eliminates the interior unknowns twice, each time from
// all the partition's rows but one, and keeps the row that is left:
//
//	row 2k   (x_s):     rows e−2, e−3, …, s  →  A·x_{s−1} + B·x_s + C·x_{e−1} = D
//	row 2k+1 (x_{e−1}): rows s+1, s+2, …, e−1  →  A·x_s + B·x_{e−1} + C·x_e = D
//
// Each elimination (a sweep) carries one row: at first the sweep's first
// row, whose entry on the coarse unknown outside the sweep (x_{e−1}, or
// x_s) is kept as a column of its own. Each step eliminates the next
// interior unknown between the carried row and the next row, which are
// the only rows left that hold it: the one with the larger entry on it
// (the carried row on a tie) is the pivot, the other takes the multiple
// of it that cancels that entry and is carried on. Both entries zero,
// the step eliminates nothing (multiplier 0), and is no breakdown. The
// pivot rows are dropped: Stage 3 eliminates again. The row carried
// after the last step is the coarse row, not divided by its entry on
// the coarse unknown (which may be small or zero). Row 2k is free of
// x_e and row 2k+1 of x_{s−1}, so the coarse system is tridiagonal;
// with A = 0 in the first partition's row 0 and C = 0 in the last
// partition's last row. A partition of two rows has its rows as its
// coarse rows; a last partition of one row has a single coarse row, its
// own equation a_s·x_{s−1} + b_s·x_s = d_s.
//
// The coarse rows are combinations of the partition's equations with
// coefficients at most 1 in magnitude, and their rounding errors are
// those of Gaussian elimination with partial pivoting on those rows: they
// are not formed from T_k⁻¹ (T_k the partition's own block), whose entries
// grow with the condition of T_k (see "Accuracy"). Where no step meets
// two zero candidates, the coarse system is, up to the scaling of its
// rows, the Schur complement of the interior unknowns, nonsingular where
// the matrix is; a partition whose own block T_k is singular needs no
// special case.
//
// # Stage 2: the coarse system
//
// In the order x_{s_0}, x_{e_0−1}, x_{s_1}, … the 2P rows (2P − 1 with a
// last partition of one row) are tridiagonal. Up to DefaultDirect(m) =
// 2m² rows (NewWorkspaceDirect sets another size) they are solved by
// SolveDirect, above by Stages 1–3 of this method with the same m,
// recursively (the coarse systems are not refined); SolveWith takes any
// CoarseSolver instead.
//
// # Stage 3: a partition's interior unknowns
//
// SolvePartition takes x_s and x_{e−1} from the coarse solution and
// finds the interior unknowns from all m rows of the partition, the
// known x_{s−1}, x_s, x_{e−1}, x_e moved to the right side: m equations
// in m − 2 unknowns, consistent, whose matrix has full column rank
// wherever the system is nonsingular (an interior unknown appears in the
// partition's rows only). Gaussian elimination with scaled partial
// pivoting: every unknown x_j appears in three rows that are not yet
// pivot rows (the two left by the previous step, and row j+1); the first
// of them, in that order, with the largest |entry on x_j| divided by its
// row's scale (the largest |entry| of that row of the matrix) is the
// pivot; the two others are left for the next step. The two rows left at
// the end are dropped (the coarse solution satisfies them), and back
// substitution gives x_{e−2} … x_{s+1}. The scaling keeps a row whose
// entries have cancelled to rounding errors from being chosen by its
// large original scale: with partial pivoting without it, the graded
// matrices of type 10 (randsvd mode 1) of the stability suite get
// componentwise backward errors of 10¹⁰ unit roundoffs (and 2 with it).
//
// # Stage 4: refinement
//
// Residual forms every row's residual r = d − A·x of Stage 3's x with
// twice the working precision's accuracy (float32: in float64, whose
// products of float32 values are exact; float64: every product split
// into its rounded value and its error by a fused multiply-add, every
// difference made exact as a sum and an error, the errors added at the
// end), rounded once. As the workspace's Refine says (SetRefine),
//
//   - RefineAlways (the default) solves A·δ = r by Stages 1–3 and returns
//     x + δ;
//   - RefineAuto does so only where some row's |r| exceeds RefineTol = 4
//     unit roundoffs of that row's |A|·|x| + |d| (the componentwise
//     backward error), and otherwise returns x;
//   - RefineNever returns x.
//
// The correction's eliminations make the same pivot choices as the first
// solve (they depend on a, b, c only), so it breaks down nowhere the
// first did not. A solution whose residual is not finite (overflow) is
// returned as it is.
//
// # Accuracy
//
// FP64 relative errors against the exact solutions of the stability
// suite, as ratios to GTSV's (LAPACK gtsv's), wherever GTSV's error is
// below 1: every type (1..21 and 2T, 6T, 14T, 16T) with seeds 1–3 at
// N = 512, and the types whose references the suite settles among the
// O(N) ones (1–7, 17–21, 2T, 6T) at N = 2^20, m = 16:
//
//	                                                  N = 512   N = 2^20
//	coarse rows from spikes (T_k⁻¹), no refinement         73      8600
//	the same, refined once in working precision            29       4.8
//	Stages 1–3 (RefineNever)                               42        13
//	Stages 1–3, refined once in working precision         8.7       2.7
//	RefineAuto                                             12       1.3
//	RefineAlways (Solve's default)                       0.13      0.12
//	GTSV on the system with its rows reversed            11.5       1.9
//
// (worst ratio over the cases; TestSuite and TestLargeSystems hold the
// default within 10×). The forward errors of two backward-stable solvers
// differ by factors near 10 on ill-conditioned systems (the last line):
// where GTSV's error is far below its condition's bound (type 9 seed 3,
// randsvd mode 3: 2.8e−6), no solver without a more accurate residual
// meets it within 10×, and refinement in working precision only makes
// the method as backward stable as GTSV. The residual of Stage 4 makes
// it more accurate than GTSV: the refined error is the unrefined one
// times its own relative size, plus rounding.
//
// Where the error comes from without refinement: the coarse rows of the
// spike formulation (x = y − v·x_{s−1} − w·x_e on T_k, y = T_k⁻¹·d, v =
// T_k⁻¹·a_s·e_0, w = T_k⁻¹·c_{e−1}·e_{m−1}, rows combined to drop x_e and
// x_{s−1}) miss the exact solution by about u·max(|v|, |w|), which grows
// with the condition of T_k: on type 1 (U(−1,1)) at N = 2^14, residuals of
// 1.9e−12 in the partitions with max(|v|, |w|) ≈ 10⁴, against 7.4e−15
// for Stage 1's rows, and an error of 5.1e−10 against GTSV's 1.7e−14
// (TestSpikeRows); the likelier a nearly singular block, the more
// partitions: 1.8e−9 against 2.2e−13 at N = 2^20. Stage 3 given the
// exact coarse solution is within 10× of GTSV (9.1e−16 there). What
// Stages 1–3 still lose (16× GTSV's error at N = 2^14, 13× at 2^20) is
// the Schur complement's: a partition whose rows without their first (or
// last) row are nearly singular on the interior unknowns, whose coarse
// row then cancels. For random systems with partitions of 8 rows the
// backward error of Stages 1–3 reaches 200 unit roundoffs (TestRandom
// logs it); refined, it is below 1.
//
// # Cost
//
// For one large system on a GPU, in arrays of N values read or written
// (a, b, c, d, x), besides the coarse systems (8N/m values a level):
// Stages 1–3 read a, b, c, d twice (Stage 1's pass, and Stage 3's, which
// eliminates again) and write x: 9. Stage 3's pass has all it needs to
// form the residual of its partition's rows (x_{s−1}, x_s, x_{e−1}, x_e
// are coarse values) and to run the correction's Stage 1 at once; the
// correction's coarse system is solved; a last pass reads a, b, c, d and
// x (the neighbours' x_{s−1}, x_e from the coarse solution, not from x,
// which that pass overwrites), forms the residual again, runs the
// correction's Stage 3 and writes x + δ: 4 + 5 + 6 = 15 against 9, about
// 1.7×. RefineAuto skips the last pass and the second coarse solve for a
// system whose every row passes the test (9, and the correction's coarse
// rows written). A batch of systems that each fit one block keeps a, b,
// c, d in shared memory: the refinement reads and writes no more global
// memory, and about doubles the arithmetic. On the CPU (m = 16, N = 2^20,
// random U(−1,1) entries: BenchmarkSolve) Stages 1–3 take 2.6× GTSV's
// time and Stage 4 as much again.
//
// # Breakdown
//
// A zero or non-finite pivot is reported as a *tri.PivotError wrapping
// tri.ErrZeroPivot, and x is not written. Its Row is the original row: in
// Stage 1 the smallest row whose unknown a step with a non-finite pivot
// eliminated (NaN or ±Inf entries; a zero step is no breakdown); else, in
// Stage 2, the row the coarse row stands for (CoarseRow: a partition's
// first or last row); else, in Stage 3, the row j of the first interior
// unknown whose pivot is zero or not finite (zero: the matrix's column j
// is zero on the rows that hold x_j, and the matrix is singular). A
// partition's own block can be singular where the matrix is not
// (TestSingularPartitionParts): Stage 1 eliminates the interior unknowns
// only, and the method solves such systems. A solution that overflows
// without a bad pivot is returned as it is (the tridiag CPU device
// reports it as tridiag.ErrNonFiniteResult).
package pivotpart
