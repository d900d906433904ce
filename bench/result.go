package bench

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Result is one solver's timing of one case.
type Result struct {
	Case
	Solver           string        // e.g. "gpu:tpr", "cusparse:gtsv2StridedBatch", "cpu:auto", "gonum:dgtsv"
	Median, Min, Max time.Duration // over the timed repetitions
	MRows            float64       // N·G / Median / 1e6
	Fraction         float64       // (BytesMoved / Median) / copy bandwidth of the side it ran on
	Err              string        // why there is no timing (or what went wrong); "" when fine
	// Resid is the largest normwise backward error
	// max|Ax−d| / max(|a||x|+|b||x|+|c||x|+|d|) over a sample of the
	// systems, computed on the host after timing; −1 when not checked.
	Resid float64
	// Note says more: the algorithm Auto chose, the library version, …
	Note string
	// Prov says where and when it was measured (read from a CSV; the
	// writer adds the run's).
	Prov Provenance
}

// OK reports whether the result holds a timing.
func (r Result) OK() bool { return r.Err == "" && r.Median > 0 }

// side is "device" for solvers that run on the GPU and "host" for the
// others; fractions compare with the copy bandwidth of that side.
func (r Result) side() string { return solverSide(r.Solver) }

func solverSide(s string) string {
	switch prefix(s) {
	case "cpu", "gonum":
		return "host"
	}
	return "device"
}

// prefix is the part of a solver name before the colon.
func prefix(s string) string {
	if i := strings.IndexByte(s, ':'); i >= 0 {
		return s[:i]
	}
	return s
}

// newResult fills the figures of a result from its repetition times and
// the copy bandwidth (bytes read+written per second) of its side.
func newResult(c Case, solver string, times []time.Duration, bandwidth float64) Result {
	r := Result{Case: c, Solver: solver, Resid: -1}
	if len(times) == 0 {
		r.Err = "no timed repetitions"
		return r
	}
	r.Median, r.Min, r.Max = summarize(times)
	r.MRows, r.Fraction = figures(c, r.Median, bandwidth)
	return r
}

// figures returns MRows/s and the fraction of the limit for a time.
func figures(c Case, t time.Duration, bandwidth float64) (mrows, fraction float64) {
	if t <= 0 {
		return 0, 0
	}
	sec := t.Seconds()
	mrows = float64(c.Rows()) / sec / 1e6
	if bandwidth > 0 {
		fraction = float64(c.BytesMoved()) / sec / bandwidth
	}
	return mrows, fraction
}

