//go:build cuda

package bench

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdint.h>
#include <stddef.h>
#include <stdlib.h>

// cuSPARSE's batched pentadiagonal solver, from the public API:
// cusparse<t>gpsvInterleavedBatch_bufferSizeExt(handle, algo, m, ds, dl, d,
// du, dw, x, batchCount, &size) and cusparse<t>gpsvInterleavedBatch(handle,
// algo, m, ds, dl, d, du, dw, x, batchCount, buffer).
#define GPSV_TRAMPOLINES(T, P) \
typedef int (*gpsv_##P##_size_t)(void *, int, int, const T *, const T *, const T *, const T *, const T *, const T *, int, size_t *); \
typedef int (*gpsv_##P##_t)(void *, int, int, T *, T *, T *, T *, T *, T *, int, void *); \
static int gpsv_##P##_size(void *f, void *h, int algo, int m, uintptr_t ds, uintptr_t dl, uintptr_t d, uintptr_t du, uintptr_t dw, uintptr_t x, int batch, size_t *size) { \
	return ((gpsv_##P##_size_t)f)(h, algo, m, (const T *)ds, (const T *)dl, (const T *)d, (const T *)du, (const T *)dw, (const T *)x, batch, size); } \
static int gpsv_##P(void *f, void *h, int algo, int m, uintptr_t ds, uintptr_t dl, uintptr_t d, uintptr_t du, uintptr_t dw, uintptr_t x, int batch, uintptr_t buf) { \
	return ((gpsv_##P##_t)f)(h, algo, m, (T *)ds, (T *)dl, (T *)d, (T *)du, (T *)dw, (T *)x, batch, (void *)buf); }

GPSV_TRAMPOLINES(float, s)
GPSV_TRAMPOLINES(double, d)

static int gpsv_size(int f64, void *f, void *h, int algo, int m, uintptr_t ds, uintptr_t dl, uintptr_t d, uintptr_t du, uintptr_t dw, uintptr_t x, int batch, size_t *size) {
	return f64 ? gpsv_d_size(f, h, algo, m, ds, dl, d, du, dw, x, batch, size) : gpsv_s_size(f, h, algo, m, ds, dl, d, du, dw, x, batch, size);
}
static int gpsv_solve(int f64, void *f, void *h, int algo, int m, uintptr_t ds, uintptr_t dl, uintptr_t d, uintptr_t du, uintptr_t dw, uintptr_t x, int batch, uintptr_t buf) {
	return f64 ? gpsv_d(f, h, algo, m, ds, dl, d, du, dw, x, batch, buf) : gpsv_s(f, h, algo, m, ds, dl, d, du, dw, x, batch, buf);
}
static void *gpsv_sym(void *h, const char *name) { return dlsym(h, name); }
*/
import "C"

import (
	"fmt"
	"time"
	"unsafe"

	"gorgonia.org/cu"

	"github.com/bandsolve/bandsolve/cuda"
)

// gpsvCall is one cuSPARSE gpsvInterleavedBatch solve (algorithm 0, the
// only one): the five diagonals indexed by row (ds[i] = a_{i,i−2}, dl[i] =
// a_{i,i−1}, d, du[i] = a_{i,i+1}, dw[i] = a_{i,i+2}), each m·batch
// elements interleaved (row i of system g at i·batch + g), and x, the
// right-hand sides on entry and the solutions on return. cuSPARSE may
// overwrite the diagonals too, so timed calls restore all six arrays.
type gpsvCall struct {
	f64                  bool
	ds, dl, d, du, dw, x cu.DevicePtr
	m, batch             int
}

// gpsvFns resolves the gpsv entry points of the loaded library (they are
// not in cusparseRequired: a library without them still serves the
// tridiagonal peers).
func (p *cusparsePeer) gpsvFns(f64 bool) (size, solve unsafe.Pointer, err error) {
	pre := "cusparseS"
	if f64 {
		pre = "cusparseD"
	}
	for _, name := range []string{pre + "gpsvInterleavedBatch_bufferSizeExt", pre + "gpsvInterleavedBatch"} {
		f := p.lib.fn[name]
		if f == nil {
			cname := C.CString(name)
			f = C.gpsv_sym(p.lib.h, cname)
			C.free(unsafe.Pointer(cname))
			if f == nil {
				return nil, nil, fmt.Errorf("%s: no %s", p.lib.path, name)
			}
			p.lib.fn[name] = f
		}
		if size == nil {
			size = f
		} else {
			solve = f
		}
	}
	return size, solve, nil
}

func (c *gpsvCall) args() (C.int, C.int, C.uintptr_t, C.uintptr_t, C.uintptr_t, C.uintptr_t, C.uintptr_t, C.uintptr_t, C.int) {
	return cbool(c.f64), C.int(c.m), cptr(c.ds), cptr(c.dl), cptr(c.d), cptr(c.du), cptr(c.dw), cptr(c.x), C.int(c.batch)
}

// gpsvTime runs the call warmup times untimed and reps times between CUDA
// events on the peer's stream, with the restores before each call outside
// the timed region (device thread inside).
func (p *cusparsePeer) gpsvTime(c *gpsvCall, restores []devCopy, warmup, reps int) ([]time.Duration, error) {
	fsize, fsolve, err := p.gpsvFns(c.f64)
	if err != nil {
		return nil, err
	}
	name := "gpsvInterleavedBatch"
	var times []time.Duration
	err = p.dev.Do(func() error {
		f64, m, ds, dl, d, du, dw, x, batch := c.args()
		var size C.size_t
		if err := p.lib.status(name+"_bufferSizeExt", C.gpsv_size(f64, fsize, p.handle, 0, m, ds, dl, d, du, dw, x, batch, &size)); err != nil {
			return err
		}
		buf, err := cu.MemAlloc(max(int64(size), 256))
		if err != nil {
			return fmt.Errorf("allocating the %d B cuSPARSE buffer: %w", size, err)
		}
		defer func() { _ = cu.MemFree(buf) }()
		restore := func() error {
			for _, r := range restores {
				if err := cu.MemcpyDtoDAsync(r.dst, r.src, r.bytes, p.stream); err != nil {
					return fmt.Errorf("restoring the input: %w", err)
				}
			}
			return nil
		}
		solve := func() error {
			return p.lib.status(name, C.gpsv_solve(f64, fsolve, p.handle, 0, m, ds, dl, d, du, dw, x, batch, C.uintptr_t(buf)))
		}
		var err2 error
		if times, err2 = cuda.TimeEvents(p.stream, warmup, reps, restore, solve, nil); err2 != nil {
			return fmt.Errorf("cuSPARSE %s: %w", name, err2)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return times, nil
}
