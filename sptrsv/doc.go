// Package sptrsv solves sparse triangular systems T x = b on the CPU, T
// the lower or upper triangle of a sparse.CSR matrix, with a stored or a
// unit diagonal.
//
// Analyze checks the matrix once (square, triangular in the requested
// sense or Options.Part = TrianglePart to take the triangle of a general
// matrix, no zero or missing diagonal entry) and keeps everything the
// solves reuse; its statistics (Stats: order, nonzeros, levels, rows per
// level) are the columns of Liu et al.'s Table 3. Four solves use it:
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
//     atomic additions (compare-and-swap on the float64 or float32 bits).
//   - SolveLocality, the locality-aware method of Picciau, Inggs,
//     Wickerson, Kerrigan and Constantinides (HiPC 2016), on a Locality
//     made by AnalyzeLocality from an Analysis.
//
// # Locality-aware sub-graphs
//
// AnalyzeLocality cuts the dependency graph into sub-graphs of at most S
// rows (LocalityOptions.Capacity, DefaultCapacity = 1024 rows: x of a
// sub-graph in 8 KiB of a GPU block's shared memory in float64), with the
// paper's level-based heuristic; a sub-graph depends only on sub-graphs
// of earlier sub-graph levels. Within a sub-graph every entry gets a time
// slot such that no two entries of one slot write one row: the external
// entries (from rows of other sub-graphs) in slots of their own, then the
// internal ones slot by slot, each row divided by its diagonal as soon as
// its last entry is subtracted. LocalityStats give the sub-graphs,
// sub-graph levels, rows per sub-graph, internal and external entries and
// slots.
//
// The schedule is kept as flat arrays (LocalityPlan, returned by Plan in
// float32 or float64) that a GPU kernel reads as they are, one launch per
// sub-graph level and one block per sub-graph:
//
//	LevelPtr   sub-graph level → sub-graphs (sub-graphs numbered level by level)
//	RowPtr     sub-graph → positions in Rows; Rows: position → row, Diag: position → divisor
//	ExtSlotPtr sub-graph → external slots; ExtPtr: slot → external edges
//	           ExtCol (global row read), ExtDst (local row written), ExtVal
//	StepPtr    sub-graph → steps (one more than its internal slots)
//	StepRowPtr step → positions of the rows divided at the step (a range)
//	EdgePtr    step → internal edges of its slot
//	           EdgeSrc, EdgeDst (local rows), EdgeVal
//
// A block loads b of its rows into x_loc, applies the external slots,
// then for every step divides the step's rows and applies the step's
// slot, with a barrier between slots, and stores x_loc to x. SolveLocality
// is its CPU twin: the sub-graph levels in order, the sub-graphs of a
// level in parallel on the workers; its x is the same from run to run
// and may differ from SolveSequential's by rounding (the entries of a
// row are subtracted in slot order).
//
// The sequential, level-set, synchronization-free and locality solves
// take float32 or float64 vectors (a float32 solve rounds the values to
// float32 once and runs in float32). Rows and columns are 0-based in
// every error.
package sptrsv
