package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/bandsolve/bandsolve/internal/atomicfile"
	"github.com/bandsolve/bandsolve/stability"
	"github.com/bandsolve/bandsolve/tridiag"
	"github.com/bandsolve/bandsolve/tridiag/tpr"
)

var stabilityCommand = &command{
	name:     "stability",
	summary:  "error of every algorithm on the stability matrix suite",
	synopsis: "stability [flags]",
	about: `Stability measures the relative error ‖x̂ − x‖₂ / ‖x‖₂ of each algorithm on
the matrix suite of the TPR paper (Table 9, after Chang et al.), like
Tables 7 and 8 of that paper: one row per matrix type, one column per
algorithm, one table per precision.

Every problem is the generated matrix rounded to the precision, with a
right-hand side d = A·x₀ formed exactly and the exact solution x of the
rounded system computed in high precision (package stability). Each
problem is generated once per precision and solved by every algorithm on
the chosen device, one system at a time.

Cells hold the error (%.2e), or:
  breakdown  the algorithm met a zero pivot and reported it (GPU kernels
             also report a non-finite result this way)
  NaN        the algorithm returned a non-finite solution
  singular   the rounded matrix is exactly singular (no solution to compare)
  no-ref     the exact solution could not be settled or overflows float64
  n/a        the device has no plan for the algorithm (reason on stderr)
  error      the solve failed otherwise (the reason is printed on stderr)

With tpr in the list a column tpr-stable is added: TPR with the slice
size of the paper's stable configuration (tpr.StableSliceSize), next to
tpr with -slice (0: the fastest configuration, tpr.DefaultSliceSize).

Types: classic is 1..16; extended adds Klein & Strzodka's 17..20
(tridiag(1,1e8,1), tridiag(-1,4,-1), tridiag(-1,4,1), tridiag(-1,4,U))
and 21, their type 16 tridiag(1,1e-8,1). Both end with 2T, 6T, 14T and
16T, the Toeplitz readings of types 2, 6, 14 and 16 (one random value
per off-diagonal instead of one per entry; Table 9's condition numbers
are theirs). -types also takes a comma-separated list of types, such as
2,14,14T.

The csv format is long: one record per type × precision × algorithm with
the fields type,description,precision,algorithm,n,rel_error,status (type
is the type's name, such as 14 or 14T; status
is ok, nan, breakdown, singular, no-ref, n/a or error), after one CSV
header line; the title line (device, n, seed) goes to stderr so that the
output stays plain CSV.

With -o the table is written to a temporary file in the target's
directory, flushed to disk and renamed over the target only when it is
complete: a failure (a full disk, a failed device) leaves an existing
file unchanged.`,
	examples: `  bandsolve stability                        # n = 512, all algorithms, f32 and f64
  bandsolve stability -n 1024 -seed 7 -format markdown -o table.md
  bandsolve stability -types extended -algorithms thomas,gtsv,tpr -precision f64
  bandsolve stability -types 14,14T,16,16T -algorithms gtsv,auto
  bandsolve stability -algorithms tpr -slice 32 -format csv > tpr32.csv
  bandsolve stability -device cuda:0          # needs a build with -tags cuda`,
	run: runStability,
}

// stabilityConfig is the parsed command line of stability.
type stabilityConfig struct {
	n          int
	seed       uint64
	device     string
	format     string
	types      []stability.Type
	typeSet    string
	columns    []column
	precisions []string // "f32", "f64"
	out        string
}

// column is one algorithm column of the table.
type column struct {
	name  string
	alg   tridiag.Algorithm
	slice int // TPR slice size; 0 for the other algorithms
}

const (
	statusOK        = "ok"
	statusNaN       = "nan"
	statusBreakdown = "breakdown"
	statusSingular  = "singular"
	statusNoRef     = "no-ref"
	statusError     = "error"
	statusNA        = "n/a"
)

// outcome is one cell: the relative error of one algorithm on one problem.
type outcome struct {
	status string
	err    float64
}

