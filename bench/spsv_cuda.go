//go:build cuda

package bench

/*
#include <stdint.h>
#include <stddef.h>
#include <stdlib.h>

// cuSPARSE's generic sparse triangular solve (cusparseSpSV_*) and the
// descriptors it takes, from the public API. Enumerations are int-sized;
// descriptors and handles are pointers; sizes of the CSR are int64_t.
typedef int (*sv_create_csr_t)(void **, int64_t, int64_t, int64_t, void *, void *, void *, int, int, int, int);
typedef int (*sv_destroy_t)(void *);
typedef int (*sv_create_dnvec_t)(void **, int64_t, void *, int);
typedef int (*sv_set_attr_t)(void *, int, void *, size_t);
typedef int (*sv_create_descr_t)(void **);
typedef int (*sv_buffer_size_t)(void *, int, const void *, void *, void *, void *, int, int, void *, size_t *);
typedef int (*sv_analysis_t)(void *, int, const void *, void *, void *, void *, int, int, void *, void *);
typedef int (*sv_solve_t)(void *, int, const void *, void *, void *, void *, int, int, void *);

static int sv_create_csr(void *f, void **m, int64_t n, int64_t nnz, uintptr_t rowPtr, uintptr_t col, uintptr_t val, int valueType) {
	// 32-bit row offsets and columns (CUSPARSE_INDEX_32I = 2), base 0.
	return ((sv_create_csr_t)f)(m, n, n, nnz, (void *)rowPtr, (void *)col, (void *)val, 2, 2, 0, valueType);
}
static int sv_destroy(void *f, void *d) { return ((sv_destroy_t)f)(d); }
static int sv_create_dnvec(void *f, void **v, int64_t n, uintptr_t val, int valueType) {
	return ((sv_create_dnvec_t)f)(v, n, (void *)val, valueType);
}
static int sv_set_attr(void *f, void *m, int attr, int value) {
	return ((sv_set_attr_t)f)(m, attr, &value, sizeof(value));
}
static int sv_create_descr(void *f, void **d) { return ((sv_create_descr_t)f)(d); }
// op: CUSPARSE_OPERATION_NON_TRANSPOSE (0) or _TRANSPOSE (1).
static int sv_buffer_size(void *f, void *h, int op, const void *alpha, void *m, void *x, void *y, int type, void *d, size_t *size) {
	return ((sv_buffer_size_t)f)(h, op, alpha, m, x, y, type, 0, d, size);
}
static int sv_analysis(void *f, void *h, int op, const void *alpha, void *m, void *x, void *y, int type, void *d, uintptr_t buf) {
	return ((sv_analysis_t)f)(h, op, alpha, m, x, y, type, 0, d, (void *)buf);
}
static int sv_solve(void *f, void *h, int op, const void *alpha, void *m, void *x, void *y, int type, void *d) {
	return ((sv_solve_t)f)(h, op, alpha, m, x, y, type, 0, d);
}
*/
import "C"

import (
	"errors"
	"fmt"
	"time"
	"unsafe"

	"gorgonia.org/cu"

	"github.com/bandsolve/bandsolve/cuda"
)

// spsvSymbols are the entry points of the SpSV peer; a library without
// them has no SpSV peer (cuSPARSE before 11.3).
var spsvSymbols = []string{"cusparseCreateCsr", "cusparseDestroySpMat", "cusparseCreateDnVec", "cusparseDestroyDnVec",
	"cusparseSpMatSetAttribute", "cusparseSpSV_createDescr", "cusparseSpSV_destroyDescr", "cusparseSpSV_bufferSize",
	"cusparseSpSV_analysis", "cusparseSpSV_solve"}

