/*
 * bandsolve.h: the C interface of libbandsolve, bandsolve's batched
 * tridiagonal and banded solvers as a shared library.
 *
 * Build (Go toolchain, from the repository root):
 *
 *   go build -buildmode=c-shared -o libbandsolve.so ./capi             CPU
 *   go build -buildmode=c-shared -tags cuda -o libbandsolve.so ./capi  CUDA
 *
 * and link with -lbandsolve (or dlopen it). Both variants export every
 * function of this header; in the CPU variant the CUDA ones return
 * BANDSOLVE_ERR_UNSUPPORTED. The go build also writes a header of its own
 * (libbandsolve.h) with Go's types: use this one.
 *
 * Loading the CUDA variant on a machine whose NVIDIA driver cannot
 * initialize (no driver, no GPU) ENDS THE PROCESS while the library loads:
 * the driver binding it links calls cuInit when the library is loaded and
 * exits when that fails. Before loading it, probe the driver yourself:
 * dlopen("libcuda.so.1"), cuInit(0) == 0 and cuDeviceGetCount(&n) == 0
 * with n > 0; otherwise load the CPU variant. (The Python package does
 * exactly this.)
 *
 * Conventions
 *
 * A tridiagonal batch holds G systems of N rows; row i of system g reads
 *
 *   a[i]*x[i-1] + b[i]*x[i] + c[i]*x[i+1] = d[i]
 *
 * with a[0] and c[N-1] ignored (they must still be finite) unless the plan
 * is cyclic, where they are the corners A[0][N-1] and A[N-1][0]. Row i of
 * system g lives at element i*elem_stride + g*batch_stride of each array
 * (see bandsolve_layout); every array holds at least
 * (N-1)*elem_stride + (G-1)*batch_stride + 1 elements, of the plan's
 * precision (float or double). Sizes and strides are in elements.
 *
 * Every function that can fail returns a bandsolve_status. On failure the
 * calling thread's last error (bandsolve_last_error) says what failed, in
 * words naming the system and row where there is one.
 *
 * Per-system status (info): the solve functions take an optional array
 * info of G int32_t (NULL to skip it), written on every return, like
 * LAPACK's info one per system:
 *    0  the system was solved;
 *   >0  the system failed at row info (1-based): a zero pivot, a singular
 *       matrix, a pivot that is not positive (LDLT), a non-finite result
 *       or, with BANDSOLVE_CHECK, the accuracy check; its rows hold NaN
 *       (the check keeps the computed solution);
 *   -1  the system failed at a row the solver does not name;
 *   -2  nothing was solved: the call failed before solving (a bad
 *       argument or non-finite input, see the status).
 * When only some systems fail the status is BANDSOLVE_ERR_SYSTEMS and the
 * other systems' solutions are valid.
 *
 * Thread safety: every function may be called from any thread. The last
 * error is kept per thread. A plan or factors handle may be shared by
 * threads; its solves run one at a time (a second caller waits). A handle
 * must not be used during or after its destroy call.
 */
#ifndef BANDSOLVE_H
#define BANDSOLVE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* BANDSOLVE_API_VERSION is the version of this interface;
 * bandsolve_api_version returns the library's. */
#define BANDSOLVE_API_VERSION 1

/* bandsolve_status: the result of a call. */
typedef int bandsolve_status;
enum {
	BANDSOLVE_OK = 0,
	/* A bad argument: size, stride, layout, option, null pointer,
	 * array or handle of the wrong kind. */
	BANDSOLVE_ERR_ARGUMENT = 1,
	/* NaN or Inf in the input; the error text names the array,
	 * system and row. Nothing was solved. */
	BANDSOLVE_ERR_NONFINITE = 2,
	/* Some systems failed; info says which and where, the others
	 * are solved. */
	BANDSOLVE_ERR_SYSTEMS = 3,
	/* Not available in this variant or on this device (device
	 * pointers in the CPU variant, factors on a GPU). */
	BANDSOLVE_ERR_UNSUPPORTED = 4,
	/* The workspace does not fit the memory the process may have. */
	BANDSOLVE_ERR_MEMORY = 5,
	/* A CUDA driver error. */
	BANDSOLVE_ERR_DEVICE = 6,
	/* Anything else (a bug: please report the error text). */
	BANDSOLVE_ERR_INTERNAL = 7
};

