package bench

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/bandsolve/bandsolve/internal/atomicfile"
	"github.com/bandsolve/bandsolve/tridiag"
)

// config is what the flags of Main say.
type config struct {
	grid          string
	precisions    map[string]bool
	algos         []tridiag.Algorithm
	cpuAlgos      []tridiag.Algorithm
	reps, warmup  int
	device        string
	gpu           int
	csvPath       string
	plotDir       string
	peers         map[string]bool
	maxBytes      int64
	hostMaxRows   int64
	matrix        string
	copyBytes     int64
	hostCopyBytes int64
	timeLimit     time.Duration
	check         bool
	cusparsePath  string
	anchors       string
	seed          uint64
	table         bool
	quiet         bool
	list          bool
	cases         string // -cases: the numbers of -list to run ("": all)
	hostPaced     bool
	// Banded grids (banded_run.go).
	sweep     BandSweep
	hostCap   time.Duration
	hostSpike bool
	hostD     []float64
	// segRows: extra partition solvers with these Options.SegmentRows.
	segRows []int
	// Baselines (baseline.go, report.go).
	baseline          string // compare the run with this baseline file
	report, baselines string // write the report into this docs folder from these baselines
	readme            string // the README whose headline table -report rewrites
	merge, mergeParts string // merge the part files of this folder into this baseline
}

const usage = `bandsolve bench: time batched tridiagonal solves and their peers.

Each case is timed after -warmup untimed solves over -reps repetitions
(median, min, max); the right-hand side is restored before each one outside
the timed region. GPU solves are timed with CUDA events around the solve
only, the data already on the device: the timed repetitions are queued
behind a gate kernel and released together, so that the host's launch
calls do not fall inside the events (-host-paced: without the gate, each
solve launched while the GPU waits for it; more than 64 -reps are timed
that way too). Figures: MRows/s = N·G / t / 1e6 and
the fraction of the limit = (bytes that must move / t) / copy bandwidth,
where the bytes are a, b, c, d read once and x written once (d and x only
for constant coefficients) and the copy bandwidth (bytes read + written per
second) is measured in the same run: device-to-device for GPU solvers, a
parallel memory copy for host solvers.

Peers: cusparse (gtsv2StridedBatch, gtsvInterleavedBatch algorithms 0–2,
gtsv2; loaded from libcusparse at run time), cpu (this module's CPU backend,
-cpu-algorithms), gonum (LAPACK Dgtsv, FP64, per system).

Complex cases (-precision c64,c128, or complex): the grid's sizes in
complex64 and complex128, timed with auto, thomas and gtsv (the GPU's
complex plan on resident data, timed as the real plans) against cuSPARSE's c/z routines of the same names and
the CPU's complex plans; the limit counts 8 B an element in complex64, 16
in complex128.

Banded grids (-grid banded, banded-quick, pentadiag): single banded systems
of order N, half-bandwidth K and diagonal dominance d (-band-n, -band-k,
-band-d) solved on the GPU by truncated SPIKE (d ≥ 1) or BiCGStab(2) with an
FP32 SPIKE preconditioner (d < 1), factor and solve timed apart, against the
host's banded LU with partial pivoting (cpu:gbsv, one goroutine; skipped
above -host-cap) and package spike on all cores; and batches of
pentadiagonal systems against cuSPARSE gpsvInterleavedBatch.

Factor grids (-grid factor, factor-quick; -device cuda): stored
factorizations on the GPU, factor and solve timed apart for 1, 4 and 16
right-hand sides, LDLT (the SPD path) against Thomas's LU and gttrf, the
one-shot solve of one right-hand side for reference (×oneshot/rhs: the
gain per right-hand side over as many one-shot solves), and cuSPARSE
gtsv2 with n columns (single systems) or gtsv2StridedBatch once a column
(batches) in the same run; MRows/s counts rows × right-hand sides.

Every CSV record carries its provenance (grid, device, driver, library,
copy bandwidth, date, commit). Baselines (bench/baselines/NAME.csv and
NAME-banded.csv) are such files concatenated: -baseline FILE compares a
run with one (the speed of each case, REGRESSION where the runs' spreads
do not overlap, exit status 1 then); -merge and -parts put the part files
of scripts/baseline.sh into a baseline; -report DIR writes
DIR/performance.md, its plots and the README's headline table from the
baselines, without running anything.

Flags:
`

