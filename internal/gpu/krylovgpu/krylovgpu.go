//go:build cuda

// Package krylovgpu runs the vector arithmetic of package krylov on a GPU:
// Space, the krylov.Space of float64 vectors in device memory
// (*cuda.Buffer[float64]), CSR, sparse matrix–vector products on the
// device, and MixedPrecision, a float32 preconditioner inside the float64
// iteration. With them krylov.BiCGStab2 runs with every vector resident on
// the GPU. Register makes them the backend of krylov.NewSpace and
// krylov.NewCSROperator for a *cuda.Device.
package krylovgpu

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"unsafe"

	"gorgonia.org/cu"

	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/internal/gpu/done"
	"github.com/bandsolve/bandsolve/internal/gpu/kernels"
	"github.com/bandsolve/bandsolve/krylov"
	"github.com/bandsolve/bandsolve/sparse"
	"github.com/bandsolve/bandsolve/tridiag"
)

// Launch geometry of the kernels of ptx/src/vector.cuh.
const (
	vecBlock        = 256 // VEC_BLOCK: threads per block of every vector kernel
	dotsPerLaunch   = 8   // VEC_DOTS_MAX: inner products per vec_dots_f64 launch
	mappedResults   = 64  // float64 slots of a queue's mapped results area
	elemBlocksPerSM = 8   // blocks per SM of the grid-stride element-wise kernels
	redBlocksPerSM  = 4   // blocks per SM of the reductions (their partial sums)
)

// ErrSpace is wrapped by the errors of Space, CSR and MixedPrecision
// arguments: a nil or freed buffer, a buffer of another device or of the
// wrong length. It is krylov.ErrDimension, so the solver's callers can test
// for either.
var ErrSpace = krylov.ErrDimension

// vecKernels are the kernels of Space, CSR and MixedPrecision; the
// conversions are the zero values kernels.VecF64ToF32 and
// kernels.VecF32ToF64.
type vecKernels struct {
	axpby          kernels.VecAxpby
	mul64, mul32   kernels.VecMul
	dots           kernels.VecDots
	amax           kernels.VecAmax
	spmv64, spmv32 kernels.CsrSpmv
}

// theKernels resolves the kernels once.
var theKernels = sync.OnceValues(func() (*vecKernels, error) {
	var k vecKernels
	var err error
	if k.axpby, err = kernels.VecAxpbyFor(true); err != nil {
		return nil, err
	}
	if k.mul64, err = kernels.VecMulFor(true); err != nil {
		return nil, err
	}
	if k.mul32, err = kernels.VecMulFor(false); err != nil {
		return nil, err
	}
	if k.dots, err = kernels.VecDotsFor(true); err != nil {
		return nil, err
	}
	if k.amax, err = kernels.VecAmaxFor(true); err != nil {
		return nil, err
	}
	if k.spmv64, err = kernels.CsrSpmvFor(true); err != nil {
		return nil, err
	}
	if k.spmv32, err = kernels.CsrSpmvFor(false); err != nil {
		return nil, err
	}
	return &k, nil
})

// queue is a stream with its own completion word and results area in
// mapped host memory, and device scratch for reductions. Work is enqueued
// and, unless deferred, waited for through the word (done.Signal); the
// reductions write their results to the mapped area, so the host reads them
// without a copy. The owner serialises its use.
type queue struct {
	dev      *cuda.Device
	stream   cu.Stream
	mapped   unsafe.Pointer          // the mapped area, as the host sees it
	sig      *done.Signal            // the word: the first 4 bytes of the mapped area
	res      *[mappedResults]float64 // the results: the mapped area from byte 8
	resDev   cu.DevicePtr            // res as kernels see it
	scratch  cu.DevicePtr            // int32 flag (0) | uint32 block counter (0) | 2 float64 scales | partial sums
	partials int                     // float64 slots for partial sums
	deferred bool                    // plain work returns once enqueued
	what     func() string           // names the queue's owner in errors
}

// Offsets in a queue's scratch.
const (
	scratchFlag    = 0
	scratchCounter = 4
	scratchScale   = 8
	scratchPartial = 24
)