// cuSPARSE enumerations used here.
const (
	cudaR32F         = 0 // CUDA_R_32F
	cudaR64F         = 1 // CUDA_R_64F
	spmatFillMode    = 0 // CUSPARSE_SPMAT_FILL_MODE
	spmatDiagType    = 1 // CUSPARSE_SPMAT_DIAG_TYPE
	fillLower        = 0 // CUSPARSE_FILL_MODE_LOWER
	fillUpper        = 1 // CUSPARSE_FILL_MODE_UPPER
	diagNonUnit      = 0 // CUSPARSE_DIAG_TYPE_NON_UNIT
	diagUnit         = 1 // CUSPARSE_DIAG_TYPE_UNIT
	errSpsvNoSymbols = "the library lacks the SpSV API"
)

// spsv is one cuSPARSE SpSV problem: the matrix and vector descriptors on
// device arrays, and the SpSV descriptor of its analysis.
type spsv struct {
	p          *cusparsePeer
	f64        bool
	mat, x, y  unsafe.Pointer
	descr      unsafe.Pointer
	buf        cu.DevicePtr
	alpha32    *C.float
	alpha64    *C.double
	n, nnz     int
	upper, uni bool
	trans      bool // solve with the transpose of the triangle
}

// op is the SpSV operation: the triangle or its transpose.
func (s *spsv) op() C.int {
	if s.trans {
		return 1
	}
	return 0
}

