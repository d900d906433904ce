package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/bandsolve/bandsolve/banded"
	"github.com/bandsolve/bandsolve/internal/atomicfile"
	"github.com/bandsolve/bandsolve/krylov"
	"github.com/bandsolve/bandsolve/npy"
	"github.com/bandsolve/bandsolve/sparse"
	"github.com/bandsolve/bandsolve/spike"
	"github.com/bandsolve/bandsolve/tridiag"
)

var bandedCommand = &command{
	name:     "banded",
	summary:  "solve a banded or sparse system by truncated SPIKE (direct or preconditioned BiCGStab(2))",
	synopsis: "banded [-n N -k K -d D -seed S | -npy AB.npy [-kl L -ku U] | -mtx A.mtx] [flags]",
	about: `Banded solves one system A·x = b with a half-bandwidth K by truncated
SPIKE (Li et al. 2014, package spike): as a direct solver (-method
direct, accurate for diagonally dominant A), as the preconditioner of
BiCGStab(2) (-method iterative, the default), by banded LU with
partial pivoting (-method pivot, the gbsv-like reference), or by
Cholesky's method for a symmetric positive definite band (-method
cholesky, pbsv: the lower triangle read, K+1 values a row, no pivoting;
a generated band is then made symmetric, the upper triangle the lower's
transpose, before its diagonal is set; a band from a file must be
symmetric).

The matrix comes from one of:
  (default)  a generated band: N rows, half-bandwidth K, off-diagonal
             entries from U(−1, 1) and the diagonal set so that every row
             has degree of diagonal dominance D (|a_ii| = D·Σ_{j≠i}|a_ij|,
             the synthetic matrices of the paper's §5), from -seed
  -npy F     a band in the storage of scipy.linalg.solve_banded((K, K),
             ab, b): a (2K+1, N) array ab with ab[K+i−j, j] = a_ij, so row
             K is the diagonal, row 0 the K-th super-diagonal and row 2K
             the K-th sub-diagonal; the entries of ab outside the matrix
             are ignored
  -npy F -kl L -ku U
             a band with L sub-diagonals and U super-diagonals in the
             storage of scipy.linalg.solve_banded((L, U), ab, b) and
             LAPACK gbsv: an (L+U+1, N) array ab with ab[U+i−j, j] =
             a_ij, so row U is the diagonal, row U−t the t-th
             super-diagonal and row U+t the t-th sub-diagonal (rows of
             bandwidths beyond N−1 lie outside the matrix and are
             dropped). L ≠ U is solved by -method pivot only, the
             default then (truncated SPIKE needs L = U); L = U is the
             (2K+1, N) case above
  -mtx F     a sparse Matrix Market file, reordered as in the paper's §3
             (maximum-product matching with scaling, RCM on QA + (QA)ᵀ,
             drop-off of the entries beyond the smallest K that keeps a
             fraction -delta of the squared Frobenius norm) and converted
             to a band that preconditions BiCGStab(2) on the whole
             reordered sparse matrix (CSR products)

The right-hand side is read from -rhs (a .npy vector of length N) or
made as b = A·x̃ with x̃ from U(−1, 1) (-seed), in which case the error
‖x − x̃‖₂/‖x̃‖₂ is printed too.

Precision: f64 everywhere; f32 factors and solves in float32 (direct and
pivot); mixed factors the preconditioner in float32 and iterates in
float64 (iterative, the paper's §4 strategy). The default, auto, follows
the data: a float32 band from -npy (with a float32 -rhs, or none) is
solved in f32 by direct and pivot and in mixed by iterative, and x is
written as float32; any other input (float64 or mixed dtypes, -mtx, a
generated band) is solved in f64. x (-o) is float32 when the solve is
f32 or auto chose from float32 data, else float64.

A complex -npy band (dtype c8 or c16, with or without -kl/-ku) is solved
by banded LU with partial pivoting on the CPU (pivots chosen by
|re| + |im| as LAPACK's zgbtrf chooses them), in complex64 for c8 and
complex128 for c16 (-precision f32 or f64 choose), with a -rhs of any
dtype read in that type or b = A·x̃ for a complex x̃; x (-o) has the
dtype of the solve, and the report gives the backward error and κ̂ with
moduli. Other methods and -device cuda refuse a complex band.

The report (stdout) gives N, K (KL and KU for -kl ≠ -ku), the degree
of diagonal dominance d of the band that is factored, the partitions, for -mtx the half-bandwidth
before and after each reordering stage, the iterations (BiCG steps: two
per BiCGStab(2) cycle), the true relative residual ‖b − A·x‖₂/‖b‖₂
computed in float64 against the original matrix, and the times of the
reordering, the factorization and the solve.

Accuracy is checked: the normwise backward error ‖b − A·x‖∞ /
(‖A‖∞·‖x‖∞ + ‖b‖∞) of x, against the original matrix and b, must be at
most -check-tol (default 10³·ε of the precision: 2.2e-13 for f64 and
mixed, 1.2e-4 for f32; for -method iterative at least -tol·‖b‖₂/‖b‖∞,
which every x that meets -tol satisfies), and the
condition number estimate κ̂∞ (LAPACK gbcon's: banded LU with partial
pivoting in float64 and the Hager–Higham estimator; of the reordered
and scaled matrix for -mtx, where -delta drops entries from solves with
the whole matrix by BiCGStab(2) preconditioned by the band)
must have κ̂·ε < 1/2, else no digit of x can be trusted (κ̂ = ∞ for a
singular matrix). Otherwise the command exits with status 1 and a
one-line reason, and -o is not written unless -force is given. A solve
that fails outright (BiCGStab(2) not converged, refinement that does not
reach the tolerance) is treated the same way.

Refinement (-method direct): truncated SPIKE factors without pivoting
and boosts pivots smaller than -boost·max|a_ij| of their block, which
perturbs the factors. With -refine always (the default) the backward
error of the direct solution is measured and, when above the tolerance
(boosted pivots, truncation of many partitions, growth on a band that is
not diagonally dominant, float32 factors), refined against the float64
matrix: iterative refinement, then BiCGStab(2) preconditioned by the
factorization (banded.Refine), at most 40 BiCG steps. -refine boosted
does this only when a pivot was boosted (the library's default), -refine
off never. When refinement stops above the tolerance, the command fails
with the backward error reached. On -device cuda the refinement runs on
the host with the GPU's factorization as preconditioner.

Devices: -device cpu runs package spike on the host's cores; -device
cuda (or cuda:N) runs the same truncated SPIKE on the GPU
(the GPU SPIKE plan, bit for bit the CPU's factors for the same partitions;
P defaults to the GPU's tuning) and, for -method iterative, BiCGStab(2)
on device vectors with CSR products of the band or of the reordered
sparse matrix; the report then adds the time of the uploads, which the
factor and solve times exclude. -method pivot runs on the CPU only.

Guarantees:
  - Sizes are checked before memory is asked for: a generated band
    (-n, -k), the (2K+1, N) shape of -npy (against the file's size and
    memory), the Matrix Market header of -mtx (entries declared against
    memory, and against the order: a nonsingular N×N matrix needs an
    entry in every row and column, so a 76-byte file declaring a
    10⁹×10⁹ matrix with one entry is refused at once), and the band the
    reordering produces. A refusal is one line with the size asked for
    and the size the process can have (physical memory, cgroup limit,
    RLIMIT_AS), never an out-of-memory crash.
  - x is written to a temporary file in the directory of -o, flushed to
    disk and renamed over -o only when complete: a failed write (a full
    disk) leaves an existing file unchanged.
  - -o may not name one of the inputs (-npy, -mtx, -rhs), however
    spelled.`,
	examples: `  bandsolve banded -n 100000 -k 16 -d 1 -method direct
  bandsolve banded -n 100000 -k 50 -d 0.3 -p 8 -ul 2k -precision mixed
  bandsolve banded -n 20000 -k 10 -d 0.5 -precond block-jacobi
  bandsolve banded -npy ab.npy -rhs b.npy -method pivot -o x.npy
  bandsolve banded -npy ab.npy -kl 2 -ku 5 -rhs b.npy -o x.npy
  bandsolve banded -mtx matrix.mtx -delta 0.99 -p 4 -tol 1e-10
  bandsolve banded -n 1000000 -k 100 -d 1 -method direct -device cuda`,
	run: runBanded,
}

