package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/bandsolve/bandsolve/tridiag"
)

// The accuracy check of solve and banded: a solution passes when its
// normwise backward error ‖d − A·x‖∞ / (‖A‖∞·‖x‖∞ + ‖d‖∞) is at most the
// tolerance (-tol, -check-tol; default 10³·ε of the precision of the
// solve) and the estimated condition number κ̂∞ has κ̂·ε < 1/2. Otherwise
// the command exits with status 1 and a one-line reason, and writes its
// output only with -force.

// precisionEps is the machine epsilon of a -precision value (mixed
// iterates in float64).
func precisionEps(prec string) float64 {
	if prec == "f32" || prec == "c64" {
		return tridiag.Epsilon[float32]()
	}
	return tridiag.Epsilon[float64]()
}

// checkTolFlag validates a tolerance flag: 0 (the default) or a finite
// value in (0, 1).
func checkTolFlag(name string, v float64) error {
	if !(v >= 0 && v < 1) {
		return usageErrorf("%s %g: want 0 (10³·ε of the precision) or a backward error tolerance in (0, 1)", name, v)
	}
	return nil
}

// defaultTol is tol, or 10³·ε of the precision when tol is 0.
func defaultTol(tol float64, prec string) float64 {
	if tol > 0 {
		return tol
	}
	return 1e3 * precisionEps(prec)
}

// systemList prints "system g" or "systems g1, g2, …" with the first few
// indices and "…" when there are more.
func systemList(idx []int) string {
	const show = 5
	if len(idx) == 1 {
		return "system " + strconv.Itoa(idx[0])
	}
	parts := make([]string, 0, show+1)
	for i, g := range idx {
		if i == show {
			parts = append(parts, "…")
			break
		}
		parts = append(parts, strconv.Itoa(g))
	}
	return "systems " + strings.Join(parts, ", ")
}

// verdictReasons describes what failed among statuses: the ill-conditioned
// ones and the inaccurate ones, with the worst values; each is prefixed
// with its count when several systems are judged.
func verdictReasons(st []tridiag.Status, tol float64, counts bool) []string {
	var nCond, nAcc int
	var maxCond, maxBerr float64
	for _, s := range st {
		if s.Flags&(tridiag.IllConditioned|tridiag.Singular) != 0 {
			nCond++
			if s.Cond > maxCond || math.IsNaN(s.Cond) {
				maxCond = s.Cond
			}
		}
		if s.Flags&(tridiag.BackwardErrorTooLarge|tridiag.NonFinite|tridiag.NotConverged) != 0 {
			nAcc++
			if s.BackwardError > maxBerr || math.IsNaN(s.BackwardError) {
				maxBerr = s.BackwardError
			}
		}
	}
	var out []string
	in := func(n int) string {
		if !counts {
			return ""
		}
		return fmt.Sprintf(" in %d", n)
	}
	if nCond > 0 {
		what := fmt.Sprintf("κ̂ = %.2g", maxCond)
		if counts && nCond > 1 {
			what = fmt.Sprintf("κ̂ up to %.2g", maxCond)
		}
		if math.IsInf(maxCond, 1) {
			what += ", singular to working precision"
		}
		out = append(out, fmt.Sprintf("ill-conditioned%s (%s: κ̂·ε ≥ 1/2, the answer is meaningless)", in(nCond), what))
	}
	if nAcc > 0 {
		what := fmt.Sprintf("%.2e", maxBerr)
		if counts && nAcc > 1 {
			what = "up to " + what
		}
		out = append(out, fmt.Sprintf("backward error %s above the tolerance %.2e%s", what, tol, in(nAcc)))
	}
	return out
}

// outputNote says what became of the output file.
func outputNote(out string, force bool) string {
	switch {
	case out == "":
		return ""
	case force:
		return fmt.Sprintf("; %s written anyway (-force)", out)
	}
	return fmt.Sprintf("; %s not written (-force writes it anyway)", out)
}
