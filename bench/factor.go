package bench

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
	"time"
)

// Factor grids (-grid factor, factor-quick): stored factorizations on the
// GPU, the factor and the solves timed apart, for NRHS = 1, 4 and 16
// right-hand sides, the SPD path (LDLT: pttrf, pttrs and the one-shot
// ptsv) against the general ones (Thomas's LU, gttrf), the plan's
// one-shot solve of one right-hand side (NRHS of them are what a
// factored solve of NRHS columns replaces), on contiguous batches both
// solve kernels whatever the batch's size (gpu:<alg>/staged: tiles of
// rows transposed through shared memory; gpu:<alg>/rows: a thread a
// system; gpu:<alg>/solve is the library's choice), and cuSPARSE in the
// same run:
// gtsv2 with n = NRHS columns on single systems (it factors at every
// call), gtsv2StridedBatch NRHS times on batches.
var factorGrids = map[string][]FactorCase{
	"factor": {
		{N: 256, G: 65536, Layout: Interleaved},
		{N: 256, G: 65536, Layout: Contiguous},
		{N: 4096, G: 4096, Layout: Interleaved},
		{N: 4096, G: 1, Layout: Contiguous},
		{N: 1 << 16, G: 1, Layout: Contiguous},
	},
	"factor-quick": {
		{N: 64, G: 1024, Layout: Interleaved},
		{N: 64, G: 1024, Layout: Contiguous},
		{N: 1000, G: 1, Layout: Contiguous},
	},
}

// FactorGrids lists the factor grids.
func FactorGrids() []string { return []string{"factor", "factor-quick"} }

func isFactorGrid(name string) bool { return factorGrids[name] != nil }

// factorNRHS are the numbers of right-hand sides the factor grids time.
var factorNRHS = []int{1, 4, 16}

// FactorCase is a batch of a factor grid: G systems of N rows in a
// layout (Interleaved or Contiguous), timed in each precision of the run.
type FactorCase struct {
	N, G   int
	Layout string
}

func (c FactorCase) String() string { return fmt.Sprintf("N=%d G=%d %s", c.N, c.G, c.Layout) }

// FactorResult is one solver's measurement on one case: the median,
// fastest and slowest time of a call, which handles NRHS right-hand
// sides (0 for a factorization alone); Values is the values of the
// precision that a row must move at least in the call, all its columns
// together (the bytes of Limit); Note says more of the solver.
type FactorResult struct {
	Case         FactorCase
	Precision    string
	Solver       string
	NRHS         int
	Time, Lo, Hi time.Duration
	Values       float64
	ElemBytes    int     // bytes of a value of the precision
	Bandwidth    float64 // the device's copy bandwidth, bytes read+written per second
	Note, Err    string
	// OneShot is the case's one-shot Auto solve of one right-hand side;
	// General, for an SPD solver, the general path's time for the same
	// NRHS (relateFactorResults fills both).
	OneShot, General time.Duration
	Prov             Provenance
}

// rowsRHS is N·G·max(NRHS, 1).
func (r FactorResult) rowsRHS() float64 {
	return float64(r.Case.N) * float64(r.Case.G) * float64(max(r.NRHS, 1))
}

// MRows is the rows × right-hand sides per second, in millions.
func (r FactorResult) MRows() float64 {
	if r.Time <= 0 {
		return 0
	}
	return r.rowsRHS() / r.Time.Seconds() / 1e6
}

// Limit is the share of the device's copy bandwidth that moving Values
// per row in the call's time takes, in percent.
func (r FactorResult) Limit() float64 {
	if r.Time <= 0 || r.Bandwidth <= 0 {
		return 0
	}
	rows := float64(r.Case.N) * float64(r.Case.G)
	return rows * r.Values * float64(r.ElemBytes) / r.Time.Seconds() / r.Bandwidth * 100
}

// PerRHSGain is how many times faster a right-hand side is solved than
// by the one-shot solve: OneShot·NRHS / Time (0 when unknown).
func (r FactorResult) PerRHSGain() float64 {
	if r.NRHS < 1 || r.Time <= 0 || r.OneShot <= 0 {
		return 0
	}
	return r.OneShot.Seconds() * float64(r.NRHS) / r.Time.Seconds()
}

// SPDGain is how many times faster the SPD solver is than the general
// one for the same NRHS (0 when not an SPD row or unknown).
func (r FactorResult) SPDGain() float64 {
	if r.General <= 0 || r.Time <= 0 {
		return 0
	}
	return r.General.Seconds() / r.Time.Seconds()
}

