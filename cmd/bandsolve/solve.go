package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"math/cmplx"
	"os"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/bandsolve/bandsolve/internal/atomicfile"
	"github.com/bandsolve/bandsolve/internal/memguard"
	"github.com/bandsolve/bandsolve/npy"
	"github.com/bandsolve/bandsolve/tridiag"
)

var solveCommand = &command{
	name:     "solve",
	summary:  "solve systems read from .npy files, write x as .npy",
	synopsis: "solve (-a A.npy -b B.npy -c C.npy | -const \"a,b,c\" | -spd -b B.npy -c C.npy) -d D.npy -o X.npy [flags]",
	about: `Solve reads the coefficients and right-hand sides of a batch of
tridiagonal systems from NumPy .npy files, solves them and writes the
solutions x to a .npy file with the shape of d and the precision of the
solve. Row i of a system reads

    a[i]·x[i−1] + b[i]·x[i] + c[i]·x[i+1] = d[i]

with a the sub-diagonal, b the diagonal and c the super-diagonal, all with
one entry per row; a[0] and c[N−1] are ignored, unless -cyclic makes the
systems periodic, where they couple row 0 with row N−1.

Shapes (every file must have the shape of d, but for the axis of
right-hand sides below; any float or integer dtype is accepted):
  (N,)     one system of N rows
  (G, N)   G systems, one per row of the array (contiguous layout)
  (N, G)   with -layout interleaved: G systems, one per column; row i of
           system g is element (i, g), i.e. index i·G + g

Several right-hand sides: a d with one more axis than the coefficients,
last, holds K right-hand sides of the same systems: (N, K), (G, N, K), or
(N, G, K) with -layout interleaved. Each system is factored once and its
factors solve all K (tridiag's Plan.SolveMany; auto, thomas, gtsv and
ldlt factor, the other algorithms solve the K one after the other); x
has the shape of d. With -const there are no coefficient files: a 3-D
d is (G, N, K) (or (N, G, K)), so one system with K right-hand sides is
(1, N, K).

Symmetric positive definite systems (-spd, the same as -algorithm ldlt)
are solved by the factorization L·D·Lᵀ, as LAPACK's ptsv does: it reads
the diagonal -b and the super-diagonal -c only, and takes the
sub-diagonal to be c shifted, a[i] = c[i−1] (with -cyclic the corner a[0]
is c[N−1]). -a may be left out; when given it must be that, row for row.
With -const, a must equal c. A pivot that is not positive fails its
system ("not positive definite", with the system and row).

Precision follows the data: when every input file is float32 ('<f4'),
the systems are solved in float32 and x is written as float32, as
NumPy users expect; any other dtype, or a mix, solves in float64 and
writes float64. -precision f32 or f64 overrides this (the inputs are
then rounded or widened). -device cuda makes the same choice.

Complex systems: when any input file is complex ('<c8' or '<c16') or a
-const value has an imaginary part ("-const '-1,2+0.5i,-1'"), the
systems are solved in complex arithmetic and x is written complex:
complex64 ('<c8') when every input file is complex64 or float32,
complex128 ('<c16') otherwise. Real files among the inputs (real
coefficients with a complex d, say) are read with a zero imaginary part.
-precision c64 or c128 asks for it explicitly; f32 or f64 with a complex
input is an error. Complex systems are solved on the CPU by auto, thomas
or gtsv (pivoting by |re| + |im|, as LAPACK's zgtsv does), not -spd.

Pivoting (-pivoting, for -algorithm auto): auto, the default, solves
each system on the CPU by Thomas where a test made in the same sweep
proves it backward stable (every row's fill |a[i]·c[i−1]/u[i−1]| within
twice |b[i]|: diagonally dominant and symmetric positive definite systems
pass), and by gtsv (partial pivoting, LAPACK's results) where it fails;
on a GPU it does not pivot yet: a zero pivot is reported per system, and
a system that is not diagonally dominant can get a large error (the
accuracy check below reports it). always solves every system with gtsv,
on any device; never runs Thomas with gtsv only where Thomas meets a zero
pivot (on a GPU: the fast non-pivoting algorithm). -pivoting always with
an algorithm that does not pivot is an error.

A one-line summary goes to stderr: N, G, nrhs (with several right-hand
sides), algorithm (with auto: what it
ran, e.g. "auto (thomas, gtsv for the systems that fail its pivot growth
test or break down; last solve: gtsv for 3 of 64 systems)" on the CPU),
device, solve time, the largest residual |A·x − d| of any
row, and the largest normwise backward error and condition number
estimate of any system, all computed in float64 on the host (after the
solve, whatever the device).

Accuracy is checked, system by system: the normwise backward error
‖d − A·x‖∞ / (‖A‖∞·‖x‖∞ + ‖d‖∞) must be at most -tol (default 10³·ε of
the precision: 2.2e-13 for f64, 1.2e-4 for f32), and the condition number
estimate κ̂∞ (LAPACK gtcon's Hager–Higham estimator, O(N) per system) must
have κ̂·ε < 1/2, else no digit of x can be trusted (a singular matrix,
such as periodic or Neumann Laplacians, has κ̂ = ∞ or about 1/ε). When a
system fails, the command exits with status 1 and a one-line reason
naming the systems (the first few indices and the count), and x is NOT
written unless -force is given.

When some systems cannot be solved at all (a zero pivot without
pivoting, a singular matrix found by pivoting, a pivot that is not
positive with -spd) x is still written,
with NaN in their rows, and the command exits with status 1.

Guarantees:
  - The headers of all input files are read and checked first: shapes,
    dtypes, and that each file holds the data its header declares; the
    memory the solve needs (the arrays and the plan's workspace) is
    checked against what the process can have (physical memory, cgroup
    limit, RLIMIT_AS), and refused with the size asked for and the size
    available, before any array is read.
  - x is written to a temporary file in the directory of -o, flushed to
    disk and renamed over -o only when complete: a failed write (a full
    disk) leaves an existing file unchanged.
  - -o may not name one of the inputs (the same file, however spelled).
  - Every error is one line naming the file, and the system and row
    where one is at fault.`,
	examples: `  bandsolve solve -a a.npy -b b.npy -c c.npy -d d.npy -o x.npy
  bandsolve solve -const "-1,2,-1" -d d.npy -o x.npy -precision f32
  bandsolve solve -const "1,4,1" -cyclic -d d.npy -o x.npy      # periodic spline
  bandsolve solve -layout interleaved -algorithm thomas -a a.npy -b b.npy -c c.npy -d d.npy -o x.npy
  bandsolve solve -spd -b b.npy -c c.npy -d d.npy -o x.npy     # symmetric positive definite
  bandsolve solve -a a.npy -b b.npy -c c.npy -d d3.npy -o x.npy  # d3: (G, N, K), K right-hand sides
  bandsolve solve -device cuda -algorithm tpr -a a.npy -b b.npy -c c.npy -d d.npy -o x.npy`,
	run: runSolve,
}

