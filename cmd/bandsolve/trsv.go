package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"time"

	"github.com/bandsolve/bandsolve/internal/atomicfile"
	"github.com/bandsolve/bandsolve/npy"
	"github.com/bandsolve/bandsolve/sparse"
	"github.com/bandsolve/bandsolve/sptrsv"
	"github.com/bandsolve/bandsolve/tridiag"
)

var trsvCommand = &command{
	name:     "trsv",
	summary:  "solve a sparse triangular system T·x = b (level-set, synchronization-free or sequential; CPU or GPU)",
	synopsis: "trsv -mtx T.mtx [-upper] [-unit] [-part] [-rhs b.npy] [-o x.npy] [flags]",
	about: `Trsv solves one sparse triangular system T·x = b on the CPU or a GPU with
package sptrsv. T is the lower triangle of the Matrix Market matrix -mtx (the
upper one with -upper), with its stored diagonal or, with -unit, a unit
diagonal (stored diagonal entries are then ignored). Without -part the
matrix must be triangular in that sense and an entry on the other side of
the diagonal is an error naming it; -part takes the triangle of a general
matrix (tril(A) or triu(A), diagonal included). A zero or missing
diagonal entry of a non-unit triangle is an error naming the row. Rows
and columns in errors are 0-based.

The analysis (sptrsv.Analyze) finds the level sets of the dependency
graph (Naumov) and the in-degrees of the rows (Liu et al.); the report
prints its statistics: n, the nonzeros of the triangle, the levels (the
longest dependency chain) and the rows per level (min/mean/max).

Algorithms (-algorithm):
  sequential  one row after another, the reference
  levelset    the levels one after another, the rows of a level of at
              least sptrsv.DefaultSerialLevelRows rows on all workers
              (Naumov); the same bits as sequential
  syncfree    synchronization-free by columns (Liu et al.): every row
              waits for its in-degree and pushes its contributions with
              atomic additions (on the CPU its atomics make it slower
              than the others)
  syncfree-csr
              synchronization-free by rows: every row waits for the rows
              it depends on to be marked solved; the same bits as
              sequential where one thread solves a row
  locality    Picciau et al.: sub-graphs of at most 1024 rows solved by
              one block each with x in shared memory, every edge in a
              time slot (its analysis, on the host, is the costliest)
  auto        on the CPU levelset when there are several workers and the
              mean rows per level reach 4·sptrsv.DefaultSerialLevelRows
              (16384), else sequential; on a GPU levelset from 20000 rows
              a level, else syncfree-csr; the report says what it ran

The right-hand side is read from -rhs (a .npy vector of length n, any
numeric dtype) or made as b = T·1, in which case the error ‖x − 1‖∞
is printed too. Precision follows the data: a float32 -rhs is solved in
float32 and x written as float32; anything else (other dtypes, a
manufactured b) in float64. -precision f32 or f64 overrides this.

Accuracy is checked: the normwise backward error (relative residual)
‖b − T·x‖∞ / (‖T‖∞·‖x‖∞ + ‖b‖∞), computed in float64 against the float64
triangle and the b of the solve, must be at most -check-tol (default
10³·ε of the precision: 2.2e-13 for f64, 1.2e-4 for f32). Otherwise the
command exits with status 1 and a one-line reason, and -o is not written
unless -force is given.

Devices: -device cpu (or cpu:W, like -workers W) solves on the host;
-device cuda (or cuda:N, in a binary built with -tags cuda) uploads the
matrix and analyses it on the GPU (levelset, syncfree, syncfree-csr or
auto; sequential is the CPU's), b and x copied to the device and back.
The analysis time then holds the upload and the device analysis.

Guarantees:
  - x is written to a temporary file in the directory of -o, flushed to
    disk and renamed over -o only when complete: a failed write leaves an
    existing file unchanged.
  - -o may not name one of the inputs (-mtx, -rhs), however spelled.`,
	examples: `  bandsolve trsv -mtx L.mtx
  bandsolve trsv -mtx U.mtx -upper -rhs b.npy -o x.npy
  bandsolve trsv -mtx A.mtx -part -unit -algorithm levelset -workers 8
  bandsolve trsv -mtx L.mtx -rhs b32.npy -o x32.npy -algorithm sequential`,
	run: runTRSV,
}

// autoAlgorithm is the solve -algorithm auto runs on the CPU for the
// statistics st with w workers (sptrsv.ChooseCPU), and the reason in
// words.
func autoAlgorithm(st sptrsv.Stats, w int) (alg, why string) {
	alg = sptrsv.ChooseCPU(st, w).String()
	switch {
	case w < 2:
		return alg, "one worker"
	case st.MeanRowsPerLevel >= sptrsv.AutoLevelSetRowsCPU:
		return alg, fmt.Sprintf("mean rows per level %.4g ≥ %d", st.MeanRowsPerLevel, sptrsv.AutoLevelSetRowsCPU)
	}
	return alg, fmt.Sprintf("mean rows per level %.4g < %d", st.MeanRowsPerLevel, sptrsv.AutoLevelSetRowsCPU)
}

