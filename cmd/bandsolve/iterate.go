package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/bandsolve/bandsolve/ilu"
	"github.com/bandsolve/bandsolve/internal/atomicfile"
	"github.com/bandsolve/bandsolve/krylov"
	"github.com/bandsolve/bandsolve/npy"
	"github.com/bandsolve/bandsolve/sparse"
	"github.com/bandsolve/bandsolve/sptrsv"
	"github.com/bandsolve/bandsolve/tridiag"
)

var iterateCommand = &command{
	name:     "iterate",
	summary:  "solve a sparse system A·x = b by preconditioned CG, BiCGStab or BiCGStab(2) (CPU or GPU)",
	synopsis: "iterate -mtx A.mtx [-rhs b.npy] [-o x.npy] [-method M] [-precond P] [flags]",
	about: `Iterate solves one sparse system A·x = b (A square, from the Matrix Market
file -mtx) by a preconditioned Krylov method in float64, on the CPU or,
with -device cuda, with every vector on the GPU.

Methods (-method):
  cg          conjugate gradients; A symmetric positive definite
  bicgstab    BiCGStab (van der Vorst); any nonsingular A
  bicgstab2   BiCGStab(2) (Sleijpen and Fokkema); operators with complex
              spectra
  auto        cg when A is symmetric with a positive diagonal, else
              bicgstab

Preconditioners (-precond):
  ic0         incomplete Cholesky without fill (A symmetric positive
              definite); M⁻¹ is two sparse triangular solves
  ilu0        incomplete LU without fill
  jacobi      the inverse of A's diagonal (CPU)
  none
  auto        ic0 with cg, ilu0 otherwise

With -device cuda the factorization runs on the GPU (analysed on the
host), bit for bit the CPU's. A zero (ILU) or non-positive (IC) pivot is
an error naming the row;
-shift s factors A + s·diag(A) instead (the usual remedy, s ≈ 1e-3 …
1e-1; the Krylov method still solves with A). The triangular solves use
-trsv (auto, levelset, syncfree, syncfree-csr; sequential on the CPU):
see bandsolve trsv.

The right-hand side is read from -rhs (a .npy vector of length n) or
made as b = A·1, in which case ‖x − 1‖∞ is printed too. The iteration
starts from x = 0 and stops when the true relative residual
‖b − A·x‖₂/‖b‖₂ is at most -tol, after -maxiter iterations, or on a
breakdown or stagnation of the method; the report gives the iterations,
the residual, and the time of the set-up (factorization and triangular
analyses) and of the iteration. When the tolerance is not met the
command exits with status 1 and a one-line reason, and -o is written only
with -force.

Guarantees:
  - x is written to a temporary file in the directory of -o and renamed
    over -o only when complete.
  - -o may not name one of the inputs (-mtx, -rhs), however spelled.`,
	examples: `  bandsolve iterate -mtx poisson.mtx
  bandsolve iterate -mtx A.mtx -rhs b.npy -o x.npy -method bicgstab -precond ilu0 -tol 1e-10
  bandsolve iterate -mtx poisson.mtx -device cuda -precond ic0 -trsv syncfree-csr`,
	run: runIterate,
}

// iterateSetup is what the command solves with, chosen from the flags.
type iterateSetup struct {
	a            *sparse.CSR
	b            []float64
	method       string // cg, bicgstab, bicgstab2
	precond      string // ic0, ilu0, jacobi, none
	trsv         sptrsv.Algorithm
	shift        float64
	tol          float64
	maxIter      int
	manufactured bool
}

// iterateReport collects what the command prints.
type iterateReport struct {
	device, source string
	n, nnz         int
	method         string
	precond        string // with its triangular solves and shift
	res            krylov.Result
	setup, solve   time.Duration
	errOnes        float64
}