func (o outcome) cell() string {
	switch o.status {
	case statusOK:
		return fmt.Sprintf("%.2e", o.err)
	case statusNaN:
		return "NaN"
	}
	return o.status
}

func (o outcome) csvError() string {
	switch o.status {
	case statusOK:
		return fmt.Sprintf("%.2e", o.err)
	case statusNaN:
		return "NaN"
	}
	return ""
}

func runStability(c *command, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet(c)
	n := fs.Int("n", 512, "rows of each system (≥ 2)")
	seed := fs.Uint64("seed", 1, "seed of the random matrix types and of the solution x₀")
	device := fs.String("device", "cpu", "device: cpu, cpu:WORKERS, cuda or cuda:N (see 'bandsolve devices')")
	format := fs.String("format", "text", "output format: text, markdown or csv")
	types := fs.String("types", "classic", "matrix types: classic (1..16), extended (1..21), both with 2T,6T,14T,16T, or a comma-separated list such as 2,14T")
	algs := fs.String("algorithms", "thomas,gtsv,cr,pcr,wangmou,tpr,partition,partition-pivot", "comma-separated algorithms: thomas, gtsv, cr, pcr, wangmou, tpr, tpr-stable, partition, partition-pivot, auto")
	prec := fs.String("precision", "f32,f64", "comma-separated precisions: f32, f64")
	slice := fs.Int("slice", 0, "TPR slice size S, a power of two ≥ 2 (0: the fastest configuration for n)")
	out := fs.String("o", "", "write the table to this file instead of stdout")
	if help, err := parseFlags(c, fs, args, stdout); help || err != nil {
		return err
	}
	cfg, err := stabilitySetup(*n, *seed, *device, *format, *types, *algs, *prec, *slice, *out)
	if err != nil {
		return err
	}
	dev, release, err := openDevice(cfg.device)
	if err != nil {
		return err
	}
	defer release()

	w := stdout
	var f *atomicfile.File
	if cfg.out != "" {
		if f, err = atomicfile.Create(cfg.out); err != nil {
			return err
		}
		defer f.Abort()
		w = f
	}

	p32, e32, p64, e64 := generateProblems(cfg)
	var notes []string
	results := map[string][][]outcome{}
	for _, p := range cfg.precisions {
		var res [][]outcome
		var ns []string
		if p == "f32" {
			res, ns = measure(dev, cfg, p32, e32)
		} else {
			res, ns = measure(dev, cfg, p64, e64)
		}
		results[p] = res
		notes = append(notes, ns...)
	}
	if err := writeStability(w, stderr, cfg, dev.Name(), results); err != nil {
		return err
	}
	if f != nil {
		if err := f.Commit(); err != nil {
			return err
		}
	}
	for _, note := range notes {
		fmt.Fprintf(stderr, "bandsolve stability: note: %s\n", note)
	}
	return nil
}

