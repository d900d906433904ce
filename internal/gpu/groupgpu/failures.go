package groupgpu

import (
	"slices"

	"github.com/bandsolve/bandsolve/tridiag"
)

// partFailure is a system that broke down, or came out non-finite, in a
// part of a batch split by rows: row is in the whole system; within says
// that the part broke down at row (a zero pivot within its segments),
// else its x is not finite from row on.
type partFailure struct {
	system, row int
	within      bool
}

// mergeFailures merges the breakdowns of a split solve into one error a
// system, at the row that explains it: the first row where a part broke
// down within its segments; else the row of the reduced systems'
// breakdown; else the first row whose x is not finite. Each failure wraps
// cause. It returns nil when every system solved.
func mergeFailures(G int, reduced []tridiag.SystemError, parts []partFailure, cause error) *tridiag.BatchError {
	type found struct{ within, reduced, other int }
	first := map[int]*found{}
	at := func(g int) *found {
		f := first[g]
		if f == nil {
			f = &found{-1, -1, -1}
			first[g] = f
		}
		return f
	}
	low := func(v *int, row int) {
		if *v < 0 || row < *v {
			*v = row
		}
	}
	for _, f := range reduced {
		low(&at(f.System).reduced, f.Row)
	}
	for _, f := range parts {
		if f.within {
			low(&at(f.system).within, f.row)
		} else {
			low(&at(f.system).other, f.row)
		}
	}
	if len(first) == 0 {
		return nil
	}
	be := &tridiag.BatchError{G: G}
	for g, f := range first {
		row := f.within
		if row < 0 {
			row = f.reduced
		}
		if row < 0 {
			row = f.other
		}
		be.Failed = append(be.Failed, tridiag.SystemError{System: g, Row: row, Err: cause})
	}
	slices.SortFunc(be.Failed, func(x, y tridiag.SystemError) int { return x.System - y.System })
	return be
}
