// Package bench is the benchmark harness of bandsolve (`bandsolve bench`):
// it times this module's tridiagonal plans against their peers in one
// process and one run, and writes a table, CSV and PNG plots.
//
// Cases come from named grids (Grid): the TPR paper's Fig. 12–13 grid, large
// batches, single large systems, constant coefficients, and the three
// layouts, in FP32 and FP64, and with -precision c64,c128 (GridCases) the
// same sizes in complex64 and complex128. For each case the data is generated once
// (-matrix: tridiag(−1, 2, −1) like the measured anchors, a random
// diagonally dominant matrix, or a diffusion matrix with a random
// coefficient, weakly dominant) and every solver is timed after warm-up
// solves over
// several repetitions, with the right-hand side restored before each one
// outside the timed region:
//
//   - gpu:<algorithm> (with the cuda build tag): tridiaggpu.Plan.Time, CUDA
//     events around the enqueued solve on the plan's stream, data already
//     on the device;
//   - cusparse:gtsv2StridedBatch (contiguous), cusparse:gtsvInterleavedBatch
//     /algo0…2 (interleaved) and cusparse:gtsv2 (single systems), loaded
//     from libcusparse with dlopen at run time and timed the same way;
//   - cpu:<algorithm>: the CPU backend (tridiag.DefaultCPU), wall clock;
//   - gonum:dgtsv: gonum's LAPACK Dgtsv per system (FP64, contiguous),
//     shared among GOMAXPROCS goroutines, wall clock.
//
// Complex cases (C64, C128; complexdata.go, complex_cuda.go) time the
// algorithms that solve complex systems (auto, thomas, gtsv): on the GPU
// the complex plan of gpu.NewComplexTridiagPlan on data resident in
// device memory, timed as the real plans (ComplexPlan.Time); against cuSPARSE's C and Z routines
// under the same names (cusparse:gtsv2StridedBatch is
// cusparseCgtsv2StridedBatch in a C64 case), loaded with the others and
// passed Go's complex64 and complex128 arrays, which have the layout of
// cuComplex and cuDoubleComplex. Their matrices are the complex
// counterparts of -matrix (newComplexData). cuSPARSE's complex
// pentadiagonal batch (c/zgpsvInterleavedBatch) is not timed: the
// pentadiag grid's own solver is real.
//
// Figures: MRows/s = N·G / median / 1e6, and the fraction of the physical
// limit = (Case.BytesMoved / median) / copy bandwidth, where BytesMoved
// counts a, b, c, d read once and x written once (20 B/row in FP32, 40 in
// FP64 and complex64, 80 in complex128; d and x only with constant
// coefficients) and the copy bandwidth is
// measured in the same run (bytes read + written per second): a
// device-to-device copy for GPU solvers, a parallel memory copy for host
// solvers. A backward error on a sample of systems guards against fast
// wrong answers (flagged with "!" above 1e-5 in FP32, 1e-13 in FP64).
//
// The banded grids (BandGrid: banded, banded-quick, pentadiag; run by
// runBanded) time single banded systems of half-bandwidth K and diagonal
// dominance d on the GPU (truncated SPIKE direct for d ≥ 1, BiCGStab(2)
// with an FP32 SPIKE preconditioner below), factor and solve apart,
// against the host's banded LU with partial pivoting (cpu:gbsv, skipped
// above -host-cap by a cost model fitted as it goes) and package spike on
// all cores, with true residuals ‖b − A·x‖₂/‖b‖₂ checked on the host; and
// batches of pentadiagonal systems (bandedgpu.BatchPlan) against cuSPARSE
// gpsvInterleavedBatch. They write their own table and CSV (BandResult)
// and the plot banded-d1.png.
//
// The factor grids (factor, factor-quick; run by runFactor, GPU only) time
// stored tridiagonal factorizations (tridiaggpu.FactorTiming): the factor
// and the solves of 1, 4 and 16 right-hand sides apart, LDLT against
// Thomas and GTSV, the one-shot solve of one right-hand side, and cuSPARSE
// gtsv2 with n columns (single systems, refactoring at every call) or
// gtsv2StridedBatch once a column (batches). MRows/s counts rows ×
// right-hand sides; they write their own table and CSV (FactorResult).
//
// Main parses the command line; the cuda build tag adds the GPU side
// (gpu_cuda.go, cusparse_cuda.go), without it -device cuda says the GPU is
// not built in.
package bench