// stabilitySetup validates the flags.
func stabilitySetup(n int, seed uint64, device, format, types, algs, prec string, slice int, out string) (*stabilityConfig, error) {
	cfg := &stabilityConfig{n: n, seed: seed, device: device, format: strings.ToLower(format), out: out}
	if n < stability.MinN {
		return nil, usageErrorf("-n %d: need n ≥ %d", n, stability.MinN)
	}
	switch cfg.format {
	case "text", "markdown", "csv":
	case "md":
		cfg.format = "markdown"
	default:
		return nil, usageErrorf("unknown format %q (want text, markdown or csv)", format)
	}
	switch strings.ToLower(strings.TrimSpace(types)) {
	case "classic":
		cfg.types, cfg.typeSet = stability.Types(false), "classic"
	case "extended":
		cfg.types, cfg.typeSet = stability.Types(true), "extended"
	default:
		for _, name := range splitList(types) {
			t, err := stability.ParseType(name)
			if err != nil {
				return nil, usageErrorf("-types: unknown type %q (want classic, extended or a comma-separated list of 1..21, 2T, 6T, 14T, 16T)", name)
			}
			if !slices.Contains(cfg.types, t) {
				cfg.types = append(cfg.types, t)
			}
		}
		if len(cfg.types) == 0 {
			return nil, usageErrorf("-types is empty")
		}
	}
	if slice != 0 && (slice < 2 || slice&(slice-1) != 0) {
		return nil, usageErrorf("-slice %d: the TPR slice size must be 0 or a power of two ≥ 2", slice)
	}
	for _, p := range splitList(prec) {
		q, ok := parsePrecision(p)
		if !ok {
			return nil, usageErrorf("unknown precision %q (want f32 or f64)", p)
		}
		if !slices.Contains(cfg.precisions, q) {
			cfg.precisions = append(cfg.precisions, q)
		}
	}
	if len(cfg.precisions) == 0 {
		return nil, usageErrorf("-precision is empty (want f32, f64 or both)")
	}
	names := splitList(algs)
	hasStable := slices.ContainsFunc(names, func(s string) bool { return strings.EqualFold(s, "tpr-stable") })
	seen := map[string]bool{}
	add := func(col column) {
		if !seen[col.name] {
			seen[col.name] = true
			cfg.columns = append(cfg.columns, col)
		}
	}
	for _, name := range names {
		if strings.EqualFold(name, "tpr-stable") {
			add(column{name: "tpr-stable", alg: tridiag.TPR, slice: tpr.StableSliceSize(n)})
			continue
		}
		a, err := tridiag.ParseAlgorithm(name)
		if err != nil {
			return nil, usageErrorf("unknown algorithm %q (want thomas, gtsv, cr, pcr, wangmou, tpr, tpr-stable, partition or auto)", name)
		}
		col := column{name: a.String(), alg: a}
		if a == tridiag.TPR {
			col.slice = slice
			if col.slice == 0 {
				col.slice = tpr.DefaultSliceSize(n)
			}
		}
		add(col)
		if a == tridiag.TPR && !hasStable {
			add(column{name: "tpr-stable", alg: tridiag.TPR, slice: tpr.StableSliceSize(n)})
		}
	}
	if len(cfg.columns) == 0 {
		return nil, usageErrorf("-algorithms is empty")
	}
	return cfg, nil
}

// splitList splits a comma-separated flag value, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// parsePrecision normalises a precision name to "f32" or "f64".
func parsePrecision(s string) (string, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "f32", "float32", "single", "fp32", "32":
		return "f32", true
	case "f64", "float64", "double", "fp64", "64":
		return "f64", true
	}
	return "", false
}

func precisionName(p string) string {
	if p == "f32" {
		return "float32"
	}
	return "float64"
}

// generateProblems builds every problem of the requested precisions once,
// on all cores (the randsvd types dominate the time).
func generateProblems(cfg *stabilityConfig) (p32 []stability.Problem[float32], e32 []error, p64 []stability.Problem[float64], e64 []error) {
	nt := len(cfg.types)
	// The slow randsvd types (8..11) go first, so that they do not end
	// up alone at the end.
	var slow, fast []func()
	for _, p := range cfg.precisions {
		if p == "f32" {
			p32, e32 = make([]stability.Problem[float32], nt), make([]error, nt)
		} else {
			p64, e64 = make([]stability.Problem[float64], nt), make([]error, nt)
		}
		for i, t := range cfg.types {
			job := func() { p64[i], e64[i] = newProblem[float64](t, cfg.n, cfg.seed) }
			if p == "f32" {
				job = func() { p32[i], e32[i] = newProblem[float32](t, cfg.n, cfg.seed) }
			}
			if t >= 8 && t <= 11 {
				slow = append(slow, job)
			} else {
				fast = append(fast, job)
			}
		}
	}
	jobs := append(slow, fast...)
	next := make(chan func())
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(jobs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for job := range next {
				job()
			}
		}()
	}
	for _, job := range jobs {
		next <- job
	}
	close(next)
	wg.Wait()
	return
}

