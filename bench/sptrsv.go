package bench

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/bandsolve/bandsolve/sptrsv"
	"github.com/bandsolve/bandsolve/sptrsv/suite"
	"github.com/bandsolve/bandsolve/tridiag"
)

// Sparse triangular grids (-grid sptrsv, sptrsv-small): the lower
// triangles of package sptrsv/suite's fixed set (up to 10⁷ rows) or its
// small variants, solved on the GPU by this module's level-set,
// synchronization-free and Auto plans and by cuSPARSE's SpSV in the same
// run, and on the CPU by the level-set solve (peer cpu).
var trsvGrids = map[string]func() suite.Set{"sptrsv": suite.Fixed, "sptrsv-small": suite.Small}

// TrsvGrids lists the sparse triangular grids.
func TrsvGrids() []string { return []string{"sptrsv", "sptrsv-small"} }

func isTrsvGrid(name string) bool { return trsvGrids[name] != nil }

// TrsvResult is one solver's measurement on one triangle: the median
// analysis time (wall clock, from the start of the analysis until the
// device has finished it; for SpSV the first analysis in the process is
// kept apart, in First), the median, fastest and slowest solve (CUDA
// events around each solve, launched while the GPU waits for it; wall
// clock on the CPU), the launches of one solve, and the relative error of
// x against the sequential float64 reference.
type TrsvResult struct {
	Matrix, Desc   string
	N, NNZ, Levels int
	Precision      string
	Solver         string
	Analysis       time.Duration
	First          time.Duration
	Solve          time.Duration
	SolveLo        time.Duration
	SolveHi        time.Duration
	Launches       int
	RelErr         float64
	Err            string
	Prov           Provenance
}

// GFlops is 2·nnz / the median solve time, in 10⁹ per second.
func (r TrsvResult) GFlops() float64 {
	if r.Solve <= 0 {
		return 0
	}
	return 2 * float64(r.NNZ) / r.Solve.Seconds() / 1e9
}

// trsvCase is a triangle with its right-hand side and reference solution.
type trsvCase struct {
	c     suite.Case
	an    *sptrsv.Analysis
	b     []float64
	ref   []float64
	stats sptrsv.Stats
}

// relErrOf is ‖x − ref‖∞ / ‖ref‖∞ with x in any precision.
func relErrOf[T ~float32 | ~float64](x []T, ref []float64) float64 {
	num, den := 0.0, 0.0
	for i, r := range ref {
		d := math.Abs(float64(x[i]) - r)
		if math.IsNaN(d) {
			return math.Inf(1)
		}
		num = max(num, d)
		den = max(den, math.Abs(r))
	}
	return num / den
}

// runTrsv runs a sparse triangular grid.
func runTrsv(ctx context.Context, cfg *config, stdout, stderr io.Writer) error {
	set := trsvGrids[cfg.grid]()
	if cfg.list {
		for i, c := range set {
			fmt.Fprintf(stdout, "%3d  %-20s %s\n", i+1, c.Name, c.Desc)
		}
		return nil
	}
	cases, err := selectCases(set, cfg.cases)
	if err != nil {
		return err
	}
	var gpu gpuBackend
	prov := newProvenance(cfg.grid)
	prov.Device = tridiag.DefaultCPU().Name()
	if cfg.device == "cuda" {
		if gpu, err = openGPU(cfg.gpu, cfg.copyBytes, cfg.cusparsePath); err != nil {
			return fmt.Errorf("-device cuda: %w", err)
		}
		defer gpu.Close()
		for _, n := range gpu.Notes() {
			fmt.Fprintf(stdout, "# %s\n", n)
		}
		fmt.Fprintf(stdout, "# %s, %s, %s\n", gpu.Name(), gpu.Driver(), gpu.Library())
		prov.Device, prov.Driver, prov.Library, prov.Bandwidth = gpu.Name(), gpu.Driver(), gpu.Library(), gpu.Bandwidth()
	}
	var all []TrsvResult
	for _, c := range cases {
		if err := ctx.Err(); err != nil {
			return err
		}
		start := time.Now()
		tc, err := newTrsvCase(c)
		if err != nil {
			return err
		}
		if !cfg.quiet {
			fmt.Fprintf(stderr, "%s: n = %d, nnz = %d, %d levels (built and analysed on the CPU in %s)\n",
				c.Name, tc.stats.N, tc.stats.NNZ, tc.stats.Levels, fmtDuration(time.Since(start)))
		}
		var rs []TrsvResult
		if cfg.peers["cpu"] || cfg.device == "cpu" {
			rs = append(rs, timeCPUTrsv(ctx, tc, cfg.reps))
		}
		if gpu != nil {
			for _, prec := range []string{"f32", "f64"} {
				if cfg.precisions[prec] {
					rs = append(rs, runTrsvGPU(gpu, tc, prec, cfg.warmup, cfg.reps, cfg.peers["cusparse"])...)
				}
			}
		}
		for i := range rs {
			rs[i].Prov = prov
		}
		all = append(all, rs...)
		if err := WriteTrsvTable(stdout, rs); err != nil {
			return err
		}
	}
	if cfg.csvPath != "" {
		return writeCSVFile(cfg.csvPath, cfg.anchors, func(w io.Writer) error { return WriteTrsvCSV(w, all) })
	}
	return nil
}