/* Element precision of a plan or solve. */
enum {
	BANDSOLVE_F32 = 0, /* float */
	BANDSOLVE_F64 = 1  /* double */
};

/* Where the rows of a batch live (bandsolve_tridiag_create). */
enum {
	/* Systems one after the other: row i of system g at g*N + i. */
	BANDSOLVE_LAYOUT_CONTIGUOUS = 0,
	/* Systems interleaved: row i of system g at i*G + g. */
	BANDSOLVE_LAYOUT_INTERLEAVED = 1,
	/* Row i of system g at i*elem_stride + g*batch_stride: the lines of
	 * an N-d array along any axis, without a copy. No two rows may
	 * share an element. */
	BANDSOLVE_LAYOUT_STRIDED = 2
};

/* Whether the automatic algorithm pivots. */
enum {
	/* Per system where it needs it (CPU); the GPU does not pivot. */
	BANDSOLVE_PIVOT_AUTO = 0,
	/* Every system with partial pivoting. */
	BANDSOLVE_PIVOT_ALWAYS = 1,
	/* Never by choice. */
	BANDSOLVE_PIVOT_NEVER = 2
};

/* Plan flags, or-ed. */
enum {
	/* Periodic systems: a[0] and c[N-1] are the corners. */
	BANDSOLVE_CYCLIC = 1,
	/* Accuracy check after every solve (backward error and condition
	 * estimate); failing systems are reported in info. */
	BANDSOLVE_CHECK = 2,
	/* Skip the NaN/Inf scan of the input. */
	BANDSOLVE_SKIP_FINITE_CHECK = 4
};

/* Devices. */
enum {
	BANDSOLVE_DEVICE_CPU = 0,
	BANDSOLVE_DEVICE_CUDA = 1 /* CUDA variant only */
};

/* Opaque handles. */
typedef struct bandsolve_tridiag_s *bandsolve_tridiag;
typedef struct bandsolve_factors_s *bandsolve_factors;

/* bandsolve_version returns the library's version text, e.g.
 * "bandsolve 1 (cpu)"; static storage. */
const char *bandsolve_version(void);

/* bandsolve_api_version returns BANDSOLVE_API_VERSION of the library. */
int bandsolve_api_version(void);

/* bandsolve_has_cuda returns 1 in the CUDA variant, 0 in the CPU one. */
int bandsolve_has_cuda(void);

/* bandsolve_last_error returns the text of the last error of the calling
 * thread ("" when its last call succeeded). The text stays valid until
 * the thread's next call into the library. */
const char *bandsolve_last_error(void);

/* bandsolve_tridiag_create makes a plan for batches of g systems of n
 * rows, and stores its handle in *plan.
 *   layout: BANDSOLVE_LAYOUT_*; elem_stride and batch_stride are read for
 *           BANDSOLVE_LAYOUT_STRIDED only.
 *   precision: BANDSOLVE_F32 or BANDSOLVE_F64.
 *   algorithm: "auto" (or NULL, ""), "thomas", "gtsv", "cr", "pcr",
 *           "wangmou", "tpr", "partition", "partition-pivot", "ldlt".
 *   pivoting: BANDSOLVE_PIVOT_*.
 *   flags: BANDSOLVE_CYCLIC | BANDSOLVE_CHECK | BANDSOLVE_SKIP_FINITE_CHECK.
 *   device: BANDSOLVE_DEVICE_CPU (ordinal: worker threads, 0 for one per
 *           core) or BANDSOLVE_DEVICE_CUDA (ordinal: the GPU, 0 first).
 * A CUDA plan solves host arrays (copying them) and device arrays
 * (bandsolve_tridiag_solve_device). */
