package main

/*
#include <stdint.h>
*/
import "C"

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/bandsolve/bandsolve/banded"
	"github.com/bandsolve/bandsolve/tridiag"
)

//export bandsolve_solve_banded
func bandsolve_solve_banded(precision C.int, n, kl, ku, g, nrhs C.int64_t, ab, b, x unsafe.Pointer, info *C.int32_t) (st C.int) {
	const fn = "bandsolve_solve_banded"
	var ng int
	defer guard(fn, &st, info, &ng)
	sh, err := bandCall(n, kl, ku, g, nrhs, &ng, "NULL", ab == nil, b == nil, x == nil)
	if err != nil {
		return finish(fn, err, info, ng)
	}
	switch precision {
	case precF32:
		err = solveBanded[float32](sh, ab, b, x)
	case precF64:
		err = solveBanded[float64](sh, ab, b, x)
	default:
		err = errPrecision(precision)
	}
	return finish(fn, err, info, ng)
}

//export bandsolve_solve_banded_device
func bandsolve_solve_banded_device(precision C.int, n, kl, ku, g, nrhs C.int64_t, ab, b, x C.uint64_t, ordinal C.int, stream C.uintptr_t, info *C.int32_t) (st C.int) {
	const fn = "bandsolve_solve_banded_device"
	var ng int
	defer guard(fn, &st, info, &ng)
	sh, err := bandCall(n, kl, ku, g, nrhs, &ng, "0 (a null device pointer)", ab == 0, b == 0, x == 0)
	if err != nil {
		return finish(fn, err, info, ng)
	}
	if precision != precF32 && precision != precF64 {
		return finish(fn, errPrecision(precision), info, ng)
	}
	if ordinal < 0 {
		return finish(fn, fmt.Errorf("%w: GPU ordinal %d", errArgument, int(ordinal)), info, ng)
	}
	ptr := bandPointers{ab: uint64(ab), b: uint64(b), x: uint64(x), stream: uintptr(stream)}
	return finish(fn, solveBandedDevice(int(ordinal), precision == precF64, sh, ptr), info, ng)
}

// bandPointers are the device addresses of a banded solve and the
// caller's stream.
type bandPointers struct {
	ab, b, x uint64
	stream   uintptr
}

// errPrecision refuses an unknown precision.
func errPrecision(precision C.int) error {
	return fmt.Errorf("%w: unknown precision %d (want BANDSOLVE_F32 or BANDSOLVE_F64)", errArgument, int(precision))
}

// bandCall checks a banded solve's sizes (bandArgs; *ng set to the
// systems for info once g converted) and that none of ab, b, x is null
// (the null flags; a null one is said to be null).
func bandCall(n, kl, ku, g, nrhs C.int64_t, ng *int, null string, abNull, bNull, xNull bool) (bandShape, error) {
	sh, err := bandArgs(n, kl, ku, g, nrhs)
	if sh.g > 0 {
		*ng = sh.g
	}
	if err != nil {
		return sh, err
	}
	for i, isNull := range []bool{abNull, bNull, xNull} {
		if isNull {
			return sh, fmt.Errorf("%w: %s is %s", errArgument, []string{"ab", "b", "x"}[i], null)
		}
	}
	return sh, nil
}

// bandArgs converts and checks the sizes of a banded solve; the shape's
// g is set (for info) once g itself converted.
func bandArgs(n, kl, ku, g, nrhs C.int64_t) (bandShape, error) {
	var dims [5]int
	for i, v := range []struct {
		name string
		v    C.int64_t
	}{{"n", n}, {"kl", kl}, {"ku", ku}, {"g", g}, {"nrhs", nrhs}} {
		d, err := intArg(v.name, v.v)
		if err != nil {
			return bandShape{}, err
		}
		dims[i] = d
	}
	sh := bandShape{n: dims[0], kl: dims[1], ku: dims[2], g: dims[3], nrhs: dims[4]}
	return sh, sh.check()
}

// bandShape is the shape of a batch of bandsolve_solve_banded.
type bandShape struct{ n, kl, ku, g, nrhs int }

// check validates the shape and that its arrays can be indexed.
func (s bandShape) check() error {
	if err := banded.CheckGeneralShape(s.n, s.kl, s.ku); err != nil {
		return err
	}
	if s.g < 1 {
		return fmt.Errorf("%w: batch count g = %d, want ≥ 1", banded.ErrShape, s.g)
	}
	if s.nrhs < 1 {
		return fmt.Errorf("%w: nrhs = %d, want ≥ 1", banded.ErrShape, s.nrhs)
	}
	if float64(s.kl+s.ku+1)*float64(s.n)*float64(s.g) >= math.MaxInt/2 || float64(s.n)*float64(s.nrhs)*float64(s.g) >= math.MaxInt/2 {
		return fmt.Errorf("%w: batch of %d systems too large to index", banded.ErrShape, s.g)
	}
	return nil
}

