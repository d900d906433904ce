package bench

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/bandsolve/bandsolve/banded"
	"github.com/bandsolve/bandsolve/internal/atomicfile"
	"github.com/bandsolve/bandsolve/krylov"
	"github.com/bandsolve/bandsolve/spike"
	"github.com/bandsolve/bandsolve/tridiag"
)

// bandGPU is the GPU side of the banded grids (banded_cuda.go): the
// cuda backend implements it.
type bandGPU interface {
	// BandMaxK is the largest half-bandwidth of the GPU SPIKE solver for
	// elements of elem bytes.
	BandMaxK(elem int) int
	// RunBand times the GPU solver of a single-system case on the matrix
	// a and right-hand side b (float64; converted to the case's
	// precision).
	RunBand(ctx context.Context, c BandCase, a *banded.Band[float64], b []float64, br bandRun) BandResult
	// RunPenta times bandsolve's batched kernel and cuSPARSE's
	// gpsvInterleavedBatch on a pentadiagonal batch.
	RunPenta(ctx context.Context, c BandCase, br bandRun) []BandResult
}

// bandRun says how to time one banded case.
type bandRun struct {
	warmup, reps int
	// budget bounds the timed repetitions of a solver: reps are cut so
	// that they take about this long (at least one is done), and a
	// solver whose first call takes over a quarter of it gets one
	// warm-up only.
	budget    time.Duration
	seed      uint64
	bandwidth float64 // device copy bandwidth, bytes read+written per second
	progress  func(solver string)
}

// repsFor is the number of timed repetitions for a solver that took one
// about t: br.reps, cut to fit br.budget, at least 1.
func (br bandRun) repsFor(t time.Duration) int {
	n := br.reps
	if br.budget > 0 && t > 0 {
		n = min(n, int(br.budget/t))
	}
	return max(n, 1)
}

// costModel estimates a host solver's time as c·N·(K+1)², c taken from the
// largest case measured so far.
type costModel struct {
	c, work float64
}

func costWork(n, k int) float64 { return float64(n) * float64(k+1) * float64(k+1) }

func (m *costModel) observe(n, k int, t time.Duration) {
	if w := costWork(n, k); w >= m.work && t > 0 {
		m.c, m.work = t.Seconds()/w, w
	}
}

func (m *costModel) est(n, k int) time.Duration {
	return time.Duration(m.c * costWork(n, k) * 1e9)
}

// bandRunner holds the state of a banded run.
type bandRunner struct {
	cfg       *config
	gpu       bandGPU
	maxK      map[string]int // GPU limit per precision
	hostLU    bool
	hostSpike bool
	lu, sp    costModel
	prog      *progress
	br        bandRun
}