// solveInput is what the command line says of the batch: the shape of
// d and the constant coefficients; solveFiles reads the arrays.
type solveInput struct {
	shape      []int // of d, written back for x
	shape3     tridiag.Shape
	nrhs       int // right-hand sides in d's last axis; 0: d is one batch
	constant   bool
	ca, cb, cc complex128 // -const; real unless the solve is complex
	cyclic     bool
	spd        bool // LDLT: a is c shifted
}

func runSolve(c *command, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet(c)
	aPath := fs.String("a", "", "sub-diagonal `file` (.npy)")
	bPath := fs.String("b", "", "diagonal `file` (.npy)")
	cPath := fs.String("c", "", "super-diagonal `file` (.npy)")
	dPath := fs.String("d", "", "right-hand side `file` (.npy), required")
	out := fs.String("o", "", "output `file` for the solution x (.npy), required")
	constant := fs.String("const", "", "constant coefficients \"a,b,c\" of every row, instead of -a, -b and -c")
	layout := fs.String("layout", "contiguous", "layout of 2-D arrays: contiguous (G, N) or interleaved (N, G)")
	alg := fs.String("algorithm", "auto", "algorithm: "+algorithmList())
	pivoting := fs.String("pivoting", "auto", "pivoting of -algorithm auto: auto (per system, where the system needs it; on a GPU: none yet), always (gtsv for every system) or never (thomas, gtsv only where it breaks down; on a GPU the fast non-pivoting algorithm)")
	prec := fs.String("precision", "auto", "precision of the solve and of x: auto (float32 when every input file is float32, else float64; complex when an input is), f32, f64, c64 or c128")
	device := fs.String("device", "cpu", "device: cpu, cpu:WORKERS, cuda or cuda:N (see 'bandsolve devices')")
	cyclic := fs.Bool("cyclic", false, "periodic systems: a[0] and c[N−1] are the corner entries")
	spd := fs.Bool("spd", false, "symmetric positive definite systems: solve by L·D·Lᵀ (-algorithm ldlt), reading -b and -c; -a may be left out (it is c shifted)")
	slice := fs.Int("slice", 0, "TPR slice size S, a power of two ≥ 2 (0: the default for N)")
	tol := fs.Float64("tol", 0, "largest accepted normwise backward error of a system (0: 10³·ε of -precision)")
	force := fs.Bool("force", false, "write x even when some systems fail the accuracy check (the exit status is still 1)")
	if help, err := parseFlags(c, fs, args, stdout); help || err != nil {
		return err
	}

	// Check the flags before touching any file.
	if *dPath == "" {
		return usageErrorf("missing -d (the right-hand side file)")
	}
	if *out == "" {
		return usageErrorf("missing -o (the output file)")
	}
	algorithm, err := tridiag.ParseAlgorithm(*alg)
	if err != nil {
		return usageErrorf("unknown algorithm %q (want %s)", *alg, algorithmList())
	}
	if *spd {
		if algorithm != tridiag.Auto && algorithm != tridiag.LDLT {
			return usageErrorf("-spd solves by ldlt: it does not combine with -algorithm %s", algorithm)
		}
		algorithm = tridiag.LDLT
	}
	in := &solveInput{cyclic: *cyclic, spd: algorithm.SPD()}
	if *constant != "" {
		if *aPath != "" || *bPath != "" || *cPath != "" {
			return usageErrorf("-const replaces -a, -b and -c: give one or the other")
		}
		v, err := parseConst(*constant)
		if err != nil {
			return err
		}
		in.constant, in.ca, in.cb, in.cc = true, v[0], v[1], v[2]
		if in.spd && in.ca != in.cc {
			return usageErrorf("-const %q with %s: the sub-diagonal %s is not the super-diagonal %s (a symmetric matrix has a = c)", *constant, algorithm, formatConst(in.ca), formatConst(in.cc))
		}
	} else {
		var missing []string
		for _, f := range []struct{ name, path string }{{"-a", *aPath}, {"-b", *bPath}, {"-c", *cPath}} {
			if f.path == "" && !(in.spd && f.name == "-a") {
				missing = append(missing, f.name)
			}
		}
		if len(missing) > 0 {
			if in.spd {
				return usageErrorf("missing %s (give -b and -c, or -const \"c,b,c\")", strings.Join(missing, ", "))
			}
			return usageErrorf("missing %s (give -a, -b and -c, or -const \"a,b,c\")", strings.Join(missing, ", "))
		}
	}
	interleaved := false
	switch strings.ToLower(*layout) {
	case "contiguous":
	case "interleaved":
		interleaved = true
	default:
		return usageErrorf("unknown layout %q (want contiguous or interleaved)", *layout)
	}
	piv, err := tridiag.ParsePivoting(*pivoting)
	if err != nil {
		return usageErrorf("unknown pivoting %q (want auto, always or never)", *pivoting)
	}
	if piv == tridiag.PivotAlways && algorithm != tridiag.Auto && !algorithm.Pivots() {
		return usageErrorf("-pivoting always with -algorithm %s, which does not pivot (use -algorithm auto, gtsv or partition-pivot)", algorithm)
	}
	precision := strings.ToLower(*prec)
	if precision != "auto" {
		var ok bool
		if precision, ok = parseSolvePrecision(*prec); !ok {
			return usageErrorf("unknown precision %q (want auto, f64, f32, c64 or c128)", *prec)
		}
	}
	if s := *slice; s != 0 && (s < 2 || s&(s-1) != 0) {
		return usageErrorf("-slice %d: the TPR slice size must be 0 or a power of two ≥ 2", s)
	}
	if _, _, err := parseDeviceName(*device); err != nil {
		return err
	}
	if err := checkTolFlag("-tol", *tol); err != nil {
		return err
	}

	inputs := []string{*dPath}
	if !in.constant {
		inputs = append(inputs, *bPath, *cPath)
		if *aPath != "" {
			inputs = append(inputs, *aPath)
		}
	}
	if err := atomicfile.CheckNotInput(*out, inputs...); err != nil {
		return usageErrorf("-o %v", err)
	}

	// The headers first: shapes, dtypes and sizes, before any data.
	dHead, err := npy.ReadFileHeader(*dPath)
	if err != nil {
		return inputError("-d", err)
	}
	in.shape = dHead.Shape
	allF32 := dHead.IsFloat32()
	// Complex: some input is; all4 says every input has 4-byte parts.
	anyComplex := dHead.IsComplex() || in.constant && (imag(in.ca) != 0 || imag(in.cb) != 0 || imag(in.cc) != 0)
	all4 := allF32 || dHead.DType[1:] == "c8"
	type coefFile struct {
		flag, path string
		shape      []int
	}
	var coefs []coefFile
	if !in.constant {
		for _, f := range []struct{ flag, path string }{{"-a", *aPath}, {"-b", *bPath}, {"-c", *cPath}} {
			if f.path == "" {
				continue // -a with -spd
			}
			h, err := npy.ReadFileHeader(f.path)
			if err != nil {
				return inputError(f.flag, err)
			}
			coefs = append(coefs, coefFile{f.flag, f.path, h.Shape})
			allF32 = allF32 && h.IsFloat32()
			anyComplex = anyComplex || h.IsComplex()
			all4 = all4 && (h.IsFloat32() || h.DType[1:] == "c8")
		}
	}
	// d is one batch, or one more axis (last) of right-hand sides after
	// the shape of the systems: that of -b, or with -const 2-D.
	sys := dHead.Shape
	multi := false
	if k := len(sys); k >= 2 {
		if in.constant && k == 3 || !in.constant && sameShape(sys[:k-1], coefs[len(coefs)-2].shape) {
			sys, in.nrhs, multi = sys[:k-1], sys[k-1], true
		}
	}
	if in.shape3, err = batchShape(*dPath, sys, interleaved); err != nil {
		return err
	}
	if multi && in.nrhs < 1 {
		return fmt.Errorf("%s: shape %s holds no right-hand side in its last axis", *dPath, shapeString(dHead.Shape))
	}
	for _, f := range coefs {
		if sameShape(f.shape, sys) {
			continue
		}
		if in.nrhs > 0 {
			return fmt.Errorf("%s: shape %s does not match the shape %s of the systems in %s (-d, with %d right-hand sides in its last axis)", f.path, shapeString(f.shape), shapeString(sys), *dPath, in.nrhs)
		}
		return fmt.Errorf("%s: shape %s does not match the shape %s of %s (-d)", f.path, shapeString(f.shape), shapeString(dHead.Shape), *dPath)
	}
	switch {
	case precision == "auto" && anyComplex:
		precision = "c128"
		if all4 {
			precision = "c64"
		}
	case precision == "auto":
		precision = "f64"
		if allF32 {
			precision = "f32"
		}
	case anyComplex && (precision == "f32" || precision == "f64"):
		return usageErrorf("-precision %s with complex input (a complex .npy file or -const value): use c64, c128 or auto", precision)
	}

	dev, release, err := openDevice(*device)
	if err != nil {
		return err
	}
	defer release()
	opts := tridiag.Options{Algorithm: algorithm, Pivoting: piv, SliceSize: *slice, Cyclic: *cyclic, Tol: *tol}
	var res solveResult
	switch precision {
	case "f32":
		res, err = solveFiles[float32](dev, in, *aPath, *bPath, *cPath, *dPath, opts, *out, *force)
	case "c64":
		res, err = solveFiles[complex64](dev, in, *aPath, *bPath, *cPath, *dPath, opts, *out, *force)
	case "c128":
		res, err = solveFiles[complex128](dev, in, *aPath, *bPath, *cPath, *dPath, opts, *out, *force)
	default:
		res, err = solveFiles[float64](dev, in, *aPath, *bPath, *cPath, *dPath, opts, *out, *force)
	}
	if err != nil && res.failed == 0 {
		return err
	}
	sh := in.shape3
	lay := "contiguous"
	if interleaved && sh.G > 1 {
		lay = "interleaved"
	}
	alg2 := algorithm.String()
	if res.plan != "" && res.plan != alg2 {
		alg2 += " (" + res.plan + ")"
	}
	rhs := ""
	if in.nrhs > 0 {
		rhs = fmt.Sprintf(" nrhs=%d", in.nrhs)
	}
	summary := fmt.Sprintf("N=%d G=%d%s layout=%s algorithm=%s precision=%s cyclic=%t device=%s time=%s max residual ‖Ax−d‖∞=%.3e max backward error=%.3e max κ̂∞=%.3e",
		sh.N, sh.G, rhs, lay, alg2, precision, *cyclic, dev.Name(), formatDuration(res.elapsed), res.residual, res.maxBerr, res.maxCond)
	if res.failed > 0 {
		summary += fmt.Sprintf(" (over the %d solved systems)", sh.G-res.failed)
	}
	dest := *out
	if !res.written {
		dest = "nothing written"
	}
	fmt.Fprintf(stderr, "bandsolve solve: %s -> %s\n", summary, dest)
	var reasons []string
	if err != nil {
		reasons = append(reasons, err.Error())
	}
	if len(res.inaccurate) > 0 {
		tolv := defaultTol(*tol, precision)
		msg := fmt.Sprintf("accuracy check failed for %d of %d systems (%s): %s", len(res.inaccurate), sh.G,
			systemList(res.inaccurate), strings.Join(verdictReasons(res.statuses, tolv, len(res.inaccurate) > 1), "; "))
		reasons = append(reasons, msg)
	}
	switch {
	case len(reasons) == 0:
		return nil
	case len(res.inaccurate) > 0:
		return errors.New(strings.Join(reasons, "; ") + outputNote(*out, *force))
	}
	return fmt.Errorf("%w; %s written, with NaN in the rows of the failed systems", err, *out)
}