bandsolve_status bandsolve_tridiag_create(bandsolve_tridiag *plan, int64_t n, int64_t g,
	int layout, int64_t elem_stride, int64_t batch_stride, int precision,
	const char *algorithm, int pivoting, unsigned flags, int device, int ordinal);

/* bandsolve_tridiag_destroy releases the plan (NULL is ignored). */
bandsolve_status bandsolve_tridiag_destroy(bandsolve_tridiag plan);

/* bandsolve_tridiag_describe returns how the plan solves (the algorithm
 * the device runs); valid until the thread's next call. */
const char *bandsolve_tridiag_describe(bandsolve_tridiag plan);

/* bandsolve_tridiag_solve solves the batch in host memory: a, b, c the
 * coefficients (a may be NULL for "ldlt"), d the right-hand sides, x the
 * solutions (x may equal d). */
bandsolve_status bandsolve_tridiag_solve(bandsolve_tridiag plan, const void *a,
	const void *b, const void *c, const void *d, void *x, int32_t *info);

/* bandsolve_tridiag_solve_const solves the batch whose every row has the
 * coefficients a, b, c (converted to the plan's precision). */
bandsolve_status bandsolve_tridiag_solve_const(bandsolve_tridiag plan, double a,
	double b, double c, const void *d, void *x, int32_t *info);

/* bandsolve_tridiag_solve_many solves nrhs right-hand sides: column r is
 * a whole batch in the plan's layout at element r*L of d and x,
 * L = (N-1)*elem_stride + (G-1)*batch_stride + 1. */
bandsolve_status bandsolve_tridiag_solve_many(bandsolve_tridiag plan, int64_t nrhs,
	const void *a, const void *b, const void *c, const void *d, void *x, int32_t *info);

/* bandsolve_tridiag_factor factors the batch (CPU plans of "auto",
 * "thomas", "gtsv" or "ldlt") for repeated solves; *factors receives the
 * handle, also when some systems broke down (BANDSOLVE_ERR_SYSTEMS, info
 * names them; their solves give NaN). */
bandsolve_status bandsolve_tridiag_factor(bandsolve_tridiag plan, const void *a,
	const void *b, const void *c, bandsolve_factors *factors, int32_t *info);

/* bandsolve_tridiag_factor_const factors the constant-coefficient batch. */
bandsolve_status bandsolve_tridiag_factor_const(bandsolve_tridiag plan, double a,
	double b, double c, bandsolve_factors *factors, int32_t *info);

/* bandsolve_factors_solve solves the factored batch for nrhs right-hand
 * sides laid out as in bandsolve_tridiag_solve_many; x may equal d. */
bandsolve_status bandsolve_factors_solve(bandsolve_factors factors, int64_t nrhs,
	const void *d, void *x, int32_t *info);

/* bandsolve_factors_destroy releases the factors (NULL is ignored). They
 * stay valid after their plan is destroyed. */
bandsolve_status bandsolve_factors_destroy(bandsolve_factors factors);

/* bandsolve_tridiag_solve_device solves the batch held in device memory
 * of the plan's GPU (CUdeviceptr values: cudaMalloc, CuPy, PyTorch memory
 * of the device's primary context, the one the CUDA runtime uses), queued
 * on stream (a CUstream; 0 is the legacy default stream) after the work
 * already queued there. It returns when the solve is done. a may be 0 for
 * "ldlt"; x may equal d. CUDA variant, CUDA plans only. Input is not
 * scanned for NaN: a system with one breaks down and is reported in info. */
bandsolve_status bandsolve_tridiag_solve_device(bandsolve_tridiag plan, uint64_t a,
	uint64_t b, uint64_t c, uint64_t d, uint64_t x, uintptr_t stream, int32_t *info);