// runBanded runs a banded grid (GridBanded, GridBandedQuick,
// GridPentadiag): the table and summary to stdout, CSV and a plot where
// asked.
func runBanded(ctx context.Context, cfg *config, stdout, stderr io.Writer) error {
	cases := BandGrid(cfg.grid, cfg.precisions, cfg.sweep)
	if cfg.list {
		for i, c := range cases {
			fmt.Fprintf(stdout, "%3d  %-36s  band %s\n", i+1, c, fmtBytes(c.BandBytes()))
		}
		return nil
	}
	cases, err := selectCases(cases, cfg.cases)
	if err != nil {
		return err
	}
	r := &bandRunner{cfg: cfg, prog: newProgress(stderr, cfg.quiet), maxK: map[string]int{}}
	r.br = bandRun{warmup: cfg.warmup, reps: cfg.reps, budget: 3 * time.Second, seed: cfg.seed, progress: r.prog.solver}
	prov := newProvenance(cfg.grid)
	var meta []string
	meta = append(meta, fmt.Sprintf("bandsolve bench %s, grid %s, %s, reps %d (cut to about %v a solver, at least 1), warmup %d, seed %d, %d host goroutines",
		time.Now().UTC().Format(time.RFC3339), cfg.grid, runtime.Version(), cfg.reps, r.br.budget, cfg.warmup, cfg.seed, runtime.GOMAXPROCS(0)))
	batches, singles := false, false
	for _, c := range cases {
		batches = batches || c.Batch()
		singles = singles || !c.Batch()
	}
	if cfg.device == "cuda" {
		r.prog.note("opening GPU %d and measuring its copy bandwidth (%s)", cfg.gpu, fmtBytes(cfg.copyBytes))
		g, err := openGPU(cfg.gpu, cfg.copyBytes, cfg.cusparsePath)
		if err != nil {
			return fmt.Errorf("-device cuda: %w", err)
		}
		defer g.Close()
		bg, ok := g.(bandGPU)
		if !ok {
			return errors.New("-device cuda: the GPU backend has no banded solvers")
		}
		r.gpu, r.br.bandwidth = bg, g.Bandwidth()
		prov.Device, prov.Driver, prov.Bandwidth = g.Name(), g.Driver(), g.Bandwidth()
		if batches {
			prov.Library = g.Library()
		}
		r.maxK[F64], r.maxK[F32] = bg.BandMaxK(8), bg.BandMaxK(4)
		meta = append(meta, fmt.Sprintf("device %s: device-to-device copy %.0f GB/s (bytes read+written); GPU SPIKE limit K ≤ %d in FP64, %d in FP32; %s free",
			g.Name(), g.Bandwidth()/1e9, r.maxK[F64], r.maxK[F32], fmtBytes(g.FreeBytes())))
		meta = append(meta, g.Notes()...)
	} else {
		what := "GPU solvers not run: they need -device cuda"
		if !gpuBuiltIn {
			what += " in a binary built with -tags cuda"
		}
		meta = append(meta, what+"; host solvers only")
	}
	r.hostLU = singles && (cfg.device == "cpu" || cfg.peers["cpu"])
	r.hostSpike = r.hostLU && cfg.hostSpike
	if r.hostLU {
		r.prog.note("calibrating the host solvers' time model")
		r.calibrate()
		meta = append(meta, fmt.Sprintf("host: cpu:gbsv = banded.FactorPivot + Solve (LU with partial pivoting, one goroutine, FP64); cpu:spike = package spike on %d goroutines; skipped when the estimate c·N·(K+1)² (c from the largest case measured) exceeds -host-cap %v",
			runtime.GOMAXPROCS(0), cfg.hostCap))
	}
	if singles {
		meta = append(meta, fmt.Sprintf("single systems: banded.Random-like matrices (off-diagonals U(−1,1), a_ii = d·Σ|a_ij|), b from U(−1,1); d ≥ %g: truncated SPIKE direct (P from tuning); d < %g: BiCGStab(2) in FP64 preconditioned by SPIKE in FP32 (partitions of at least max(%d, 16K) rows) to ‖b−Ax‖/‖b‖ ≤ %g, at most %d steps; times of synchronous calls (wall clock), data on the device; resid = ‖b−Ax‖₂/‖b‖₂ in float64 on the host; speed-up = cpu:gbsv total / total (~: gbsv time estimated)",
			Direct, Direct, IterRows, BandTol, BandMaxIter))
	}
	if batches {
		meta = append(meta, "batches: K = 2, interleaved, rows [1 −4 10 −4 1] (the anchors'), CUDA events; fraction = (2K+3 elements a row / time) / copy bandwidth; speed-up = gpsvInterleavedBatch time / time")
	}
	var anchors []BandResult
	if cfg.anchors != "" {
		a, note, err := ReadBandAnchors(cfg.anchors)
		if err != nil {
			return err
		}
		anchors = a
		meta = append(meta, "anchors "+cfg.anchors+": "+note)
	}
	for _, m := range meta {
		fmt.Fprintln(stdout, "#", m)
	}
	var cw *recordWriter[BandResult]
	if cfg.csvPath != "" {
		// Rows go to the file as they come, flushed one by one, so that a
		// run cut short (a time limit, a killed process) keeps what it
		// measured: the CSV is a log of the run, not a result to replace
		// atomically.
		if err := atomicfile.CheckNotInput(cfg.csvPath, cfg.anchors); err != nil {
			return err
		}
		f, err := os.Create(cfg.csvPath)
		if err != nil {
			return err
		}
		defer f.Close()
		if cw, err = newRecordWriter[BandResult](f, bandCSVHeader, meta...); err != nil {
			return fmt.Errorf("writing %s: %w", cfg.csvPath, err)
		}
		if prov.Device == "" {
			prov.Device = tridiag.DefaultCPU().Name()
		}
		cw.prov = prov.record()
	}
	start := time.Now()
	var all []BandResult
	stopped := 0
	for i, c := range cases {
		if cfg.timeLimit > 0 && time.Since(start) > cfg.timeLimit {
			stopped = len(cases) - i
			break
		}
		r.prog.caseStart(i+1, len(cases), c)
		var rs []BandResult
		if c.Batch() {
			rs = r.runPenta(ctx, c)
		} else {
			rs = r.runSingle(ctx, c)
		}
		n0 := len(all)
		all = append(all, rs...)
		all = append(all, anchorsFor(anchors, c)...)
		setSpeedups(all)
		r.prog.bandDone(all[n0:])
		if cw != nil {
			if err := cw.write(all[n0:]...); err != nil {
				return fmt.Errorf("writing %s: %w", cfg.csvPath, err)
			}
		}
	}
	r.prog.done(time.Since(start))
	if stopped > 0 {
		fmt.Fprintf(stdout, "# -time-limit %v reached: %d of %d cases not run\n", cfg.timeLimit, stopped, len(cases))
	}
	if len(all) == 0 {
		fmt.Fprintln(stdout, "# no results")
		return nil
	}
	if cfg.table {
		if err := WriteBandTable(stdout, all); err != nil {
			return err
		}
		fmt.Fprintln(stdout)
	}
	if err := WriteBandSummary(stdout, all); err != nil {
		return err
	}
	if cfg.plotDir != "" {
		files, err := WriteBandPlots(cfg.plotDir, all)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "# %d plots in %s\n", len(files), cfg.plotDir)
	}
	if cfg.csvPath != "" {
		fmt.Fprintf(stdout, "# %d results in %s\n", len(all), cfg.csvPath)
	}
	if cfg.baseline != "" {
		n, err := CompareBaseline(stdout, cfg.baseline, nil, all)
		if err != nil {
			return fmt.Errorf("-baseline: %w", err)
		}
		if n > 0 {
			return fmt.Errorf("%d regressions against the baseline %s", n, cfg.baseline)
		}
	}
	return nil
}