// spsvAvailable reports whether the peer's library has the SpSV API.
func (p *cusparsePeer) spsvAvailable() error {
	var missing []string
	for _, name := range spsvSymbols {
		if p.lib.fn[name] == nil {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%s (%v)", errSpsvNoSymbols, missing)
	}
	return nil
}

// newSpsv makes the descriptors of T x = b for the triangle in the CSR
// arrays rowPtr, col, val (device, 32-bit indices, values of the
// precision) with b in bvec and x in xvec (device thread not needed: it
// enters it).
func (p *cusparsePeer) newSpsv(f64 bool, n, nnz int, rowPtr, col, val, bvec, xvec cu.DevicePtr, upper, unit bool) (*spsv, error) {
	if err := p.spsvAvailable(); err != nil {
		return nil, err
	}
	s := &spsv{p: p, f64: f64, n: n, nnz: nnz, upper: upper, uni: unit}
	s.alpha32 = (*C.float)(C.malloc(C.size_t(unsafe.Sizeof(C.double(0)))))
	s.alpha64 = (*C.double)(unsafe.Pointer(s.alpha32))
	if f64 {
		*s.alpha64 = 1
	} else {
		*s.alpha32 = 1
	}
	typ := C.int(cudaR32F)
	if f64 {
		typ = cudaR64F
	}
	l := p.lib
	err := p.dev.Do(func() error {
		if err := l.status("cusparseCreateCsr", C.sv_create_csr(l.fn["cusparseCreateCsr"], &s.mat, C.int64_t(n), C.int64_t(nnz),
			C.uintptr_t(rowPtr), C.uintptr_t(col), C.uintptr_t(val), typ)); err != nil {
			return err
		}
		fill, diag := C.int(fillLower), C.int(diagNonUnit)
		if upper {
			fill = fillUpper
		}
		if unit {
			diag = diagUnit
		}
		if err := l.status("cusparseSpMatSetAttribute", C.sv_set_attr(l.fn["cusparseSpMatSetAttribute"], s.mat, spmatFillMode, fill)); err != nil {
			return err
		}
		if err := l.status("cusparseSpMatSetAttribute", C.sv_set_attr(l.fn["cusparseSpMatSetAttribute"], s.mat, spmatDiagType, diag)); err != nil {
			return err
		}
		if err := l.status("cusparseCreateDnVec", C.sv_create_dnvec(l.fn["cusparseCreateDnVec"], &s.x, C.int64_t(n), C.uintptr_t(bvec), typ)); err != nil {
			return err
		}
		return l.status("cusparseCreateDnVec", C.sv_create_dnvec(l.fn["cusparseCreateDnVec"], &s.y, C.int64_t(n), C.uintptr_t(xvec), typ))
	})
	if err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

func (s *spsv) typ() C.int {
	if s.f64 {
		return cudaR64F
	}
	return cudaR32F
}

func (s *spsv) alpha() unsafe.Pointer { return unsafe.Pointer(s.alpha32) }

// analyse makes a new SpSV descriptor, its buffer (kept across analyses
// when large enough) and runs the analysis, waiting for it; it returns
// the time from the descriptor's creation to the end of the analysis,
// the buffer's allocation excluded.
func (s *spsv) analyse() (time.Duration, error) {
	l := s.p.lib
	var took time.Duration
	err := s.p.dev.Do(func() error {
		if s.descr != nil {
			C.sv_destroy(l.fn["cusparseSpSV_destroyDescr"], s.descr)
			s.descr = nil
		}
		if err := s.p.stream.Synchronize(); err != nil {
			return err
		}
		start := time.Now()
		if err := l.status("cusparseSpSV_createDescr", C.sv_create_descr(l.fn["cusparseSpSV_createDescr"], &s.descr)); err != nil {
			return err
		}
		var size C.size_t
		if err := l.status("cusparseSpSV_bufferSize", C.sv_buffer_size(l.fn["cusparseSpSV_bufferSize"], s.p.handle, s.op(), s.alpha(),
			s.mat, s.x, s.y, s.typ(), s.descr, &size)); err != nil {
			return err
		}
		if s.buf == 0 {
			alloc := time.Now()
			buf, err := cu.MemAlloc(max(int64(size), 256))
			if err != nil {
				return fmt.Errorf("allocating the %d B SpSV buffer: %w", size, err)
			}
			s.buf = buf
			start = start.Add(time.Since(alloc))
		}
		if err := l.status("cusparseSpSV_analysis", C.sv_analysis(l.fn["cusparseSpSV_analysis"], s.p.handle, s.op(), s.alpha(),
			s.mat, s.x, s.y, s.typ(), s.descr, C.uintptr_t(s.buf))); err != nil {
			return err
		}
		if err := s.p.stream.Synchronize(); err != nil {
			return err
		}
		took = time.Since(start)
		return nil
	})
	return took, err
}

// solve enqueues one solve on the peer's stream (device thread).
func (s *spsv) solve() error {
	l := s.p.lib
	return l.status("cusparseSpSV_solve", C.sv_solve(l.fn["cusparseSpSV_solve"], s.p.handle, s.op(), s.alpha(), s.mat, s.x, s.y, s.typ(), s.descr))
}

// time times reps solves (after warmup) with events on the peer's stream,
// each launched while the GPU waits for it.
func (s *spsv) time(warmup, reps int) ([]time.Duration, error) {
	if s.descr == nil {
		return nil, errors.New("SpSV: no analysis")
	}
	var times []time.Duration
	err := s.p.dev.Do(func() error {
		var err error
		times, err = cuda.TimeEvents(s.p.stream, warmup, reps, nil, s.solve, nil)
		return err
	})
	return times, err
}

// close destroys the descriptors and frees the buffer.
func (s *spsv) close() {
	l := s.p.lib
	_ = s.p.dev.Do(func() error {
		_ = s.p.stream.Synchronize()
		if s.descr != nil {
			C.sv_destroy(l.fn["cusparseSpSV_destroyDescr"], s.descr)
		}
		if s.x != nil {
			C.sv_destroy(l.fn["cusparseDestroyDnVec"], s.x)
		}
		if s.y != nil {
			C.sv_destroy(l.fn["cusparseDestroyDnVec"], s.y)
		}
		if s.mat != nil {
			C.sv_destroy(l.fn["cusparseDestroySpMat"], s.mat)
		}
		if s.buf != 0 {
			_ = cu.MemFree(s.buf)
		}
		return nil
	})
	if s.alpha32 != nil {
		C.free(unsafe.Pointer(s.alpha32))
		s.alpha32 = nil
	}
}