// solveBanded solves every system of the batch by gbsv, in parallel over
// the systems. Non-finite input fails the whole call (naming the first
// system, row and column); singular systems are reported in a
// *tridiag.BatchError with NaN solutions.
func solveBanded[T tridiag.Float](s bandShape, abp, bp, xp unsafe.Pointer) error {
	rows := s.kl + s.ku + 1
	ab := unsafe.Slice((*T)(abp), rows*s.n*s.g)
	b := unsafe.Slice((*T)(bp), s.n*s.nrhs*s.g)
	x := unsafe.Slice((*T)(xp), s.n*s.nrhs*s.g)
	if err := scanBanded(s, ab, b); err != nil {
		return err
	}
	return solveBandedSlices(s, ab, b, x, false)
}

// solveBandedSlices solves the batch of ab and b into x (which may be b)
// by gbsv, in parallel over the systems; the failed systems, with NaN
// solutions, are reported in a *tridiag.BatchError. scan checks each
// system for NaN and Inf first and fails the ones that hold one at its
// row (bandsolve_solve_banded_device's semantics); without it the input
// must have been checked.
func solveBandedSlices[T tridiag.Float](s bandShape, ab, b, x []T, scan bool) error {
	rows := s.kl + s.ku + 1
	return eachSystem(s, b, x, func() systemSolver[T] {
		return func(sys int, bs []T) (func([]T), int, int, error) {
			m := &banded.General[T]{N: s.n, KL: s.kl, KU: s.ku, Data: ab[sys*rows*s.n : (sys+1)*rows*s.n]}
			if scan {
				if row, c, err := scanSystem(s, sys, m.Data, bs); err != nil {
					return nil, row, c, err
				}
			}
			lu, err := banded.FactorPivotGeneral(m)
			if err != nil {
				row, c := rowCol(err)
				return nil, row, c, err
			}
			return func(col []T) { lu.SolveMulti(col, s.nrhs) }, -1, -1, nil
		}
	})
}

// systemSolver factors system sys of a batch (bs: its right-hand sides,
// for a scan) and returns the solve of its column-major right-hand sides
// in place, or the row and column of its failure (−1 where none applies)
// and the error.
type systemSolver[T tridiag.Float] func(sys int, bs []T) (solve func(col []T), row, col int, err error)

// eachSystem solves the systems of the batch, b into x (which may be b;
// nrhs a row, one system after the other), in parallel over the systems,
// each worker with its own solver from worker. The failed systems, with
// NaN solutions, are reported in a *tridiag.BatchError.
func eachSystem[T tridiag.Float](s bandShape, b, x []T, worker func() systemSolver[T]) error {
	workers := min(runtime.GOMAXPROCS(0), s.g)
	var (
		next   atomic.Int64
		mu     sync.Mutex
		failed []tridiag.SystemError
		wg     sync.WaitGroup
	)
	nan := T(math.NaN())
	for range workers {
		wg.Go(func() {
			solver := worker()
			col := make([]T, s.n*s.nrhs) // column-major right-hand sides
			for {
				sys := int(next.Add(1) - 1)
				if sys >= s.g {
					return
				}
				bs := b[sys*s.n*s.nrhs : (sys+1)*s.n*s.nrhs]
				xs := x[sys*s.n*s.nrhs : (sys+1)*s.n*s.nrhs]
				solve, row, c, err := solver(sys, bs)
				if err != nil {
					mu.Lock()
					failed = append(failed, tridiag.SystemError{System: sys, Row: row, Col: c, Err: err})
					mu.Unlock()
					for i := range xs {
						xs[i] = nan
					}
					continue
				}
				for i := range s.n {
					for r := range s.nrhs {
						col[r*s.n+i] = bs[i*s.nrhs+r]
					}
				}
				solve(col)
				for i := range s.n {
					for r := range s.nrhs {
						xs[i*s.nrhs+r] = col[r*s.n+i]
					}
				}
			}
		})
	}
	wg.Wait()
	if len(failed) == 0 {
		return nil
	}
	sortSystems(failed)
	return &tridiag.BatchError{G: s.g, Failed: failed}
}

// rowCol is the row and column of a factorization's *banded.RowError, or
// −1, −1.
func rowCol(err error) (int, int) {
	var re *banded.RowError
	if errors.As(err, &re) {
		return re.Row, re.Col
	}
	return -1, -1
}

// sortSystems orders failures by system index (insertion sort: few).
func sortSystems(f []tridiag.SystemError) {
	for i := 1; i < len(f); i++ {
		for j := i; j > 0 && f[j].System < f[j-1].System; j-- {
			f[j], f[j-1] = f[j-1], f[j]
		}
	}
}

// scanBanded finds the first NaN or ±Inf of the matrices (inside the
// band) and right-hand sides.
func scanBanded[T tridiag.Float](s bandShape, ab, b []T) error {
	rows := s.kl + s.ku + 1
	for sys := range s.g {
		if _, _, err := scanSystem(s, sys, ab[sys*rows*s.n:(sys+1)*rows*s.n], b[sys*s.n*s.nrhs:(sys+1)*s.n*s.nrhs]); err != nil {
			return err
		}
	}
	return nil
}