// calibrate times both host solvers on a small case to seed the models.
func (r *bandRunner) calibrate() {
	const n, k = 20000, 32
	a := randomBand(n, k, 1, r.cfg.seed)
	b := randomVec(n, r.cfg.seed)
	if res := runGbsv(a, b, 0, 1); res.OK() {
		r.lu.observe(n, k, res.Total)
	}
	if r.hostSpike {
		if res := runHostSpike(context.Background(), BandCase{N: n, K: k, G: 1, D: 1, Precision: F64}, a, b, 0, 1); res.OK() {
			r.sp.observe(n, k, res.Total)
		}
	}
}

// runSingle runs the solvers of one single-system case.
func (r *bandRunner) runSingle(ctx context.Context, c BandCase) []BandResult {
	cfg := r.cfg
	var out []BandResult
	res := func(solver, err string) BandResult {
		return BandResult{BandCase: c, Solver: solver, Iter: -1, Resid: -1, Err: err}
	}
	// What can run, decided before the matrix is made.
	gpuName := "gpu:spike"
	if c.Iterative() {
		gpuName = "gpu:bicgstab2+spike32"
	}
	gpuOn := false
	if r.gpu != nil {
		elem := int(c.ElemSize())
		if c.Iterative() {
			elem = 4
		}
		switch lim := r.maxK[map[int]string{4: F32, 8: F64}[elem]]; {
		case c.K > lim:
			out = append(out, res(gpuName, fmt.Sprintf("K > limit (%d in FP%d)", lim, 8*elem)))
		case c.K >= c.N/2:
			out = append(out, res(gpuName, "skipped: K ≥ N/2"))
		default:
			gpuOn = true
		}
	}
	var host []func(a *banded.Band[float64], b []float64) BandResult
	hostCap := func(solver string, m *costModel) bool {
		if m.c == 0 {
			return true
		}
		if e := m.est(c.N, c.K); cfg.hostCap > 0 && e > cfg.hostCap {
			x := res(solver, fmt.Sprintf("skipped: estimated %s > -host-cap %v", fmtDuration(e), cfg.hostCap))
			x.Est = e
			out = append(out, x)
			return false
		}
		return true
	}
	hostNeed := int64(3*c.K+1)*int64(c.N)*8 + c.BandBytes()
	hostAvail := hostAvailable()
	if c.Precision == F64 && r.hostLU && (len(cfg.hostD) == 0 || slices.Contains(cfg.hostD, c.D)) {
		if hostAvail > 0 && hostNeed > hostAvail/2 {
			out = append(out, res("cpu:gbsv", "skipped: needs "+fmtBytes(hostNeed)+" of host memory"))
		} else if hostCap("cpu:gbsv", &r.lu) {
			host = append(host, func(a *banded.Band[float64], b []float64) BandResult {
				r.prog.solver("cpu:gbsv")
				e := r.lu.est(c.N, c.K)
				warm, reps := 1, 3
				if e > time.Second {
					warm, reps = 0, 1
				}
				x := runGbsv(a, b, warm, reps)
				x.BandCase = c
				if x.OK() {
					r.lu.observe(c.N, c.K, x.Total)
				}
				return x
			})
		}
		name := "cpu:spike"
		if c.Iterative() {
			name = "cpu:bicgstab2+spike32"
		}
		if r.hostSpike && hostCap(name, &r.sp) {
			host = append(host, func(a *banded.Band[float64], b []float64) BandResult {
				r.prog.solver(name)
				warm, reps := 1, 3
				if r.sp.est(c.N, c.K) > time.Second {
					warm, reps = 0, 1
				}
				x := runHostSpike(ctx, c, a, b, warm, reps)
				if x.OK() && !c.Iterative() {
					r.sp.observe(c.N, c.K, x.Total)
				}
				return x
			})
		}
	}
	if !gpuOn && len(host) == 0 {
		return out
	}
	r.prog.solver("generating the matrix")
	a := randomBand(c.N, c.K, c.D, r.cfg.seed^uint64(c.N)*31^uint64(c.K)*1009^uint64(math.Float64bits(c.D)))
	b := randomVec(c.N, r.cfg.seed+uint64(c.N)+uint64(c.K))
	if gpuOn {
		r.prog.solver(gpuName)
		out = append(out, r.gpu.RunBand(ctx, c, a, b, r.br))
	}
	for _, h := range host {
		out = append(out, h(a, b))
	}
	return out
}

