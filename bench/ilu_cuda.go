//go:build cuda

package bench

/*
#include <stdint.h>
#include <stdlib.h>

// cuSPARSE's incomplete factorizations csrilu02 and csric02 (FP64) and the
// matrix descriptor they take, from the public API. Info objects and
// descriptors are pointers; the policy is an int-sized enum.
typedef int (*ilu_create_t)(void **);
typedef int (*ilu_destroy_t)(void *);
typedef int (*ilu_size_t)(void *, int, int, void *, double *, const int *, const int *, void *, int *);
typedef int (*ilu_run_t)(void *, int, int, void *, double *, const int *, const int *, void *, int, void *);
typedef int (*ilu_pivot_t)(void *, void *, int *);

static int ilu_create(void *f, void **p) { return ((ilu_create_t)f)(p); }
static int ilu_destroy(void *f, void *p) { return ((ilu_destroy_t)f)(p); }
static int ilu_size(void *f, void *h, int m, int nnz, void *descr, uintptr_t val, uintptr_t rowPtr, uintptr_t col, void *info, int *size) {
	return ((ilu_size_t)f)(h, m, nnz, descr, (double *)val, (const int *)rowPtr, (const int *)col, info, size);
}
static int ilu_run(void *f, void *h, int m, int nnz, void *descr, uintptr_t val, uintptr_t rowPtr, uintptr_t col, void *info, uintptr_t buf) {
	// CUSPARSE_SOLVE_POLICY_USE_LEVEL = 1
	return ((ilu_run_t)f)(h, m, nnz, descr, (double *)val, (const int *)rowPtr, (const int *)col, info, 1, (void *)buf);
}
static int ilu_pivot(void *f, void *h, void *info, int *pos) { return ((ilu_pivot_t)f)(h, info, pos); }
*/
import "C"

import (
	"fmt"
	"time"
	"unsafe"

	"gorgonia.org/cu"

	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/ilu"
	"github.com/bandsolve/bandsolve/sparse"
)

// iluSymbols are the entry points of the csrilu02/csric02 peer.
var iluSymbols = []string{"cusparseCreateMatDescr", "cusparseDestroyMatDescr",
	"cusparseCreateCsrilu02Info", "cusparseDestroyCsrilu02Info", "cusparseDcsrilu02_bufferSize",
	"cusparseDcsrilu02_analysis", "cusparseDcsrilu02", "cusparseXcsrilu02_zeroPivot",
	"cusparseCreateCsric02Info", "cusparseDestroyCsric02Info", "cusparseDcsric02_bufferSize",
	"cusparseDcsric02_analysis", "cusparseDcsric02", "cusparseXcsric02_zeroPivot"}

// csILU is one cuSPARSE incomplete factorization (csrilu02 or csric02,
// FP64) of a matrix on the device: A's arrays, the values it factors in
// place (val, restored from aval before each factorization), the
// descriptor, the info object with its analysis, and the buffer.
type csILU struct {
	p                   *cusparsePeer
	kind                ilu.Kind
	n, nnz              int
	rowPtr, col         cu.DevicePtr
	aval, val, buf      cu.DevicePtr
	descr, info         unsafe.Pointer
	create, destroy     string
	size, analysis, run string
	pivot               string
	allocs              []cu.DevicePtr
}

