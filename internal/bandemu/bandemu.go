//go:build cudaemu

// bandemu runs bandsolve's banded CUDA kernels (ptx/src/band_*.cuh), and
// the tridiagonal module's layout kernels (ptx/src/transpose.cuh), on the
// CPU, compiled as host C++ with a fiber-based emulation of CUDA
// blocks (emu.h), so that their logic can be tested against package
// banded without a GPU. It needs cgo and a C++17 compiler and builds only
// with the cudaemu tag:
//
//	go test -tags cudaemu ./internal/bandemu
//
// emu.cc turns off floating-point contraction, as the PTX uses -fmad=false, so
// the emulated kernels round every operation as the GPU does.
package bandemu

/*
#cgo CXXFLAGS: -std=c++17 -O2 -DBAND_EMU -I${SRCDIR} -I${SRCDIR}/../../ptx/src
#include <stdint.h>
typedef long long i64;
int emu_band_batch_f32(int K, const float *a, const float *d, float *x, float *w, int n, int G, int Gp, i64 aes, i64 abs_, i64 des, i64 dbs, double tol, int flags, int *status, int threads);
int emu_band_batch_f64(int K, const double *a, const double *d, double *x, double *w, int n, int G, int Gp, i64 aes, i64 abs_, i64 des, i64 dbs, double tol, int flags, int *status, int threads);
int emu_band_batch_variant_f32(int v, const float *a, const float *d, float *x, float *w, int n, int G, int Gp, i64 aes, i64 abs_, i64 des, i64 dbs, double tol, int flags, int *status, int threads);
int emu_band_batch_variant_f64(int v, const double *a, const double *d, double *x, double *w, int n, int G, int Gp, i64 aes, i64 abs_, i64 des, i64 dbs, double tol, int flags, int *status, int threads);
void emu_band_factor_window_f32(float *a, int n, int K, const int *bounds, int P, int ul, double tol, int *status, int threads);
void emu_band_factor_window_f64(double *a, int n, int K, const int *bounds, int P, int ul, double tol, int *status, int threads);
void emu_band_solve_window_f32(const float *a, int n, int K, const int *bounds, int P, int ul, float *b, int nrhs, i64 ldb, int sweeps, int cpb);
void emu_band_solve_window_f64(const double *a, int n, int K, const int *bounds, int P, int ul, double *b, int nrhs, i64 ldb, int sweeps, int cpb);
void emu_layout_f32(int gather, const float *i0, const float *i1, const float *i2, const float *i3, float *o0, float *o1, float *o2, float *o3, int count, int n, int G, i64 es, i64 bs, int grid);
void emu_layout_f64(int gather, const double *i0, const double *i1, const double *i2, const double *i3, double *o0, double *o1, double *o2, double *o3, int count, int n, int G, i64 es, i64 bs, int grid);
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// Float is float32 or float64.
type Float interface{ float32 | float64 }

func is64[T Float]() bool {
	var z T
	_, ok := any(z).(float64)
	return ok
}

func ptr[T any](s []T) unsafe.Pointer {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Pointer(&s[0])
}

// Batch describes a batched launch: G systems of order N, half-bandwidth K,
// strides as the kernel takes them (see band_batch.cuh).
type Batch struct {
	N, K, G            int
	AES, ABS, DES, DBS int64
	Tol                float64
	Flags              int
	Variant            int // > 0: the K = 2 kernel of that prefetch depth (_d<Variant>); ≤ 0: the K kernel
	Threads            int // threads per block (multiple of 32)
}

// Pad returns G rounded up to a multiple of 32 (the workspace's batch
// stride).
func Pad(g int) int { return (g + 31) / 32 * 32 }

// SolveBatch runs the batched kernel; status must hold 4G+1 zeros, work
// (K+1)·N·Pad(G) elements.
func SolveBatch[T Float](b Batch, a, d, x, work []T, status []int32) error {
	gp := Pad(b.G)
	th := b.Threads
	if th == 0 {
		th = 32
	}
	for gp%th != 0 {
		gp += 32
	}
	if len(work) < (b.K+1)*b.N*gp || len(status) < 4*b.G+1 {
		return fmt.Errorf("bandemu: workspace or status too small")
	}
	var r C.int
	args := func() (C.int, C.int, C.int, C.i64, C.i64, C.i64, C.i64, C.double, C.int, *C.int, C.int) {
		return C.int(b.N), C.int(b.G), C.int(gp), C.i64(b.AES), C.i64(b.ABS), C.i64(b.DES), C.i64(b.DBS),
			C.double(b.Tol), C.int(b.Flags), (*C.int)(ptr(status)), C.int(th)
	}
	n, g, gpc, aes, abs, des, dbs, tol, flags, st, thc := args()
	if is64[T]() {
		pa, pd, px, pw := (*C.double)(ptr(a)), (*C.double)(ptr(d)), (*C.double)(ptr(x)), (*C.double)(ptr(work))
		if b.Variant > 0 {
			r = C.emu_band_batch_variant_f64(C.int(b.Variant), pa, pd, px, pw, n, g, gpc, aes, abs, des, dbs, tol, flags, st, thc)
		} else {
			r = C.emu_band_batch_f64(C.int(b.K), pa, pd, px, pw, n, g, gpc, aes, abs, des, dbs, tol, flags, st, thc)
		}
	} else {
		pa, pd, px, pw := (*C.float)(ptr(a)), (*C.float)(ptr(d)), (*C.float)(ptr(x)), (*C.float)(ptr(work))
		if b.Variant > 0 {
			r = C.emu_band_batch_variant_f32(C.int(b.Variant), pa, pd, px, pw, n, g, gpc, aes, abs, des, dbs, tol, flags, st, thc)
		} else {
			r = C.emu_band_batch_f32(C.int(b.K), pa, pd, px, pw, n, g, gpc, aes, abs, des, dbs, tol, flags, st, thc)
		}
	}
	if r != 0 {
		return fmt.Errorf("bandemu: no kernel for K=%d variant %d", b.K, b.Variant)
	}
	return nil
}

// FactorWindow runs the window-sliding factorization of the partitions
// [bounds[p], bounds[p+1]) of the band a (order n, half-bandwidth k) in
// place; status must hold 4P+1 zeros.
func FactorWindow[T Float](a []T, n, k int, bounds []int32, ul bool, tol float64, status []int32, threads int) {
	P := len(bounds) - 1
	u := C.int(0)
	if ul {
		u = 1
	}
	if is64[T]() {
		C.emu_band_factor_window_f64((*C.double)(ptr(a)), C.int(n), C.int(k), (*C.int)(ptr(bounds)), C.int(P), u, C.double(tol), (*C.int)(ptr(status)), C.int(threads))
	} else {
		C.emu_band_factor_window_f32((*C.float)(ptr(a)), C.int(n), C.int(k), (*C.int)(ptr(bounds)), C.int(P), u, C.double(tol), (*C.int)(ptr(status)), C.int(threads))
	}
}

// SolveWindow runs the sweeps (bit 0 forward, bit 1 backward) with the
// factors in a for nrhs right-hand sides b (column c at b[c·ldb:]), cpb
// columns per block.
func SolveWindow[T Float](a []T, n, k int, bounds []int32, ul bool, b []T, nrhs, ldb, sweeps, cpb int) {
	P := len(bounds) - 1
	u := C.int(0)
	if ul {
		u = 1
	}
	if is64[T]() {
		C.emu_band_solve_window_f64((*C.double)(ptr(a)), C.int(n), C.int(k), (*C.int)(ptr(bounds)), C.int(P), u, (*C.double)(ptr(b)), C.int(nrhs), C.i64(ldb), C.int(sweeps), C.int(cpb))
	} else {
		C.emu_band_solve_window_f32((*C.float)(ptr(a)), C.int(n), C.int(k), (*C.int)(ptr(bounds)), C.int(P), u, (*C.float)(ptr(b)), C.int(nrhs), C.i64(ldb), C.int(sweeps), C.int(cpb))
	}
}

// Layout runs the tridiagonal module's layout kernels (ptx/src/transpose.cuh,
// launched by internal/gpu/tridiaggpu/transpose.go) over len(in) ≤ 4 arrays with grid blocks:
// gather copies row i of system g from in[k][i·es + g·bs] to
// out[k][g·n + i], scatter the other way.
func Layout[T Float](gather bool, in, out [][]T, n, g int, es, bs int64, grid int) error {
	if len(in) == 0 || len(in) > 4 || len(out) != len(in) {
		return fmt.Errorf("bandemu: layout of %d arrays into %d (1 to 4)", len(in), len(out))
	}
	var ip, op [4]unsafe.Pointer
	for k := range in {
		ip[k], op[k] = ptr(in[k]), ptr(out[k])
	}
	gt := C.int(0)
	if gather {
		gt = 1
	}
	cnt, nc, gc, esc, bsc, grc := C.int(len(in)), C.int(n), C.int(g), C.i64(es), C.i64(bs), C.int(grid)
	if is64[T]() {
		f := func(p unsafe.Pointer) *C.double { return (*C.double)(p) }
		C.emu_layout_f64(gt, f(ip[0]), f(ip[1]), f(ip[2]), f(ip[3]), f(op[0]), f(op[1]), f(op[2]), f(op[3]), cnt, nc, gc, esc, bsc, grc)
	} else {
		f := func(p unsafe.Pointer) *C.float { return (*C.float)(p) }
		C.emu_layout_f32(gt, f(ip[0]), f(ip[1]), f(ip[2]), f(ip[3]), f(op[0]), f(op[1]), f(op[2]), f(op[3]), cnt, nc, gc, esc, bsc, grc)
	}
	return nil
}