// runPenta runs the batched pentadiagonal case on the GPU, or says why
// not.
func (r *bandRunner) runPenta(ctx context.Context, c BandCase) []BandResult {
	if r.gpu == nil {
		return []BandResult{{BandCase: c, Solver: "gpu:bandbatch", Iter: -1, Resid: -1,
			Err: "skipped: batches run on the GPU only (-device cuda)"}}
	}
	return r.gpu.RunPenta(ctx, c, r.br)
}

// runGbsv times banded.FactorPivot and Solve (the host reference, one
// goroutine); the copy of b into x is outside the timed region.
func runGbsv(a *banded.Band[float64], b []float64, warm, reps int) BandResult {
	r := BandResult{BandCase: BandCase{N: a.N, K: a.K, G: 1, Precision: F64}, Solver: "cpu:gbsv", Iter: -1, Resid: -1}
	var fts, sts []time.Duration
	x := make([]float64, len(b))
	for i := 0; i < warm+reps; i++ {
		t0 := time.Now()
		f, err := banded.FactorPivot(a)
		t1 := time.Since(t0)
		if err != nil {
			r.Err = shortErr(err)
			return r
		}
		copy(x, b)
		t0 = time.Now()
		f.Solve(x)
		t2 := time.Since(t0)
		if i >= warm {
			fts, sts = append(fts, t1), append(sts, t2)
		}
	}
	r.Factor, r.Solve, r.Total = summarizeSplit(fts, sts)
	r.Reps = reps
	r.MRows = float64(a.N) / r.Total.Seconds() / 1e6
	r.Resid = bandResidual(a, b, x)
	return r
}