// trsvReport collects what the command prints.
type trsvReport struct {
	source, triangle   string
	stats              sptrsv.Stats
	algorithm, why     string // what ran; why auto chose it ("" otherwise)
	device             string // the GPU's name ("": the CPU)
	auto               bool
	precision          string
	workers            int
	analysis, solve    time.Duration
	berr, tol, errOnes float64
	manufactured       bool
}

func runTRSV(c *command, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet(c)
	mtxPath := fs.String("mtx", "", "Matrix Market `file` of the triangle (or, with -part, of a general matrix), required")
	upper := fs.Bool("upper", false, "solve with the upper triangle (default: the lower one)")
	unit := fs.Bool("unit", false, "unit diagonal: take every diagonal entry as one, ignoring stored ones")
	part := fs.Bool("part", false, "take the triangle of a general matrix (without it the matrix must be triangular)")
	rhsPath := fs.String("rhs", "", "right-hand side `file` (.npy vector of length n); default b = T·1")
	out := fs.String("o", "", "output `file` for the solution x (.npy; float32 when the solve is f32, else float64)")
	alg := fs.String("algorithm", "auto", "algorithm: auto, sequential, levelset, syncfree or syncfree-csr")
	workers := fs.Int("workers", 0, "worker goroutines of levelset and syncfree (0: one per core)")
	prec := fs.String("precision", "auto", "precision: auto (float32 for a float32 -rhs, else float64), f32 or f64")
	device := fs.String("device", "cpu", "device: cpu, cpu:WORKERS, cuda or cuda:N")
	checkTol := fs.Float64("check-tol", 0, "largest accepted normwise backward error of x (0: 10³·ε of the precision)")
	force := fs.Bool("force", false, "write -o even when x fails the accuracy check (the exit status is still 1)")
	if help, err := parseFlags(c, fs, args, stdout); help || err != nil {
		return err
	}

	// Check the flags before reading anything.
	if *mtxPath == "" {
		return usageErrorf("missing -mtx (the Matrix Market file of the triangle)")
	}
	algID, err := sptrsv.ParseAlgorithm(*alg)
	if err != nil {
		return usageErrorf("%v", err)
	}
	algorithm := algID.String()
	precision := strings.ToLower(*prec)
	if precision != "auto" {
		var ok bool
		if precision, ok = parsePrecision(*prec); !ok {
			return usageErrorf("unknown precision %q (want auto, f64 or f32)", *prec)
		}
	}
	if *workers < 0 {
		return usageErrorf("-workers %d: want ≥ 0 (0: one per core)", *workers)
	}
	kind, devWorkers, err := parseDeviceName(*device)
	if err != nil {
		return err
	}
	if kind == "cuda" && algID == sptrsv.Sequential {
		return usageErrorf("-algorithm sequential runs on the CPU only; on %s use auto, levelset, syncfree or syncfree-csr", *device)
	}
	if devWorkers > 0 && *workers > 0 && devWorkers != *workers {
		return usageErrorf("-device %s and -workers %d disagree: give the worker count once", *device, *workers)
	}
	w := max(*workers, devWorkers)
	if w == 0 {
		w = tridiag.DefaultCPU().Workers()
	}
	if err := checkTolFlag("-check-tol", *checkTol); err != nil {
		return err
	}
	if *out != "" {
		if err := atomicfile.CheckNotInput(*out, *mtxPath, *rhsPath); err != nil {
			return usageErrorf("-o %v", err)
		}
	}

	// The right-hand side's header first: its length is checked once n is
	// known, and its dtype sets -precision auto.
	var rhsHead npy.Header
	if *rhsPath != "" {
		if rhsHead, err = npy.ReadFileHeader(*rhsPath); err != nil {
			return inputError("-rhs", err)
		}
	}
	if precision == "auto" {
		precision = "f64"
		if *rhsPath != "" && rhsHead.IsFloat32() {
			precision = "f32"
		}
	}

	a, err := readTriangleMTX(*mtxPath)
	if err != nil {
		return err
	}
	opts := sptrsv.Options{Workers: w, UnitDiagonal: *unit}
	if *upper {
		opts.Triangle = sptrsv.Upper
	}
	if *part {
		opts.Part = sptrsv.TrianglePart
	}
	start := time.Now()
	an, err := sptrsv.Analyze(a, opts)
	analysisTime := time.Since(start)
	if err != nil {
		if errors.Is(err, sptrsv.ErrNotTriangular) {
			other := "-upper solves with the upper triangle"
			if *upper {
				other = "without -upper it solves with the lower triangle"
			}
			return fmt.Errorf("%s: %w (0-based; -part takes the %s triangle of a general matrix, %s)", *mtxPath, err, opts.Triangle, other)
		}
		return fmt.Errorf("%s: %w", *mtxPath, err)
	}
	var loc *sptrsv.Locality
	if algID == sptrsv.LocalityAware && kind == "cpu" {
		start = time.Now()
		if loc, err = sptrsv.AnalyzeLocality(an, sptrsv.LocalityOptions{}); err != nil {
			return fmt.Errorf("%s: %w", *mtxPath, err)
		}
		analysisTime += time.Since(start)
	}
	n := an.N()
	tri, _ := an.Triangular()

	rep := trsvReport{source: "mtx " + *mtxPath, stats: an.Stats(), precision: precision, workers: w,
		analysis: analysisTime, tol: defaultTol(*checkTol, precision), algorithm: algorithm}
	rep.triangle = fmt.Sprintf("%s, %s diagonal", opts.Triangle, map[bool]string{true: "unit", false: "stored"}[*unit])
	if *part {
		rep.triangle += ", triangle of a general matrix"
	}
	if algorithm == "auto" && kind == "cpu" {
		rep.auto = true
		rep.algorithm, rep.why = autoAlgorithm(rep.stats, w)
	}
	var dev tridiag.Device
	if kind == "cuda" {
		d, release, err := openDevice(*device)
		if err != nil {
			return err
		}
		defer release()
		dev, rep.device = d, d.Name()
		rep.auto = algorithm == "auto"
	}

	// b, in float64; the solve's precision rounds it.
	var b []float64
	if *rhsPath != "" {
		if len(rhsHead.Shape) != 1 || rhsHead.Shape[0] != n {
			return fmt.Errorf("%s: shape %s; want (%d,), a vector of length n", *rhsPath, shapeString(rhsHead.Shape), n)
		}
		if _, b, err = readArray("-rhs", *rhsPath); err != nil {
			return err
		}
		for i, v := range b {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("%s: non-finite value %g at row %d", *rhsPath, v, i)
			}
		}
	} else {
		rep.manufactured = true
		ones := make([]float64, n)
		for i := range ones {
			ones[i] = 1
		}
		b = make([]float64, n)
		mulTriangle(tri, *unit, ones, b)
	}

	// Solve.
	var x []float64
	if precision == "f32" {
		b32 := convertVec[float32](b)
		copyVec(b, b32) // the b of the solve, for the residual
		x32 := make([]float32, n)
		if dev != nil {
			err = solveOnDevice(dev, a, opts, algID, b32, x32, &rep)
		} else {
			start = time.Now()
			err = solveTriangle(rep.algorithm, an, loc, b32, x32)
			rep.solve = time.Since(start)
		}
		x = convertVec[float64](x32)
	} else {
		x = make([]float64, n)
		if dev != nil {
			err = solveOnDevice(dev, a, opts, algID, b, x, &rep)
		} else {
			start = time.Now()
			err = solveTriangle(rep.algorithm, an, loc, b, x)
			rep.solve = time.Since(start)
		}
	}
	if err != nil {
		return fmt.Errorf("%s: %w", *mtxPath, err)
	}

	// The accuracy check, in float64.
	r := make([]float64, n)
	mulTriangle(tri, *unit, x, r)
	var rn, xn, bn float64
	tn := tri.NormInf() // ‖T‖∞; a unit diagonal is not stored and adds 1 to every row
	if *unit {
		tn++
	}
	for i := range n {
		rn = math.Max(rn, math.Abs(b[i]-r[i]))
		xn = math.Max(xn, math.Abs(x[i]))
		bn = math.Max(bn, math.Abs(b[i]))
		if math.IsNaN(x[i]) || math.IsInf(x[i], 0) {
			rn = math.Inf(1)
		}
		if rep.manufactured {
			rep.errOnes = math.Max(rep.errOnes, math.Abs(x[i]-1))
		}
	}
	var st tridiag.Status
	if math.IsInf(rn, 1) || math.IsNaN(rn) {
		st.BackwardError = math.Inf(1)
	} else {
		st.BackwardError = tridiag.NormwiseBackwardError(rn, tn, xn, bn)
	}
	st.Judge(rep.tol, precisionEps(precision)) // Cond 0: no condition estimate
	rep.berr = st.BackwardError
	writeTRSVReport(stdout, &rep)

	failed := st.Failed()
	if *out != "" && (!failed || *force) {
		var werr error
		if precision == "f32" {
			werr = npy.WriteFile(*out, []int{n}, convertVec[float32](x))
		} else {
			werr = npy.WriteFile(*out, []int{n}, x)
		}
		if werr != nil {
			return werr
		}
	}
	if !failed {
		return nil
	}
	return errors.New("accuracy check failed: " + strings.Join(verdictReasons([]tridiag.Status{st}, rep.tol, false), "; ") + outputNote(*out, *force))
}