// runFactor runs a factor grid on the GPU.
func runFactor(ctx context.Context, cfg *config, stdout, stderr io.Writer) error {
	cases := factorGrids[cfg.grid]
	if cfg.list {
		for i, c := range cases {
			fmt.Fprintf(stdout, "%3d  %s\n", i+1, c)
		}
		return nil
	}
	cases, err := selectCases(cases, cfg.cases)
	if err != nil {
		return err
	}
	if cfg.device != "cuda" {
		return fmt.Errorf("-grid %s runs on the GPU: add -device cuda", cfg.grid)
	}
	gpu, err := openGPU(cfg.gpu, cfg.copyBytes, cfg.cusparsePath)
	if err != nil {
		return fmt.Errorf("-device cuda: %w", err)
	}
	defer gpu.Close()
	for _, n := range gpu.Notes() {
		fmt.Fprintf(stdout, "# %s\n", n)
	}
	fmt.Fprintf(stdout, "# %s, %s, %s: device-to-device copy %.0f GB/s\n", gpu.Name(), gpu.Driver(), gpu.Library(), gpu.Bandwidth()/1e9)
	prov := newProvenance(cfg.grid)
	prov.Device, prov.Driver, prov.Library, prov.Bandwidth = gpu.Name(), gpu.Driver(), gpu.Library(), gpu.Bandwidth()
	var all []FactorResult
	for _, c := range cases {
		for _, prec := range []string{F32, F64} {
			if !cfg.precisions[prec] {
				continue
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			if !cfg.quiet {
				fmt.Fprintf(stderr, "%s %s\n", c, prec)
			}
			rs := runFactorGPU(gpu, c, prec, cfg.warmup, cfg.reps, cfg.peers["cusparse"], cfg.seed)
			relateFactorResults(rs)
			for i := range rs {
				rs[i].Prov = prov
			}
			all = append(all, rs...)
			if err := WriteFactorTable(stdout, rs); err != nil {
				return err
			}
		}
	}
	if cfg.csvPath != "" {
		return writeCSVFile(cfg.csvPath, cfg.anchors, func(w io.Writer) error { return WriteFactorCSV(w, all) })
	}
	return nil
}

// Solver names of the factor grids.
const (
	factorOneShot    = "gpu:auto/oneshot"
	factorSPDOneShot = "gpu:ldlt/oneshot"
)

// factorGeneral is the general path an SPD solver is compared with.
var factorGeneral = map[string]string{
	factorSPDOneShot:  factorOneShot,
	"gpu:ldlt/factor": "gpu:thomas/factor",
	"gpu:ldlt/solve":  "gpu:thomas/solve",
	"gpu:ldlt/staged": "gpu:thomas/staged",
	"gpu:ldlt/rows":   "gpu:thomas/rows",
}

// relateFactorResults fills the one-shot and general-path times of the
// results of one case and precision.
func relateFactorResults(rs []FactorResult) {
	var one time.Duration
	for _, r := range rs {
		if r.Solver == factorOneShot && r.Err == "" {
			one = r.Time
		}
	}
	for i := range rs {
		rs[i].OneShot = one
		gen, ok := factorGeneral[rs[i].Solver]
		if !ok {
			continue
		}
		for _, g := range rs {
			if g.Solver == gen && g.NRHS == rs[i].NRHS && g.Err == "" {
				rs[i].General = g.Time
			}
		}
	}
}

// WriteFactorTable writes results as an aligned table: time of a call,
// rows × right-hand sides per second, the bandwidth limit's share, the
// gain per right-hand side over the one-shot solve, and SPD's over the
// general path.
func WriteFactorTable(w io.Writer, rs []FactorResult) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "case\tprec\tsolver\tnrhs\ttime\tµs/rhs\tMRows/s\t%limit\t×oneshot/rhs\tSPD×general\tnote\t")
	for _, r := range rs {
		if r.Err != "" {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t\t\t\t\t\t\t\n", r.Case, r.Precision, r.Solver, r.NRHS, "error: "+r.Err)
			continue
		}
		per := r.Time / time.Duration(max(r.NRHS, 1))
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%.1f\t%.0f\t%.0f%%\t%s\t%s\t%s\t\n", r.Case, r.Precision, r.Solver, r.NRHS,
			fmtTime(r.Time), per.Seconds()*1e6, r.MRows(), r.Limit(), fmtRatio(r.PerRHSGain()), fmtRatio(r.SPDGain()), r.Note)
	}
	return tw.Flush()
}

// factorHeader names the columns of the factor grids' CSV files.
var factorHeader = append([]string{"n", "g", "layout", "precision", "solver", "nrhs", "time_s", "time_min_s", "time_max_s",
	"mrows_per_s", "limit_pct", "per_rhs_gain", "spd_gain", "note", "error"}, provenanceHeader...)

// WriteFactorCSV writes results as CSV, one record a result with its
// provenance, times in seconds.
func WriteFactorCSV(w io.Writer, rs []FactorResult) error {
	cw := csv.NewWriter(w)
	_ = cw.Write(factorHeader)
	sec := func(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'g', 6, 64) }
	num := func(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
	for _, r := range rs {
		_ = cw.Write(append([]string{strconv.Itoa(r.Case.N), strconv.Itoa(r.Case.G), r.Case.Layout, r.Precision, r.Solver,
			strconv.Itoa(r.NRHS), sec(r.Time), sec(r.Lo), sec(r.Hi), num(r.MRows()), num(r.Limit()), num(r.PerRHSGain()),
			num(r.SPDGain()), r.Note, r.Err}, r.Prov.record()...))
	}
	cw.Flush()
	return cw.Error()
}