// scanSystem finds the first NaN or ±Inf of system sys's matrix m
// (inside the band) and right-hand sides bs, and returns its row and
// column (of the matrix, or of b) with an error wrapping
// banded.ErrNonFinite.
func scanSystem[T tridiag.Float](s bandShape, sys int, m, bs []T) (row, col int, err error) {
	for r := range s.kl + s.ku + 1 {
		d := r - s.ku // i − j
		for j := max(0, -d); j < min(s.n, s.n-d); j++ {
			if v := float64(m[r*s.n+j]); math.IsNaN(v) || math.IsInf(v, 0) {
				return j + d, j, fmt.Errorf("%w: ab of system %d, row %d, column %d (ab[%d][%d]) is %v", banded.ErrNonFinite, sys, j+d, j, r, j, v)
			}
		}
	}
	return scanRHS(sys, s.nrhs, bs)
}

// scanRHS finds the first NaN or ±Inf of system sys's right-hand sides bs
// (nrhs a row), as scanSystem.
func scanRHS[T tridiag.Float](sys, nrhs int, bs []T) (row, col int, err error) {
	for k, v := range bs {
		if f := float64(v); math.IsNaN(f) || math.IsInf(f, 0) {
			return k / nrhs, -1, fmt.Errorf("%w: b of system %d, row %d, column %d is %v", banded.ErrNonFinite, sys, k/nrhs, k%nrhs, f)
		}
	}
	return -1, -1, nil
}

//export bandsolve_solveh_banded
func bandsolve_solveh_banded(precision C.int, n, u C.int64_t, lower C.int, g, nrhs C.int64_t, ab, b, x unsafe.Pointer, info *C.int32_t) (st C.int) {
	const fn = "bandsolve_solveh_banded"
	var ng int
	defer guard(fn, &st, info, &ng)
	sh, err := bandCall(n, u, u, g, nrhs, &ng, "NULL", ab == nil, b == nil, x == nil)
	if err != nil {
		return finish(fn, err, info, ng)
	}
	switch precision {
	case precF32:
		err = solvehBanded[float32](sh, lower != 0, ab, b, x)
	case precF64:
		err = solvehBanded[float64](sh, lower != 0, ab, b, x)
	default:
		err = errPrecision(precision)
	}
	return finish(fn, err, info, ng)
}

// solvehBanded solves every system of the batch, symmetric positive
// definite bands of u sub- and super-diagonals in SciPy's solveh_banded
// storage (u+1 rows: the upper form, or the lower), by banded Cholesky
// (pbsv), in parallel over the systems. Non-finite input in the stored
// triangle or b fails the whole call (naming the first system, row and
// column); systems that are not positive definite are reported in a
// *tridiag.BatchError at the row of the failing pivot, with NaN solutions.
func solvehBanded[T tridiag.Float](s bandShape, lower bool, abp, bp, xp unsafe.Pointer) error {
	k, rows := s.kl, s.kl+1
	ab := unsafe.Slice((*T)(abp), rows*s.n*s.g)
	b := unsafe.Slice((*T)(bp), s.n*s.nrhs*s.g)
	x := unsafe.Slice((*T)(xp), s.n*s.nrhs*s.g)
	// at is the index in system sys's rows of a[j+t][j], t = 0 … k.
	at := func(t, j int) int {
		if lower {
			return t*s.n + j // ab[i−j][j] = a[i][j]
		}
		return (k-t)*s.n + j + t // ab[u+i−j][j] = a[i][j], i ≤ j, read as a[j][j+t]
	}
	for sys := range s.g {
		m := ab[sys*rows*s.n : (sys+1)*rows*s.n]
		for t := 0; t <= k; t++ {
			for j := 0; j+t < s.n; j++ {
				if v := float64(m[at(t, j)]); math.IsNaN(v) || math.IsInf(v, 0) {
					i, c := j+t, j
					if !lower {
						i, c = j, j+t
					}
					return fmt.Errorf("%w: ab of system %d, row %d, column %d is %v", banded.ErrNonFinite, sys, i, c, v)
				}
			}
		}
		if _, _, err := scanRHS(sys, s.nrhs, b[sys*s.n*s.nrhs:(sys+1)*s.n*s.nrhs]); err != nil {
			return err
		}
	}
	return eachSystem(s, b, x, func() systemSolver[T] {
		band := &banded.Band[T]{N: s.n, K: k, Data: make([]T, (2*k+1)*s.n)}
		return func(sys int, _ []T) (func([]T), int, int, error) {
			m := ab[sys*rows*s.n : (sys+1)*rows*s.n]
			for t := 0; t <= k; t++ {
				for j := 0; j+t < s.n; j++ {
					band.Data[(k+t)*s.n+j] = m[at(t, j)]
				}
			}
			f, err := banded.FactorCholesky(band)
			if err != nil {
				row, c := rowCol(err)
				return nil, row, c, err
			}
			return func(col []T) { f.SolveMulti(col, s.nrhs) }, -1, -1, nil
		}
	})
}