// newQueue makes a queue with room for partials partial sums.
func newQueue(d *cuda.Device, partials int, what func() string) (*queue, error) {
	q := &queue{dev: d, partials: partials, what: what}
	err := d.Enqueue(func() error {
		p, dp, err := cuda.AllocMapped(8+8*mappedResults, "the Krylov queue's results")
		if err != nil {
			return err
		}
		q.mapped = p
		atomic.StoreUint32((*uint32)(p), 0)
		q.sig = done.At((*uint32)(p), dp)
		q.res = (*[mappedResults]float64)(unsafe.Add(p, 8))
		q.resDev = dp + 8
		bytes := int64(scratchPartial + 8*partials)
		var e error
		if q.scratch, e = cu.MemAlloc(bytes); e != nil {
			return fmt.Errorf("cuda: allocating %d B of scratch: %w", bytes, e)
		}
		if e = cu.MemsetD8(q.scratch, 0, bytes); e != nil {
			return fmt.Errorf("cuda: clearing scratch: %w", e)
		}
		if q.stream, e = cu.MakeStream(cu.DefaultStream); e != nil {
			return fmt.Errorf("cuda: creating a stream: %w", e)
		}
		return nil
	})
	if err != nil {
		q.close()
		return nil, err
	}
	return q, nil
}

// close waits for the queue's work and frees it.
func (q *queue) close() {
	_ = q.dev.Enqueue(func() error {
		if q.stream != (cu.Stream{}) {
			_ = q.stream.Synchronize()
			_ = q.stream.Destroy()
			q.stream = cu.Stream{}
		}
		if q.scratch != 0 {
			_ = cu.MemFree(q.scratch)
			q.scratch = 0
		}
		if q.mapped != nil {
			_ = cu.MemFreeHost(q.mapped)
			q.mapped = nil
		}
		return nil
	})
}

// exec enqueues work (device thread) and then, unless the queue is
// deferred and sync is false, the completion signal, which it waits for.
// When selfSignal is set the work writes the completion word itself (with
// the sequence number from q.sig.Next) and exec always waits.
func (q *queue) exec(sync, selfSignal bool, work func() error) error {
	wait := sync || selfSignal || !q.deferred
	if err := q.dev.Enqueue(func() error {
		if err := work(); err != nil {
			return err
		}
		if !wait || selfSignal {
			return nil
		}
		return q.sig.Enqueue(q.dev, q.stream, q.scratch+scratchFlag)
	}); err != nil {
		// Let what was enqueued before the failure finish.
		_ = q.dev.Enqueue(func() error { return q.stream.Synchronize() })
		return fmt.Errorf("cuda: %s: %w", q.what(), err)
	}
	if !wait {
		return nil
	}
	_, err := q.sig.Wait(q.dev, q.stream, q.what)
	return err
}

// sync waits for everything enqueued on the queue.
func (q *queue) sync() error { return q.exec(true, false, func() error { return nil }) }

// grid returns the blocks of a kernel over n elements with at most perSM
// blocks per SM.
func (q *queue) grid(n, perSM int) int {
	return max(1, min((n+vecBlock-1)/vecBlock, perSM*q.dev.Properties().SMs))
}

// Space is the krylov.Space of float64 vectors of length n in device
// memory (*cuda.Buffer[float64]), so that krylov.BiCGStab2 runs with its vectors
// on the GPU: the vector updates are kernels on the space's own stream and
// the inner products of one Dots call are computed by one launch per eight
// pairs, with deterministic reductions (the same bits on every call), and
// come back to the host in one transfer, written by the GPU into mapped
// host memory.
//
// Every method returns when its result is ready (the GPU writes a
// completion word in mapped host memory, which the host polls), unless the
// space is deferred (SetDeferred): then Copy, Zero, Axpby, Mul, the
// conversions and the products of Operator return once their kernels are
// enqueued, and Dots, AbsMax, Sync and MixedPrecision wait for all of them.
//
// Axpby, Mul and the conversions round like Go does, so they agree with
// krylov.HostSpace bit for bit (on platforms where Go does not fuse
// multiply-adds); inner products differ from HostSpace's by the order of
// summation only.
//
// A Space's methods may be called from several goroutines; they are
// serialised.
type Space struct {
	dev  *cuda.Device
	n    int
	k    *vecKernels
	mu   sync.Mutex
	q    *queue
	done bool
}

var _ krylov.Space[*cuda.Buffer[float64]] = (*Space)(nil)

// NewSpace makes the space of vectors of length n ≥ 1 on d, with its own
// stream and completion word.
func NewSpace(d *cuda.Device, n int) (*Space, error) {
	if n < 1 {
		return nil, fmt.Errorf("%w: cuda: a space of length %d", ErrSpace, n)
	}
	k, err := theKernels()
	if err != nil {
		return nil, fmt.Errorf("cuda: a space of length %d: %w", n, err)
	}
	s := &Space{dev: d, n: n, k: k}
	// Partial sums: dotsPerLaunch per block of the largest reduction grid.
	s.q, err = newQueue(d, dotsPerLaunch*redBlocksPerSM*max(1, d.Properties().SMs), s.what)
	if err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Space) what() string { return fmt.Sprintf("vector operation of length %d", s.n) }