// newTrsvCase builds the triangle, analyses it on the CPU and solves it
// sequentially in float64 for the reference.
func newTrsvCase(c suite.Case) (*trsvCase, error) {
	a := c.Build()
	an, err := sptrsv.Analyze(a, sptrsv.Options{})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.Name, err)
	}
	rng := rand.New(rand.NewPCG(uint64(a.N), 11))
	b := make([]float64, a.N)
	for i := range b {
		b[i] = 2*rng.Float64() - 1
	}
	ref := make([]float64, a.N)
	if err := sptrsv.SolveSequential(an, b, ref); err != nil {
		return nil, err
	}
	return &trsvCase{c: c, an: an, b: b, ref: ref, stats: an.Stats()}, nil
}

func (tc *trsvCase) result(solver, prec string) TrsvResult {
	return TrsvResult{Matrix: tc.c.Name, Desc: tc.c.Desc, N: tc.stats.N, NNZ: tc.stats.NNZ, Levels: tc.stats.Levels,
		Precision: prec, Solver: solver}
}

// timeCPUTrsv times the CPU's level-set solve (float64, all cores); the
// analysis is sptrsv.Analyze's.
func timeCPUTrsv(ctx context.Context, tc *trsvCase, reps int) TrsvResult {
	r := tc.result("cpu:levelset", "f64")
	a := tc.c.Build()
	var ans []time.Duration
	for range max(1, min(reps, 3)) {
		start := time.Now()
		if _, err := sptrsv.Analyze(a, sptrsv.Options{}); err != nil {
			r.Err = err.Error()
			return r
		}
		ans = append(ans, time.Since(start))
	}
	r.Analysis, _, _ = summarize(ans)
	x := make([]float64, len(tc.b))
	var times []time.Duration
	for range reps {
		start := time.Now()
		if err := sptrsv.Solve(ctx, tc.an, tc.b, x); err != nil {
			r.Err = err.Error()
			return r
		}
		times = append(times, time.Since(start))
	}
	r.Solve, r.SolveLo, r.SolveHi = summarize(times)
	r.RelErr = relErrOf(x, tc.ref)
	return r
}