// Main runs the benchmark with command-line args (without the program
// name), printing the table to stdout and progress to stderr. It returns
// the exit status: 0 when it ran (solver failures are in the results), 1
// when it could not run, 2 for bad flags.
func Main(args []string, stdout, stderr io.Writer) int {
	cfg, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "bench:", err)
		return 2
	}
	switch {
	case cfg.report != "":
		files, err := WriteReport(cfg.baselines, cfg.report, cfg.readme)
		if err != nil {
			fmt.Fprintln(stderr, "bench: -report:", err)
			return 1
		}
		fmt.Fprintf(stdout, "# %d files written from the baselines in %s\n", len(files), cfg.baselines)
		return 0
	case cfg.merge != "":
		grids, err := MergeBaseline(cfg.merge, cfg.mergeParts)
		if err != nil {
			fmt.Fprintln(stderr, "bench: -merge:", err)
			return 1
		}
		fmt.Fprintf(stdout, "# merged into %s: %s\n", cfg.merge, strings.Join(grids, ", "))
		return 0
	}
	if err := run(context.Background(), cfg, stdout, stderr); err != nil {
		fmt.Fprintln(stderr, "bench:", err)
		return 1
	}
	return 0
}

// algorithmNames lists every algorithm -algorithms accepts: auto, then
// tridiag.Algorithms.
func algorithmNames() string {
	names := []string{tridiag.Auto.String()}
	for _, a := range tridiag.Algorithms() {
		names = append(names, a.String())
	}
	return strings.Join(names, ", ")
}