// Len returns the vectors' length.
func (s *Space) Len() int { return s.n }

// Device returns the space's device.
func (s *Space) Device() *cuda.Device { return s.dev }

// Stream returns the space's stream, so that other CUDA code can order its
// work with the space's (in a deferred space, work enqueued on another
// stream must wait for this one: call Sync first).
func (s *Space) Stream() cu.Stream { return s.q.stream }

// SetDeferred sets whether the operations that return a vector (Copy,
// Zero, Axpby, Mul, ToFloat32, FromFloat32, Operator's products and
// MixedPrecision's result) return as soon as their kernels are enqueued,
// instead of when they are done. The stream keeps them in order, and every
// operation that returns numbers to the host (Dots, AbsMax) waits for all
// earlier ones, so a BiCGStab2 solve gives the same results either way, with
// the launches overlapping the GPU's work. Other code that reads or writes
// the vectors on another stream must call Sync first; Buffer's CopyTo and
// CopyFrom, on the legacy default stream, wait for the space's stream by
// themselves. Turning it off waits for the enqueued work.
func (s *Space) SetDeferred(on bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return cuda.ErrClosed
	}
	if s.q.deferred && !on {
		if err := s.q.sync(); err != nil {
			return err
		}
	}
	s.q.deferred = on
	return nil
}

// Sync waits for all the work enqueued on the space's stream and reports a
// kernel failure among it.
func (s *Space) Sync() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return cuda.ErrClosed
	}
	return s.q.sync()
}

// Close waits for the space's work and frees its stream, completion word
// and scratch memory (not the vectors: Free them first).
func (s *Space) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return nil
	}
	s.done = true
	s.q.close()
	return nil
}

// check validates vectors of the space (the lock held).
func (s *Space) check(vs ...*cuda.Buffer[float64]) error {
	if s.done {
		return cuda.ErrClosed
	}
	for _, v := range vs {
		if err := checkVec(s.dev, s.n, v); err != nil {
			return err
		}
	}
	return nil
}

// checkVec validates a buffer of n elements on d.
func checkVec[T tridiag.Float](d *cuda.Device, n int, v *cuda.Buffer[T]) error {
	switch {
	case v == nil || v.Ptr() == 0:
		return fmt.Errorf("%w: cuda: nil or freed buffer", ErrSpace)
	case v.Device() != d:
		return fmt.Errorf("%w: cuda: buffer of another device", ErrSpace)
	case v.Len() != n:
		return fmt.Errorf("%w: cuda: buffer of %d elements in a space of length %d", ErrSpace, v.Len(), n)
	}
	return nil
}

// New returns a zeroed vector of the space's length.
func (s *Space) New() (*cuda.Buffer[float64], error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return nil, cuda.ErrClosed
	}
	v, err := cuda.Alloc[float64](s.dev, s.n)
	if err != nil {
		return nil, err
	}
	if err := s.zero(v, true); err != nil {
		_ = v.Free()
		return nil, err
	}
	return v, nil
}

// Free releases a vector obtained from New (after the space's work on it).
func (s *Space) Free(v *cuda.Buffer[float64]) {
	if v == nil || v.Ptr() == 0 {
		return
	}
	s.mu.Lock()
	if !s.done && s.q.deferred {
		_ = s.q.sync()
	}
	s.mu.Unlock()
	_ = v.Free()
}

// Copy sets dst = src.
func (s *Space) Copy(dst, src *cuda.Buffer[float64]) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(dst, src); err != nil {
		return err
	}
	if dst.Ptr() == src.Ptr() {
		return nil
	}
	return s.q.exec(false, false, func() error {
		return cu.MemcpyDtoDAsync(dst.Ptr(), src.Ptr(), int64(s.n)*8, s.q.stream)
	})
}

// Zero sets every entry of v to 0 (NaN included).
func (s *Space) Zero(v *cuda.Buffer[float64]) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(v); err != nil {
		return err
	}
	return s.zero(v, false)
}

func (s *Space) zero(v *cuda.Buffer[float64], sync bool) error {
	return s.q.exec(sync, false, func() error {
		return cu.MemsetD32Async(v.Ptr(), 0, int64(2*s.n), s.q.stream)
	})
}

// Axpby sets y = α·x + β·y; y is not read when β = 0. x may be y.
func (s *Space) Axpby(alpha float64, x *cuda.Buffer[float64], beta float64, y *cuda.Buffer[float64]) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(x, y); err != nil {
		return err
	}
	return s.q.exec(false, false, func() error {
		return s.k.axpby.Launch(s.dev, cuda.Dim3{X: s.q.grid(s.n, elemBlocksPerSM)}, cuda.Dim3{X: vecBlock}, 0, s.q.stream,
			&kernels.VecAxpbyArgs{N: int64(s.n), Alpha: alpha, X: x.Ptr(), Beta: beta, Y: y.Ptr()})
	})
}