// bandedProblem is the system the command solves.
type bandedProblem struct {
	source string
	// op is the operator of the solve: the band itself, or the reordered
	// sparse matrix; band is what the preconditioner (or the direct
	// solvers) factor.
	op   spike.Operator
	band *banded.Band[float64]
	b    []float64 // right-hand side in the solver's ordering
	// For -mtx: the original matrix and right-hand side, and the
	// reordering that maps them.
	orig     *sparse.CSR
	origB    []float64
	reorder  *sparse.Reordering
	xTrue    []float64 // manufactured solution (original ordering), or nil
	reorderT time.Duration
	// float32 says the band came from a float32 file, rhsFloat32 the
	// right-hand side (-precision auto follows them).
	float32, rhsFloat32 bool
	// general is the matrix of a -npy band with -kl ≠ -ku (band and op
	// are nil then): solved by LU with partial pivoting only.
	general *banded.General[float64]
}

// order is N.
func (pb *bandedProblem) order() int {
	if pb.general != nil {
		return pb.general.N
	}
	return pb.band.N
}

func runBanded(c *command, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet(c)
	n := fs.Int("n", 100000, "order N of a generated band")
	k := fs.Int("k", 16, "half-bandwidth K of a generated band")
	d := fs.Float64("d", 1, "degree of diagonal dominance of a generated band (≥ 0; dominant for ≥ 1)")
	seed := fs.Uint64("seed", 1, "seed of the generated band and of the manufactured solution")
	npyPath := fs.String("npy", "", "band `file` (.npy): a (2K+1, N) array in scipy solve_banded storage, or (L+U+1, N) with -kl L -ku U")
	kl := fs.Int("kl", 0, "lower bandwidth `L` of the -npy band (with -ku): an (L+U+1, N) array ab[U+i−j, j] = a_ij as for scipy solve_banded((L, U), ab, b); L ≠ U is solved by -method pivot only")
	ku := fs.Int("ku", 0, "upper bandwidth `U` of the -npy band (with -kl)")
	mtxPath := fs.String("mtx", "", "sparse Matrix Market `file`, reordered into a band")
	rhsPath := fs.String("rhs", "", "right-hand side `file` (.npy vector of length N); default b = A·x̃")
	out := fs.String("o", "", "output `file` for the solution x (.npy; float32 when the solve is f32 or auto chose float32 from the data, else float64)")
	method := fs.String("method", "iterative", "method: direct (truncated SPIKE), iterative (BiCGStab(2) preconditioned), pivot (banded LU with partial pivoting) or cholesky (a symmetric positive definite band)")
	precond := fs.String("precond", "spike", "preconditioner of -method iterative: spike, block-jacobi or none")
	parts := fs.Int("p", 0, "number of partitions P (0: spike.ChoosePartitions for the CPU's workers, the tuning of the GPU; for -method iterative and d < 1 at most spike.PreconditionerPartitions)")
	ul := fs.String("ul", "full", "UL block for the left spikes: full (whole partition, exact), 2k (the paper's l = 2K) or an integer l > K")
	prec := fs.String("precision", "auto", "precision: auto (from the data: f32 or mixed for a float32 -npy band, else f64), f64, f32 (direct, pivot) or mixed (iterative)")
	tol := fs.Float64("tol", 1e-10, "relative residual target of -method iterative")
	maxIter := fs.Int("maxiter", 0, "most BiCG steps of -method iterative (0: krylov's default)")
	boost := fs.Float64("boost", 0, "relative diagonal boosting threshold (0: the machine epsilon; negative: off)")
	delta := fs.Float64("delta", 0, "drop-off fraction δ in (0, 1) of -mtx (Eq. 13); 0 keeps the whole reordered band")
	device := fs.String("device", "cpu", "device: cpu, cpu:WORKERS, cuda or cuda:N (direct and iterative)")
	checkTol := fs.Float64("check-tol", 0, "largest accepted normwise backward error of x (0: 10³·ε of -precision; for -method iterative at least -tol·‖b‖₂/‖b‖∞)")
	refine := fs.String("refine", "always", "refinement of -method direct: always, boosted (only after a boosted pivot) or off")
	force := fs.Bool("force", false, "write -o even when x fails the accuracy check (the exit status is still 1)")
	if help, err := parseFlags(c, fs, args, stdout); help || err != nil {
		return err
	}

	// Check the flags before reading anything.
	sources := 0
	for _, s := range []string{*npyPath, *mtxPath} {
		if s != "" {
			sources++
		}
	}
	if sources > 1 {
		return usageErrorf("give at most one of -npy and -mtx")
	}
	if sources == 0 {
		if *n < 1 || *k < 0 || *k >= *n {
			return usageErrorf("-n %d -k %d: want N ≥ 1 and 0 ≤ K < N", *n, *k)
		}
		if !(*d >= 0) || math.IsInf(*d, 0) {
			return usageErrorf("-d %g: want a finite degree of dominance ≥ 0", *d)
		}
	}
	switch *method {
	case "direct", "iterative", "pivot", "cholesky":
	default:
		return usageErrorf("unknown method %q (want direct, iterative, pivot or cholesky)", *method)
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	unequal := false // -kl ≠ -ku: LU with partial pivoting only
	if given["kl"] || given["ku"] {
		switch {
		case *npyPath == "":
			return usageErrorf("-kl and -ku apply to -npy only (the bandwidths of its (L+U+1, N) array)")
		case !given["kl"] || !given["ku"]:
			return usageErrorf("give both -kl and -ku: the lower and upper bandwidths of the (L+U+1, N) array of -npy")
		case *kl < 0 || *ku < 0:
			return usageErrorf("-kl %d -ku %d: want bandwidths ≥ 0", *kl, *ku)
		}
		unequal = *kl != *ku
	}
	if unequal {
		if given["method"] && *method != "pivot" {
			return usageErrorf("-method %s needs equal bandwidths (truncated SPIKE factors a band with KL = KU); a band with -kl %d -ku %d is solved by -method pivot only (banded LU with partial pivoting, the default when KL ≠ KU)", *method, *kl, *ku)
		}
		*method = "pivot"
	}
	var opts spike.IterativeOptions
	switch *precond {
	case "spike":
	case "block-jacobi":
		opts.Method = spike.BlockJacobi
	case "none":
		opts.NoPreconditioner = true
	default:
		return usageErrorf("unknown preconditioner %q (want spike, block-jacobi or none)", *precond)
	}
	if *precond != "spike" && *method != "iterative" {
		return usageErrorf("-precond %s applies to -method iterative only", *precond)
	}
	switch *prec {
	case "auto", "f64":
	case "f32":
		if *method == "iterative" {
			return usageErrorf("-precision f32 with -method iterative: use mixed (float32 preconditioner, float64 iteration) or f64")
		}
	case "mixed":
		if *method != "iterative" {
			return usageErrorf("-precision mixed applies to -method iterative; use f32 or f64 with -method %s", *method)
		}
		opts.Precision = spike.Mixed
	default:
		return usageErrorf("unknown precision %q (want auto, f64, f32 or mixed)", *prec)
	}
	if *parts < 0 {
		return usageErrorf("-p %d: want ≥ 0", *parts)
	}
	ulMode := strings.ToLower(strings.TrimSpace(*ul))
	ulFixed := 0
	if ulMode != "full" && ulMode != "2k" {
		v, err := strconv.Atoi(ulMode)
		if err != nil || v < 1 {
			return usageErrorf("-ul %q: want full, 2k or an integer l > K", *ul)
		}
		ulFixed = v
	}
	if !(*tol > 0) || *tol >= 1 {
		return usageErrorf("-tol %g: want 0 < tol < 1", *tol)
	}
	if *maxIter < 0 {
		return usageErrorf("-maxiter %d: want ≥ 0", *maxIter)
	}
	if *delta < 0 || *delta >= 1 {
		return usageErrorf("-delta %g: want 0 (no drop-off) or a fraction in (0, 1)", *delta)
	}
	if *delta != 0 && *mtxPath == "" {
		return usageErrorf("-delta applies to -mtx only")
	}
	if err := checkTolFlag("-check-tol", *checkTol); err != nil {
		return err
	}
	refineMode, ok := banded.ParseRefineMode(strings.ToLower(*refine))
	if !ok {
		return usageErrorf("unknown -refine %q (want always, boosted or off)", *refine)
	}
	kind, workers, err := parseDeviceName(*device)
	if err != nil {
		return err
	}
	if kind == "cuda" && unequal {
		return usageErrorf("a band with -kl %d -ku %d is solved by banded LU with partial pivoting, which runs on the CPU only; use -device cpu", *kl, *ku)
	}
	if kind == "cuda" && *method == "pivot" {
		return usageErrorf("-method pivot runs on the CPU only (banded LU with partial pivoting is the host reference); use -device cpu")
	}
	if kind == "cuda" && *method == "cholesky" {
		return usageErrorf("-method cholesky runs on the CPU only; use -device cpu")
	}

	if *out != "" {
		if err := atomicfile.CheckNotInput(*out, *npyPath, *mtxPath, *rhsPath); err != nil {
			return usageErrorf("-o %v", err)
		}
	}

	// A complex band (c8, c16): LU with partial pivoting on the CPU.
	if *npyPath != "" {
		if h, herr := npy.ReadFileHeader(*npyPath); herr == nil && h.IsComplex() {
			switch {
			case given["method"] && *method != "pivot":
				return usageErrorf("-method %s: a complex band (%s) is solved by -method pivot only", *method, h.DType)
			case kind != "cpu":
				return usageErrorf("a complex band (%s) is solved on the CPU only; use -device cpu", h.DType)
			}
			return runBandedComplex(complexBandedRun{path: *npyPath, kl: *kl, ku: *ku, general: given["kl"],
				prec: *prec, rhsPath: *rhsPath, out: *out, seed: *seed, checkTol: *checkTol, force: *force,
				single: strings.HasSuffix(h.DType, "c8"), stdout: stdout})
		}
	}

	// The problem.
	var pb *bandedProblem
	switch {
	case *npyPath != "" && given["kl"]:
		pb, err = generalFromNPY(*npyPath, *kl, *ku)
	case *npyPath != "":
		pb, err = bandFromNPY(*npyPath)
	case *mtxPath != "":
		pb, err = bandFromMTX(*mtxPath, *delta)
	default:
		// The band and the copy a factorization makes of it.
		if err := banded.CheckMemory[float64](*n, *k, 2); err != nil {
			return fmt.Errorf("-n %d -k %d: %w", *n, *k, err)
		}
		rng := rand.New(rand.NewPCG(*seed, 0xba4d))
		gen, kind := banded.Random[float64], "generated"
		if *method == "cholesky" {
			gen, kind = banded.RandomSymmetric[float64], "generated symmetric"
		}
		pb = &bandedProblem{
			source: fmt.Sprintf("%s (N=%d, K=%d, d=%g, seed %d)", kind, *n, *k, *d, *seed),
			band:   gen(*n, *k, *d, rng),
		}
		pb.op = pb.band
	}
	if err != nil {
		return err
	}
	if err := pb.rightHandSide(*rhsPath, *seed); err != nil {
		return err
	}
	// -precision auto: float32 data (a float32 band, and a float32
	// right-hand side or none) is solved in float32 (mixed for the
	// iteration) and x written as float32.
	outF32 := *prec == "f32"
	if *prec == "auto" {
		*prec = "f64"
		if pb.float32 && (*rhsPath == "" || pb.rhsFloat32) {
			outF32 = true
			*prec = "f32"
			if *method == "iterative" {
				*prec = "mixed"
				opts.Precision = spike.Mixed
			}
		}
	}
	// The options of truncated SPIKE, for a Band.
	A := pb.band
	if A != nil {
		opts.Options.Partitions = *parts
		opts.Options.BoostTol = *boost
		if kind == "cpu" {
			opts.Options.Workers = workers
		}
		switch {
		case ulMode == "2k":
			opts.Options.ULBlock = spike.PaperULBlock(A.K)
		case ulFixed > 0:
			opts.Options.ULBlock = ulFixed
		}
		if opts.Options.ULBlock > 0 && opts.Options.ULBlock <= A.K {
			if ulMode == "2k" { // K = 0: nothing to approximate
				opts.Options.ULBlock = 0
			} else {
				return usageErrorf("-ul %d must exceed K=%d", ulFixed, A.K)
			}
		}
		opts.Tol, opts.MaxIter = *tol, *maxIter
		// A band that is not diagonally dominant needs long partitions for
		// the truncated preconditioner to work (spike.PreconditionerPartitions);
		// the defaults are made for speed.
		if *method == "iterative" && !opts.NoPreconditioner && *parts == 0 && banded.DiagonalDominance(A) < 1 {
			p := spike.PreconditionerPartitions(A.N, A.K)
			if kind == "cpu" {
				p = min(p, spike.ChoosePartitions(A.N, A.K, workers))
			}
			opts.Options.Partitions = p
		}
	}

	// The accuracy check's tolerance; the direct solve refines to it. For
	// BiCGStab(2) it is at least what ‖b − A·x‖₂ ≤ tol·‖b‖₂ implies:
	// ‖b − A·x‖∞/‖b‖∞ ≤ tol·‖b‖₂/‖b‖∞.
	tolv := defaultTol(*checkTol, *prec)
	if *method == "iterative" && *checkTol == 0 {
		var b2, bInf float64
		for _, v := range pb.origB {
			b2 += v * v
			bInf = math.Max(bInf, math.Abs(v))
		}
		if bInf > 0 {
			tolv = math.Max(tolv, *tol*math.Sqrt(b2)/bInf)
		}
	}

	// Solve.
	rep := bandedReport{method: *method, precision: *prec, precond: *precond, ul: ulMode,
		refineMode: refineMode, tol: tolv}
	y := make([]float64, pb.order())
	var solveErr error
	switch {
	case kind == "cuda":
		solveErr = solveBandedCUDA(context.Background(), workers, pb, *method, *prec, opts, y, &rep)
		if solveErr != nil && !softFailure(solveErr) {
			return solveErr
		}
	case *method == "pivot":
		g := pb.general
		if g == nil { // a Band's storage is a General's with KL = KU = K
			g = &banded.General[float64]{N: A.N, KL: A.K, KU: A.K, Data: A.Data}
		}
		rep.onlyPivot = pb.general != nil
		if *prec == "f32" {
			solveErr = pivotSolve(banded.ConvertGeneral[float32](g), pb.b, y, &rep)
		} else {
			solveErr = pivotSolve(g, pb.b, y, &rep)
		}
	case *method == "cholesky":
		if err := checkSymmetricBand(A); err != nil {
			return usageErrorf("-method cholesky: %v", err)
		}
		if *prec == "f32" {
			solveErr = choleskySolve(banded.Convert[float32](A), pb.b, y, &rep)
		} else {
			solveErr = choleskySolve(A, pb.b, y, &rep)
		}
		if errors.Is(solveErr, banded.ErrNotPositiveDefinite) {
			return fmt.Errorf("the band is %w (-method pivot solves any nonsingular band)", solveErr)
		}
	case *method == "direct":
		if *prec == "f32" {
			solveErr = spikeDirect(banded.Convert[float32](A), opts.Options, pb, y, &rep)
		} else {
			solveErr = spikeDirect(A, opts.Options, pb, y, &rep)
		}
	case *method == "iterative":
		res, err := spike.SolveIterative(context.Background(), pb.op, A, pb.b, y, opts)
		rep.factor, rep.solve = res.FactorTime, res.SolveTime
		rep.bounds, rep.boosts = res.Bounds, res.Boosts
		rep.iterations, rep.converged, rep.iterative = res.Iterations, res.Converged, true
		solveErr = err
		if err != nil && !softFailure(err) {
			return err
		}
	}
	if solveErr != nil && !softFailure(solveErr) {
		return solveErr
	}

	// Back to the original ordering and the true residual there.
	x := y
	if pb.reorder != nil {
		if x, err = pb.reorder.UnpermuteVector(y); err != nil {
			return err
		}
	}
	rep.residual = pb.residual(x)
	if pb.xTrue != nil {
		rep.errVsTrue = relDist(x, pb.xTrue)
	}
	if err := pb.check(context.Background(), x, *prec, &rep); err != nil {
		return err
	}
	writeBandedReport(stdout, pb, &rep, workers)
	failed := solveErr != nil || rep.status.Failed()
	if *out != "" && (!failed || *force) {
		var werr error
		if outF32 {
			werr = npy.WriteFile(*out, []int{len(x)}, convertVec[float32](x))
		} else {
			werr = npy.WriteFile(*out, []int{len(x)}, x)
		}
		if werr != nil {
			return werr
		}
	}
	if !failed {
		return nil
	}
	var acc string
	if rep.status.Failed() {
		acc = "accuracy check failed: " + strings.Join(verdictReasons([]tridiag.Status{rep.status}, rep.tol, false), "; ")
	}
	if solveErr != nil {
		hint := ""
		if errors.Is(solveErr, banded.ErrNotRefined) {
			hint = "; -method pivot or iterative may solve it"
		}
		if acc != "" {
			acc = "; " + acc
		}
		return fmt.Errorf("%w (relative residual %.3e)%s%s%s", solveErr, rep.residual, acc, hint, outputNote(*out, *force))
	}
	return errors.New(acc + outputNote(*out, *force))
}

// softFailure reports a solve error after which x is still worth
// reporting: an iteration that did not converge or broke down, a
// refinement that stopped above the tolerance.
func softFailure(err error) bool {
	return errors.Is(err, krylov.ErrNotConverged) || errors.Is(err, krylov.ErrBreakdown) || errors.Is(err, banded.ErrNotRefined)
}

// check measures x (original ordering) against the original matrix and
// b: the normwise backward error, and κ̂ of the (reordered, scaled)
// matrix: of the band where the band is the whole matrix, else from
// solves with the whole matrix preconditioned by the band. It fills
// rep.berr, rep.cond and rep.status.
func (pb *bandedProblem) check(ctx context.Context, x []float64, prec string, rep *bandedReport) error {
	n := len(x)
	y := make([]float64, n)
	pb.mulOrig(x, y)
	var rn, xn, bn float64
	for i, bi := range pb.origB {
		rn = math.Max(rn, math.Abs(bi-y[i]))
		xn = math.Max(xn, math.Abs(x[i]))
		bn = math.Max(bn, math.Abs(bi))
		if math.IsNaN(x[i]) || math.IsInf(x[i], 0) {
			rn = math.Inf(1)
		}
	}
	var an float64
	switch {
	case pb.orig != nil:
		an = pb.orig.NormInf()
	case pb.general != nil:
		an = pb.general.NormInf()
	default:
		an = pb.band.NormInf()
	}
	st := &rep.status
	if math.IsNaN(rn) || math.IsInf(rn, 1) {
		st.BackwardError = math.Inf(1) // x holds NaN or ±Inf: no solution at all
	} else {
		st.BackwardError = tridiag.NormwiseBackwardError(rn, an, xn, bn)
	}
	rep.condNote = ""
	if pb.reorder != nil && pb.reorder.DroppedFraction > 0 {
		// The band is an approximation of the matrix: κ̂ of the whole
		// reordered, scaled matrix, from solves preconditioned by the band.
		cond, err := sparse.CondEst(ctx, pb.reorder.Matrix, pb.band)
		switch {
		case err == nil:
			rep.condNote = "of the reordered, scaled matrix; solves preconditioned by its band"
		case errors.Is(err, sparse.ErrCondEst), errors.Is(err, banded.ErrSingular):
			st.Flags |= tridiag.Singular
			rep.condNote = "∞: " + err.Error()
		default:
			return err
		}
		st.Cond = cond
	} else {
		var cond float64
		var err error
		if pb.general != nil {
			cond, err = banded.CondEstGeneral(pb.general)
		} else {
			cond, err = banded.CondEst(pb.band)
		}
		switch {
		case err == nil:
		case errors.Is(err, banded.ErrSingular):
			st.Flags |= tridiag.Singular
		default:
			return err
		}
		st.Cond = cond
		if pb.reorder != nil {
			rep.condNote = "of the reordered, scaled matrix"
		}
	}
	st.Judge(rep.tol, precisionEps(prec))
	return nil
}

// bandedReport collects what the command prints.
type bandedReport struct {
	method, precision, precond, ul string
	device                         string // set by the GPU path
	bounds                         []int
	boosts                         int
	iterative, converged           bool
	iterations                     int
	residual, errVsTrue            float64
	factor, solve                  time.Duration
	upload                         time.Duration // GPU: host-to-device copies of the operator and b
	// Refinement of -method direct: the mode and tolerance asked for,
	// what it did (refined is false when it did not run).
	refineMode banded.RefineMode
	tol        float64
	refine     banded.RefineResult
	refined    bool
	// The accuracy check of the final x.
	status   tridiag.Status
	condNote string
	// onlyPivot: the band has KL ≠ KU, which only the pivot method solves.
	onlyPivot bool
}

// pivotSolve factors A by LU with partial pivoting and solves for b into y.
func pivotSolve[T banded.Float](A *banded.General[T], b, y []float64, rep *bandedReport) error {
	return factorSolve(func() (*banded.PivotLU[T], error) { return banded.FactorPivotGeneral(A) }, b, y, rep)
}

// factorSolve factors with factor and solves for b into y, in T, the
// times into rep.
func factorSolve[T banded.Float, F interface{ Solve([]T) }](factor func() (F, error), b, y []float64, rep *bandedReport) error {
	start := time.Now()
	f, err := factor()
	rep.factor = time.Since(start)
	if err != nil {
		return err
	}
	x := convertVec[T](b)
	start = time.Now()
	f.Solve(x)
	rep.solve = time.Since(start)
	copyVec(y, x)
	return nil
}

// choleskySolve factors A by Cholesky's method and solves for b into y.
func choleskySolve[T banded.Float](A *banded.Band[T], b, y []float64, rep *bandedReport) error {
	return factorSolve(func() (*banded.Cholesky[T], error) { return banded.FactorCholesky(A) }, b, y, rep)
}

// checkSymmetricBand reports the first entry of the band whose mirror image
// differs from it.
func checkSymmetricBand(m *banded.Band[float64]) error {
	n, k := m.N, m.K
	for t := 1; t <= k; t++ {
		for j := 0; j+t < n; j++ {
			lo, up := m.Data[(k+t)*n+j], m.Data[(k-t)*n+j+t]
			if lo != up && !(math.IsNaN(lo) && math.IsNaN(up)) {
				return fmt.Errorf("the band is not symmetric: a[%d][%d] = %g, a[%d][%d] = %g (Cholesky's method needs a symmetric positive definite band; -method pivot solves any)", j+t, j, lo, j, j+t, up)
			}
		}
	}
	return nil
}

func spikeDirect[T banded.Float](A *banded.Band[T], opts spike.Options, pb *bandedProblem, y []float64, rep *bandedReport) error {
	start := time.Now()
	opts.Refine.Mode = banded.RefineOff // refined below against the float64 matrix
	f, err := spike.Factor(A, opts)
	rep.factor = time.Since(start)
	if err != nil {
		return err
	}
	rep.bounds, rep.boosts = f.Bounds(), f.BoostCount()+len(f.ReducedBoosts())
	x := convertVec[T](pb.b)
	start = time.Now()
	err = f.Solve(x, x)
	if err == nil {
		copyVec(y, x)
		err = refineDirect(pb, func(r []T) error { return f.Solve(r, r) }, y, rep)
	}
	rep.solve = time.Since(start)
	return err
}

// refineDirect refines y, the direct solution in the solver's ordering,
// against the float64 band (-refine): solve applies the factorization
// (in its precision) in place. The refinement's time counts in the
// solve's.
func refineDirect[T banded.Float](pb *bandedProblem, solve func(r []T) error, y []float64, rep *bandedReport) error {
	switch rep.refineMode {
	case banded.RefineOff:
		return nil
	case banded.RefineBoosted:
		if rep.boosts == 0 {
			return nil
		}
	}
	tmp := make([]T, len(y))
	apply := func(r []float64) error {
		copyVec(tmp, r)
		if err := solve(tmp); err != nil {
			return err
		}
		copyVec(r, tmp)
		return nil
	}
	var err error
	rep.refine, err = banded.Refine(pb.band, apply, pb.b, y, banded.RefineOptions{Tol: rep.tol})
	rep.refined = true
	return err
}

// convertVec returns a copy of v in precision T.
func convertVec[T, U banded.Float](v []U) []T {
	out := make([]T, len(v))
	copyVec(out, v)
	return out
}

// copyVec sets dst[i] = src[i], converting the precision.
func copyVec[T, U banded.Float](dst []T, src []U) {
	for i, v := range src {
		dst[i] = T(v)
	}
}

// bandFromNPY reads a (2K+1, N) band in solve_banded storage. The shape
// is checked from the header, against the file's size and the memory,
// before the data is read; the array read is the band's storage itself.
func bandFromNPY(path string) (*bandedProblem, error) {
	h, err := npy.ReadFileHeader(path)
	if err != nil {
		return nil, inputError("-npy", err)
	}
	shape := h.Shape
	if len(shape) != 2 || shape[0]%2 == 0 || shape[1] < 1 {
		return nil, fmt.Errorf("%s: shape %s; want (2K+1, N) with an odd number of rows (scipy solve_banded storage ab[K+i−j, j] = a_ij)", path, shapeString(shape))
	}
	k, n := (shape[0]-1)/2, shape[1]
	if k >= n {
		return nil, fmt.Errorf("%s: shape %s gives K=%d ≥ N=%d; want K < N", path, shapeString(shape), k, n)
	}
	// The band and the copy a factorization makes of it.
	if err := banded.CheckMemory[float64](n, k, 2); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	_, data, err := readArray("-npy", path)
	if err != nil {
		return nil, err
	}
	// Row s of ab, column j is a_{j+s−K, j}: Band's storage exactly, but
	// the corners outside the matrix are zeroed.
	A := &banded.Band[float64]{N: n, K: k, Data: data}
	for s := 0; s < k; s++ {
		clear(data[s*n : s*n+k-s]) // super-diagonal K−s: columns j < K−s
	}
	for s := k + 1; s <= 2*k; s++ {
		clear(data[s*n+n-(s-k) : (s+1)*n]) // sub-diagonal s−K: columns j ≥ N−(s−K)
	}
	return &bandedProblem{source: "npy " + path, band: A, op: A, float32: h.IsFloat32()}, nil
}

// generalFromNPY reads an (L+U+1, N) band in solve_banded((L, U), ab, b)
// storage (-kl L -ku U). The shape is checked from the header, against
// the file's size and the memory, before the data is read. Rows of
// bandwidths beyond N−1 lie wholly outside the matrix and are dropped;
// equal bandwidths then give a Band (every method), unequal ones a
// General (LU with partial pivoting).
func generalFromNPY(path string, kl, ku int) (*bandedProblem, error) {
	h, err := npy.ReadFileHeader(path)
	if err != nil {
		return nil, inputError("-npy", err)
	}
	shape := h.Shape
	if len(shape) != 2 || shape[0] != kl+ku+1 || shape[1] < 1 {
		return nil, fmt.Errorf("%s: shape %s; -kl %d -ku %d want (%d, N), scipy solve_banded((%d, %d), ab, b) storage ab[%d+i−j, j] = a_ij", path, shapeString(shape), kl, ku, kl+ku+1, kl, ku, ku)
	}
	n := shape[1]
	// The band and the copy a factorization makes of it.
	if err := banded.CheckGeneralMemory[float64](n, kl, ku, 2); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	_, data, err := readArray("-npy", path)
	if err != nil {
		return nil, err
	}
	l, u := min(kl, n-1), min(ku, n-1)
	data = data[(ku-u)*n : (ku+l+1)*n]
	// Row s is the diagonal of offset i−j = s−U; its slots outside the
	// matrix are zeroed.
	for s := 0; s <= l+u; s++ {
		d := s - u
		clear(data[s*n : s*n+max(0, -d)])
		clear(data[s*n+min(n, n-d) : (s+1)*n])
	}
	pb := &bandedProblem{source: fmt.Sprintf("npy %s (kl=%d, ku=%d)", path, kl, ku), float32: h.IsFloat32()}
	if l == u {
		A := &banded.Band[float64]{N: n, K: l, Data: data}
		pb.band, pb.op = A, A
		return pb, nil
	}
	pb.general = &banded.General[float64]{N: n, KL: l, KU: u, Data: data}
	return pb, nil
}

// bandFromMTX reads a Matrix Market file, reorders it (matching with
// scaling, RCM, drop-off) and converts the kept entries to a band.
func bandFromMTX(path string, delta float64) (*bandedProblem, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("-mtx: %w", err)
	}
	defer f.Close()
	coo, err := sparse.ReadMatrixMarket(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	// Square, with an entry in every row and column, before ToCSR
	// allocates for N rows.
	if err := coo.CheckSolvable(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	a, err := coo.ToCSR()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	start := time.Now()
	r, err := sparse.Reorder(a, sparse.ReorderOptions{Matching: true, Scale: true, RCM: true, Delta: delta})
	if err != nil {
		return nil, fmt.Errorf("%s: reordering: %w", path, err)
	}
	k := min(r.KFinal, a.N-1)
	band, _, err := sparse.ToBand[float64](r.Kept, k)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	pb := &bandedProblem{source: "mtx " + path, band: band, orig: a, reorder: r, reorderT: time.Since(start)}
	pb.op = spike.MulVecFunc(func(x, y []float64) {
		if err := r.Matrix.MulVec(x, y); err != nil {
			panic(err) // lengths are N by construction
		}
	})
	return pb, nil
}

// rightHandSide reads b from path or manufactures b = A·x̃, and maps it to
// the solver's ordering.
func (pb *bandedProblem) rightHandSide(path string, seed uint64) error {
	n := pb.order()
	var b []float64
	if path != "" {
		h, err := npy.ReadFileHeader(path)
		if err != nil {
			return inputError("-rhs", err)
		}
		if len(h.Shape) != 1 || h.Shape[0] != n {
			return fmt.Errorf("%s: shape %s; want (%d,), a vector of length N", path, shapeString(h.Shape), n)
		}
		pb.rhsFloat32 = h.IsFloat32()
		shape, data, err := readArray("-rhs", path)
		if err != nil {
			return err
		}
		if len(shape) != 1 || shape[0] != n {
			return fmt.Errorf("%s: shape %s; want (%d,), a vector of length N", path, shapeString(shape), n)
		}
		b = data
	} else {
		rng := rand.New(rand.NewPCG(seed, 0x5eed))
		pb.xTrue = make([]float64, n)
		for i := range pb.xTrue {
			pb.xTrue[i] = 2*rng.Float64() - 1
		}
		b = make([]float64, n)
		pb.mulOrig(pb.xTrue, b)
	}
	for i, v := range b {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("right-hand side: non-finite value %g at row %d", v, i)
		}
	}
	pb.origB = b
	pb.b = b
	if pb.reorder != nil {
		var err error
		if pb.b, err = pb.reorder.PermuteVector(b); err != nil {
			return err
		}
	}
	return nil
}

// mulOrig sets y = A·x with the original matrix.
func (pb *bandedProblem) mulOrig(x, y []float64) {
	if pb.orig != nil {
		if err := pb.orig.MulVec(x, y); err != nil {
			panic(err)
		}
		return
	}
	if pb.general != nil {
		pb.general.MulVec(x, y)
		return
	}
	pb.band.MulVec(x, y)
}

// residual is ‖b − A·x‖₂/‖b‖₂ with the original matrix and b.
func (pb *bandedProblem) residual(x []float64) float64 {
	y := make([]float64, len(x))
	pb.mulOrig(x, y)
	var num, den float64
	for i, bi := range pb.origB {
		num += (bi - y[i]) * (bi - y[i])
		den += bi * bi
	}
	if den == 0 {
		return math.Sqrt(num)
	}
	return math.Sqrt(num / den)
}

// relDist is ‖x − y‖₂/‖y‖₂.
func relDist(x, y []float64) float64 {
	var num, den float64
	for i := range y {
		num += (x[i] - y[i]) * (x[i] - y[i])
		den += y[i] * y[i]
	}
	return math.Sqrt(num / den)
}

func writeBandedReport(w io.Writer, pb *bandedProblem, rep *bandedReport, workers int) {
	A := pb.band
	line := func(name, format string, args ...any) {
		fmt.Fprintf(w, "  %-22s %s\n", name, fmt.Sprintf(format, args...))
	}
	dev := "cpu"
	switch {
	case rep.device != "":
		dev = rep.device
	case workers > 0:
		dev = fmt.Sprintf("cpu:%d", workers)
	}
	fmt.Fprintf(w, "bandsolve banded on %s\n", dev)
	line("matrix", "%s", pb.source)
	line("N", "%d", pb.order())
	if g := pb.general; g != nil {
		line("KL", "%d", g.KL)
		line("KU", "%d", g.KU)
		line("d", "%.4g (degree of diagonal dominance of the band)", banded.DiagonalDominanceGeneral(g))
	} else {
		line("K", "%d", A.K)
		line("d", "%.4g (degree of diagonal dominance of the band)", banded.DiagonalDominance(A))
	}
	if r := pb.reorder; r != nil {
		line("nonzeros", "%d", pb.orig.NNZ())
		line("bandwidth original", "%d", r.KOriginal)
		line("bandwidth matching", "%d", r.KMatching)
		line("bandwidth RCM", "%d", r.KRCM)
		line("bandwidth drop-off", "%d (dropped %.3g of ‖A‖_F²)", r.KDropOff, r.DroppedFraction)
		line("time reorder", "%s", formatDuration(pb.reorderT))
	}
	m := rep.method
	switch rep.method {
	case "direct":
		m = "direct truncated SPIKE"
	case "iterative":
		m = "BiCGStab(2), preconditioner " + rep.precond
	case "cholesky":
		m = "banded Cholesky (symmetric positive definite)"
	case "pivot":
		m = "banded LU with partial pivoting"
		if rep.onlyPivot {
			m += " (the method for KL ≠ KU)"
		}
	}
	line("method", "%s, precision %s", m, rep.precision)
	if rep.bounds != nil {
		p := len(rep.bounds) - 1
		lo, hi := pb.order(), 0
		for i := 0; i < p; i++ {
			lo, hi = min(lo, rep.bounds[i+1]-rep.bounds[i]), max(hi, rep.bounds[i+1]-rep.bounds[i])
		}
		line("partitions", "%d (%d–%d rows), UL block %s", p, lo, hi, rep.ul)
		line("boosted pivots", "%d", rep.boosts)
	}
	if rep.method == "direct" {
		switch {
		case !rep.refined:
			line("refinement", "none (-refine %s)", rep.refineMode)
		case !rep.refine.Refined():
			line("refinement", "none needed (backward error %.2e ≤ %.2e)", rep.refine.BackwardError, rep.tol)
		default:
			line("refinement", "%d steps + %d BiCG steps (backward error %.2e, tolerance %.2e)", rep.refine.Steps, rep.refine.Iterations, rep.refine.BackwardError, rep.tol)
		}
	}
	if rep.iterative {
		line("iterations", "%d BiCG steps (%s)", rep.iterations, map[bool]string{true: "converged", false: "not converged"}[rep.converged])
	}
	line("relative residual", "%.3e (‖b − A·x‖₂/‖b‖₂)", rep.residual)
	line("backward error", "%.3e (‖b − A·x‖∞/(‖A‖∞‖x‖∞ + ‖b‖∞), tolerance %.2e)", rep.status.BackwardError, rep.tol)
	switch {
	case rep.status.Cond == 0 && rep.condNote != "":
		line("condition estimate", "%s", rep.condNote)
	case rep.condNote != "":
		line("condition estimate", "%.3e (κ̂∞ %s)", rep.status.Cond, rep.condNote)
	default:
		line("condition estimate", "%.3e (κ̂∞)", rep.status.Cond)
	}
	if pb.xTrue != nil {
		line("relative error", "%.3e (‖x − x̃‖₂/‖x̃‖₂, manufactured x̃)", rep.errVsTrue)
	}
	if rep.device != "" {
		line("time upload", "%s", formatDuration(rep.upload))
	}
	if rep.method != "iterative" || rep.precond != "none" {
		line("time factor", "%s", formatDuration(rep.factor))
	}
	line("time solve", "%s", formatDuration(rep.solve))
}