// summarize returns the median, minimum and maximum of times (the median
// of an even count is the mean of the middle two).
func summarize(times []time.Duration) (median, lo, hi time.Duration) {
	s := append([]time.Duration(nil), times...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	n := len(s)
	if n%2 == 1 {
		median = s[n/2]
	} else {
		median = (s[n/2-1] + s[n/2]) / 2
	}
	return median, s[0], s[n-1]
}

// medianFloat is the median of xs (xs is reordered).
func medianFloat(xs []float64) float64 {
	sort.Float64s(xs)
	n := len(xs)
	if n == 0 {
		return 0
	}
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

// csvHeader is the CSV's first record.
var csvHeader = []string{"precision", "layout", "N", "G", "constant", "solver",
	"median_us", "min_us", "max_us", "mrows_per_s", "fraction", "resid", "err", "note"}

// CSVWriter writes results as CSV, one record per result, flushing after
// each so that a run cut short keeps what it measured. Lines starting
// with '#' before the header carry metadata (device, bandwidths).
type CSVWriter struct {
	rw recordWriter[Result]
}

// NewCSVWriter writes the comment lines (each prefixed with "# ") and
// then the header on the first Write. Every record ends with the
// provenance columns of prov.
func NewCSVWriter(w io.Writer, prov Provenance, comments ...string) (*CSVWriter, error) {
	rw, err := newRecordWriter[Result](w, csvHeader, comments...)
	if err != nil {
		return nil, err
	}
	rw.prov = prov.record()
	return &CSVWriter{rw: *rw}, nil
}

// Write appends results.
func (cw *CSVWriter) Write(rs ...Result) error { return cw.rw.write(rs...) }

// recorder is a result that is one CSV record.
type recorder interface{ record() []string }

// recordWriter writes CSV records of one kind of result under a header
// written before the first, flushing after each write.
type recordWriter[R recorder] struct {
	w      *csv.Writer
	header []string
	prov   []string // appended to every record under provenanceHeader
	wrote  bool
}

// newRecordWriter writes the comment lines, each prefixed with "# ".
func newRecordWriter[R recorder](w io.Writer, header []string, comments ...string) (*recordWriter[R], error) {
	for _, c := range comments {
		for _, line := range strings.Split(c, "\n") {
			if _, err := fmt.Fprintf(w, "# %s\n", line); err != nil {
				return nil, err
			}
		}
	}
	return &recordWriter[R]{w: csv.NewWriter(w), header: header}, nil
}

func (cw *recordWriter[R]) write(rs ...R) error {
	if !cw.wrote {
		if err := cw.w.Write(append(slices.Clip(cw.header), provenanceHeader...)); err != nil {
			return err
		}
		cw.wrote = true
	}
	prov := cw.prov
	if prov == nil {
		prov = make([]string, len(provenanceHeader))
	}
	for _, r := range rs {
		if err := cw.w.Write(append(r.record(), prov...)); err != nil {
			return err
		}
	}
	cw.w.Flush()
	return cw.w.Error()
}

// WriteCSV writes results as CSV with optional comment lines and empty
// provenance columns.
func WriteCSV(w io.Writer, rs []Result, comments ...string) error {
	cw, err := NewCSVWriter(w, Provenance{}, comments...)
	if err != nil {
		return err
	}
	return cw.Write(rs...)
}

func (r Result) record() []string {
	us := func(d time.Duration) string { return strconv.FormatFloat(float64(d)/1e3, 'f', 3, 64) }
	fl := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	resid := ""
	if r.Resid >= 0 || math.IsNaN(r.Resid) {
		resid = fl(r.Resid)
	}
	return []string{r.Precision, r.Layout, strconv.Itoa(r.N), strconv.Itoa(r.G),
		strconv.FormatBool(r.Constant), r.Solver, us(r.Median), us(r.Min), us(r.Max),
		fl(r.MRows), fl(r.Fraction), resid, r.Err, r.Note}
}

// ReadCSV reads results written by WriteCSV or a CSVWriter (comment lines
// are skipped, and so are repeated header records, so that the CSV files
// of several runs may simply be concatenated, as bench/baselines are).
func ReadCSV(rd io.Reader) ([]Result, error) {
	var out []Result
	err := readRecords(rd, csvHeader, func(get func(string) string) error {
		r, err := parseRecord(get)
		if err == nil {
			out = append(out, r)
		}
		return err
	})
	return out, err
}

// readRecords reads CSV records under a header that has the columns
// required, skipping comment lines and repeated header records, and calls
// each with a getter of its fields by column name ("" when absent).
func readRecords(rd io.Reader, required []string, each func(get func(string) string) error) error {
	cr := csv.NewReader(rd)
	cr.Comment = '#'
	cr.FieldsPerRecord = -1
	recs, err := cr.ReadAll()
	if err != nil {
		return fmt.Errorf("bench: CSV: %w", err)
	}
	if len(recs) == 0 {
		return nil
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	for _, h := range required {
		if _, ok := col[h]; !ok {
			return fmt.Errorf("bench: CSV has no column %q", h)
		}
	}
	for ln, rec := range recs[1:] {
		if slices.Equal(rec, recs[0]) {
			continue
		}
		get := func(h string) string {
			if i, ok := col[h]; ok && i < len(rec) {
				return rec[i]
			}
			return ""
		}
		if err := each(get); err != nil {
			return fmt.Errorf("bench: CSV record %d: %w", ln+1, err)
		}
	}
	return nil
}

func parseRecord(get func(string) string) (Result, error) {
	var errs []error
	atoi := func(h string) int {
		v, err := strconv.Atoi(get(h))
		errs = append(errs, err)
		return v
	}
	flt := func(h string) float64 {
		v, err := strconv.ParseFloat(get(h), 64)
		errs = append(errs, err)
		return v
	}
	dur := func(h string) time.Duration { return time.Duration(math.Round(flt(h) * 1e3)) }
	r := Result{
		Case: Case{Precision: get("precision"), Layout: get("layout"),
			N: atoi("N"), G: atoi("G")},
		Solver: get("solver"), Median: dur("median_us"), Min: dur("min_us"), Max: dur("max_us"),
		MRows: flt("mrows_per_s"), Fraction: flt("fraction"), Err: get("err"), Note: get("note"),
		Resid: -1, Prov: parseProvenance(get),
	}
	cst, err := strconv.ParseBool(get("constant"))
	errs = append(errs, err)
	r.Constant = cst
	if s := get("resid"); s != "" {
		r.Resid, err = strconv.ParseFloat(s, 64)
		errs = append(errs, err)
	}
	return r, errors.Join(errs...)
}