// Mul sets y = d⊙x, the element-wise product (a Jacobi preconditioner
// with d the inverse diagonal). y may be x.
func (s *Space) Mul(d, x, y *cuda.Buffer[float64]) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(d, x, y); err != nil {
		return err
	}
	return s.q.exec(false, false, func() error {
		return s.k.mul64.Launch(s.dev, cuda.Dim3{X: s.q.grid(s.n, elemBlocksPerSM)}, cuda.Dim3{X: vecBlock}, 0, s.q.stream,
			&kernels.VecMulArgs{N: int64(s.n), D: d.Ptr(), X: x.Ptr(), Y: y.Ptr()})
	})
}

// Mul32 is Mul for float32 vectors of the space's length, on the space's
// stream: a float32 Jacobi preconditioner for MixedPrecision.
func (s *Space) Mul32(d, x, y *cuda.Buffer[float32]) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return cuda.ErrClosed
	}
	for _, v := range []*cuda.Buffer[float32]{d, x, y} {
		if err := checkVec(s.dev, s.n, v); err != nil {
			return err
		}
	}
	return s.q.exec(false, false, func() error {
		return s.k.mul32.Launch(s.dev, cuda.Dim3{X: s.q.grid(s.n, elemBlocksPerSM)}, cuda.Dim3{X: vecBlock}, 0, s.q.stream,
			&kernels.VecMulArgs{N: int64(s.n), D: d.Ptr(), X: x.Ptr(), Y: y.Ptr()})
	})
}

// ToFloat32 sets y = float32(x·scale), rounded to nearest like Go's
// conversion.
func (s *Space) ToFloat32(scale float64, x *cuda.Buffer[float64], y *cuda.Buffer[float32]) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(x); err != nil {
		return err
	}
	if err := checkVec(s.dev, s.n, y); err != nil {
		return err
	}
	return s.q.exec(false, false, func() error { return s.toFloat32(scale, 0, x, y) })
}

// toFloat32 enqueues the conversion (device thread); a non-zero scalep
// holds the scale on the device.
func (s *Space) toFloat32(scale float64, scalep cu.DevicePtr, x *cuda.Buffer[float64], y *cuda.Buffer[float32]) error {
	return kernels.VecF64ToF32{}.Launch(s.dev, cuda.Dim3{X: s.q.grid(s.n, elemBlocksPerSM)}, cuda.Dim3{X: vecBlock}, 0, s.q.stream,
		&kernels.VecF64ToF32Args{N: int64(s.n), Scale: scale, Scalep: scalep, X: x.Ptr(), Y: y.Ptr()})
}

// FromFloat32 sets y = float64(x)·scale.
func (s *Space) FromFloat32(scale float64, x *cuda.Buffer[float32], y *cuda.Buffer[float64]) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(y); err != nil {
		return err
	}
	if err := checkVec(s.dev, s.n, x); err != nil {
		return err
	}
	return s.q.exec(false, false, func() error { return s.fromFloat32(scale, x, y) })
}

func (s *Space) fromFloat32(scale float64, x *cuda.Buffer[float32], y *cuda.Buffer[float64]) error {
	return kernels.VecF32ToF64{}.Launch(s.dev, cuda.Dim3{X: s.q.grid(s.n, elemBlocksPerSM)}, cuda.Dim3{X: vecBlock}, 0, s.q.stream,
		&kernels.VecF32ToF64Args{N: int64(s.n), Scale: scale, Scalep: 0, X: x.Ptr(), Y: y.Ptr()})
}

