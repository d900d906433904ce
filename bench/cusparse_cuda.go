//go:build cuda

package bench

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <stddef.h>

// Function-pointer types of the cuSPARSE entry points used here, from the
// public API (cusparseStatus_t is an int-sized enum; handles and streams
// are pointers). Device pointers travel from Go as uintptr_t.
typedef int (*cs_create_t)(void **handle);
typedef int (*cs_destroy_t)(void *handle);
typedef int (*cs_set_stream_t)(void *handle, void *stream);
typedef int (*cs_get_version_t)(void *handle, int *version);
typedef const char *(*cs_error_name_t)(int status);

static int cs_create(void *f, void **handle) { return ((cs_create_t)f)(handle); }
static int cs_destroy(void *f, void *handle) { return ((cs_destroy_t)f)(handle); }
static int cs_set_stream(void *f, void *handle, void *stream) { return ((cs_set_stream_t)f)(handle, stream); }
static int cs_get_version(void *f, void *handle, int *version) { return ((cs_get_version_t)f)(handle, version); }
static const char *cs_error_name(void *f, int status) { return ((cs_error_name_t)f)(status); }

#define CS_TRAMPOLINES(T, P) \
typedef int (*cs_##P##_sb_size_t)(void *, int, const T *, const T *, const T *, const T *, int, int, size_t *); \
typedef int (*cs_##P##_sb_t)(void *, int, const T *, const T *, const T *, T *, int, int, void *); \
typedef int (*cs_##P##_ib_size_t)(void *, int, int, const T *, const T *, const T *, const T *, int, size_t *); \
typedef int (*cs_##P##_ib_t)(void *, int, int, T *, T *, T *, T *, int, void *); \
typedef int (*cs_##P##_gtsv2_size_t)(void *, int, int, const T *, const T *, const T *, const T *, int, size_t *); \
typedef int (*cs_##P##_gtsv2_t)(void *, int, int, const T *, const T *, const T *, T *, int, void *); \
static int cs_##P##_sb_size(void *f, void *h, int m, uintptr_t dl, uintptr_t d, uintptr_t du, uintptr_t x, int batch, int stride, size_t *size) { \
	return ((cs_##P##_sb_size_t)f)(h, m, (const T *)dl, (const T *)d, (const T *)du, (const T *)x, batch, stride, size); } \
static int cs_##P##_sb(void *f, void *h, int m, uintptr_t dl, uintptr_t d, uintptr_t du, uintptr_t x, int batch, int stride, uintptr_t buf) { \
	return ((cs_##P##_sb_t)f)(h, m, (const T *)dl, (const T *)d, (const T *)du, (T *)x, batch, stride, (void *)buf); } \
static int cs_##P##_ib_size(void *f, void *h, int algo, int m, uintptr_t dl, uintptr_t d, uintptr_t du, uintptr_t x, int batch, size_t *size) { \
	return ((cs_##P##_ib_size_t)f)(h, algo, m, (const T *)dl, (const T *)d, (const T *)du, (const T *)x, batch, size); } \
static int cs_##P##_ib(void *f, void *h, int algo, int m, uintptr_t dl, uintptr_t d, uintptr_t du, uintptr_t x, int batch, uintptr_t buf) { \
	return ((cs_##P##_ib_t)f)(h, algo, m, (T *)dl, (T *)d, (T *)du, (T *)x, batch, (void *)buf); } \
static int cs_##P##_gtsv2_size(void *f, void *h, int m, int n, uintptr_t dl, uintptr_t d, uintptr_t du, uintptr_t b, int ldb, size_t *size) { \
	return ((cs_##P##_gtsv2_size_t)f)(h, m, n, (const T *)dl, (const T *)d, (const T *)du, (const T *)b, ldb, size); } \
static int cs_##P##_gtsv2(void *f, void *h, int m, int n, uintptr_t dl, uintptr_t d, uintptr_t du, uintptr_t b, int ldb, uintptr_t buf) { \
	return ((cs_##P##_gtsv2_t)f)(h, m, n, (const T *)dl, (const T *)d, (const T *)du, (T *)b, ldb, (void *)buf); }

// cuComplex and cuDoubleComplex: two floats or doubles, the layout of Go's
// complex64 and complex128. The entry points take pointers only, so these
// stand-ins give the same calls.
typedef struct { float x, y; } cs_complex;
typedef struct { double x, y; } cs_double_complex;

CS_TRAMPOLINES(float, s)
CS_TRAMPOLINES(double, d)
CS_TRAMPOLINES(cs_complex, c)
CS_TRAMPOLINES(cs_double_complex, z)

// The element type of a call: 0 float (S), 1 double (D), 2 cuComplex (C),
// 3 cuDoubleComplex (Z). CS_DISPATCH(NAME, (params), (args)) defines
// cs_NAME(prec, f, h, params…), which calls the trampoline of prec.
#define CS_UNPAREN(...) __VA_ARGS__
#define CS_DISPATCH(NAME, PARAMS, ARGS) \
	static int cs_##NAME(int prec, void *f, void *h, CS_UNPAREN PARAMS) { \
		switch (prec) { \
		case 1: return cs_d_##NAME(f, h, CS_UNPAREN ARGS); \
		case 2: return cs_c_##NAME(f, h, CS_UNPAREN ARGS); \
		case 3: return cs_z_##NAME(f, h, CS_UNPAREN ARGS); \
		} \
		return cs_s_##NAME(f, h, CS_UNPAREN ARGS); \
	}
CS_DISPATCH(sb_size, (int m, uintptr_t dl, uintptr_t d, uintptr_t du, uintptr_t x, int batch, int stride, size_t *size), (m, dl, d, du, x, batch, stride, size))
CS_DISPATCH(sb, (int m, uintptr_t dl, uintptr_t d, uintptr_t du, uintptr_t x, int batch, int stride, uintptr_t buf), (m, dl, d, du, x, batch, stride, buf))
CS_DISPATCH(ib_size, (int algo, int m, uintptr_t dl, uintptr_t d, uintptr_t du, uintptr_t x, int batch, size_t *size), (algo, m, dl, d, du, x, batch, size))
CS_DISPATCH(ib, (int algo, int m, uintptr_t dl, uintptr_t d, uintptr_t du, uintptr_t x, int batch, uintptr_t buf), (algo, m, dl, d, du, x, batch, buf))
CS_DISPATCH(gtsv2_size, (int m, int n, uintptr_t dl, uintptr_t d, uintptr_t du, uintptr_t b, int ldb, size_t *size), (m, n, dl, d, du, b, ldb, size))
CS_DISPATCH(gtsv2, (int m, int n, uintptr_t dl, uintptr_t d, uintptr_t du, uintptr_t b, int ldb, uintptr_t buf), (m, n, dl, d, du, b, ldb, buf))
*/
import "C"

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unsafe"

	"gorgonia.org/cu"

	"github.com/bandsolve/bandsolve/cuda"
)

// errNoCusparse is the Err of the cuSPARSE peers when no library loads.
var errNoCusparse = errors.New("libcusparse not found")

// cusparseCandidates lists where to look for libcusparse: an explicit
// path first, the sonames the dynamic loader finds on its own
// (LD_LIBRARY_PATH, the cache), then CUDA installs and the NVIDIA wheels
// of Python environments.
func cusparseCandidates(explicit string) []string {
	var out []string
	if explicit != "" {
		out = append(out, explicit)
	}
	out = append(out, "libcusparse.so", "libcusparse.so.12", "libcusparse.so.13", "libcusparse.so.11")
	patterns := []string{
		"/usr/local/cuda/lib64/libcusparse.so*",
		"/usr/local/cuda-*/lib64/libcusparse.so*",
		"/usr/local/cuda/targets/*/lib/libcusparse.so*",
		"/usr/lib/x86_64-linux-gnu/libcusparse.so*",
		"/usr/lib/aarch64-linux-gnu/libcusparse.so*",
	}
	var roots []string
	for _, r := range []string{"/usr/lib", "/usr/local/lib", "/opt/conda/lib", "/opt/*/lib"} {
		roots = append(roots, r+"/python3*/*-packages")
	}
	if home, err := os.UserHomeDir(); err == nil {
		roots = append(roots, home+"/.local/lib/python3*/site-packages",
			home+"/*/lib/python3*/site-packages", home+"/.venv/lib/python3*/site-packages")
	}
	if v := os.Getenv("VIRTUAL_ENV"); v != "" {
		roots = append(roots, v+"/lib/python3*/site-packages")
	}
	if v := os.Getenv("CONDA_PREFIX"); v != "" {
		roots = append(roots, v+"/lib/python3*/site-packages", v+"/lib")
	}
	for _, r := range roots {
		patterns = append(patterns, r+"/nvidia/cusparse/lib/libcusparse.so*", r+"/nvidia/cu13/lib/libcusparse.so*",
			r+"/nvidia/cu12/lib/libcusparse.so*")
	}
	if exe, err := os.Executable(); err == nil {
		patterns = append(patterns, filepath.Join(filepath.Dir(exe), "libcusparse.so*"),
			filepath.Join(filepath.Dir(exe), "lib", "libcusparse.so*"))
	}
	seen := map[string]bool{}
	for _, p := range patterns {
		ms, _ := filepath.Glob(p)
		for _, m := range ms {
			if !seen[m] {
				seen[m] = true
				out = append(out, m)
			}
		}
	}
	return out
}

// cusparseLib is a loaded libcusparse with the entry points resolved.
type cusparseLib struct {
	path string
	h    unsafe.Pointer
	fn   map[string]unsafe.Pointer
}

var cusparseRequired = []string{"cusparseCreate", "cusparseDestroy", "cusparseSetStream",
	"cusparseSgtsv2StridedBatch_bufferSizeExt", "cusparseSgtsv2StridedBatch",
	"cusparseDgtsv2StridedBatch_bufferSizeExt", "cusparseDgtsv2StridedBatch",
	"cusparseSgtsvInterleavedBatch_bufferSizeExt", "cusparseSgtsvInterleavedBatch",
	"cusparseDgtsvInterleavedBatch_bufferSizeExt", "cusparseDgtsvInterleavedBatch",
	"cusparseSgtsv2_bufferSizeExt", "cusparseSgtsv2", "cusparseDgtsv2_bufferSizeExt", "cusparseDgtsv2"}

// cusparseComplex are the complex tridiagonal entry points (the peers of
// the C64 and C128 cases).
var cusparseComplex = []string{
	"cusparseCgtsv2StridedBatch_bufferSizeExt", "cusparseCgtsv2StridedBatch",
	"cusparseZgtsv2StridedBatch_bufferSizeExt", "cusparseZgtsv2StridedBatch",
	"cusparseCgtsvInterleavedBatch_bufferSizeExt", "cusparseCgtsvInterleavedBatch",
	"cusparseZgtsvInterleavedBatch_bufferSizeExt", "cusparseZgtsvInterleavedBatch",
	"cusparseCgtsv2_bufferSizeExt", "cusparseCgtsv2", "cusparseZgtsv2_bufferSizeExt", "cusparseZgtsv2"}

// cusparseOptional are looked up when present: the version, error names,
// the complex tridiagonal solvers (cusparseComplex), the SpSV API
// (spsvSymbols) and the incomplete factorizations (iluSymbols).
var cusparseOptional = slices.Concat([]string{"cusparseGetVersion", "cusparseGetErrorName"}, cusparseComplex, spsvSymbols, iluSymbols)

// loadCusparse dlopens the first candidate that loads, has every
// required symbol and passes usable (when not nil; a stub library loads
// but cannot create a handle). The error wraps errNoCusparse and says
// what was tried.
func loadCusparse(explicit string, usable func(*cusparseLib) error) (*cusparseLib, error) {
	var tried []string
	unusable := false
	for _, path := range cusparseCandidates(explicit) {
		cpath := C.CString(path)
		h := C.dlopen(cpath, C.RTLD_NOW|C.RTLD_LOCAL)
		C.free(unsafe.Pointer(cpath))
		if h == nil {
			tried = append(tried, path+": "+dlerror())
			continue
		}
		lib := &cusparseLib{path: path, h: h, fn: map[string]unsafe.Pointer{}}
		var missing []string
		for _, name := range append(cusparseRequired, cusparseOptional...) {
			cname := C.CString(name)
			p := C.dlsym(h, cname)
			C.free(unsafe.Pointer(cname))
			if p != nil {
				lib.fn[name] = p
			}
		}
		for _, name := range cusparseRequired {
			if lib.fn[name] == nil {
				missing = append(missing, name)
			}
		}
		if len(missing) > 0 {
			tried = append(tried, fmt.Sprintf("%s: lacks %s", path, strings.Join(missing, ", ")))
			C.dlclose(h)
			continue
		}
		if usable != nil {
			if err := usable(lib); err != nil {
				// Not closed: the library may have started the CUDA
				// runtime, whose exit handlers must stay mapped.
				tried = append(tried, fmt.Sprintf("%s: %v", path, err))
				unusable = true
				continue
			}
		}
		return lib, nil
	}
	if unusable {
		return nil, fmt.Errorf("libcusparse found but unusable (tried %s)", strings.Join(tried, "; "))
	}
	return nil, fmt.Errorf("%w (tried %s)", errNoCusparse, strings.Join(tried, "; "))
}

func dlerror() string {
	if s := C.dlerror(); s != nil {
		return C.GoString(s)
	}
	return "unknown dlopen error"
}

// status turns a cusparseStatus_t into an error.
func (l *cusparseLib) status(what string, st C.int) error {
	if st == 0 {
		return nil
	}
	name := fmt.Sprintf("status %d", int(st))
	if f := l.fn["cusparseGetErrorName"]; f != nil {
		if s := C.cs_error_name(f, st); s != nil {
			name = C.GoString(s) + fmt.Sprintf(" (%d)", int(st))
		}
	}
	return fmt.Errorf("%s: %s", what, name)
}

// cusparsePeer is a cuSPARSE handle bound to a stream of the device.
type cusparsePeer struct {
	lib     *cusparseLib
	dev     *cuda.Device
	handle  unsafe.Pointer
	stream  cu.Stream
	version int
}

// newCusparsePeer creates the handle and its stream on the device thread,
// where the device's context is current (the CUDA runtime inside
// cuSPARSE adopts it).
func newCusparsePeer(dev *cuda.Device, lib *cusparseLib) (*cusparsePeer, error) {
	p := &cusparsePeer{lib: lib, dev: dev}
	err := dev.Do(func() error {
		var err error
		// A blocking stream: it waits for the uploads and copies that the
		// cuda package makes on the legacy default stream.
		if p.stream, err = cu.MakeStream(cu.DefaultStream); err != nil {
			return fmt.Errorf("creating a stream: %w", err)
		}
		var h unsafe.Pointer
		if err := lib.status("cusparseCreate", C.cs_create(lib.fn["cusparseCreate"], &h)); err != nil {
			_ = p.stream.Destroy()
			return err
		}
		p.handle = h
		if err := lib.status("cusparseSetStream", C.cs_set_stream(lib.fn["cusparseSetStream"], h, unsafe.Pointer(p.stream.C()))); err != nil {
			return err
		}
		if f := lib.fn["cusparseGetVersion"]; f != nil {
			var v C.int
			if C.cs_get_version(f, h, &v) == 0 {
				p.version = int(v)
			}
		}
		return nil
	})
	if err != nil {
		p.close()
		return nil, err
	}
	return p, nil
}

func (p *cusparsePeer) close() {
	_ = p.dev.Do(func() error {
		if p.handle != nil {
			C.cs_destroy(p.lib.fn["cusparseDestroy"], p.handle)
			p.handle = nil
		}
		if p.stream != (cu.Stream{}) {
			_ = p.stream.Synchronize()
			_ = p.stream.Destroy()
		}
		return nil
	})
}

// versionString prints the library version as major.minor.patch.
func (p *cusparsePeer) versionString() string {
	if p.version == 0 {
		return "unknown version"
	}
	return fmt.Sprintf("%d.%d.%d", p.version/1000, p.version%1000/100, p.version%100)
}

// Kinds of cuSPARSE calls.
const (
	csStridedBatch = iota
	csInterleaved
	csGtsv2
)

// Element types of cuSPARSE calls, in the order of the C dispatchers'
// prec argument.
const (
	csS = iota // float
	csD        // double
	csC        // cuComplex (complex64)
	csZ        // cuDoubleComplex (complex128)
)

// csPrec is the cuSPARSE element type of a case's precision.
func csPrec(prec string) int {
	switch prec {
	case F64:
		return csD
	case C64:
		return csC
	case C128:
		return csZ
	}
	return csS
}

// csCall is one cuSPARSE solve: the kind, the algorithm of the
// interleaved batch, the element type (csS … csZ), the arrays (x is the
// right-hand side, overwritten by the solution) and the sizes; cols is
// gtsv2's n, the right-hand-side columns of m rows at x + j·m (0: one).
type csCall struct {
	kind, algo       int
	prec             int
	dl, d, du, x     cu.DevicePtr
	m, batch, stride int
	cols             int
}

// ncols is the call's number of right-hand-side columns.
func (c *csCall) ncols() C.int { return C.int(max(c.cols, 1)) }

// fn returns the entry point cusparse<P><routine> of the call's element
// type, or an error naming it when the library lacks it (the complex
// routines are optional).
func (p *cusparsePeer) fn(c *csCall, routine string) (unsafe.Pointer, string, error) {
	name := "cusparse" + string("SDCZ"[c.prec]) + routine
	f := p.lib.fn[name]
	if f == nil {
		return nil, name, fmt.Errorf("%s: no %s", p.lib.path, name)
	}
	return f, name, nil
}

func cbool(b bool) C.int {
	if b {
		return 1
	}
	return 0
}

func cptr(p cu.DevicePtr) C.uintptr_t { return C.uintptr_t(p) }

// routine is the name of the call's cuSPARSE routine without the
// cusparse<P> prefix.
func (c *csCall) routine() string {
	switch c.kind {
	case csStridedBatch:
		return "gtsv2StridedBatch"
	case csInterleaved:
		return "gtsvInterleavedBatch"
	}
	return "gtsv2"
}

// bufferSize asks for the call's workspace (device thread).
func (p *cusparsePeer) bufferSize(c *csCall) (int64, error) {
	f, name, err := p.fn(c, c.routine()+"_bufferSizeExt")
	if err != nil {
		return 0, err
	}
	var size C.size_t
	prec := C.int(c.prec)
	var st C.int
	switch c.kind {
	case csStridedBatch:
		st = C.cs_sb_size(prec, f, p.handle, C.int(c.m), cptr(c.dl), cptr(c.d), cptr(c.du), cptr(c.x), C.int(c.batch), C.int(c.stride), &size)
	case csInterleaved:
		st = C.cs_ib_size(prec, f, p.handle, C.int(c.algo), C.int(c.m), cptr(c.dl), cptr(c.d), cptr(c.du), cptr(c.x), C.int(c.batch), &size)
	default:
		st = C.cs_gtsv2_size(prec, f, p.handle, C.int(c.m), c.ncols(), cptr(c.dl), cptr(c.d), cptr(c.du), cptr(c.x), C.int(c.m), &size)
	}
	return int64(size), p.lib.status(name, st)
}

// call enqueues the solve on the peer's stream (device thread).
func (p *cusparsePeer) call(c *csCall, buf cu.DevicePtr) error {
	f, name, err := p.fn(c, c.routine())
	if err != nil {
		return err
	}
	prec := C.int(c.prec)
	var st C.int
	switch c.kind {
	case csStridedBatch:
		st = C.cs_sb(prec, f, p.handle, C.int(c.m), cptr(c.dl), cptr(c.d), cptr(c.du), cptr(c.x), C.int(c.batch), C.int(c.stride), cptr(buf))
	case csInterleaved:
		st = C.cs_ib(prec, f, p.handle, C.int(c.algo), C.int(c.m), cptr(c.dl), cptr(c.d), cptr(c.du), cptr(c.x), C.int(c.batch), cptr(buf))
	default:
		st = C.cs_gtsv2(prec, f, p.handle, C.int(c.m), c.ncols(), cptr(c.dl), cptr(c.d), cptr(c.du), cptr(c.x), C.int(c.m), cptr(buf))
	}
	return p.lib.status(name, st)
}

// devCopy is a device-to-device copy done before each call.
type devCopy struct {
	dst, src cu.DevicePtr
	bytes    int64
}

// time runs the call warmup times untimed and reps times between CUDA
// events on the peer's stream with timer (the backend's clock, as this
// module's plans are timed), doing the restores before each call outside
// the timed region. Everything runs on the device thread.
func (p *cusparsePeer) time(c *csCall, restores []devCopy, timer cuda.Timer, warmup, reps int) ([]time.Duration, error) {
	return p.timeSeq([]csCall{*c}, restores, timer, warmup, reps)
}

// timeSeq is time for calls made one after another in each timed
// repetition (one right-hand side each, as NRHS separate solves), with
// one workspace as large as the largest call asks for.
func (p *cusparsePeer) timeSeq(calls []csCall, restores []devCopy, timer cuda.Timer, warmup, reps int) ([]time.Duration, error) {
	var times []time.Duration
	err := p.dev.Do(func() error {
		var size int64
		for i := range calls {
			s, err := p.bufferSize(&calls[i])
			if err != nil {
				return err
			}
			size = max(size, s)
		}
		buf, err := cu.MemAlloc(max(size, 256))
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
		body := func() error {
			for i := range calls {
				if err := p.call(&calls[i], buf); err != nil {
					return err
				}
			}
			return nil
		}
		if times, err = timer(p.stream, warmup, reps, restore, body); err != nil {
			return fmt.Errorf("cuSPARSE solve: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return times, nil
}