// newProblem is stability.NewProblem with a panic turned into an error.
func newProblem[T float32 | float64](t stability.Type, n int, seed uint64) (p stability.Problem[T], err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("generating type %s: panic: %v", t.Name(), r)
		}
	}()
	return stability.NewProblem[T](t, n, seed)
}

// measure solves every problem with every column's algorithm on dev and
// returns one row of outcomes per problem, and notes on failures.
func measure[T tridiag.Float](dev tridiag.Device, cfg *stabilityConfig, probs []stability.Problem[T], perr []error) ([][]outcome, []string) {
	n, prec := cfg.n, precisionName(precOf[T]())
	res := make([][]outcome, len(probs))
	for i := range res {
		res[i] = make([]outcome, len(cfg.columns))
	}
	var notes []string
	for i, e := range perr {
		if e != nil && !errors.Is(e, stability.ErrSingular) {
			notes = append(notes, fmt.Sprintf("%s, type %s: no reference solution: %v", prec, cfg.types[i].Name(), e))
		}
	}
	a, b, c, d, x := make([]T, n), make([]T, n), make([]T, n), make([]T, n), make([]T, n)
	ctx := context.Background()
	for j, col := range cfg.columns {
		plan, err := tridiag.NewPlan[T](dev, tridiag.Shape{N: n, G: 1}, tridiag.Options{Algorithm: col.alg, SliceSize: col.slice})
		if err != nil {
			notes = append(notes, fmt.Sprintf("%s, %s: %v", prec, col.name, err))
		}
		for i, p := range probs {
			switch {
			case perr[i] != nil && errors.Is(perr[i], stability.ErrSingular):
				res[i][j] = outcome{status: statusSingular}
				continue
			case perr[i] != nil:
				res[i][j] = outcome{status: statusNoRef}
				continue
			case plan == nil:
				res[i][j] = outcome{status: statusNA}
				continue
			}
			copy(a, p.A)
			copy(b, p.B)
			copy(c, p.C)
			copy(d, p.D)
			for k := range x {
				x[k] = 0
			}
			o, note := solveProblem(ctx, plan, a, b, c, d, x, p.X)
			if note != "" {
				notes = append(notes, fmt.Sprintf("%s, %s, type %s: %s", prec, col.name, cfg.types[i].Name(), note))
			}
			res[i][j] = o
		}
		if plan != nil {
			_ = plan.Close()
		}
	}
	return res, notes
}

// solveProblem solves one system and classifies the result.
func solveProblem[T tridiag.Float](ctx context.Context, plan *tridiag.Plan[T], a, b, c, d, x []T, exact []float64) (o outcome, note string) {
	defer func() {
		if r := recover(); r != nil {
			o, note = outcome{status: statusError}, fmt.Sprintf("panic: %v", r)
		}
	}()
	err := plan.Solve(ctx, a, b, c, d, x)
	var be *tridiag.BatchError
	switch {
	case err == nil:
	case errors.Is(err, tridiag.ErrZeroPivot), errors.Is(err, tridiag.ErrSingular):
		// GPU kernels report a zero pivot and an overflow alike
		// (tridiag.ErrBreakdown matches both): breakdown.
		return outcome{status: statusBreakdown}, ""
	case errors.Is(err, tridiag.ErrNonFiniteResult):
		return outcome{status: statusNaN, err: math.NaN()}, ""
	case errors.As(err, &be):
		return outcome{status: statusBreakdown}, ""
	default:
		return outcome{status: statusError}, err.Error()
	}
	e := stability.RelError(x, exact)
	if math.IsNaN(e) {
		return outcome{status: statusNaN, err: e}, ""
	}
	return outcome{status: statusOK, err: e}, ""
}

// precOf returns "f32" or "f64" for T.
func precOf[T tridiag.Float]() string {
	if _, ok := any(T(0)).(float32); ok {
		return "f32"
	}
	return "f64"
}