// readTriangleMTX reads a square Matrix Market matrix as CSR.
func readTriangleMTX(path string) (*sparse.CSR, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("-mtx: %w", err)
	}
	defer f.Close()
	coo, err := sparse.ReadMatrixMarket(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if coo.N != coo.M {
		return nil, fmt.Errorf("%s: %w: the matrix is %d×%d; a triangular solve needs a square one", path, sparse.ErrShape, coo.N, coo.M)
	}
	a, err := coo.ToCSR()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return a, nil
}

// solveTriangle runs the named solve on the CPU.
func solveTriangle[T sptrsv.Float](alg string, an *sptrsv.Analysis, loc *sptrsv.Locality, b, x []T) error {
	switch alg {
	case "locality":
		return sptrsv.SolveLocality(context.Background(), loc, b, x)
	case "sequential":
		return sptrsv.SolveSequential(an, b, x)
	case "levelset":
		return sptrsv.Solve(context.Background(), an, b, x)
	case "syncfree":
		return sptrsv.SolveSyncFree(context.Background(), an, b, x)
	case "syncfree-csr":
		return sptrsv.SolveSyncFreeCSR(context.Background(), an, b, x)
	}
	return usageErrorf("unknown algorithm %q", alg)
}

// solveOnDevice analyses the triangle of a on dev (a GPU) and solves
// with it, recording in rep the analysis and solve times and the
// algorithm that ran.
func solveOnDevice[T sptrsv.Float](dev tridiag.Device, a *sparse.CSR, opts sptrsv.Options, alg sptrsv.Algorithm, b, x []T, rep *trsvReport) error {
	start := time.Now()
	p, err := sptrsv.NewPlan[T](dev, a, opts, alg)
	if err != nil {
		return err
	}
	defer p.Close()
	rep.analysis = time.Since(start)
	rep.algorithm = p.Algorithm().String()
	if alg == sptrsv.Auto {
		rep.why = fmt.Sprintf("the GPU's rule: levelset from %d rows a level, else syncfree-csr", sptrsv.AutoLevelSetRowsGPU)
	}
	start = time.Now()
	err = p.Solve(context.Background(), b, x)
	rep.solve = time.Since(start)
	return err
}