// Dots sets out[k] = xs[k]·ys[k] for every k. Pairs may share vectors and
// xs[k] may be ys[k]. Up to eight pairs take one kernel launch (more take
// one per eight), all write their results into mapped host memory, and the
// call waits once. The sums are deterministic: the same arguments give the
// same bits on every call.
func (s *Space) Dots(xs, ys []*cuda.Buffer[float64], out []float64) error {
	if len(xs) != len(ys) || len(xs) != len(out) {
		return fmt.Errorf("%w: cuda: Dots with %d, %d vectors and %d results", ErrSpace, len(xs), len(ys), len(out))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(xs...); err != nil {
		return err
	}
	if err := s.check(ys...); err != nil {
		return err
	}
	for lo := 0; lo < len(out); lo += mappedResults {
		hi := min(lo+mappedResults, len(out))
		if err := s.dots(xs[lo:hi], ys[lo:hi], out[lo:hi]); err != nil {
			return err
		}
	}
	return nil
}

// dots computes up to mappedResults inner products with one wait.
func (s *Space) dots(xs, ys []*cuda.Buffer[float64], out []float64) error {
	grid := s.q.grid(s.n, redBlocksPerSM)
	err := s.q.exec(true, true, func() error {
		for lo := 0; lo < len(out); lo += dotsPerLaunch {
			hi := min(lo+dotsPerLaunch, len(out))
			// The pairs past hi are null.
			var xp, yp [dotsPerLaunch]cu.DevicePtr
			for k := lo; k < hi; k++ {
				xp[k-lo], yp[k-lo] = xs[k].Ptr(), ys[k].Ptr()
			}
			// Only the last launch signals; the stream orders the others
			// before it.
			word, seq := cu.DevicePtr(0), uint32(0)
			if hi == len(out) {
				word, seq = s.q.sig.Word(), s.q.sig.Next()
			}
			a := &kernels.VecDotsArgs{
				N: int64(s.n), K: int32(hi - lo),
				X0: xp[0], Y0: yp[0], X1: xp[1], Y1: yp[1], X2: xp[2], Y2: yp[2], X3: xp[3], Y3: yp[3],
				X4: xp[4], Y4: yp[4], X5: xp[5], Y5: yp[5], X6: xp[6], Y6: yp[6], X7: xp[7], Y7: yp[7],
				Partial: s.q.scratch + scratchPartial, Counter: s.q.scratch + scratchCounter,
				Out: s.q.resDev + cu.DevicePtr(8*lo), Word: word, Seq: seq,
			}
			if err := s.k.dots.Launch(s.dev, cuda.Dim3{X: grid}, cuda.Dim3{X: vecBlock}, 0, s.q.stream, a); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	copy(out, s.q.res[:len(out)])
	return nil
}

// AbsMax returns max |x_i|, NaN when some x_i is NaN.
func (s *Space) AbsMax(x *cuda.Buffer[float64]) (float64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(x); err != nil {
		return 0, err
	}
	if err := s.q.exec(true, true, func() error { return s.amax(x, 0, true) }); err != nil {
		return 0, err
	}
	return s.q.res[0], nil
}

// amax enqueues the kernel of max |x_i| (device thread): res[0] = max |x_i|, res[1]
// and res[2] the float32 scalings, also stored at scale when it is not 0;
// it writes the completion word when signal is set.
func (s *Space) amax(x *cuda.Buffer[float64], scale cu.DevicePtr, signal bool) error {
	word, seq := cu.DevicePtr(0), uint32(0)
	if signal {
		word, seq = s.q.sig.Word(), s.q.sig.Next()
	}
	return s.k.amax.Launch(s.dev, cuda.Dim3{X: s.q.grid(s.n, redBlocksPerSM)}, cuda.Dim3{X: vecBlock}, 0, s.q.stream,
		&kernels.VecAmaxArgs{N: int64(s.n), X: x.Ptr(), Partial: s.q.scratch + scratchPartial, Counter: s.q.scratch + scratchCounter,
			Out: s.q.resDev, Scale: scale, Word: word, Seq: seq})
}

// Operator returns the product with a as a krylov.Operator on the space's
// vectors: Apply enqueues y = A·x on the space's stream, ordered with its
// vector operations (and, in a deferred space, returns without waiting).
// a must be n×n and stay open while the operator is used.
func (s *Space) Operator(a *CSR) (krylov.Operator[*cuda.Buffer[float64]], error) {
	if a == nil || a.dev != s.dev || a.n != s.n || a.m != s.n {
		return nil, fmt.Errorf("%w: cuda: Operator needs a %d×%d matrix of the space's device", ErrSpace, s.n, s.n)
	}
	return krylov.OperatorFunc[*cuda.Buffer[float64]](func(ctx context.Context, x, y *cuda.Buffer[float64]) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if err := s.check(x, y); err != nil {
			return err
		}
		if x.Ptr() == y.Ptr() {
			return fmt.Errorf("%w: cuda: CSR product needs y apart from x", ErrSpace)
		}
		return s.q.exec(false, false, func() error { return a.enqueue(s.q.stream, x.Ptr(), y.Ptr(), true) })
	}), nil
}

// CSR is a sparse matrix in compressed sparse row form in device memory
// (int32 row pointers and column indices, float64 values), for products
// y = A·x on the GPU: vector CSR, with a power-of-two number of threads per
// row (1 to 32) chosen from the average row length (SetThreadsPerRow
// overrides it). With one thread per row (rows of fewer than eight entries
// on average) the product is the same bit for bit as sparse.CSR.MulVec.
//
// As a krylov.Operator (Apply), a CSR runs its products on its own stream
// and returns when y is complete; Space.Operator runs them on a space's
// stream instead, ordered with the space's vector operations (use it, or
// call the space's Sync before Apply, when the space is deferred).
type CSR struct {
	dev         *cuda.Device
	n, m, nnz   int
	rowPtr, col cu.DevicePtr
	k           *vecKernels
	val         *cuda.Buffer[float64]
	val32       *cuda.Buffer[float32] // made on the first Apply32
	shift       atomic.Int32          // log2 of the threads per row
	mu          sync.Mutex
	q           *queue
	closed      bool
}

var _ krylov.Operator[*cuda.Buffer[float64]] = (*CSR)(nil)

// UploadCSR copies the square n×n CSR matrix (n = len(rowPtr) − 1) given
// by its arrays to d: the entries of row i are col[rowPtr[i]:rowPtr[i+1]]
// with values val[rowPtr[i]:rowPtr[i+1]]. The structure is checked (rowPtr
// starts at 0, never decreases and ends at len(col) = len(val); columns in
// [0, n)), since the kernels trust it; columns need not be sorted.
func UploadCSR(d *cuda.Device, rowPtr, col []int32, val []float64) (*CSR, error) {
	return uploadCSR(d, len(rowPtr)-1, len(rowPtr)-1, rowPtr, col, val)
}

// UploadSparse copies a sparse.CSR (N×M) to d, like UploadCSR.
func UploadSparse(d *cuda.Device, a *sparse.CSR) (*CSR, error) {
	if a == nil {
		return nil, fmt.Errorf("%w: cuda: nil matrix", ErrSpace)
	}
	return uploadCSR(d, a.N, a.M, a.RowPtr, a.Col, a.Val)
}

func uploadCSR(d *cuda.Device, n, m int, rowPtr, col []int32, val []float64) (*CSR, error) {
	if err := checkCSR(n, m, rowPtr, col, val); err != nil {
		return nil, err
	}
	k, err := theKernels()
	if err != nil {
		return nil, fmt.Errorf("cuda: a CSR matrix of order %d×%d: %w", n, m, err)
	}
	a := &CSR{dev: d, n: n, m: m, nnz: len(val), k: k}
	a.shift.Store(int32(threadsPerRowShift(a.nnz, n)))
	if a.q, err = newQueue(d, 0, a.what); err != nil {
		return nil, err
	}
	fail := func(err error) (*CSR, error) {
		_ = a.Close()
		return nil, err
	}
	if a.rowPtr, err = d.AllocBytes(4 * int64(n+1)); err != nil {
		return fail(err)
	}
	if a.col, err = d.AllocBytes(4 * int64(max(1, a.nnz))); err != nil {
		return fail(err)
	}
	if a.val, err = cuda.Alloc[float64](d, max(1, a.nnz)); err != nil {
		return fail(err)
	}
	err = d.Enqueue(func() error {
		if e := cu.MemcpyHtoD(a.rowPtr, unsafe.Pointer(&rowPtr[0]), 4*int64(n+1)); e != nil {
			return e
		}
		if a.nnz == 0 {
			return nil
		}
		if e := cu.MemcpyHtoD(a.col, unsafe.Pointer(&col[0]), 4*int64(a.nnz)); e != nil {
			return e
		}
		return cu.MemcpyHtoD(a.val.Ptr(), unsafe.Pointer(&val[0]), 8*int64(a.nnz))
	})
	if err != nil {
		return fail(fmt.Errorf("cuda: uploading a CSR matrix: %w", err))
	}
	return a, nil
}

// checkCSR validates CSR arrays of an n×m matrix.
func checkCSR(n, m int, rowPtr, col []int32, val []float64) error {
	if n < 1 || m < 1 || n >= math.MaxInt32 || m > math.MaxInt32 {
		return fmt.Errorf("%w: cuda: CSR matrix of order %d×%d", ErrSpace, n, m)
	}
	if len(rowPtr) != n+1 || rowPtr[0] != 0 || int(rowPtr[n]) != len(col) || len(col) != len(val) {
		return fmt.Errorf("%w: cuda: CSR arrays inconsistent (n=%d, len(rowPtr)=%d, len(col)=%d, len(val)=%d)",
			ErrSpace, n, len(rowPtr), len(col), len(val))
	}
	for i := range n {
		if rowPtr[i+1] < rowPtr[i] {
			return fmt.Errorf("%w: cuda: CSR row pointers decrease at row %d", ErrSpace, i)
		}
	}
	for p, j := range col {
		if j < 0 || int(j) >= m {
			return fmt.Errorf("%w: cuda: CSR entry %d has column %d outside [0, %d)", ErrSpace, p, j, m)
		}
	}
	return nil
}

// threadsPerRowShift chooses log2 of the threads per row: the largest
// power of two not above a quarter of the average row length, at most 32
// (a warp). On the H100, for the 5-point operator with N = 10^6 (5 entries
// a row), one or two threads per row run at 2.3 TB/s, four at 1.95 and
// eight at 1.4: a thread does best with several entries of its row, its
// neighbours' entries coming from the same cache lines.
func threadsPerRowShift(nnz, n int) int {
	q := nnz / n / 4
	shift := 0
	for shift < 5 && 2<<shift <= q {
		shift++
	}
	return shift
}

func (a *CSR) what() string {
	return fmt.Sprintf("CSR product of order %d×%d, %d entries", a.n, a.m, a.nnz)
}

// Rows returns the number of rows.
func (a *CSR) Rows() int { return a.n }

// Cols returns the number of columns.
func (a *CSR) Cols() int { return a.m }

// NNZ returns the number of stored entries.
func (a *CSR) NNZ() int { return a.nnz }

// ThreadsPerRow returns the threads that share a row in the product.
func (a *CSR) ThreadsPerRow() int { return 1 << a.shift.Load() }

// SetThreadsPerRow sets the threads that share a row in the product: a
// power of two from 1 to 32 (tuning; UploadCSR chooses from the average
// row length).
func (a *CSR) SetThreadsPerRow(t int) error {
	if t < 1 || t > 32 || t&(t-1) != 0 {
		return fmt.Errorf("cuda: %d threads per row: need a power of two from 1 to 32", t)
	}
	shift := int32(0)
	for 1<<shift < t {
		shift++
	}
	a.shift.Store(shift)
	return nil
}

// enqueue launches the product y = A·x on stream st (device thread).
func (a *CSR) enqueue(st cu.Stream, x, y cu.DevicePtr, f64 bool) error {
	k, val := a.k.spmv64, a.val.Ptr()
	if !f64 {
		k, val = a.k.spmv32, a.val32.Ptr()
	}
	shift := a.shift.Load()
	threads := int64(a.n) << shift
	grid := int((threads + vecBlock - 1) / vecBlock)
	return k.Launch(a.dev, cuda.Dim3{X: grid}, cuda.Dim3{X: vecBlock}, 0, st,
		&kernels.CsrSpmvArgs{N: int32(a.n), Shift: shift, RowPtr: a.rowPtr, Col: a.col, Val: val, X: x, Y: y})
}

// Apply sets y = A·x on the matrix's stream and returns when y is
// complete. x has Cols() and y Rows() elements; y must not be x.
func (a *CSR) Apply(ctx context.Context, x, y *cuda.Buffer[float64]) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.checkXY(checkVec(a.dev, a.m, x), checkVec(a.dev, a.n, y), x == y || x != nil && y != nil && x.Ptr() == y.Ptr()); err != nil {
		return err
	}
	return a.q.exec(true, false, func() error { return a.enqueue(a.q.stream, x.Ptr(), y.Ptr(), true) })
}

// Apply32 is Apply in float32: y = A·x with the values rounded to float32
// (copied on the device on the first call) and float32 vectors.
func (a *CSR) Apply32(ctx context.Context, x, y *cuda.Buffer[float32]) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.checkXY(checkVec(a.dev, a.m, x), checkVec(a.dev, a.n, y), x == y || x != nil && y != nil && x.Ptr() == y.Ptr()); err != nil {
		return err
	}
	if a.val32 == nil {
		v, err := cuda.Alloc[float32](a.dev, a.val.Len())
		if err != nil {
			return err
		}
		if err := a.q.exec(true, false, func() error {
			return kernels.VecF64ToF32{}.Launch(a.dev, cuda.Dim3{X: a.q.grid(a.val.Len(), elemBlocksPerSM)}, cuda.Dim3{X: vecBlock}, 0, a.q.stream,
				&kernels.VecF64ToF32Args{N: int64(a.val.Len()), Scale: 1, Scalep: 0, X: a.val.Ptr(), Y: v.Ptr()})
		}); err != nil {
			_ = v.Free()
			return err
		}
		a.val32 = v
	}
	return a.q.exec(true, false, func() error { return a.enqueue(a.q.stream, x.Ptr(), y.Ptr(), false) })
}

// checkXY combines the argument checks of a product (the lock held).
func (a *CSR) checkXY(ex, ey error, same bool) error {
	switch {
	case a.closed:
		return cuda.ErrClosed
	case ex != nil:
		return fmt.Errorf("x: %w", ex)
	case ey != nil:
		return fmt.Errorf("y: %w", ey)
	case same:
		return fmt.Errorf("%w: cuda: CSR product needs y apart from x", ErrSpace)
	}
	return nil
}

// Close frees the matrix's device memory and stream.
func (a *CSR) Close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return nil
	}
	a.closed = true
	if a.q != nil {
		a.q.close()
	}
	var errs []error
	for _, p := range []cu.DevicePtr{a.rowPtr, a.col} {
		if p != 0 {
			errs = append(errs, a.dev.Enqueue(func() error { return cu.MemFree(p) }))
		}
	}
	for _, b := range []*cuda.Buffer[float64]{a.val} {
		if b != nil {
			errs = append(errs, b.Free())
		}
	}
	if a.val32 != nil {
		errs = append(errs, a.val32.Free())
	}
	return errors.Join(errs...)
}