// runHostSpike times package spike on all cores: truncated SPIKE direct
// for d ≥ Direct, BiCGStab(2) with the FP32 SPIKE preconditioner below.
func runHostSpike(ctx context.Context, c BandCase, a *banded.Band[float64], b []float64, warm, reps int) BandResult {
	r := BandResult{BandCase: c, Solver: "cpu:spike", Iter: -1, Resid: -1}
	var fts, sts []time.Duration
	var iterErr error
	x := make([]float64, len(b))
	for i := 0; i < warm+reps; i++ {
		var tf, ts time.Duration
		if c.Iterative() {
			r.Solver = "cpu:bicgstab2+spike32"
			clear(x)
			res, err := spike.SolveIterative(ctx, a, nil, b, x, spike.IterativeOptions{Precision: spike.Mixed, Tol: BandTol})
			if err != nil && !errors.Is(err, krylov.ErrNotConverged) {
				r.Err = shortErr(err)
				return r
			}
			iterErr = err
			tf, ts, r.Iter, r.P = res.FactorTime, res.SolveTime, res.Iterations, len(res.Bounds)-1
		} else {
			t0 := time.Now()
			f, err := spike.Factor(a, spike.Options{})
			tf = time.Since(t0)
			if err != nil {
				r.Err = shortErr(err)
				return r
			}
			t0 = time.Now()
			err = f.Solve(b, x)
			ts = time.Since(t0)
			if err != nil {
				r.Err = shortErr(err)
				return r
			}
			r.P = f.P()
		}
		if i >= warm {
			fts, sts = append(fts, tf), append(sts, ts)
		}
	}
	r.Factor, r.Solve, r.Total = summarizeSplit(fts, sts)
	r.Reps = reps
	r.MRows = float64(a.N) / r.Total.Seconds() / 1e6
	r.Resid = bandResidual(a, b, x)
	if iterErr != nil { // timed, but no solution to the tolerance
		r.Err = shortErr(iterErr)
	}
	return r
}

// bandDone prints the line of a finished banded case (not on a terminal).
func (p *progress) bandDone(rs []BandResult) {
	if p.off || p.tty {
		return
	}
	line := fmt.Sprintf("[%d/%d %s] %s (%.1fs):", p.i, p.n, time.Since(p.start).Round(time.Second), p.c, time.Since(p.caseT0).Seconds())
	for _, r := range rs {
		if r.OK() {
			line += fmt.Sprintf(" %s %s", r.Solver, fmtDuration(r.Total))
			if r.Speedup > 0 {
				line += " (" + fmtSpeedup(r) + ")"
			}
			line += ";"
		} else {
			line += fmt.Sprintf(" %s: %s;", r.Solver, r.Err)
		}
	}
	fmt.Fprintln(p.w, line)
}

// fmtSpeedup prints a speed-up, "~" in front when the reference time was
// estimated.
func fmtSpeedup(r BandResult) string {
	if r.Speedup <= 0 {
		return "-"
	}
	s := ""
	if r.SpeedupEst {
		s = "~"
	}
	if r.Speedup >= 100 {
		return s + strconv.FormatFloat(r.Speedup, 'f', 0, 64) + "×"
	}
	return s + strconv.FormatFloat(r.Speedup, 'f', 2, 64) + "×"
}

// fmtRatio prints a ratio as "12.3×", "-" for 0.
func fmtRatio(v float64) string {
	if v <= 0 {
		return "-"
	}
	if v >= 100 {
		return strconv.FormatFloat(v, 'f', 0, 64) + "×"
	}
	return strconv.FormatFloat(v, 'f', 2, 64) + "×"
}

func fmtTime(d time.Duration) string {
	if d <= 0 {
		return "-"
	}
	return fmtDuration(d)
}

func fmtBandResid(r BandResult) string {
	if r.Resid < 0 {
		return "-"
	}
	s := strconv.FormatFloat(r.Resid, 'e', 1, 64)
	lim := 1e-8
	if r.Precision == F32 && !r.Iterative() {
		lim = 1e-3
	}
	if math.IsNaN(r.Resid) || r.Resid > lim {
		s += "!"
	}
	return s
}