func runIterate(c *command, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet(c)
	mtxPath := fs.String("mtx", "", "Matrix Market `file` of A (square), required")
	rhsPath := fs.String("rhs", "", "right-hand side `file` (.npy vector of length n); default b = A·1")
	out := fs.String("o", "", "output `file` for the solution x (.npy, float64)")
	method := fs.String("method", "auto", "Krylov method: auto, cg, bicgstab or bicgstab2")
	precond := fs.String("precond", "auto", "preconditioner: auto, ic0, ilu0, jacobi or none")
	trsvAlg := fs.String("trsv", "auto", "triangular solves of ic0 and ilu0: auto, sequential (CPU), levelset, syncfree or syncfree-csr")
	shift := fs.Float64("shift", 0, "factor A + shift·diag(A) for ic0 and ilu0 (≥ 0)")
	tol := fs.Float64("tol", 1e-8, "target relative residual ‖b − A·x‖₂/‖b‖₂ in (0, 1)")
	maxIter := fs.Int("maxiter", 0, "iteration cap (0: the method's default)")
	device := fs.String("device", "cpu", "device: cpu, cpu:WORKERS, cuda or cuda:N")
	force := fs.Bool("force", false, "write -o even when the tolerance is not met (the exit status is still 1)")
	if help, err := parseFlags(c, fs, args, stdout); help || err != nil {
		return err
	}
	if *mtxPath == "" {
		return usageErrorf("missing -mtx (the Matrix Market file of A)")
	}
	st := iterateSetup{method: strings.ToLower(*method), precond: strings.ToLower(*precond), shift: *shift, tol: *tol, maxIter: *maxIter}
	switch st.method {
	case "auto", "cg", "bicgstab", "bicgstab2":
	default:
		return usageErrorf("unknown method %q (want auto, cg, bicgstab or bicgstab2)", *method)
	}
	switch st.precond {
	case "auto", "ic0", "ilu0", "jacobi", "none":
	default:
		return usageErrorf("unknown preconditioner %q (want auto, ic0, ilu0, jacobi or none)", *precond)
	}
	var err error
	if st.trsv, err = sptrsv.ParseAlgorithm(*trsvAlg); err != nil {
		return usageErrorf("-trsv: %v", err)
	}
	if !(st.tol > 0 && st.tol < 1) {
		return usageErrorf("-tol %g: want a relative residual in (0, 1)", st.tol)
	}
	if st.maxIter < 0 || !(st.shift >= 0) || math.IsInf(st.shift, 0) {
		return usageErrorf("-maxiter %d, -shift %g: want -maxiter ≥ 0 and a finite -shift ≥ 0", st.maxIter, st.shift)
	}
	kind, _, err := parseDeviceName(*device)
	if err != nil {
		return err
	}
	if kind == "cuda" && st.trsv == sptrsv.Sequential {
		return usageErrorf("-trsv sequential runs on the CPU only")
	}
	if *out != "" {
		if err := atomicfile.CheckNotInput(*out, *mtxPath, *rhsPath); err != nil {
			return usageErrorf("-o %v", err)
		}
	}
	if st.a, err = readTriangleMTX(*mtxPath); err != nil {
		return err
	}
	n := st.a.N
	if *rhsPath != "" {
		shape, b, err := readArray("-rhs", *rhsPath)
		if err != nil {
			return inputError("-rhs", err)
		}
		if len(shape) != 1 || shape[0] != n {
			return fmt.Errorf("%s: shape %s; want (%d,), a vector of length n", *rhsPath, shapeString(shape), n)
		}
		for i, v := range b {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("%s: non-finite value %g at row %d", *rhsPath, v, i)
			}
		}
		st.b = b
	} else {
		st.manufactured = true
		ones := make([]float64, n)
		for i := range ones {
			ones[i] = 1
		}
		st.b = make([]float64, n)
		if err := st.a.MulVec(ones, st.b); err != nil {
			return err
		}
	}
	spd := symmetricPositiveDiagonal(st.a)
	if st.method == "auto" {
		st.method = map[bool]string{true: "cg", false: "bicgstab"}[spd]
	}
	if st.precond == "auto" {
		st.precond = map[bool]string{true: "ic0", false: "ilu0"}[st.method == "cg"]
	}
	if st.precond == "ic0" && !spd {
		return usageErrorf("-precond ic0 needs a symmetric A with a positive diagonal; use ilu0")
	}

	rep := iterateReport{source: "mtx " + *mtxPath, n: n, nnz: st.a.NNZ(), method: st.method}
	x := make([]float64, n)
	var solveErr error
	if kind == "cuda" {
		solveErr = iterateCUDA(*device, &st, x, &rep)
	} else {
		dev, release, err := openDevice(*device)
		if err != nil {
			return err
		}
		defer release()
		rep.device = dev.Name()
		solveErr = iterateCPU(dev, &st, x, &rep)
	}
	var verdict error
	switch {
	case solveErr == nil:
	case errors.Is(solveErr, krylov.ErrNotConverged), errors.Is(solveErr, krylov.ErrBreakdown), errors.Is(solveErr, krylov.ErrStagnation):
		verdict = solveErr
	default:
		return fmt.Errorf("%s: %w", *mtxPath, solveErr)
	}
	if st.manufactured {
		for _, v := range x {
			rep.errOnes = math.Max(rep.errOnes, math.Abs(v-1))
		}
	}
	writeIterateReport(stdout, &rep, st.tol, st.manufactured)
	if *out != "" && (verdict == nil || *force) {
		if err := npy.WriteFile(*out, []int{n}, x); err != nil {
			return err
		}
	}
	if verdict != nil {
		return fmt.Errorf("tolerance %.1e not met: %v%s", st.tol, verdict, outputNote(*out, *force))
	}
	return nil
}