// algorithmList lists every algorithm -algorithm accepts: "auto, thomas,
// …, tpr or partition".
func algorithmList() string {
	names := []string{tridiag.Auto.String()}
	for _, a := range tridiag.Algorithms() {
		names = append(names, a.String())
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// parseConst reads "a,b,c": real numbers, or complex ones as Go and
// Python write them ("2+0.5i", "-1j", "(1-2i)").
func parseConst(s string) ([3]complex128, error) {
	var v [3]complex128
	parts := strings.Split(s, ",")
	if len(parts) != 3 {
		return v, usageErrorf("-const %q: want three numbers \"a,b,c\" (sub-diagonal, diagonal, super-diagonal)", s)
	}
	for i, p := range parts {
		p = strings.TrimSpace(p)
		var z complex128
		f, err := strconv.ParseFloat(p, 64)
		if err == nil {
			z = complex(f, 0)
		} else {
			z, err = strconv.ParseComplex(strings.ReplaceAll(p, "j", "i"), 128)
		}
		if err != nil || !finiteC(z) {
			return v, usageErrorf("-const %q: %q is not a finite number", s, p)
		}
		v[i] = z
	}
	return v, nil
}

// formatConst prints a -const value: as a real number when it is one.
func formatConst(z complex128) string {
	if imag(z) == 0 {
		return strconv.FormatFloat(real(z), 'g', -1, 64)
	}
	return strconv.FormatComplex(z, 'g', -1, 128)
}

func finiteC(z complex128) bool {
	return !math.IsNaN(real(z)) && !math.IsInf(real(z), 0) && !math.IsNaN(imag(z)) && !math.IsInf(imag(z), 0)
}

// parseSolvePrecision normalises a precision name of the solve command:
// f32, f64, c64 or c128.
func parseSolvePrecision(s string) (string, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "c64", "complex64":
		return "c64", true
	case "c128", "complex128":
		return "c128", true
	}
	return parsePrecision(s)
}

// scalarOf converts a -const value to T (its real part for a real T;
// the caller solves complex constants in complex precision only).
func scalarOf[T tridiag.Scalar](z complex128) T {
	var v any
	switch any(*new(T)).(type) {
	case float32:
		v = float32(real(z))
	case float64:
		v = real(z)
	case complex64:
		v = complex64(z)
	case complex128:
		v = z
	}
	return v.(T)
}

// readArray reads a .npy file of any numeric dtype as float64.
func readArray(flagName, path string) ([]int, []float64, error) {
	return readArrayAs[float64](flagName, path)
}

// readArrayAs reads a .npy file of any numeric dtype as T.
func readArrayAs[T npy.Element](flagName, path string) ([]int, []T, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", flagName, err)
	}
	defer f.Close()
	shape, data, _, err := npy.ReadAs[T](f)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return shape, data, nil
}