// WriteTrsvTable writes results as an aligned table with the speed-ups
// over cuSPARSE SpSV of the same precision.
func WriteTrsvTable(w io.Writer, rs []TrsvResult) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "matrix\tn\tnnz\tlevels\tprec\tsolver\tanalysis\tsolve\tGFLOP/s\tlaunches\trel. error\tsolve ×SpSV\tanalysis ×SpSV\tanalysis+solve ×SpSV\t")
	for _, r := range rs {
		if r.Err != "" {
			fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\t%s\t%s\t\n", r.Matrix, r.N, r.NNZ, r.Levels, r.Precision, r.Solver, "error: "+r.Err)
			continue
		}
		sv, su, tot := "-", "-", "-"
		for _, p := range rs {
			if p.Solver == "cusparse:SpSV" && p.Precision == r.Precision && p.Err == "" && r.Solver != p.Solver {
				sv = fmtRatio(p.Solve.Seconds() / r.Solve.Seconds())
				su = fmtRatio(p.Analysis.Seconds() / r.Analysis.Seconds())
				tot = fmtRatio((p.Analysis + p.Solve).Seconds() / (r.Analysis + r.Solve).Seconds())
			}
		}
		an := fmtTime(r.Analysis)
		if r.First > 0 {
			an += " (first " + fmtTime(r.First) + ")"
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t%.2f\t%d\t%.1e\t%s\t%s\t%s\t\n", r.Matrix, r.N, r.NNZ, r.Levels,
			r.Precision, r.Solver, an, fmtTime(r.Solve), r.GFlops(), r.Launches, r.RelErr, sv, su, tot)
	}
	return tw.Flush()
}

// trsvHeader names the columns of the sparse triangular CSV files.
var trsvHeader = append([]string{"matrix", "desc", "n", "nnz", "levels", "precision", "solver", "analysis_s",
	"first_analysis_s", "solve_s", "solve_min_s", "solve_max_s", "gflops", "launches", "rel_error", "error"}, provenanceHeader...)

// WriteTrsvCSV writes results as CSV, one record a result with its
// provenance, times in seconds.
func WriteTrsvCSV(w io.Writer, rs []TrsvResult) error {
	cw := csv.NewWriter(w)
	_ = cw.Write(trsvHeader)
	sec := func(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'g', 6, 64) }
	for _, r := range rs {
		_ = cw.Write(append([]string{r.Matrix, r.Desc, strconv.Itoa(r.N), strconv.Itoa(r.NNZ), strconv.Itoa(r.Levels), r.Precision,
			r.Solver, sec(r.Analysis), sec(r.First), sec(r.Solve), sec(r.SolveLo), sec(r.SolveHi),
			strconv.FormatFloat(r.GFlops(), 'g', 6, 64), strconv.Itoa(r.Launches), strconv.FormatFloat(r.RelErr, 'g', 4, 64), r.Err},
			r.Prov.record()...))
	}
	cw.Flush()
	return cw.Error()
}