// newCsILU uploads a and makes the descriptor and the info object.
func (p *cusparsePeer) newCsILU(a *sparse.CSR, kind ilu.Kind) (*csILU, error) {
	for _, name := range iluSymbols {
		if p.lib.fn[name] == nil {
			return nil, fmt.Errorf("the library lacks %s", name)
		}
	}
	s := &csILU{p: p, kind: kind, n: a.N, nnz: a.NNZ()}
	pre := "csrilu02"
	if kind == ilu.KindIC0 {
		pre = "csric02"
	}
	s.create, s.destroy = "cusparseCreate"+capital(pre)+"Info", "cusparseDestroy"+capital(pre)+"Info"
	s.size, s.analysis, s.run, s.pivot = "cusparseD"+pre+"_bufferSize", "cusparseD"+pre+"_analysis", "cusparseD"+pre, "cusparseX"+pre+"_zeroPivot"
	for _, b := range []struct {
		ptr   *cu.DevicePtr
		bytes int64
	}{{&s.rowPtr, 4 * int64(a.N+1)}, {&s.col, 4 * int64(s.nnz)}, {&s.aval, 8 * int64(s.nnz)}, {&s.val, 8 * int64(s.nnz)}} {
		ptr, err := p.dev.AllocBytes(max(b.bytes, 8))
		if err != nil {
			s.close()
			return nil, err
		}
		*b.ptr = ptr
		s.allocs = append(s.allocs, ptr)
	}
	l := p.lib
	err := p.dev.Do(func() error {
		if err := cu.MemcpyHtoD(s.rowPtr, unsafe.Pointer(&a.RowPtr[0]), 4*int64(a.N+1)); err != nil {
			return err
		}
		if s.nnz > 0 {
			if err := cu.MemcpyHtoD(s.col, unsafe.Pointer(&a.Col[0]), 4*int64(s.nnz)); err != nil {
				return err
			}
			if err := cu.MemcpyHtoD(s.aval, unsafe.Pointer(&a.Val[0]), 8*int64(s.nnz)); err != nil {
				return err
			}
		}
		// The default descriptor: general, zero-based.
		if err := l.status("cusparseCreateMatDescr", C.ilu_create(l.fn["cusparseCreateMatDescr"], &s.descr)); err != nil {
			return err
		}
		return l.status(s.create, C.ilu_create(l.fn[s.create], &s.info))
	})
	if err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

func capital(s string) string { return string(s[0]-'a'+'A') + s[1:] }

// analyse sizes and allocates the buffer (once) and runs the analysis,
// waiting for it; it returns the analysis's time, allocation excluded.
func (s *csILU) analyse() (time.Duration, error) {
	l := s.p.lib
	var took time.Duration
	err := s.p.dev.Do(func() error {
		if err := cu.MemcpyDtoD(s.val, s.aval, 8*int64(s.nnz)); err != nil {
			return err
		}
		if err := s.p.stream.Synchronize(); err != nil {
			return err
		}
		var size C.int
		if err := l.status(s.size, C.ilu_size(l.fn[s.size], s.p.handle, C.int(s.n), C.int(s.nnz), s.descr,
			cptr(s.val), cptr(s.rowPtr), cptr(s.col), s.info, &size)); err != nil {
			return err
		}
		if s.buf == 0 {
			buf, err := cu.MemAlloc(max(int64(size), 256))
			if err != nil {
				return fmt.Errorf("allocating the %d B %s buffer: %w", size, s.run, err)
			}
			s.buf = buf
			s.allocs = append(s.allocs, buf)
		}
		start := time.Now()
		if err := l.status(s.analysis, C.ilu_run(l.fn[s.analysis], s.p.handle, C.int(s.n), C.int(s.nnz), s.descr,
			cptr(s.val), cptr(s.rowPtr), cptr(s.col), s.info, cptr(s.buf))); err != nil {
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

// restore copies A's values into the factorization's array (device
// thread, the peer's stream).
func (s *csILU) restore() error {
	return cu.MemcpyDtoDAsync(s.val, s.aval, 8*int64(s.nnz), s.p.stream)
}

// factor enqueues one factorization of the restored values (device
// thread).
func (s *csILU) factor() error {
	l := s.p.lib
	return l.status(s.run, C.ilu_run(l.fn[s.run], s.p.handle, C.int(s.n), C.int(s.nnz), s.descr,
		cptr(s.val), cptr(s.rowPtr), cptr(s.col), s.info, cptr(s.buf)))
}

// zeroPivot returns the first row with a zero pivot, or −1 (device
// thread; it waits for the factorization).
func (s *csILU) zeroPivot() (int, error) {
	l := s.p.lib
	var pos C.int
	st := C.ilu_pivot(l.fn[s.pivot], s.p.handle, s.info, &pos)
	if st == 3 { // CUSPARSE_STATUS_ZERO_PIVOT
		return int(pos), nil
	}
	return -1, l.status(s.pivot, st)
}

// values returns the factored values.
func (s *csILU) values() ([]float64, error) {
	v := make([]float64, s.nnz)
	if s.nnz == 0 {
		return v, nil
	}
	err := s.p.dev.Do(func() error {
		if err := s.p.stream.Synchronize(); err != nil {
			return err
		}
		return cu.MemcpyDtoH(unsafe.Pointer(&v[0]), s.val, 8*int64(s.nnz))
	})
	return v, err
}

// close frees the info object, the descriptor and the arrays.
func (s *csILU) close() {
	l := s.p.lib
	_ = s.p.dev.Do(func() error {
		_ = s.p.stream.Synchronize()
		if s.info != nil {
			C.ilu_destroy(l.fn[s.destroy], s.info)
		}
		if s.descr != nil {
			C.ilu_destroy(l.fn["cusparseDestroyMatDescr"], s.descr)
		}
		for _, ptr := range s.allocs {
			_ = cu.MemFree(ptr)
		}
		return nil
	})
	s.allocs = nil
}

// timeFactor times reps factorizations (each after restoring A's values,
// outside the timing) with events on the peer's stream.
func (s *csILU) timeFactor(warmup, reps int) ([]time.Duration, error) {
	var times []time.Duration
	err := s.p.dev.Do(func() error {
		var err error
		times, err = cuda.TimeEvents(s.p.stream, warmup, reps, s.restore, s.factor, nil)
		return err
	})
	return times, err
}