// WriteBandTable prints banded results as aligned tables: one for single
// systems (case, solver, partitions, factor, solve and total medians,
// BiCGStab(2) steps, residual, speed-up over the host LU, note) and one
// for batches (case, solver, time, MRows/s, fraction of the copy limit,
// residual, speed-up over gpsvInterleavedBatch, note).
func WriteBandTable(w io.Writer, rs []BandResult) error {
	single := &table{
		head:  []string{"prec", "N", "K", "d", "solver", "P", "factor", "solve", "total", "iters", "resid", "vs gbsv", "vs anchor", "note"},
		right: []bool{false, true, true, true, false, true, true, true, true, true, true, true, true, false},
	}
	batch := &table{
		head:  []string{"prec", "N", "K", "G", "solver", "time", "MRows/s", "limit", "resid", "vs gpsv", "vs anchor", "note"},
		right: []bool{false, true, true, true, false, true, true, true, true, true, true, false},
	}
	for _, r := range rs {
		note := r.Note
		if r.Err != "" {
			note = r.Err
			if r.Note != "" {
				note += " (" + r.Note + ")"
			}
		}
		if r.Batch() {
			mrows, lim := "-", "-"
			if r.OK() {
				mrows = fmtMRows(r.MRows)
				if r.Fraction > 0 {
					lim = fmtFraction(r.Fraction)
				}
			}
			batch.add(r.Precision, strconv.Itoa(r.N), strconv.Itoa(r.K), strconv.Itoa(r.G), r.Solver,
				fmtTime(r.Total), mrows, lim, fmtBandResid(r), fmtSpeedup(r), fmtRatio(r.VsAnchor), note)
			continue
		}
		p, it := "-", "-"
		if r.P > 0 {
			p = strconv.Itoa(r.P)
		}
		if r.Iter >= 0 {
			it = strconv.Itoa(r.Iter)
		}
		single.add(r.Precision, strconv.Itoa(r.N), strconv.Itoa(r.K), fmtD(r.D), r.Solver, p,
			fmtTime(r.Factor), fmtTime(r.Solve), fmtTime(r.Total), it, fmtBandResid(r), fmtSpeedup(r), fmtRatio(r.VsAnchor), note)
	}
	if len(single.rows) > 0 {
		if err := single.write(w); err != nil {
			return err
		}
	}
	if len(batch.rows) > 0 {
		if len(single.rows) > 0 {
			if _, err := fmt.Fprintln(w); err != nil {
				return err
			}
		}
		return batch.write(w)
	}
	return nil
}

// WriteBandSummary prints one line per case: the GPU solver's total time
// (or why there is none), the reference's (host LU or gpsv) and the
// speed-up.
func WriteBandSummary(w io.Writer, rs []BandResult) error {
	t := &table{
		head:  []string{"case", "gpu", "total", "resid", "reference", "total", "speed-up", "vs anchor"},
		right: []bool{false, false, true, true, false, true, true, true},
	}
	for _, c := range casesInOrder(rs, func(r BandResult) BandCase { return r.BandCase }) {
		var g, ref *BandResult
		for i := range rs {
			r := &rs[i]
			if r.BandCase != c {
				continue
			}
			switch {
			case r.Solver == bandRef(c):
				ref = r
			case prefix(r.Solver) == "gpu" && g == nil:
				g = r
			}
		}
		if ref == nil && !c.Batch() { // the FP64 host LU serves the FP32 case
			for i := range rs {
				o := rs[i].BandCase
				if rs[i].Solver == "cpu:gbsv" && o.N == c.N && o.K == c.K && o.D == c.D {
					ref = &rs[i]
				}
			}
		}
		gn, gt, gr, sp, va := "-", "-", "-", "-", "-"
		if g != nil {
			gn = g.Solver
			if g.OK() {
				gt, gr, sp, va = fmtDuration(g.Total), fmtBandResid(*g), fmtSpeedup(*g), fmtRatio(g.VsAnchor)
			} else {
				gt = g.Err
			}
		}
		rn, rt := "-", "-"
		if ref != nil {
			rn = ref.Solver
			switch {
			case ref.OK():
				rt = fmtDuration(ref.Total)
			case ref.Est > 0:
				rt = "~" + fmtDuration(ref.Est) + " (est.)"
			default:
				rt = ref.Err
			}
		}
		t.add(c.String(), gn, gt, gr, rn, rt, sp, va)
	}
	return t.write(w)
}

// bandCSVHeader is the banded CSV's first record.
var bandCSVHeader = []string{"precision", "N", "K", "G", "d", "solver", "partitions",
	"factor_us", "solve_us", "total_us", "reps", "iterations", "resid", "mrows_per_s", "fraction",
	"speedup", "speedup_estimated", "speedup_vs_anchor", "estimate_us", "err", "note"}

// WriteBandCSV writes banded results as CSV with optional comment lines.
func WriteBandCSV(w io.Writer, rs []BandResult, comments ...string) error {
	cw, err := newRecordWriter[BandResult](w, bandCSVHeader, comments...)
	if err != nil {
		return err
	}
	return cw.write(rs...)
}