/* bandsolve_tridiag_solve_device_const is solve_device with constant
 * coefficients. */
bandsolve_status bandsolve_tridiag_solve_device_const(bandsolve_tridiag plan, double a,
	double b, double c, uint64_t d, uint64_t x, uintptr_t stream, int32_t *info);

/* bandsolve_solve_banded solves g banded systems of order n with kl
 * sub-diagonals and ku super-diagonals by LU with partial pivoting
 * (LAPACK gbsv), on the CPU, in parallel over the systems. Storage is
 * SciPy's solve_banded((kl, ku), ab, b), one system after the other:
 *   ab: system s, a[i][j] at s*(kl+ku+1)*n + (ku+i-j)*n + j (unchanged);
 *   b, x: system s, row i, column r at s*n*nrhs + i*nrhs + r (x may
 *         equal b).
 * info[s] > 0: system s is singular at row info[s] (1-based). */
bandsolve_status bandsolve_solve_banded(int precision, int64_t n, int64_t kl, int64_t ku,
	int64_t g, int64_t nrhs, const void *ab, const void *b, void *x, int32_t *info);

/* bandsolve_solveh_banded solves g symmetric positive definite banded
 * systems of order n with u sub- and super-diagonals by Cholesky's method
 * (LAPACK pbsv), on the CPU, in parallel over the systems. Storage is
 * SciPy's solveh_banded(ab, b, lower=...), one system after the other,
 * u+1 rows a system:
 *   lower = 0: a[i][j] (i <= j) at s*(u+1)*n + (u+i-j)*n + j;
 *   lower != 0: a[i][j] (i >= j) at s*(u+1)*n + (i-j)*n + j;
 *   b, x as for bandsolve_solve_banded (x may equal b).
 * NaN or Inf in the stored triangle or b fails the call (nothing solved).
 * info[s] > 0: system s is not positive definite, its pivot at row
 * info[s] (1-based) not positive; its x is NaN, the others are solved
 * (BANDSOLVE_ERR_SYSTEMS). */
bandsolve_status bandsolve_solveh_banded(int precision, int64_t n, int64_t u, int lower,
	int64_t g, int64_t nrhs, const void *ab, const void *b, void *x, int32_t *info);

/* bandsolve_solve_banded_device is bandsolve_solve_banded on arrays in
 * device memory of GPU ordinal (CUdeviceptr values of the device's
 * primary context, as for bandsolve_tridiag_solve_device: cudaMalloc,
 * CuPy, PyTorch), in the same storage, queued on stream (a CUstream; 0 is
 * the legacy default stream) after the work already queued there. It
 * returns when the solve is done. ab and b are only read; x may equal b
 * (otherwise it must not overlap them). CUDA variant only: the CPU one
 * checks the arguments and returns BANDSOLVE_ERR_UNSUPPORTED.
 *
 * The systems are solved by LU with partial pivoting, one GPU thread per
 * system, for K = max(1, kl, ku) <= 8 and K < n (a band with kl != ku is
 * first copied into K-wide storage of the library's, which gives the same
 * pivots and results; the columns of b are solved one after the other);
 * other shapes (wider bands, n = 1) are copied to the host, solved there
 * as bandsolve_solve_banded does and copied back. The CUDA variant keeps
 * the device workspaces of the last 4 shapes solved for the next calls.
 *
 * Input is not scanned for the whole call: a system with a NaN or Inf in
 * its band or b, or whose solution is not finite, fails like a singular
 * one (info[s] > 0 at its row, all of its x NaN; BANDSOLVE_ERR_SYSTEMS),
 * and the other systems are solved. */
bandsolve_status bandsolve_solve_banded_device(int precision, int64_t n, int64_t kl, int64_t ku,
	int64_t g, int64_t nrhs, uint64_t ab, uint64_t b, uint64_t x, int ordinal, uintptr_t stream,
	int32_t *info);

#ifdef __cplusplus
}
#endif

#endif /* BANDSOLVE_H */
