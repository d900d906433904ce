//go:build cudaemu

// splineemu runs the spline kernels of ptx/src/spline.cuh on the CPU,
// compiled as host C++ (emu.h stands in for CUDA), every thread of the
// grid in turn, so that they can be checked against package spline bit
// for bit without a GPU. It needs cgo and a C++17 compiler:
//
//	go test -tags cudaemu ./internal/splineemu
package splineemu

/*
#cgo CXXFLAGS: -std=c++17 -O2 -I${SRCDIR} -I${SRCDIR}/../../ptx/src
#include "emu_api.h"
*/
import "C"

import (
	"unsafe"

	"github.com/bandsolve/bandsolve/tridiag"
)

// Block is the block size of spline_integrate (SPLINE_BLOCK).
const Block = 256

// Eval is one launch of spline_eval: the grid gx × gy blocks of bd
// threads, the arguments as the kernel's (nil outputs are not computed);
// flags must hold count+1 words.
type Eval[T tridiag.Float] struct {
	GX, GY, BD            int
	X, Y, M, T            []T
	XS, TS                int64
	N, Count, P, Periodic int
	CPK                   int
	Val, Der, Der2        []T
	Flags                 []uint32
}

func ptr[T tridiag.Float](s []T) unsafe.Pointer {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Pointer(&s[0])
}

// Run runs the launch.
func (e *Eval[T]) Run() {
	fl := (*C.uint)(unsafe.Pointer(&e.Flags[0]))
	if _, ok := any(e.X).([]float32); ok {
		f := func(s []T) *C.float { return (*C.float)(ptr(s)) }
		C.emu_spline_eval_f32(C.uint(e.GX), C.uint(e.GY), C.uint(e.BD), f(e.X), C.longlong(e.XS), f(e.Y), f(e.M), f(e.T), C.longlong(e.TS),
			C.int(e.N), C.int(e.Count), C.int(e.P), C.int(e.Periodic), C.int(e.CPK), f(e.Val), f(e.Der), f(e.Der2), fl)
		return
	}
	d := func(s []T) *C.double { return (*C.double)(ptr(s)) }
	C.emu_spline_eval_f64(C.uint(e.GX), C.uint(e.GY), C.uint(e.BD), d(e.X), C.longlong(e.XS), d(e.Y), d(e.M), d(e.T), C.longlong(e.TS),
		C.int(e.N), C.int(e.Count), C.int(e.P), C.int(e.Periodic), C.int(e.CPK), d(e.Val), d(e.Der), d(e.Der2), fl)
}

// Integrate is one launch of spline_integrate over gx blocks.
type Integrate[T tridiag.Float] struct {
	GX                 int
	X, Y, M            []T
	XS                 int64
	N, Count, Periodic int
	Lo, Hi             []T
	BS                 int64
	Out                []T
	Flags              []uint32
}

// Run runs the launch.
func (e *Integrate[T]) Run() {
	fl := (*C.uint)(unsafe.Pointer(&e.Flags[0]))
	if _, ok := any(e.X).([]float32); ok {
		f := func(s []T) *C.float { return (*C.float)(ptr(s)) }
		C.emu_spline_integrate_f32(C.uint(e.GX), f(e.X), C.longlong(e.XS), f(e.Y), f(e.M), C.int(e.N), C.int(e.Count),
			C.int(e.Periodic), f(e.Lo), f(e.Hi), C.longlong(e.BS), f(e.Out), fl)
		return
	}
	d := func(s []T) *C.double { return (*C.double)(ptr(s)) }
	C.emu_spline_integrate_f64(C.uint(e.GX), d(e.X), C.longlong(e.XS), d(e.Y), d(e.M), C.int(e.N), C.int(e.Count),
		C.int(e.Periodic), d(e.Lo), d(e.Hi), C.longlong(e.BS), d(e.Out), fl)
}

// FitKnots is one launch of spline_fit_knots over gx blocks of bd
// threads: info must hold two words, h one value.
type FitKnots[T tridiag.Float] struct {
	GX, BD int
	X      []T
	N      int
	Info   []uint32
	H      []T
}

// Run runs the launch.
func (e *FitKnots[T]) Run() {
	info := (*C.uint)(unsafe.Pointer(&e.Info[0]))
	if _, ok := any(e.X).([]float32); ok {
		f := func(s []T) *C.float { return (*C.float)(ptr(s)) }
		C.emu_spline_fit_knots_f32(C.uint(e.GX), C.uint(e.BD), f(e.X), C.int(e.N), info, f(e.H))
		return
	}
	d := func(s []T) *C.double { return (*C.double)(ptr(s)) }
	C.emu_spline_fit_knots_f64(C.uint(e.GX), C.uint(e.BD), d(e.X), C.int(e.N), info, d(e.H))
}

// FitRows is one launch of spline_fit_rows over gx blocks (of one
// thread: see emu.h): nil A, B, C are not written; flags must hold
// count+1 words.
type FitRows[T tridiag.Float] struct {
	GX             int
	X, Y           []T
	XS             int64
	N, Count, Kind int
	D0, DN         []T
	SS             int64
	A, B, C, D     []T
	Flags          []uint32
}

// Run runs the launch.
func (e *FitRows[T]) Run() {
	fl := (*C.uint)(unsafe.Pointer(&e.Flags[0]))
	if _, ok := any(e.X).([]float32); ok {
		f := func(s []T) *C.float { return (*C.float)(ptr(s)) }
		C.emu_spline_fit_rows_f32(C.uint(e.GX), f(e.X), C.longlong(e.XS), f(e.Y), C.int(e.N), C.int(e.Count), C.int(e.Kind),
			f(e.D0), f(e.DN), C.longlong(e.SS), f(e.A), f(e.B), f(e.C), f(e.D), fl)
		return
	}
	d := func(s []T) *C.double { return (*C.double)(ptr(s)) }
	C.emu_spline_fit_rows_f64(C.uint(e.GX), d(e.X), C.longlong(e.XS), d(e.Y), C.int(e.N), C.int(e.Count), C.int(e.Kind),
		d(e.D0), d(e.DN), C.longlong(e.SS), d(e.A), d(e.B), d(e.C), d(e.D), fl)
}

// FitWrap is one launch of spline_fit_wrap over gx blocks of bd threads.
type FitWrap[T tridiag.Float] struct {
	GX, BD   int
	M        []T
	N, Count int
}

// Run runs the launch.
func (e *FitWrap[T]) Run() {
	if _, ok := any(e.M).([]float32); ok {
		C.emu_spline_fit_wrap_f32(C.uint(e.GX), C.uint(e.BD), (*C.float)(ptr(e.M)), C.int(e.N), C.int(e.Count))
		return
	}
	C.emu_spline_fit_wrap_f64(C.uint(e.GX), C.uint(e.BD), (*C.double)(ptr(e.M)), C.int(e.N), C.int(e.Count))
}