func (r BandResult) record() []string {
	us := func(d time.Duration) string {
		if d <= 0 {
			return ""
		}
		return strconv.FormatFloat(float64(d)/1e3, 'f', 3, 64)
	}
	fl := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	resid, iter, sp, va := "", "", "", ""
	if r.VsAnchor > 0 {
		va = fl(r.VsAnchor)
	}
	if r.Resid >= 0 || math.IsNaN(r.Resid) {
		resid = fl(r.Resid)
	}
	if r.Iter >= 0 {
		iter = strconv.Itoa(r.Iter)
	}
	if r.Speedup > 0 {
		sp = fl(r.Speedup)
	}
	return []string{r.Precision, strconv.Itoa(r.N), strconv.Itoa(r.K), strconv.Itoa(r.G), fmtD(r.D), r.Solver,
		strconv.Itoa(r.P), us(r.Factor), us(r.Solve), us(r.Total), strconv.Itoa(r.Reps), iter, resid,
		fl(r.MRows), fl(r.Fraction), sp, strconv.FormatBool(r.SpeedupEst), va, us(r.Est), r.Err, r.Note}
}

// ReadBandCSV reads banded results written by the banded grids' -csv
// (comment lines and repeated header records are skipped, so that the CSV
// files of several runs may be concatenated).
func ReadBandCSV(rd io.Reader) ([]BandResult, error) {
	var out []BandResult
	err := readRecords(rd, bandCSVHeader, func(get func(string) string) error {
		var errs []error
		atoi := func(h string) int {
			v, err := strconv.Atoi(get(h))
			errs = append(errs, err)
			return v
		}
		// Empty numbers are absent ones (−1 for resid and iterations).
		flt := func(h string, empty float64) float64 {
			if get(h) == "" {
				return empty
			}
			v, err := strconv.ParseFloat(get(h), 64)
			errs = append(errs, err)
			return v
		}
		dur := func(h string) time.Duration { return time.Duration(math.Round(flt(h, 0) * 1e3)) }
		r := BandResult{
			BandCase: BandCase{Precision: get("precision"), N: atoi("N"), K: atoi("K"), G: atoi("G"), D: flt("d", 0)},
			Solver:   get("solver"), P: atoi("partitions"),
			Factor: dur("factor_us"), Solve: dur("solve_us"), Total: dur("total_us"), Reps: atoi("reps"),
			Iter: int(flt("iterations", -1)), Resid: flt("resid", -1), MRows: flt("mrows_per_s", 0),
			Fraction: flt("fraction", 0), Speedup: flt("speedup", 0), SpeedupEst: get("speedup_estimated") == "true",
			VsAnchor: flt("speedup_vs_anchor", 0), Est: dur("estimate_us"), Err: get("err"), Note: get("note"),
			Prov: parseProvenance(get),
		}
		if err := errors.Join(errs...); err != nil {
			return err
		}
		out = append(out, r)
		return nil
	})
	return out, err
}

// WriteBandPlots writes the banded plots into dir (created if need be)
// and returns the paths written: banded-d1.png, the total time of each
// solver against K for d = 1, one line per solver, precision and N (log
// axes), for the single-system cases; nothing when there are none.
func WriteBandPlots(dir string, rs []BandResult) ([]string, error) {
	type key struct {
		solver, prec string
		n            int
	}
	lines := map[key]plotter.XYs{}
	for _, r := range rs {
		if r.Batch() || r.D != 1 || !r.OK() {
			continue
		}
		k := key{r.Solver, r.Precision, r.N}
		lines[k] = append(lines[k], plotter.XY{X: float64(r.K), Y: r.Total.Seconds() * 1e3})
	}
	if len(lines) == 0 {
		return nil, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	keys := make([]key, 0, len(lines))
	for k := range lines {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.solver != b.solver {
			return a.solver < b.solver
		}
		if a.prec != b.prec {
			return a.prec > b.prec
		}
		return a.n < b.n
	})
	solverIdx, nIdx := map[string]int{}, map[int]int{}
	for _, k := range keys {
		s := k.solver + " " + k.prec
		if _, ok := solverIdx[s]; !ok {
			solverIdx[s] = len(solverIdx)
		}
		if _, ok := nIdx[k.n]; !ok {
			nIdx[k.n] = len(nIdx)
		}
	}
	p := newPlot("single banded systems, d = 1: factor + solve time against K", "K (half-bandwidth)", "time (ms)")
	p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	st := styles{}
	for s, i := range solverIdx {
		st[s] = i
	}
	for _, k := range keys {
		xys := lines[k]
		sort.Slice(xys, func(i, j int) bool { return xys[i].X < xys[j].X })
		l, s, err := plotter.NewLinePoints(xys)
		if err != nil {
			return nil, fmt.Errorf("bench: banded plot: %w", err)
		}
		name := k.solver + " " + k.prec
		st.line(name, l, s)
		l.Dashes = [][]vg.Length{nil, {vg.Points(6), vg.Points(3)}, {vg.Points(2), vg.Points(2)}, {vg.Points(8), vg.Points(2), vg.Points(2), vg.Points(2)}}[nIdx[k.n]%4]
		p.Add(l, s)
		p.Legend.Add(fmt.Sprintf("%s N=%s", name, fmtCount(k.n)), l, s)
	}
	fixRange(p)
	path := filepath.Join(dir, "banded-d1.png")
	if err := savePlot(p, 10*vg.Inch, 7*vg.Inch, path); err != nil {
		return nil, fmt.Errorf("bench: saving %s: %w", path, err)
	}
	return []string{path}, nil
}