// MixedPrecision runs a float32 preconditioner on the GPU inside a float64
// iteration of a Space (the mixed-precision strategy of SPIKE::GPU, §4 of
// spike-gpu-li2014), like krylov.MixedPrecision on the host: Apply scales r
// by the power of two 2^-e that brings its largest entry into [0.5, 1),
// rounds it to float32, calls the float32 solve and widens its result to
// float64, scaled back by 2^e (exact, M⁻¹ being linear), giving the same
// bits as krylov.MixedPrecision with the same float32 solve. The largest
// entry and the scale are found on the GPU, and one wait covers them and the
// rounding. The float32 solve may run on any stream of the device, and must
// return when z is complete.
//
// The float32 vectors are owned by the MixedPrecision and reused; Apply
// holds a lock while it uses them.
type MixedPrecision struct {
	sp       *Space
	apply    func(ctx context.Context, r, z *cuda.Buffer[float32]) error
	mu       sync.Mutex
	r32, z32 *cuda.Buffer[float32]
}

var _ krylov.Preconditioner[*cuda.Buffer[float64]] = (*MixedPrecision)(nil)

// NewMixedPrecision wraps apply, a float32 preconditioner on device
// vectors of sp's length that sets z ≈ M⁻¹·r (and must not keep r or z),
// into a krylov.Preconditioner for sp's vectors. It allocates the two
// float32 vectors; Close frees them.
func NewMixedPrecision(sp *Space, apply func(ctx context.Context, r, z *cuda.Buffer[float32]) error) (*MixedPrecision, error) {
	m := &MixedPrecision{sp: sp, apply: apply}
	var err error
	if m.r32, err = cuda.Alloc[float32](sp.dev, sp.n); err != nil {
		return nil, err
	}
	if m.z32, err = cuda.Alloc[float32](sp.dev, sp.n); err != nil {
		_ = m.r32.Free()
		return nil, err
	}
	return m, nil
}