// ReadTrsvCSV reads what WriteTrsvCSV wrote (lines starting with # are
// comments).
func ReadTrsvCSV(rd io.Reader) ([]TrsvResult, error) {
	cr := csv.NewReader(rd)
	cr.Comment = '#'
	cr.FieldsPerRecord = -1
	recs, err := cr.ReadAll()
	if err != nil {
		return nil, err
	}
	if len(recs) == 0 {
		return nil, nil
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	for _, h := range []string{"matrix", "n", "nnz", "levels", "precision", "solver", "analysis_s", "solve_s"} {
		if _, ok := col[h]; !ok {
			return nil, fmt.Errorf("sparse triangular CSV: no column %q", h)
		}
	}
	var out []TrsvResult
	for li, rec := range recs[1:] {
		get := func(h string) string {
			if i, ok := col[h]; ok && i < len(rec) {
				return rec[i]
			}
			return ""
		}
		num := func(h string) float64 {
			v, _ := strconv.ParseFloat(get(h), 64)
			return v
		}
		r := TrsvResult{Matrix: get("matrix"), Desc: get("desc"), Precision: get("precision"), Solver: get("solver"),
			Err: get("error"), Prov: parseProvenance(get)}
		var e1, e2, e3 error
		r.N, e1 = strconv.Atoi(get("n"))
		r.NNZ, e2 = strconv.Atoi(get("nnz"))
		r.Levels, e3 = strconv.Atoi(get("levels"))
		if err := errors.Join(e1, e2, e3); err != nil {
			return nil, fmt.Errorf("sparse triangular CSV record %d: %w", li+1, err)
		}
		r.Analysis, r.First = secondsDuration(num("analysis_s")), secondsDuration(num("first_analysis_s"))
		r.Solve, r.SolveLo, r.SolveHi = secondsDuration(num("solve_s")), secondsDuration(num("solve_min_s")), secondsDuration(num("solve_max_s"))
		r.Launches = int(num("launches"))
		r.RelErr = num("rel_error")
		out = append(out, r)
	}
	return out, nil
}

// writeTrsvDoc writes the sparse triangular section of a baseline's
// page: per matrix and precision, Auto (and what it ran), the fastest of
// this module's GPU solvers, cuSPARSE SpSV, and the ratios, with the
// geometric means over the matrices.
func writeTrsvDoc(w io.Writer, rs []TrsvResult) {
	fmt.Fprint(w, "\n### Sparse triangular solves\n\n"+
		"Lower triangles of `sptrsv/suite`'s fixed set (`-grid sptrsv`), one right-hand side, solved on the GPU by this "+
		"module's plans and by cuSPARSE `SpSV` in the same process. Solve: CUDA events around each solve, launched while "+
		"the GPU waits (median of the repetitions). Analysis: wall clock from its start until the device has finished it "+
		"(for SpSV the first analysis of the process, which holds the library's start-up, is left out). GFLOP/s = 2·nnz / "+
		"solve time. Best: the fastest of this module's GPU solves (`auto`, `levelset`, `syncfree`, `syncfree-csr` with a thread or a warp a row).\n\n")
	fmt.Fprintln(w, "| matrix | n | nnz | levels | precision | Auto ran | Auto solve | Auto analysis | best | best solve | SpSV solve | SpSV analysis | Auto solve × | best solve × | Auto analysis × | analysis + solve × |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|")
	type key struct{ m, p string }
	var keys []key
	by := map[key][]TrsvResult{}
	for _, r := range rs {
		k := key{r.Matrix, r.Precision}
		if by[k] == nil {
			keys = append(keys, k)
		}
		by[k] = append(by[k], r)
	}
	logs := map[string]*[4]float64{}
	counts := map[string]int{}
	for _, k := range keys {
		var auto, best, peer *TrsvResult
		for i := range by[k] {
			r := &by[k][i]
			switch {
			case r.Err != "":
			case r.Solver == "cusparse:SpSV":
				peer = r
			case strings.HasPrefix(r.Solver, "gpu:"):
				if strings.HasPrefix(r.Solver, "gpu:auto") {
					auto = r
				}
				if best == nil || r.Solve < best.Solve {
					best = r
				}
			}
		}
		if auto == nil || best == nil || peer == nil {
			continue
		}
		ran := strings.TrimSuffix(strings.TrimPrefix(auto.Solver, "gpu:auto("), ")")
		rs, rb := peer.Solve.Seconds()/auto.Solve.Seconds(), peer.Solve.Seconds()/best.Solve.Seconds()
		ra := peer.Analysis.Seconds() / auto.Analysis.Seconds()
		rt := (peer.Analysis + peer.Solve).Seconds() / (auto.Analysis + auto.Solve).Seconds()
		fmt.Fprintf(w, "| %s | %d | %d | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", k.m, auto.N, auto.NNZ,
			auto.Levels, precLabel(k.p), ran, fmtTime(auto.Solve), fmtTime(auto.Analysis), strings.TrimPrefix(best.Solver, "gpu:"),
			fmtTime(best.Solve), fmtTime(peer.Solve), fmtTime(peer.Analysis), fmtRatio(rs), fmtRatio(rb), fmtRatio(ra), fmtRatio(rt))
		if logs[k.p] == nil {
			logs[k.p] = &[4]float64{}
		}
		for i, v := range []float64{rs, rb, ra, rt} {
			logs[k.p][i] += math.Log(v)
		}
		counts[k.p]++
	}
	for _, p := range []string{"f32", "f64"} {
		if counts[p] == 0 {
			continue
		}
		g := func(i int) string { return fmtRatio(math.Exp(logs[p][i] / float64(counts[p]))) }
		fmt.Fprintf(w, "\nGeometric means over the %d matrices in %s, against SpSV: Auto's solve %s, the best solve %s, Auto's analysis %s, analysis + one solve %s.\n",
			counts[p], precLabel(p), g(0), g(1), g(2), g(3))
	}
}