func parseFlags(args []string, stderr io.Writer) (*config, error) {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, usage)
		fs.PrintDefaults()
	}
	defDevice := "cpu"
	if gpuBuiltIn {
		defDevice = "cuda"
	}
	cfg := &config{}
	var prec, algos, cpuAlgos, peers, maxBytes, copyBytes, hostCopyBytes string
	var bandN, bandK, bandD, hostD, segRows string
	fs.StringVar(&cfg.grid, "grid", "paper", "case grid: "+strings.Join(Grids(), ", ")+" (several joined with commas); banded grids: "+strings.Join(BandGrids(), ", ")+"; sparse triangular grids: "+strings.Join(TrsvGrids(), ", ")+"; stored factorizations on the GPU: "+strings.Join(FactorGrids(), ", ")+" (not mixed with the others)")
	fs.StringVar(&prec, "precision", "f32,f64", "precisions (element types) of the cases: f32, f64, c64 (complex64), c128 (complex128), or the groups real, complex, all; complex cases time auto, thomas and gtsv (the algorithms that solve complex systems) against cuSPARSE's c/z routines, with the limit from 8 B an element in c64 and 16 B in c128")
	fs.StringVar(&algos, "algorithms", "all", "algorithms of this module to time on -device: all (auto and every algorithm) or a list of "+algorithmNames())
	fs.StringVar(&cpuAlgos, "cpu-algorithms", "auto", "algorithms of the CPU backend timed as the cpu peer when -device is cuda")
	fs.IntVar(&cfg.reps, "reps", 10, "timed repetitions per solver and case")
	fs.IntVar(&cfg.warmup, "warmup", 3, "untimed solves before the timed ones")
	fs.StringVar(&cfg.device, "device", defDevice, "where this module's plans run: cpu or cuda")
	fs.IntVar(&cfg.gpu, "gpu", 0, "CUDA device ordinal")
	fs.StringVar(&cfg.csvPath, "csv", "", "write the results as CSV to this file (row by row as they come, so that a run cut short keeps what it measured)")
	fs.StringVar(&cfg.plotDir, "plots", "", "write PNG plots into this directory")
	fs.StringVar(&peers, "peers", "cusparse,cpu,gonum", "peers to time in the same run: cusparse, cpu, gonum, or none")
	fs.StringVar(&maxBytes, "max-bytes", "auto", "skip a case on a side (device or host) when its arrays need more bytes than this (e.g. 8G); auto: 80% of free device memory, 50% of available host memory")
	fs.Int64Var(&cfg.hostMaxRows, "host-max-rows", 1<<24, "skip host peers for cases with more rows N·G than this (they are slow); with -device cpu it applies to nothing")
	fs.StringVar(&cfg.matrix, "matrix", Toeplitz, "coefficients: toeplitz (−1, 2, −1, as the anchors), dominant (a, c from U(−1,1), b = 4; not symmetric, so ldlt is left out) or diffusion (−(k·u′)′ with k from U(0.5,1.5) on every edge; constant cases −1, 2, −1)")
	fs.StringVar(&copyBytes, "copy-bytes", "1G", "size of the device-to-device copy that measures the device's bandwidth")
	fs.StringVar(&hostCopyBytes, "host-copy-bytes", "256M", "size of the host copy that measures the host's bandwidth")
	fs.DurationVar(&cfg.timeLimit, "time-limit", 0, "start no new case after this long (0: no limit); what ran is still reported")
	fs.BoolVar(&cfg.check, "check", true, "compute each solution's backward error on a sample of systems after timing")
	fs.StringVar(&cfg.cusparsePath, "cusparse", os.Getenv("BANDSOLVE_CUSPARSE"), "path of libcusparse to load first (default $BANDSOLVE_CUSPARSE, then the usual names and places)")
	fs.StringVar(&cfg.anchors, "anchors", "", "CSV of numbers measured elsewhere to show as anchor:<api> rows and lines: bench/anchors/cusparse-h200.csv (cuSPARSE on an H200) for the tridiagonal grids, bench/anchors/banded-h200.csv (cuSPARSE gpsvInterleavedBatch on an H200, LAPACK gbsv on its host) for the banded ones")
	fs.Uint64Var(&cfg.seed, "seed", 1, "seed of the random right-hand sides")
	fs.BoolVar(&cfg.table, "table", true, "print the full table (the per-case summary is always printed)")
	fs.BoolVar(&cfg.quiet, "q", false, "no progress line")
	fs.BoolVar(&cfg.list, "list", false, "list the grid's cases and exit")
	fs.StringVar(&cfg.cases, "cases", "", "run only these cases of the grid, by their -list numbers (e.g. 1-4,9,12)")
	fs.BoolVar(&cfg.hostPaced, "host-paced", false, "GPU timing without the gate: each timed solve is launched while the GPU waits for it, so a solve shorter than the host's launch call (≈ 5 µs) is timed at about that call's length")
	fs.StringVar(&bandN, "band-n", "", "banded grids: orders N to sweep instead of the grid's (e.g. 1e4,1e6)")
	fs.StringVar(&bandK, "band-k", "", "banded grids: half-bandwidths K to sweep instead of the grid's")
	fs.StringVar(&bandD, "band-d", "", "banded grids: degrees of diagonal dominance d to sweep instead of the grid's")
	fs.DurationVar(&cfg.hostCap, "host-cap", 20*time.Second, "banded grids: skip a host solver whose estimated time (from the cases measured so far) is above this (0: no cap)")
	fs.BoolVar(&cfg.hostSpike, "host-spike", true, "banded grids: time package spike on all cores (cpu:spike) besides the host LU (cpu:gbsv) when the cpu peer is on")
	fs.StringVar(&segRows, "segment-rows", "", "also time the GPU partition method with these Options.SegmentRows, as gpu:partition/m=M (M ≥ N: one block per system; else segments of M rows)")
	fs.StringVar(&cfg.baseline, "baseline", "", "compare the run with this baseline (bench/baselines/NAME.csv, or NAME-banded.csv for banded grids): the speed of every case and solver it holds, regressions flagged where the runs' spreads do not overlap (exit status 1 when there is one)")
	fs.StringVar(&cfg.report, "report", "", "write DIR/performance.md and its plots (DIR/img) from the baselines of -baselines, and the headline table of -readme, instead of running")
	fs.StringVar(&cfg.baselines, "baselines", "bench/baselines", "the folder of the baselines that -report reads")
	fs.StringVar(&cfg.readme, "readme", "README.md", "the README whose headline table -report rewrites (\"\": none)")
	fs.StringVar(&cfg.merge, "merge", "", "merge the CSV files of -parts (written by scripts/baseline.sh) into this baseline, a path without .csv (e.g. bench/baselines/h100), instead of running")
	fs.StringVar(&cfg.mergeParts, "parts", "", "the folder of part files that -merge reads")
	fs.StringVar(&hostD, "host-d", "", "banded grids: run the host solvers only for these d (default: every d)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if Grid(cfg.grid) == nil && !isBandGrid(cfg.grid) && !isTrsvGrid(cfg.grid) && !isFactorGrid(cfg.grid) {
		return nil, fmt.Errorf("unknown grid %q (want %s, or one of %s, or one of %s, or one of %s)", cfg.grid, strings.Join(Grids(), ", "),
			strings.Join(BandGrids(), ", "), strings.Join(TrsvGrids(), ", "), strings.Join(FactorGrids(), ", "))
	}
	var err error
	if cfg.precisions, err = parsePrecisions(prec); err != nil {
		return nil, err
	}
	if cfg.algos, err = parseAlgorithms(algos); err != nil {
		return nil, err
	}
	if cfg.cpuAlgos, err = parseAlgorithms(cpuAlgos); err != nil {
		return nil, err
	}
	cfg.peers = map[string]bool{}
	for _, p := range splitList(peers) {
		switch p {
		case "none":
		case "cusparse", "cpu", "gonum":
			cfg.peers[p] = true
		default:
			return nil, fmt.Errorf("unknown peer %q (want cusparse, cpu, gonum or none)", p)
		}
	}
	if cfg.device != "cpu" && cfg.device != "cuda" {
		return nil, fmt.Errorf("unknown device %q (want cpu or cuda)", cfg.device)
	}
	if cfg.reps < 1 || cfg.warmup < 0 {
		return nil, fmt.Errorf("need -reps ≥ 1 and -warmup ≥ 0")
	}
	if !slices.Contains(Matrices(), cfg.matrix) {
		return nil, fmt.Errorf("unknown matrix %q (want one of %v)", cfg.matrix, Matrices())
	}
	if cfg.matrix == Dominant {
		// Its systems are not symmetric: an SPD-only algorithm (ldlt)
		// would solve another matrix.
		cfg.algos = slices.DeleteFunc(cfg.algos, tridiag.Algorithm.SPD)
		cfg.cpuAlgos = slices.DeleteFunc(cfg.cpuAlgos, tridiag.Algorithm.SPD)
	}
	if cfg.sweep.N, err = parseInts(bandN); err != nil {
		return nil, fmt.Errorf("-band-n: %w", err)
	}
	if cfg.sweep.K, err = parseInts(bandK); err != nil {
		return nil, fmt.Errorf("-band-k: %w", err)
	}
	if cfg.sweep.D, err = parseFloats(bandD); err != nil {
		return nil, fmt.Errorf("-band-d: %w", err)
	}
	if cfg.hostD, err = parseFloats(hostD); err != nil {
		return nil, fmt.Errorf("-host-d: %w", err)
	}
	if cfg.segRows, err = parseInts(segRows); err != nil {
		return nil, fmt.Errorf("-segment-rows: %w", err)
	}
	if maxBytes != "auto" && maxBytes != "0" && maxBytes != "" {
		if cfg.maxBytes, err = parseBytes(maxBytes); err != nil {
			return nil, fmt.Errorf("-max-bytes: %w", err)
		}
	}
	if cfg.copyBytes, err = parseBytes(copyBytes); err != nil {
		return nil, fmt.Errorf("-copy-bytes: %w", err)
	}
	if cfg.hostCopyBytes, err = parseBytes(hostCopyBytes); err != nil {
		return nil, fmt.Errorf("-host-copy-bytes: %w", err)
	}
	return cfg, nil
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(strings.ToLower(f)); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func parseAlgorithms(s string) ([]tridiag.Algorithm, error) {
	var out []tridiag.Algorithm
	for _, f := range splitList(s) {
		if f == "all" {
			out = append(out, tridiag.Auto)
			out = append(out, tridiag.Algorithms()...)
			continue
		}
		if f == "none" {
			continue
		}
		a, err := tridiag.ParseAlgorithm(f)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	seen := map[tridiag.Algorithm]bool{}
	uniq := out[:0]
	for _, a := range out {
		if !seen[a] {
			seen[a] = true
			uniq = append(uniq, a)
		}
	}
	return uniq, nil
}

// parseBytes reads a byte count with an optional K, M, G or T suffix
// (powers of 1024).
func parseBytes(s string) (int64, error) {
	s = strings.TrimSpace(strings.ToUpper(s))
	s = strings.TrimSuffix(strings.TrimSuffix(s, "B"), "I")
	mult := int64(1)
	if s != "" {
		switch s[len(s)-1] {
		case 'K':
			mult = 1 << 10
		case 'M':
			mult = 1 << 20
		case 'G':
			mult = 1 << 30
		case 'T':
			mult = 1 << 40
		}
		if mult > 1 {
			s = s[:len(s)-1]
		}
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v <= 0 {
		return 0, fmt.Errorf("bad byte count %q", s)
	}
	return int64(v * float64(mult)), nil
}

func fmtBytes(b int64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
	default:
		return fmt.Sprintf("%d B", b)
	}
}

// hostAvailable is MemAvailable from /proc/meminfo, or 0.
func hostAvailable() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) >= 2 && fs[0] == "MemAvailable:" {
			kb, err := strconv.ParseInt(fs[1], 10, 64)
			if err == nil {
				return kb << 10
			}
		}
	}
	return 0
}