// symmetricPositiveDiagonal reports whether A equals its transpose (values
// too) and has a positive diagonal: the cheap necessary conditions of
// CG and IC(0).
func symmetricPositiveDiagonal(a *sparse.CSR) bool {
	for i := range a.N {
		if !(a.At(i, i) > 0) {
			return false
		}
	}
	t := a.Transpose()
	for i := range a.N {
		if a.RowPtr[i+1]-a.RowPtr[i] != t.RowPtr[i+1]-t.RowPtr[i] {
			return false
		}
		for k := a.RowPtr[i]; k < a.RowPtr[i+1]; k++ {
			if t.At(i, int(a.Col[k])) != a.Val[k] {
				return false
			}
		}
	}
	return true
}

// kind is the incomplete factorization the preconditioner names.
func (st *iterateSetup) kind() ilu.Kind {
	if st.precond == "ic0" {
		return ilu.KindIC0
	}
	return ilu.KindILU0
}

// factorOptions are the factorization's options.
func (st *iterateSetup) factorOptions() ilu.Options { return ilu.Options{Shift: st.shift} }

// factor computes the incomplete factorization the preconditioner names
// on the host.
func (st *iterateSetup) factor() (*ilu.Factors, error) {
	if st.kind() == ilu.KindIC0 {
		return ilu.IC0(st.a, st.factorOptions())
	}
	return ilu.ILU0(st.a, st.factorOptions())
}

// krylovMethod returns the method st names, for vectors V.
func krylovMethod[V any](name string) func(context.Context, krylov.Space[V], krylov.Operator[V], krylov.Preconditioner[V], V, V, krylov.Options) (krylov.Result, error) {
	switch name {
	case "cg":
		return krylov.CG[V]
	case "bicgstab":
		return krylov.BiCGStab[V]
	}
	return krylov.BiCGStab2[V]
}

// iterateCPU solves with host vectors on the CPU device dev.
func iterateCPU(dev tridiag.Device, st *iterateSetup, x []float64, rep *iterateReport) error {
	start := time.Now()
	op, err := krylov.NewCSROperator[[]float64](dev, st.a)
	if err != nil {
		return err
	}
	var m krylov.Preconditioner[[]float64]
	rep.precond = st.precond
	switch st.precond {
	case "jacobi":
		j, err := krylov.NewJacobi(st.a)
		if err != nil {
			return err
		}
		m = j
	case "ic0", "ilu0":
		f, err := st.factor()
		if err != nil {
			return err
		}
		p, err := ilu.NewPreconditioner[float64](f, dev, st.trsv)
		if err != nil {
			return err
		}
		defer p.Close()
		lo, up := p.Algorithms()
		rep.precond = describePrecond(st, lo, up)
		m = p
	}
	rep.setup = time.Since(start)
	start = time.Now()
	rep.res, err = krylovMethod[[]float64](st.method)(context.Background(), krylov.HostSpace{N: st.a.N}, op, m, st.b, x,
		krylov.Options{Tol: st.tol, MaxIter: st.maxIter})
	rep.solve = time.Since(start)
	return err
}

// describePrecond names an incomplete factorization with its triangular
// solves and shift.
func describePrecond(st *iterateSetup, lo, up sptrsv.Algorithm) string {
	s := fmt.Sprintf("%s (triangular solves %s, %s", st.precond, lo, up)
	if st.shift > 0 {
		s += fmt.Sprintf("; shift %g·diag(A)", st.shift)
	}
	return s + ")"
}

func writeIterateReport(w io.Writer, rep *iterateReport, tol float64, manufactured bool) {
	line := func(name, format string, args ...any) {
		fmt.Fprintf(w, "  %-22s %s\n", name, fmt.Sprintf(format, args...))
	}
	fmt.Fprintf(w, "bandsolve iterate on %s\n", rep.device)
	line("matrix", "%s", rep.source)
	line("n", "%d", rep.n)
	line("nnz", "%d", rep.nnz)
	line("method", "%s, preconditioner %s", rep.method, rep.precond)
	line("iterations", "%d", rep.res.Iterations)
	line("relative residual", "%.3e (‖b − A·x‖₂/‖b‖₂, tolerance %.1e)", rep.res.Residual, tol)
	line("time set-up", "%s (factorization and triangular analyses)", formatDuration(rep.setup))
	per := time.Duration(0)
	if rep.res.Iterations > 0 {
		per = rep.solve / time.Duration(rep.res.Iterations)
	}
	line("time iteration", "%s (%s an iteration)", formatDuration(rep.solve), formatDuration(per))
	if manufactured {
		line("error", "%.3e (‖x − 1‖∞, b = A·1)", rep.errOnes)
	}
}