// writeStability prints the results in cfg.format.
func writeStability(w, stderr io.Writer, cfg *stabilityConfig, devName string, results map[string][][]outcome) error {
	head := stabilityHeader(cfg, devName)
	if cfg.format == "csv" {
		fmt.Fprintln(stderr, head)
		var recs [][]string
		for i, t := range cfg.types {
			for _, p := range cfg.precisions {
				for j, col := range cfg.columns {
					o := results[p][i][j]
					recs = append(recs, []string{t.Name(), t.String(), p, col.name, strconv.Itoa(cfg.n), o.csvError(), o.status})
				}
			}
		}
		return writeCSV(w, []string{"type", "description", "precision", "algorithm", "n", "rel_error", "status"}, recs)
	}
	var sb strings.Builder
	sb.WriteString(head + "\n")
	used := map[string]bool{}
	for _, p := range cfg.precisions {
		t := &table{
			title:      fmt.Sprintf("%s, n = %d: relative error ‖x̂−x‖₂/‖x‖₂", precisionName(p), cfg.n),
			header:     []string{"type", "description"},
			rightAlign: []bool{true, false},
		}
		for _, col := range cfg.columns {
			t.header = append(t.header, col.name)
			t.rightAlign = append(t.rightAlign, true)
		}
		for i, ty := range cfg.types {
			row := []string{ty.Name(), ty.String()}
			for _, o := range results[p][i] {
				row = append(row, o.cell())
				used[o.status] = true
			}
			t.rows = append(t.rows, row)
		}
		sb.WriteString("\n")
		var err error
		if cfg.format == "markdown" {
			err = t.writeMarkdown(&sb)
		} else {
			err = t.writeText(&sb)
		}
		if err != nil {
			return err
		}
	}
	if legend := stabilityLegend(used); legend != "" {
		sb.WriteString("\n" + legend + "\n")
	}
	_, err := io.WriteString(w, sb.String())
	return err
}

// stabilityHeader is the line naming the device, n, seed and slice sizes.
func stabilityHeader(cfg *stabilityConfig, devName string) string {
	types := "types " + typeList(cfg.types)
	if cfg.typeSet != "" {
		types = fmt.Sprintf("%s types (%s)", cfg.typeSet, typeList(cfg.types))
	}
	h := fmt.Sprintf("bandsolve stability: device %s, n = %d, seed = %d, %s",
		devName, cfg.n, cfg.seed, types)
	var sl []string
	for _, col := range cfg.columns {
		if col.alg == tridiag.TPR {
			sl = append(sl, fmt.Sprintf("%s S = %d", col.name, col.slice))
		}
	}
	if len(sl) > 0 {
		h += "; " + strings.Join(sl, ", ")
	}
	if cfg.format == "markdown" {
		h = "**" + h + "**"
	}
	return h
}

// typeList names the types of ts in their order, a run of three or more
// consecutive numbered types as "first..last": "1..16, 2T, 6T, 14T, 16T".
func typeList(ts []stability.Type) string {
	var parts []string
	for i := 0; i < len(ts); {
		j := i
		for !ts[i].IsToeplitz() && j+1 < len(ts) && ts[j+1] == ts[j]+1 && !ts[j+1].IsToeplitz() {
			j++
		}
		if j-i >= 2 {
			parts = append(parts, ts[i].Name()+".."+ts[j].Name())
		} else {
			for k := i; k <= j; k++ {
				parts = append(parts, ts[k].Name())
			}
		}
		i = j + 1
	}
	return strings.Join(parts, ", ")
}

// stabilityLegend explains the words that appear in the tables.
func stabilityLegend(used map[string]bool) string {
	var parts []string
	for _, l := range []struct{ status, text string }{
		{statusBreakdown, "breakdown = zero pivot reported by the solver (on a GPU: zero pivot or non-finite result)"},
		{statusNaN, "NaN = non-finite solution returned"},
		{statusSingular, "singular = the rounded matrix is exactly singular"},
		{statusNoRef, "no-ref = no exact solution to compare with"},
		{statusNA, "n/a = the device cannot run the algorithm (see stderr)"},
		{statusError, "error = the solve failed (see stderr)"},
	} {
		if used[l.status] {
			parts = append(parts, l.text)
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, "; ") + "."
}
