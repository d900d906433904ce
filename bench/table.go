package bench

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// table is a grid of cells printed with aligned columns: text columns
// left-aligned, numeric ones right-aligned.
type table struct {
	head  []string
	right []bool
	rows  [][]string
}

func (t *table) add(cells ...string) { t.rows = append(t.rows, cells) }

func (t *table) write(w io.Writer) error {
	width := make([]int, len(t.head))
	for _, r := range append([][]string{t.head}, t.rows...) {
		for i, c := range r {
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	var sb strings.Builder
	line := func(r []string) {
		var lb strings.Builder
		for i, c := range r {
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
			if i > 0 {
				lb.WriteString("  ")
			}
			if t.right[i] {
				lb.WriteString(pad + c)
			} else {
				lb.WriteString(c + pad)
			}
		}
		sb.WriteString(strings.TrimRight(lb.String(), " "))
		sb.WriteString("\n")
	}
	line(t.head)
	for _, r := range t.rows {
		line(r)
	}
	_, err := io.WriteString(w, sb.String())
	return err
}

// WriteTable prints results as an aligned table, one row per result:
// case, solver, median time, spread ((max−min)/median), MRows/s, the
// fraction of the limit, the ratio to the best other solver of the same
// side (device or host) and family, the backward error and the note or
// error.
func WriteTable(w io.Writer, rs []Result) error {
	t := &table{
		head:  []string{"prec", "layout", "N", "G", "const", "solver", "median", "spread", "MRows/s", "limit", "vs best peer", "resid", "note"},
		right: []bool{false, false, true, true, false, false, true, true, true, true, true, true, false},
	}
	for _, r := range rs {
		note := r.Note
		if r.Err != "" {
			note = r.Err
			if r.Note != "" {
				note += " (" + r.Note + ")"
			}
		}
		cst := ""
		if r.Constant {
			cst = "yes"
		}
		med, spread, mrows, limit, vs := "-", "-", "-", "-", "-"
		if r.OK() {
			med = fmtDuration(r.Median)
			spread = fmt.Sprintf("%.1f%%", 100*float64(r.Max-r.Min)/float64(r.Median))
			mrows = fmtMRows(r.MRows)
			if r.Fraction > 0 {
				limit = fmtFraction(r.Fraction)
			}
			if best, ok := bestPeer(rs, r); ok {
				vs = fmt.Sprintf("%.2f×", r.MRows/best.MRows)
			}
		}
		t.add(r.Precision, r.Layout, strconv.Itoa(r.N), strconv.Itoa(r.G), cst, r.Solver,
			med, spread, mrows, limit, vs, fmtResid(r), note)
	}
	return t.write(w)
}

// bestPeer is the fastest result of the same case, on the same side, from
// another family (solver prefix).
func bestPeer(rs []Result, r Result) (Result, bool) {
	var best Result
	found := false
	for _, o := range rs {
		if o.Case != r.Case || !o.OK() || o.side() != r.side() || prefix(o.Solver) == prefix(r.Solver) {
			continue
		}
		if !found || o.MRows > best.MRows {
			best, found = o, true
		}
	}
	return best, found
}

// WriteSummary prints one line per case: the fastest of "ours" (solvers
// whose prefix is ours) and the fastest other solver of the same side.
func WriteSummary(w io.Writer, rs []Result, ours string) error {
	t := &table{
		head:  []string{"case", "best ours", "MRows/s", "limit", "best peer", "MRows/s", "limit", "ours/peer"},
		right: []bool{false, false, true, true, false, true, true, true},
	}
	for _, c := range casesInOrder(rs, func(r Result) Case { return r.Case }) {
		var o, p Result
		var haveO, haveP bool
		for _, r := range rs {
			if r.Case != c || !r.OK() {
				continue
			}
			if prefix(r.Solver) == ours {
				if !haveO || r.MRows > o.MRows {
					o, haveO = r, true
				}
			} else if r.side() == solverSide(ours+":") {
				if !haveP || r.MRows > p.MRows {
					p, haveP = r, true
				}
			}
		}
		cell := func(r Result, ok bool) (string, string, string) {
			if !ok {
				return "-", "-", "-"
			}
			l := "-"
			if r.Fraction > 0 {
				l = fmtFraction(r.Fraction)
			}
			return r.Solver, fmtMRows(r.MRows), l
		}
		on, om, ol := cell(o, haveO)
		pn, pm, pl := cell(p, haveP)
		ratio := "-"
		if haveO && haveP {
			ratio = fmt.Sprintf("%.2f×", o.MRows/p.MRows)
		}
		t.add(c.String(), on, om, ol, pn, pm, pl, ratio)
	}
	return t.write(w)
}

// fmtDuration prints a time with three significant digits in µs, ms or s.
func fmtDuration(d time.Duration) string {
	us := float64(d) / 1e3
	switch {
	case us < 1000:
		return sig3(us) + "µs"
	case us < 1e6:
		return sig3(us/1e3) + "ms"
	default:
		return sig3(us/1e6) + "s"
	}
}

func sig3(v float64) string {
	switch {
	case v >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	default:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
}

// fmtFraction prints a fraction of the limit as a percentage with at
// least two significant digits.
func fmtFraction(f float64) string {
	p := 100 * f
	if p >= 1 {
		return strconv.FormatFloat(p, 'f', 1, 64) + "%"
	}
	return strconv.FormatFloat(p, 'g', 2, 64) + "%"
}

func fmtMRows(v float64) string {
	if v >= 100 {
		return strconv.FormatFloat(math.Round(v), 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

// fmtResid prints the backward error, with a "!" when it is too large to
// be a solution of the precision.
func fmtResid(r Result) string {
	if r.Resid < 0 {
		return "-"
	}
	s := strconv.FormatFloat(r.Resid, 'e', 1, 64)
	if math.IsNaN(r.Resid) || r.Resid > residLimit(r.Precision) {
		s += "!"
	}
	return s
}

// residLimit is the backward error above which a result is flagged: about
// 170 unit roundoffs in FP32, 900 in FP64. Every backward-stable solver
// stays far below on the bench's matrices (bandsolve bench -device cuda
// -grid paper on an H100, N up to 2^19: Thomas, gtsv, CR, TPR, Wang–Mou,
// PCR and cuSPARSE at most 7.1e-7 in FP32 and 1.4e-15 in FP64), while a
// loss of stability shows: the partition method with PCR instead of
// cyclic reduction on its reduced rows reaches 2.1e-3 and 1.9e-12 there,
// and 2.8e-2 on single systems.
//
// Complex cases take the limit of their parts' precision: 1e-5 in
// complex64, 1e-13 in complex128.
func residLimit(prec string) float64 {
	if prec == F32 || prec == C64 {
		return 1e-5
	}
	return 1e-13
}

// casesInOrder returns the distinct cases of rs in the order they first
// appear.
func casesInOrder[R any, C comparable](rs []R, caseOf func(R) C) []C {
	var order []C
	seen := map[C]bool{}
	for _, r := range rs {
		if c := caseOf(r); !seen[c] {
			seen[c] = true
			order = append(order, c)
		}
	}
	return order
}

// WriteSpeedups prints, for every solver of another family on the same
// side as solver (e.g. gpu:auto against each cuSPARSE routine), the
// geometric mean over the cases both solved of solver's speed-up, per
// precision, with the number of cases and of those where solver was
// slower. It prints nothing when solver or its peers did not run.
func WriteSpeedups(w io.Writer, rs []Result, solver string) error {
	type key struct{ peer, prec string }
	type acc struct {
		logSum        float64
		cases, slower int
	}
	mine := map[Case]Result{}
	for _, r := range rs {
		if r.Solver == solver && r.OK() && r.MRows > 0 {
			mine[r.Case] = r
		}
	}
	sums := map[key]*acc{}
	var keys []key
	for _, r := range rs {
		o, ok := mine[r.Case]
		if !ok || !r.OK() || r.MRows <= 0 || prefix(r.Solver) == prefix(solver) || r.side() != o.side() {
			continue
		}
		k := key{r.Solver, r.Case.Precision}
		a := sums[k]
		if a == nil {
			a = &acc{}
			sums[k] = a
			keys = append(keys, k)
		}
		s := o.MRows / r.MRows
		a.logSum += math.Log(s)
		a.cases++
		if s < 1 {
			a.slower++
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].peer != keys[j].peer {
			return keys[i].peer < keys[j].peer
		}
		return keys[i].prec < keys[j].prec
	})
	for _, k := range keys {
		a := sums[k]
		if _, err := fmt.Fprintf(w, "# %s over %s, %s: geometric-mean speed-up %.2f× (%d cases, %d slower)\n",
			solver, k.peer, k.prec, math.Exp(a.logSum/float64(a.cases)), a.cases, a.slower); err != nil {
			return err
		}
	}
	return nil
}
