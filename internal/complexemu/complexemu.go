//go:build cudaemu

// complexemu runs the complex tridiagonal kernels of ptx/src/complex.cuh
// on the CPU, compiled as host C++ (emu.h stands in for CUDA), every
// thread of the grid in turn, so that they can be checked against package
// tridiag bit for bit without a GPU. It needs cgo and a C++17 compiler:
//
//	bash scripts/test-complexemu.sh
package complexemu

/*
#cgo CXXFLAGS: -std=c++17 -O2 -I${SRCDIR} -I${SRCDIR}/../../ptx/src
#include "emu_api.h"
*/
import "C"

import (
	"unsafe"

	"github.com/bandsolve/bandsolve/tridiag"
)

// Launch is one launch of a complex kernel: complex_thomas (Algorithm
// Thomas), complex_gtsv (GTSV) or complex_auto (Auto) on the batch of
// Shape, with the arguments as the kernel's.
type Launch[T tridiag.Complex] struct {
	Algorithm  tridiag.Algorithm
	Shape      tridiag.Shape
	A, B, C    []T // nil when Constant
	CA, CB, CC T
	Constant   bool
	Bounded    bool // Auto's growth test
	Cyclic     bool
	D, X       []T // X may be D
}

func ptr[T any](s []T) unsafe.Pointer {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Pointer(&s[0])
}

func flag(b bool) C.int {
	if b {
		return 1
	}
	return 0
}

// Run runs the launch with a workspace of its own and returns the status
// array: G codes (row+1 of a failed system, else 0) and the flag.
func (l *Launch[T]) Run() []int32 {
	n, g := l.Shape.N, l.Shape.G
	work := make([]T, 4*n*g)
	status := make([]int32, g+1)
	alg := 2
	switch l.Algorithm {
	case tridiag.Thomas:
		alg = 0
	case tridiag.GTSV:
		alg = 1
	}
	_, c64 := any(l.CA).(complex64)
	parts := func(v T) *C.double {
		z := complex128(v)
		p := []float64{real(z), imag(z)}
		return (*C.double)(unsafe.Pointer(&p[0]))
	}
	sh := l.Shape.Normalize()
	C.emu_complex_solve(C.int(alg), flag(!c64), ptr(l.A), ptr(l.B), ptr(l.C), ptr(l.D), ptr(l.X), ptr(work),
		C.int(n), C.int(g), C.longlong(sh.Layout.ElemStride), C.longlong(sh.Layout.BatchStride),
		parts(l.CA), parts(l.CB), parts(l.CC), flag(l.Constant), flag(l.Bounded), flag(l.Cyclic),
		(*C.int)(unsafe.Pointer(&status[0])))
	return status
}

// PartitionLaunch is one launch of the complex partition kernel
// (cpart_p16, ptx/src/cpart.cuh) on the batch of Shape with Systems
// systems a block, a thread a chunk of 16 rows: Partition's kernel, and
// Auto's with Bounded and Redo.
type PartitionLaunch[T tridiag.Complex] struct {
	Shape      tridiag.Shape
	Systems    int // systems a block (spb ≥ 1)
	A, B, C    []T // nil when Constant
	CA, CB, CC T
	Constant   bool
	Bounded    bool // the growth test
	Redo       bool // flag failed systems in the redo array instead of status
	D, X       []T  // X may be D
}

// Run runs the launch and returns the status array (G codes, row+1 of a
// failed system, and the flag) and the redo flags (nil unless Redo).
func (l *PartitionLaunch[T]) Run() (status, redo []int32) {
	sh := l.Shape.Normalize()
	status = make([]int32, sh.G+1)
	var rp *C.int
	if l.Redo {
		redo = make([]int32, sh.G)
		rp = (*C.int)(unsafe.Pointer(&redo[0]))
	}
	_, c64 := any(l.CA).(complex64)
	parts := func(v T) *C.double {
		z := complex128(v)
		p := []float64{real(z), imag(z)}
		return (*C.double)(unsafe.Pointer(&p[0]))
	}
	C.emu_cpart_solve(flag(!c64), ptr(l.A), ptr(l.B), ptr(l.C), ptr(l.D), ptr(l.X), C.int(sh.N), C.int(sh.G),
		C.longlong(sh.Layout.ElemStride), C.longlong(sh.Layout.BatchStride), parts(l.CA), parts(l.CB), parts(l.CC),
		flag(l.Constant), flag(l.Bounded), rp, (*C.int)(unsafe.Pointer(&status[0])), C.int(l.Systems))
	return status, redo
}