// inputError names the flag of a file that cannot be opened (the npy
// errors of a file that opens name its path already).
func inputError(flagName string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Op == "open" {
		return fmt.Errorf("%s: %w", flagName, err)
	}
	return err
}

// batchShape turns the shape of d into a batch shape.
func batchShape(path string, shape []int, interleaved bool) (tridiag.Shape, error) {
	var s tridiag.Shape
	switch len(shape) {
	case 1:
		s = tridiag.Shape{N: shape[0], G: 1}
	case 2:
		if interleaved {
			s = tridiag.Shape{N: shape[0], G: shape[1], Layout: tridiag.Interleaved(shape[1])}
		} else {
			s = tridiag.Shape{N: shape[1], G: shape[0], Layout: tridiag.Contiguous(shape[1])}
		}
	default:
		want := "(N,) or (G, N)"
		if interleaved {
			want = "(N,) or (N, G)"
		}
		return s, fmt.Errorf("%s: shape %s has %d dimensions; want %s, or the shape of the coefficients followed by an axis of right-hand sides", path, shapeString(shape), len(shape), want)
	}
	if s.N < 1 || s.G < 1 {
		return s, fmt.Errorf("%s: shape %s is empty; need at least one row and one system", path, shapeString(shape))
	}
	if s.G == 1 {
		s.Layout = tridiag.Contiguous(s.N)
	}
	return s, nil
}

