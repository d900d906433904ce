package main

import (
	"errors"
	"fmt"
	"io"
	"math/cmplx"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/bandsolve/bandsolve/banded"
	"github.com/bandsolve/bandsolve/npy"
	"github.com/bandsolve/bandsolve/tridiag"
)

// complexBandedRun is what bandsolve banded solves for a complex -npy
// band (dtype c8 or c16): the band in solve_banded((KL, KU), ab, b)
// storage, by LU with partial pivoting on the CPU.
type complexBandedRun struct {
	path         string
	kl, ku       int  // with -kl/-ku; else the (2K+1, N) shape gives K
	general      bool // -kl and -ku given
	prec         string
	rhsPath, out string
	seed         uint64
	checkTol     float64
	force        bool
	single       bool // the file is c8
	stdout       io.Writer
}

// runBandedComplex solves a complex band in the precision of the data
// (-precision auto: complex64 for c8, complex128 for c16; f32 or f64
// choose), writes x in that dtype and reports the backward error and κ̂
// as the real path does.
func runBandedComplex(r complexBandedRun) error {
	single := r.single
	switch r.prec {
	case "auto":
	case "f32":
		single = true
	case "f64":
		single = false
	default:
		return usageErrorf("-precision %s: a complex band is solved in complex64 (f32) or complex128 (f64)", r.prec)
	}
	if single {
		return solveBandedComplex[complex64](r, "f32")
	}
	return solveBandedComplex[complex128](r, "f64")
}

func solveBandedComplex[T banded.Complex](r complexBandedRun, prec string) error {
	h, err := npy.ReadFileHeader(r.path)
	if err != nil {
		return inputError("-npy", err)
	}
	shape := h.Shape
	kl, ku := r.kl, r.ku
	if !r.general {
		if len(shape) != 2 || shape[0]%2 == 0 || shape[1] < 1 {
			return fmt.Errorf("%s: shape %s; want (2K+1, N) with an odd number of rows (scipy solve_banded storage ab[K+i−j, j] = a_ij)", r.path, shapeString(shape))
		}
		kl = (shape[0] - 1) / 2
		ku = kl
	} else if len(shape) != 2 || shape[0] != kl+ku+1 || shape[1] < 1 {
		return fmt.Errorf("%s: shape %s; -kl %d -ku %d want (%d, N), scipy solve_banded((%d, %d), ab, b) storage ab[%d+i−j, j] = a_ij", r.path, shapeString(shape), kl, ku, kl+ku+1, kl, ku, ku)
	}
	n := shape[1]
	if !r.general && kl >= n {
		return fmt.Errorf("%s: shape %s gives K=%d ≥ N=%d; want K < N", r.path, shapeString(shape), kl, n)
	}
	if err := banded.CheckGeneralMemory[T](n, kl, ku, 2); err != nil {
		return fmt.Errorf("%s: %w", r.path, err)
	}
	_, data, err := readArrayAs[T]("-npy", r.path)
	if err != nil {
		return err
	}
	// Bandwidths beyond N−1 lie outside the matrix; slots outside it are
	// zeroed.
	l, u := min(kl, n-1), min(ku, n-1)
	data = data[(ku-u)*n : (ku+l+1)*n]
	for s := 0; s <= l+u; s++ {
		d := s - u
		clear(data[s*n : s*n+max(0, -d)])
		clear(data[s*n+min(n, n-d) : (s+1)*n])
	}
	A := &banded.General[T]{N: n, KL: l, KU: u, Data: data}

	var b, xTrue []T
	if r.rhsPath != "" {
		rh, err := npy.ReadFileHeader(r.rhsPath)
		if err != nil {
			return inputError("-rhs", err)
		}
		if len(rh.Shape) != 1 || rh.Shape[0] != n {
			return fmt.Errorf("%s: shape %s; want (%d,), a vector of length N", r.rhsPath, shapeString(rh.Shape), n)
		}
		if _, b, err = readArrayAs[T]("-rhs", r.rhsPath); err != nil {
			return err
		}
		for i, v := range b {
			if c := complex128(v); cmplx.IsNaN(c) || cmplx.IsInf(c) {
				return fmt.Errorf("right-hand side: non-finite value %v at row %d", v, i)
			}
		}
	} else {
		rng := rand.New(rand.NewPCG(r.seed, 0x5eed))
		xTrue = make([]T, n)
		for i := range xTrue {
			xTrue[i] = T(complex(2*rng.Float64()-1, 2*rng.Float64()-1))
		}
		b = make([]T, n)
		A.MulVec(xTrue, b)
	}

	tol := defaultTol(r.checkTol, prec)
	start := time.Now()
	f, ferr := banded.FactorPivotGeneral(A)
	factorT := time.Since(start)
	x := append([]T(nil), b...)
	var solveT time.Duration
	if ferr == nil {
		start = time.Now()
		f.Solve(x)
		solveT = time.Since(start)
	} else if !errors.Is(ferr, banded.ErrSingular) {
		return fmt.Errorf("%s: %w", r.path, ferr)
	}
	var st tridiag.Status
	if ferr == nil {
		if st, err = banded.CheckGeneral(A, b, x, tol); err != nil {
			return err
		}
	}

	w := r.stdout
	line := func(name, format string, args ...any) {
		fmt.Fprintf(w, "  %-22s %s\n", name, fmt.Sprintf(format, args...))
	}
	typ := "complex128"
	if prec == "f32" {
		typ = "complex64"
	}
	fmt.Fprintf(w, "bandsolve banded on cpu\n")
	src := "npy " + r.path
	if r.general {
		src = fmt.Sprintf("npy %s (kl=%d, ku=%d)", r.path, kl, ku)
	}
	line("matrix", "%s (%s)", src, h.DType)
	line("N", "%d", n)
	line("KL", "%d", l)
	line("KU", "%d", u)
	line("method", "banded LU with partial pivoting (pivots by |re|+|im|), %s", typ)
	if ferr != nil {
		line("factorization", "%v", ferr)
		return fmt.Errorf("%s: %w", r.path, ferr)
	}
	line("backward error", "%.3e (‖b − A·x‖∞/(‖A‖∞‖x‖∞ + ‖b‖∞), moduli, tolerance %.2e)", st.BackwardError, tol)
	line("condition estimate", "%.3e (κ̂∞)", st.Cond)
	if xTrue != nil {
		var d, nx float64
		for i := range x {
			d = max(d, cmplx.Abs(complex128(x[i])-complex128(xTrue[i])))
			nx = max(nx, cmplx.Abs(complex128(xTrue[i])))
		}
		line("relative error", "%.3e (‖x − x̃‖∞/‖x̃‖∞, manufactured x̃)", d/nx)
	}
	line("time factor", "%s", formatDuration(factorT))
	line("time solve", "%s", formatDuration(solveT))

	failed := st.Failed()
	if r.out != "" && (!failed || r.force) {
		if err := npy.WriteFile(r.out, []int{n}, x); err != nil {
			return err
		}
	}
	if !failed {
		return nil
	}
	return errors.New("accuracy check failed: " + strings.Join(verdictReasons([]tridiag.Status{st}, tol, false), "; ") + outputNote(r.out, r.force))
}
