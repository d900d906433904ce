// Package sptrsv solves sparse triangular systems T x = b on the CPU, T
// the lower or upper triangle of a sparse.CSR matrix, with a stored or a
// unit diagonal.
//
// Analyze checks the matrix once (square, triangular in the requested
// sense or Options.Part = TrianglePart to take the triangle of a general
// matrix, no zero or missing diagonal entry) and keeps everything the
// solves reuse; its statistics (Stats: order, nonzeros, levels, rows per
// level) are the columns of Liu et al.'s Table 3. Three solves use it:
//
//   - SolveSequential, the reference: one row after another.
//   - Solve, the level-set method of Naumov (NVIDIA technical report
//     NVR-2011-001, 2011): the level of a row is one more than the largest
//     level of the rows it depends on; the rows are sorted by level, and
//     the levels are solved one after another, the rows of a wide level
//     in parallel on all cores. It gives the same bits as SolveSequential.
//   - SolveSyncFree, the synchronization-free method of Liu, Li, Hou and
//     Vinter (Euro-Par 2016): the triangle in CSC and the in-degree of
//     every row are all the analysis it needs; workers take components in
//     the order of the dependencies, wait until their in-degree is met and
//     push their contributions into the dependents' partial sums with
//     atomic additions.
//
// The locality-aware sub-graph partition with time slots of Picciau et al.
// (2016) is not built yet.
//
// The sequential and level-set solves take float32 or float64 vectors (a
// float32 solve rounds the values to float32 once and runs in float32);
// the synchronization-free solve is float64 only. Rows and columns are
// 0-based in every error.
package sptrsv