// runner holds the state of one run.
type runner struct {
	cfg       *config
	gpu       gpuBackend
	hostBW    float64
	hostLimit int64
	devLimit  int64
	anchors   map[Case][]Result
	prog      *progress
	hostPeers bool // cpu peer wanted and meaningful
}

func run(ctx context.Context, cfg *config, stdout, stderr io.Writer) error {
	if isBandGrid(cfg.grid) {
		return runBanded(ctx, cfg, stdout, stderr)
	}
	if isTrsvGrid(cfg.grid) {
		return runTrsv(ctx, cfg, stdout, stderr)
	}
	if isFactorGrid(cfg.grid) {
		return runFactor(ctx, cfg, stdout, stderr)
	}
	cases := GridCases(cfg.grid, cfg.precisions)
	if cfg.list {
		for i, c := range cases {
			fmt.Fprintf(stdout, "%3d  %-40s  %s on each side\n", i+1, c, fmtBytes(c.Footprint()))
		}
		return nil
	}
	cases, err := selectCases(cases, cfg.cases)
	if err != nil {
		return err
	}
	r := &runner{cfg: cfg, prog: newProgress(stderr, cfg.quiet)}
	prov := newProvenance(cfg.grid)
	var meta []string
	meta = append(meta, fmt.Sprintf("bandsolve bench %s, grid %s, %s, reps %d, warmup %d, matrix %s",
		time.Now().UTC().Format(time.RFC3339), cfg.grid, runtime.Version(), cfg.reps, cfg.warmup, cfg.matrix))
	if cfg.device == "cuda" {
		r.prog.note("opening GPU %d and measuring its copy bandwidth (%s)", cfg.gpu, fmtBytes(cfg.copyBytes))
		g, err := openGPU(cfg.gpu, cfg.copyBytes, cfg.cusparsePath)
		if err != nil {
			return fmt.Errorf("-device cuda: %w", err)
		}
		defer g.Close()
		r.gpu = g
		g.SetHostPaced(cfg.hostPaced)
		bw := g.Bandwidth()
		prov.Device, prov.Driver, prov.Library, prov.Bandwidth = g.Name(), g.Driver(), g.Library(), bw
		meta = append(meta, fmt.Sprintf("device %s: device-to-device copy %.0f GB/s (bytes read+written); limit %.0f MRows/s in FP32, %.0f in FP64 (%.0f and %.0f with constant coefficients)",
			g.Name(), bw/1e9, bw/20/1e6, bw/40/1e6, bw/8/1e6, bw/16/1e6))
		if cfg.precisions[C64] || cfg.precisions[C128] {
			meta = append(meta, fmt.Sprintf("complex limits: %.0f MRows/s in complex64, %.0f in complex128 (%.0f and %.0f with constant coefficients)",
				bw/40/1e6, bw/80/1e6, bw/16/1e6, bw/32/1e6))
		}
		meta = append(meta, g.Notes()...)
		if cfg.hostPaced {
			meta = append(meta, "timing: host-paced (-host-paced): every timed solve launched while the GPU waits for it")
		} else {
			meta = append(meta, "timing: gated: each solver's timed repetitions queued behind a gate kernel and released together, so the events bracket GPU work only")
		}
		r.devLimit = cfg.maxBytes
		if r.devLimit == 0 {
			r.devLimit = g.FreeBytes() * 8 / 10
		}
	} else if cfg.peers["cusparse"] {
		meta = append(meta, "cusparse peer skipped: it needs -device cuda")
	}
	r.hostPeers = cfg.device == "cpu" || cfg.peers["cpu"] || cfg.peers["gonum"]
	if r.hostPeers {
		r.prog.note("measuring the host's copy bandwidth (%s)", fmtBytes(cfg.hostCopyBytes))
		r.hostBW = HostBandwidth(cfg.hostCopyBytes, 5)
		meta = append(meta, fmt.Sprintf("host %s: parallel copy %.1f GB/s (bytes read+written, %d goroutines)",
			tridiag.DefaultCPU().Name(), r.hostBW/1e9, runtime.GOMAXPROCS(0)))
		if prov.Device == "" {
			prov.Device, prov.Bandwidth = tridiag.DefaultCPU().Name(), r.hostBW
		}
		r.hostLimit = cfg.maxBytes
		if r.hostLimit == 0 {
			if avail := hostAvailable(); avail > 0 {
				r.hostLimit = avail / 2
			} else {
				r.hostLimit = 8 << 30
			}
		}
	}
	if cfg.anchors != "" {
		a, note, err := ReadAnchors(cfg.anchors)
		if err != nil {
			return err
		}
		r.anchors = a
		meta = append(meta, "anchors "+cfg.anchors+": "+note)
	}
	meta = append(meta, "fraction = (bytes that must move / median time) / copy bandwidth of the side the solver runs on; resid = normwise backward error on a sample of systems (-1/empty: not checked)")
	for _, m := range meta {
		fmt.Fprintln(stdout, "#", m)
	}

	var cw *CSVWriter
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
		if cw, err = NewCSVWriter(f, prov, meta...); err != nil {
			return err
		}
	}

	start := time.Now()
	var all []Result
	stopped := 0
	for i, c := range cases {
		if cfg.timeLimit > 0 && time.Since(start) > cfg.timeLimit {
			stopped = len(cases) - i
			break
		}
		r.prog.caseStart(i+1, len(cases), c)
		rs := r.runCase(ctx, c)
		r.prog.caseDone(rs)
		all = append(all, rs...)
		if cw != nil {
			if err := cw.Write(rs...); err != nil {
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
		var shown []Result
		for _, r := range all {
			if !strings.HasPrefix(r.Err, "unsupported") {
				shown = append(shown, r)
			}
		}
		if err := WriteTable(stdout, shown); err != nil {
			return err
		}
		if n := len(all) - len(shown); n > 0 {
			fmt.Fprintf(stdout, "# %d unsupported solver and case pairs left out of the table (their reasons are in the CSV)\n", n)
		}
		fmt.Fprintln(stdout)
	}
	ours := "cpu"
	if cfg.device == "cuda" {
		ours = "gpu"
	}
	if err := WriteSummary(stdout, all, ours); err != nil {
		return err
	}
	if err := WriteSpeedups(stdout, all, ours+":auto"); err != nil {
		return err
	}
	if cfg.plotDir != "" {
		files, err := WritePlots(cfg.plotDir, all)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "# %d plots in %s\n", len(files), cfg.plotDir)
	}
	if cfg.csvPath != "" {
		fmt.Fprintf(stdout, "# %d results in %s\n", len(all), cfg.csvPath)
	}
	if cfg.baseline != "" {
		for i := range all {
			all[i].Prov = prov
		}
		n, err := CompareBaseline(stdout, cfg.baseline, all, nil)
		if err != nil {
			return fmt.Errorf("-baseline: %w", err)
		}
		if n > 0 {
			return fmt.Errorf("%d regressions against the baseline %s", n, cfg.baseline)
		}
	}
	return nil
}