// fmtCount writes powers of ten as 1e<k>, other counts in decimal.
func fmtCount(n int) string {
	e := 0
	for v := n; v >= 10 && v%10 == 0; v /= 10 {
		e++
	}
	if e >= 3 && n == int(math.Pow10(e)) {
		return "1e" + strconv.Itoa(e)
	}
	return strconv.Itoa(n)
}

// ReadBandAnchors reads measured banded numbers in the format of
// bench/anchors/banded-h200.csv (comment lines, then
// api,prec,N,G_or_K,time,MRows_per_s with G_or_K "G=<batch>" for
// pentadiagonal batches and "K=<half-bandwidth>" for single systems, times
// like "438.7us" or "0.1586s") and returns them as results with solver
// "anchor:<api>": batches with K = 2, single systems with d = 1 (the
// anchors' matrices). The string describes what was read.
func ReadBandAnchors(path string) ([]BandResult, string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, "", err
	}
	defer f.Close()
	return readBandAnchors(f)
}

func readBandAnchors(rd io.Reader) ([]BandResult, string, error) {
	cr := csv.NewReader(rd)
	cr.Comment = '#'
	cr.FieldsPerRecord = -1
	recs, err := cr.ReadAll()
	if err != nil {
		return nil, "", fmt.Errorf("bench: banded anchors: %w", err)
	}
	if len(recs) == 0 || len(recs[0]) < 5 || recs[0][0] != "api" || recs[0][3] != "G_or_K" || recs[0][4] != "time" {
		return nil, "", errors.New("bench: banded anchors: want the header api,prec,N,G_or_K,time,…")
	}
	var out []BandResult
	for i, rec := range recs[1:] {
		if len(rec) < 5 {
			return nil, "", fmt.Errorf("bench: banded anchors: record %d has %d fields", i+1, len(rec))
		}
		prec, err := parsePrecision(rec[1])
		if err != nil {
			return nil, "", fmt.Errorf("bench: banded anchors: record %d: %w", i+1, err)
		}
		n, err := strconv.Atoi(rec[2])
		if err != nil {
			return nil, "", fmt.Errorf("bench: banded anchors: record %d: N: %w", i+1, err)
		}
		what, val, ok := strings.Cut(rec[3], "=")
		v, verr := strconv.Atoi(val)
		if !ok || verr != nil || (what != "G" && what != "K") {
			return nil, "", fmt.Errorf("bench: banded anchors: record %d: bad G_or_K %q", i+1, rec[3])
		}
		t, err := time.ParseDuration(strings.ReplaceAll(rec[4], "µs", "us"))
		if err != nil || t <= 0 {
			return nil, "", fmt.Errorf("bench: banded anchors: record %d: bad time %q", i+1, rec[4])
		}
		c := BandCase{N: n, G: 1, K: v, D: 1, Precision: prec}
		if what == "G" {
			c.G, c.K = v, 2
		}
		out = append(out, BandResult{BandCase: c, Solver: "anchor:" + rec[0], Total: t, Reps: 1, Iter: -1, Resid: -1,
			MRows: float64(c.Rows()) / t.Seconds() / 1e6, Note: "measured elsewhere (anchors)"})
	}
	return out, fmt.Sprintf("%d banded anchors", len(out)), nil
}

// anchorsFor returns the anchors of case c (single systems: any of c's
// precisions' anchors go with the FP64 case only).
func anchorsFor(anchors []BandResult, c BandCase) []BandResult {
	var out []BandResult
	for _, a := range anchors {
		ac := a.BandCase
		if c.Batch() && ac == c || !c.Batch() && !ac.Batch() && c.Precision == F64 && ac.N == c.N && ac.K == c.K && ac.D == c.D {
			out = append(out, a)
		}
	}
	return out
}