// mulTriangle sets y = T·x, T the triangle (its stored diagonal, or a unit
// one when unit is set: the triangle stores none then).
func mulTriangle(t *sparse.CSR, unit bool, x, y []float64) {
	if err := t.MulVec(x, y); err != nil {
		panic(err) // lengths are n by construction
	}
	if unit {
		for i, v := range x {
			y[i] += v
		}
	}
}

func writeTRSVReport(w io.Writer, rep *trsvReport) {
	line := func(name, format string, args ...any) {
		fmt.Fprintf(w, "  %-22s %s\n", name, fmt.Sprintf(format, args...))
	}
	if rep.device != "" {
		fmt.Fprintf(w, "bandsolve trsv on %s\n", rep.device)
	} else {
		fmt.Fprintf(w, "bandsolve trsv on cpu:%d\n", rep.workers)
	}
	line("matrix", "%s", rep.source)
	line("triangle", "%s", rep.triangle)
	st := rep.stats
	line("n", "%d", st.N)
	line("nnz", "%d (of the triangle, stored diagonal included)", st.NNZ)
	line("levels", "%d", st.Levels)
	line("rows per level", "%d / %.4g / %d (min / mean / max)", st.MinRowsPerLevel, st.MeanRowsPerLevel, st.MaxRowsPerLevel)
	if rep.auto {
		line("algorithm", "auto → %s (%s), precision %s", rep.algorithm, rep.why, rep.precision)
	} else {
		line("algorithm", "%s, precision %s", rep.algorithm, rep.precision)
	}
	line("time analysis", "%s", formatDuration(rep.analysis))
	line("time solve", "%s", formatDuration(rep.solve))
	line("relative residual", "%.3e (‖b − T·x‖∞/(‖T‖∞‖x‖∞ + ‖b‖∞), tolerance %.2e)", rep.berr, rep.tol)
	if rep.manufactured {
		line("error", "%.3e (‖x − 1‖∞, b = T·1)", rep.errOnes)
	}
}