// runCase runs every solver of a case.
func (r *runner) runCase(ctx context.Context, c Case) []Result {
	switch c.Precision {
	case F32:
		return runCaseT[float32](ctx, r, c)
	case C64:
		return runCaseT[complex64](ctx, r, c)
	case C128:
		return runCaseT[complex128](ctx, r, c)
	default:
		return runCaseT[float64](ctx, r, c)
	}
}

func runCaseT[T tridiag.Scalar](ctx context.Context, r *runner, c Case) []Result {
	cfg := r.cfg
	var out []Result
	skip := func(names []string, why string) {
		for _, n := range names {
			out = append(out, Result{Case: c, Solver: n, Err: "skipped: " + why, Resid: -1})
		}
	}
	algoNames := func(p string, as []tridiag.Algorithm) []string {
		var ns []string
		for _, a := range as {
			ns = append(ns, p+":"+a.String())
		}
		return ns
	}
	r.prog.solver("generating data")
	h, err := newCaseData[T](c, cfg.matrix, cfg.seed)
	if err != nil {
		return []Result{{Case: c, Solver: "data", Err: err.Error(), Resid: -1}}
	}
	if r.gpu != nil {
		cus := cfg.peers["cusparse"]
		names := algoNames("gpu", cfg.algos)
		if cus {
			names = append(names, cusparseNames(c)...)
		}
		need := c.Footprint()
		arr := int64(c.Len()) * c.ElemSize()
		if cus && c.Constant && len(cusparseNames(c)) > 0 {
			need += 3 * arr // cuSPARSE needs the coefficient arrays
		}
		if cus && c.Layout == Interleaved {
			need += 3 * arr // saved coefficients
		}
		if c.Complex() {
			need += 4 * arr // the complex plans' work planes
		}
		if need > r.devLimit {
			skip(names, fmt.Sprintf("needs %s of device memory, limit %s (-max-bytes)", fmtBytes(need), fmtBytes(r.devLimit)))
		} else {
			gr := gpuRun{algos: cfg.algos, segRows: cfg.segRows, cusparse: cus, warmup: cfg.warmup, reps: cfg.reps, check: cfg.check, progress: r.prog.solver}
			switch hd := any(h).(type) {
			case *hostData[float32]:
				out = append(out, r.gpu.Run32(ctx, hd, gr)...)
			case *hostData[float64]:
				out = append(out, r.gpu.Run64(ctx, hd, gr)...)
			case *hostData[complex64]:
				out = append(out, r.gpu.RunC64(ctx, hd, gr)...)
			case *hostData[complex128]:
				out = append(out, r.gpu.RunC128(ctx, hd, gr)...)
			}
		}
	}
	hr := hostRun{warmup: cfg.warmup, reps: cfg.reps, bandwidth: r.hostBW, check: cfg.check, progress: r.prog.solver}
	var hostAlgos []tridiag.Algorithm
	if cfg.device == "cpu" {
		hostAlgos = cfg.algos
	} else if cfg.peers["cpu"] {
		hostAlgos = cfg.cpuAlgos
	}
	gonumOn := cfg.peers["gonum"] && c.Precision == F64
	var hostNames []string
	hostNames = append(hostNames, algoNames("cpu", hostAlgos)...)
	if gonumOn {
		hostNames = append(hostNames, "gonum:dgtsv")
	}
	need := c.Footprint() + 4*int64(c.Len())*c.ElemSize() // gonum's working copies
	switch {
	case len(hostNames) == 0:
	case need > r.hostLimit:
		skip(hostNames, fmt.Sprintf("needs %s of host memory, limit %s (-max-bytes)", fmtBytes(need), fmtBytes(r.hostLimit)))
	case cfg.device != "cpu" && c.Rows() > cfg.hostMaxRows:
		skip(hostNames, fmt.Sprintf("N·G > %d (-host-max-rows)", cfg.hostMaxRows))
	default:
		out = append(out, runCPUPlans(ctx, h, hostAlgos, hr)...)
		if gonumOn {
			out = append(out, runGonum(ctx, any(h).(*hostData[float64]), hr))
		}
	}
	out = append(out, r.anchors[c]...)
	return out
}

