//go:build cudaemu

package complexemu

/*
#include "band_api.h"
*/
import "C"

import (
	"fmt"
	"unsafe"

	"github.com/bandsolve/bandsolve/banded"
)

// BandPivot runs the complex pivoting band batch kernel
// band_batch_cpivot_<S>_k<K> (ptx/src/band_cpivot.cuh) on the CPU: it
// solves the batch b for the right-hand sides rhs (in b's layout) into x,
// which may be rhs, with a workspace of its own whose batch stride is G
// rounded up to a warp, as bandedgpu.BatchPlan launches it; checkX is the
// kernel's flag BAND_CHECK_X. It returns the status array: G rows+1, G
// kinds, G columns+1, G unused words and the flag word.
func BandPivot[T banded.Complex](b *banded.Batch[T], rhs, x []T, checkX bool) ([]int32, error) {
	if err := b.Check(); err != nil {
		return nil, err
	}
	n, k, g := b.N, b.K, b.G
	if len(rhs) != n*g || len(x) != n*g {
		return nil, fmt.Errorf("complexemu: len(rhs)=%d, len(x)=%d, want N·G=%d", len(rhs), len(x), n*g)
	}
	gp := (g + 31) / 32 * 32
	work := make([]T, (3*k+1)*n*gp)
	piv := make([]int32, n*gp)
	status := make([]int32, 4*g+1)
	var aes, abs, des, dbs int64 = 1, int64((2*k + 1) * n), 1, int64(n)
	if b.Layout == banded.Interleaved {
		aes, abs, des, dbs = int64(g), 1, int64(g), 1
	}
	_, c64 := any(*new(T)).(complex64)
	flags := 0
	if checkX {
		flags = 1
	}
	f64 := 1
	if c64 {
		f64 = 0
	}
	if rc := C.emu_band_cpivot(C.int(f64), C.int(k), ptr(b.Data), ptr(rhs), ptr(x), ptr(work),
		(*C.int)(unsafe.Pointer(&piv[0])), C.int(n), C.int(g), C.int(gp),
		C.longlong(aes), C.longlong(abs), C.longlong(des), C.longlong(dbs), C.int(flags),
		(*C.int)(unsafe.Pointer(&status[0]))); rc != 0 {
		return nil, fmt.Errorf("complexemu: no band_batch_cpivot kernel for K=%d", k)
	}
	return status, nil
}