// Apply sets z ≈ M⁻¹·r through the float32 preconditioner. It fails with
// an error wrapping krylov.ErrNonFinite when r holds NaN or ±Inf, and sets
// z = 0 without calling the preconditioner when r = 0.
func (m *MixedPrecision) Apply(ctx context.Context, r, z *cuda.Buffer[float64]) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.r32 == nil {
		return cuda.ErrClosed
	}
	sp := m.sp
	// max |r_i| and the scales (res[0..2], and the down scale in
	// scratch), then r32 = float32(r·2^-e), in one wait.
	sp.mu.Lock()
	err := sp.check(r, z)
	if err == nil {
		err = sp.q.exec(true, false, func() error {
			if err := sp.amax(r, sp.q.scratch+scratchScale, false); err != nil {
				return err
			}
			return sp.toFloat32(1, sp.q.scratch+scratchScale, r, m.r32)
		})
	}
	amax, up := sp.q.res[0], sp.q.res[2]
	sp.mu.Unlock()
	if err != nil {
		return err
	}
	if math.IsNaN(amax) || math.IsInf(amax, 0) {
		return fmt.Errorf("%w: cuda: MixedPrecision input", krylov.ErrNonFinite)
	}
	if amax == 0 {
		return sp.Zero(z)
	}
	if err := m.apply(ctx, m.r32, m.z32); err != nil {
		return fmt.Errorf("cuda: float32 preconditioner: %w", err)
	}
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if err := sp.check(z); err != nil {
		return err
	}
	return sp.q.exec(false, false, func() error { return sp.fromFloat32(up, m.z32, z) })
}

// Close frees the float32 vectors.
func (m *MixedPrecision) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.r32 == nil {
		return nil
	}
	err := errors.Join(m.r32.Free(), m.z32.Free())
	m.r32, m.z32 = nil, nil
	return err
}