func sameShape(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// shapeString prints a shape as NumPy does: (5,), (3, 4), ().
func shapeString(shape []int) string {
	parts := make([]string, len(shape))
	for i, d := range shape {
		parts[i] = strconv.Itoa(d)
	}
	if len(parts) == 1 {
		return "(" + parts[0] + ",)"
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// solveResult is what solveBatch measured.
type solveResult struct {
	plan     string // how the plan solves (tridiag.Plan.Describe)
	elapsed  time.Duration
	residual float64 // max |A·x − d| over the rows of the solved systems
	failed   int     // systems reported failed
	// The accuracy check over the solved systems: the largest backward
	// error and κ̂, the systems that fail it and their statuses.
	maxBerr, maxCond float64
	inaccurate       []int
	statuses         []tridiag.Status
	written          bool // x was written to out
}

// solveFiles checks that the batch's arrays fit in memory, reads them in
// precision T (a, b and c only without constant coefficients; a only
// when given) and solves them with solveBatch, or solveBatchMany when d
// holds several right-hand sides.
func solveFiles[T tridiag.Scalar](dev tridiag.Device, in *solveInput, aPath, bPath, cPath, dPath string, opts tridiag.Options, out string, force bool) (solveResult, error) {
	arrays := 2 // d and x
	if in.nrhs > 0 {
		arrays = 3 * in.nrhs // d, and its columns and their solutions
	}
	switch {
	case in.constant && in.nrhs > 0:
		arrays += 3 // the constants as arrays
	case !in.constant:
		arrays += 2
		if aPath != "" {
			arrays++
		}
	}
	sh := in.shape3
	var zero T
	if err := memguard.Check(fmt.Sprintf("solving %d systems of %d rows (%d %T arrays)", sh.G, sh.N, arrays, zero),
		memguard.Bytes(int(unsafe.Sizeof(zero)), sh.N, sh.G, arrays)); err != nil {
		return solveResult{}, err
	}
	var a, b, c, d []T
	for _, f := range []struct {
		flag, path string
		dst        *[]T
	}{{"-d", dPath, &d}, {"-a", aPath, &a}, {"-b", bPath, &b}, {"-c", cPath, &c}} {
		if f.flag != "-d" && in.constant || f.path == "" {
			continue
		}
		_, data, err := readArrayAs[T](f.flag, f.path)
		if err != nil {
			return solveResult{}, err
		}
		*f.dst = data
	}
	if in.spd && a != nil {
		if err := checkSymmetric(in, aPath, a, c); err != nil {
			return solveResult{}, err
		}
	}
	if in.nrhs > 0 {
		return solveBatchMany(dev, in, a, b, c, d, opts, out, force)
	}
	return solveBatch(dev, in, a, b, c, d, opts, out, force)
}

// checkSymmetric checks that the sub-diagonal a given with -spd is the
// super-diagonal c shifted, as LDLT takes it: a[i] = c[i−1], and with
// -cyclic the corner a[0] = c[N−1].
func checkSymmetric[T tridiag.Scalar](in *solveInput, aPath string, a, c []T) error {
	sh := in.shape3
	l, n := sh.Layout, sh.N
	for g := 0; g < sh.G; g++ {
		for i := 0; i < n; i++ {
			if i == 0 && !in.cyclic {
				continue
			}
			j := (i + n - 1) % n
			if av, cv := a[l.Index(i, g)], c[l.Index(j, g)]; av != cv {
				return fmt.Errorf("%s: the systems are not symmetric: a of system %d, row %d is %v but c of row %d is %v (-spd takes a[i] = c[i−1]; leave -a out to take it so)", aPath, g, i, av, j, cv)
			}
		}
	}
	return nil
}

// solveBatch solves the batch in precision T, checks the accuracy of
// every solved system (Plan.Check, on the host) and writes x to out
// unless some solved system fails the check (and force is off). When
// some systems fail to solve it still writes x and returns the
// *BatchError with res.failed > 0.
func solveBatch[T tridiag.Scalar](dev tridiag.Device, in *solveInput, a, b, c, d []T, opts tridiag.Options, out string, force bool) (solveResult, error) {
	var res solveResult
	sh := in.shape3
	plan, err := tridiag.NewPlan[T](dev, sh, opts)
	if err != nil {
		return res, err
	}
	defer plan.Close()
	ca, cb, cc := scalarOf[T](in.ca), scalarOf[T](in.cb), scalarOf[T](in.cc)
	x := make([]T, len(d))
	ctx := context.Background()
	start := time.Now()
	if in.constant {
		err = plan.SolveConst(ctx, ca, cb, cc, d, x)
	} else {
		err = plan.Solve(ctx, a, b, c, d, x)
	}
	res.elapsed = time.Since(start)
	res.plan = plan.Describe() // after the solve: Auto says what it ran
	failed, err := failedSystems(sh.G, err)
	if err != nil && failed == nil {
		return res, err
	}
	res.failed = countTrue(failed)
	res.residual = maxResidual(in, a, b, c, d, x, failed)
	st, cerr := checkColumn(plan, in, a, b, c, d, x)
	if cerr != nil {
		return res, cerr
	}
	res.judge(st, failed)
	if len(res.inaccurate) > 0 && !force {
		return res, err
	}
	if werr := npy.WriteFile(out, in.shape, x); werr != nil {
		return solveResult{}, werr
	}
	res.written = true
	return res, err
}

// solveBatchMany solves the batch for the in.nrhs right-hand sides in
// the last axis of d, laid out one batch after the other, with
// Plan.SolveMany (each system factored once for all its columns where the
// algorithm factors), checks every column as solveBatch does (a system
// fails when it fails in some column, with the Status of its worst
// column) and writes x in the shape of d.
func solveBatchMany[T tridiag.Scalar](dev tridiag.Device, in *solveInput, a, b, c, d []T, opts tridiag.Options, out string, force bool) (solveResult, error) {
	var res solveResult
	sh := in.shape3
	K := in.nrhs
	plan, err := tridiag.NewPlan[T](dev, sh, opts)
	if err != nil {
		return res, err
	}
	defer plan.Close()
	// d's element k of the batch (its layout index) and column r is at
	// k·K + r; column r goes to cols[r·L + k].
	L := sh.Len()
	cols := make([]T, K*L)
	for k := 0; k < L; k++ {
		for r := 0; r < K; r++ {
			cols[r*L+k] = d[k*K+r]
		}
	}
	xs := make([]T, K*L)
	ctx := context.Background()
	start := time.Now()
	if in.constant {
		err = plan.SolveMany(ctx, K, constArray(L, scalarOf[T](in.ca)), constArray(L, scalarOf[T](in.cb)), constArray(L, scalarOf[T](in.cc)), cols, xs)
	} else {
		err = plan.SolveMany(ctx, K, a, b, c, cols, xs)
	}
	res.elapsed = time.Since(start)
	res.plan = plan.Describe() // after the solve: Auto says what it ran
	failed, err := failedSystems(sh.G, err)
	if err != nil && failed == nil {
		return res, err
	}
	res.failed = countTrue(failed)
	worst := make([]tridiag.Status, sh.G)
	for r := 0; r < K; r++ {
		dr, xr := cols[r*L:(r+1)*L], xs[r*L:(r+1)*L]
		res.residual = max(res.residual, maxResidual(in, a, b, c, dr, xr, failed))
		st, cerr := checkColumn(plan, in, a, b, c, dr, xr)
		if cerr != nil {
			return res, cerr
		}
		for g, s := range st {
			w := &worst[g]
			if r == 0 || s.Failed() && !w.Failed() || s.Failed() == w.Failed() && s.BackwardError > w.BackwardError {
				s.Flags |= w.Flags
				*w = s
			} else {
				w.Flags |= s.Flags
			}
		}
	}
	res.judge(worst, failed)
	if len(res.inaccurate) > 0 && !force {
		return res, err
	}
	for k := 0; k < L; k++ {
		for r := 0; r < K; r++ {
			d[k*K+r] = xs[r*L+k]
		}
	}
	if werr := npy.WriteFile(out, in.shape, d); werr != nil {
		return solveResult{}, werr
	}
	res.written = true
	return res, err
}

// constArray is n copies of v.
func constArray[T tridiag.Scalar](n int, v T) []T {
	a := make([]T, n)
	for i := range a {
		a[i] = v
	}
	return a
}

// failedSystems marks the systems a *BatchError names; any other error
// is returned with nil.
func failedSystems(G int, err error) ([]bool, error) {
	failed := make([]bool, G)
	if err == nil {
		return failed, nil
	}
	var be *tridiag.BatchError
	if !errors.As(err, &be) {
		return nil, err
	}
	for _, f := range be.Failed {
		failed[f.System] = true
	}
	return failed, err
}

func countTrue(v []bool) int {
	n := 0
	for _, b := range v {
		if b {
			n++
		}
	}
	return n
}

// maxResidual is max |A·x − d| over the rows of the systems not failed,
// in float64 (complex128 and the modulus for complex T; NaN when a row's
// is). With -spd the sub-diagonal is c shifted.
func maxResidual[T tridiag.Scalar](in *solveInput, a, b, c, d, x []T, failed []bool) float64 {
	switch x := any(x).(type) {
	case []float32:
		return maxResidualReal(in, any(a).([]float32), any(b).([]float32), any(c).([]float32), any(d).([]float32), x, failed)
	case []float64:
		return maxResidualReal(in, any(a).([]float64), any(b).([]float64), any(c).([]float64), any(d).([]float64), x, failed)
	case []complex64:
		return maxResidualComplex(in, any(a).([]complex64), any(b).([]complex64), any(c).([]complex64), any(d).([]complex64), x, failed)
	case []complex128:
		return maxResidualComplex(in, any(a).([]complex128), any(b).([]complex128), any(c).([]complex128), any(d).([]complex128), x, failed)
	}
	panic("bandsolve: unknown element type")
}

// maxResidualComplex is maxResidual for complex T (no -spd: complex
// plans refuse it).
func maxResidualComplex[T tridiag.Complex](in *solveInput, a, b, c, d, x []T, failed []bool) float64 {
	sh := in.shape3
	l, n := sh.Layout, sh.N
	ca, cb, cc := complex128(T(in.ca)), complex128(T(in.cb)), complex128(T(in.cc))
	coef := func(v []T, k int, cv complex128) complex128 {
		if in.constant {
			return cv
		}
		return complex128(v[k])
	}
	var res float64
	for g := 0; g < sh.G; g++ {
		if failed[g] {
			continue
		}
		for i := 0; i < n; i++ {
			k := l.Index(i, g)
			r := coef(b, k, cb)*complex128(x[k]) - complex128(d[k])
			if i > 0 || in.cyclic {
				prev := l.Index((i+n-1)%n, g)
				r += coef(a, k, ca) * complex128(x[prev])
			}
			if i < n-1 || in.cyclic {
				r += coef(c, k, cc) * complex128(x[l.Index((i+1)%n, g)])
			}
			m := cmplx.Abs(r)
			if m > res || math.IsNaN(m) {
				res = m
			}
			if math.IsNaN(res) {
				return res
			}
		}
	}
	return res
}

// maxResidualReal is maxResidual for real T.
func maxResidualReal[T tridiag.Float](in *solveInput, a, b, c, d, x []T, failed []bool) float64 {
	sh := in.shape3
	l, n := sh.Layout, sh.N
	// The constants as the solve had them, rounded to T.
	ca, cb, cc := float64(T(real(in.ca))), float64(T(real(in.cb))), float64(T(real(in.cc)))
	coef := func(v []T, k int, cv float64) float64 {
		if in.constant {
			return cv
		}
		return float64(v[k])
	}
	var res float64
	for g := 0; g < sh.G; g++ {
		if failed[g] {
			continue
		}
		for i := 0; i < n; i++ {
			k := l.Index(i, g)
			prev := l.Index((i+n-1)%n, g)
			r := coef(b, k, cb)*float64(x[k]) - float64(d[k])
			if i > 0 || in.cyclic {
				sub := ca
				switch {
				case in.spd && !in.constant:
					sub = float64(c[prev])
				case !in.constant:
					sub = float64(a[k])
				}
				r += sub * float64(x[prev])
			}
			if i < n-1 || in.cyclic {
				r += coef(c, k, cc) * float64(x[l.Index((i+1)%n, g)])
			}
			r = math.Abs(r)
			if r > res || math.IsNaN(r) {
				res = r
			}
			if math.IsNaN(res) {
				return res
			}
		}
	}
	return res
}

// checkColumn runs the plan's accuracy check on one batch of right-hand
// sides d and solutions x: one Status per system (its *BatchError is the
// verdict, judged by the caller).
func checkColumn[T tridiag.Scalar](plan *tridiag.Plan[T], in *solveInput, a, b, c, d, x []T) ([]tridiag.Status, error) {
	var st []tridiag.Status
	var err error
	if in.constant {
		st, err = plan.CheckConst(scalarOf[T](in.ca), scalarOf[T](in.cb), scalarOf[T](in.cc), d, x)
	} else {
		st, err = plan.Check(a, b, c, d, x)
	}
	var be *tridiag.BatchError
	if err != nil && !errors.As(err, &be) {
		return nil, err
	}
	return st, nil
}

// judge records the accuracy check's statuses of the systems not failed:
// the largest backward error and κ̂, and the systems that fail it.
func (res *solveResult) judge(st []tridiag.Status, failed []bool) {
	for g, s := range st {
		if failed[g] {
			continue
		}
		res.maxBerr = math.Max(res.maxBerr, s.BackwardError)
		res.maxCond = math.Max(res.maxCond, s.Cond)
		if s.Failed() {
			res.inaccurate = append(res.inaccurate, g)
			res.statuses = append(res.statuses, s)
		}
	}
}

// formatDuration prints a duration with three significant digits.
func formatDuration(d time.Duration) string {
	switch {
	case d < time.Microsecond:
		return d.String()
	case d < time.Millisecond:
		return fmt.Sprintf("%.3gµs", float64(d)/float64(time.Microsecond))
	case d < time.Second:
		return fmt.Sprintf("%.3gms", float64(d)/float64(time.Millisecond))
	}
	return fmt.Sprintf("%.3gs", d.Seconds())
}