// progress prints what the run is doing to stderr: on a terminal one line
// rewritten in place, otherwise one line per finished case.
type progress struct {
	w        io.Writer
	tty, off bool
	start    time.Time
	i, n     int
	c        fmt.Stringer
	caseT0   time.Time
}

func newProgress(w io.Writer, quiet bool) *progress {
	p := &progress{w: w, off: quiet, start: time.Now()}
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			p.tty = true
		}
	}
	return p
}

func (p *progress) note(format string, args ...any) {
	if p.off {
		return
	}
	if p.tty {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
	fmt.Fprintf(p.w, "bench: "+format+"\n", args...)
}

func (p *progress) caseStart(i, n int, c fmt.Stringer) {
	p.i, p.n, p.c, p.caseT0 = i, n, c, time.Now()
	p.solver("")
}

func (p *progress) solver(name string) {
	if p.off || !p.tty {
		return
	}
	fmt.Fprintf(p.w, "\r\x1b[K[%d/%d %s] %s  %s", p.i, p.n, time.Since(p.start).Round(time.Second), p.c, name)
}

func (p *progress) caseDone(rs []Result) {
	if p.off || p.tty {
		return
	}
	ok, bad := 0, 0
	best := Result{}
	for _, r := range rs {
		if r.OK() {
			ok++
			if r.MRows > best.MRows {
				best = r
			}
		} else {
			bad++
		}
	}
	line := fmt.Sprintf("[%d/%d %s] %s: %d timed, %d not (%.1fs)", p.i, p.n,
		time.Since(p.start).Round(time.Second), p.c, ok, bad, time.Since(p.caseT0).Seconds())
	if ok > 0 {
		line += fmt.Sprintf("; fastest %s %s MRows/s", best.Solver, fmtMRows(best.MRows))
	}
	fmt.Fprintln(p.w, line)
}

func (p *progress) done(d time.Duration) {
	if p.off {
		return
	}
	if p.tty {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
	fmt.Fprintf(p.w, "bench: done in %s\n", d.Round(time.Millisecond))
}

// selectCases keeps the cases whose 1-based numbers (as -list prints
// them) spec names: a comma-separated list of numbers and ranges a-b; ""
// keeps all.
func selectCases[C any](cases []C, spec string) ([]C, error) {
	if strings.TrimSpace(spec) == "" {
		return cases, nil
	}
	keep := make([]bool, len(cases))
	for _, f := range strings.Split(spec, ",") {
		f = strings.TrimSpace(f)
		lo, hi, isRange := strings.Cut(f, "-")
		a, err := strconv.Atoi(lo)
		b := a
		if err == nil && isRange {
			b, err = strconv.Atoi(hi)
		}
		if err != nil || a < 1 || b < a || b > len(cases) {
			return nil, fmt.Errorf("-cases %q: %q is not a case number or range within 1–%d (see -list)", spec, f, len(cases))
		}
		for i := a; i <= b; i++ {
			keep[i-1] = true
		}
	}
	var out []C
	for i, c := range cases {
		if keep[i] {
			out = append(out, c)
		}
	}
	return out, nil
}
