//go:build cuda

package gpuclock

// #include <cuda.h>
// #include <time.h>
//
// static double bs_now(void) {
//     struct timespec t;
//     clock_gettime(CLOCK_MONOTONIC, &t);
//     return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
// }
//
// // bs_noop is an empty C function: the cost of a cgo call.
// static void bs_noop(void) {}
//
// // bs_probe_floor runs iters solves of the floor kind, all in C on one
// // thread: launch signal_done (f) on s, then wait for it by
// // mode 0: polling the mapped word; 1: cuStreamSynchronize;
// // 2: an event recorded after the launch, cuEventQuery in a spin loop.
// // It returns the mean time per iteration and the mean time of the
// // launch call alone (ns).
// static CUresult bs_probe_floor(CUcontext ctx, CUfunction f, CUstream s, CUevent ev, int mode, int iters,
//                                unsigned long long flag, unsigned long long wdev, volatile unsigned int *whost,
//                                unsigned int seq0, double *total, double *launch) {
//     CUresult r = cuCtxSetCurrent(ctx);
//     if (r != CUDA_SUCCESS) return r;
//     double tl = 0;
//     unsigned long long slots[3];
//     void *ptrs[3] = {&slots[0], &slots[1], &slots[2]};
//     double t0 = bs_now();
//     for (int i = 0; i < iters; i++) {
//         unsigned int seq = seq0 + 2u * (unsigned int)(i + 1);
//         slots[0] = flag; slots[1] = wdev; slots[2] = seq;
//         double a = bs_now();
//         r = cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, ptrs, NULL);
//         tl += bs_now() - a;
//         if (r != CUDA_SUCCESS) return r;
//         if (mode == 0) {
//             double w0 = bs_now();
//             while ((*whost & ~1u) != seq) {
//                 if (bs_now() - w0 > 1e9) return CUDA_ERROR_LAUNCH_TIMEOUT;
//             }
//         } else if (mode == 1) {
//             if ((r = cuStreamSynchronize(s)) != CUDA_SUCCESS) return r;
//         } else {
//             if ((r = cuEventRecord(ev, s)) != CUDA_SUCCESS) return r;
//             while ((r = cuEventQuery(ev)) == CUDA_ERROR_NOT_READY) {}
//             if (r != CUDA_SUCCESS) return r;
//         }
//     }
//     *total = (bs_now() - t0) / iters;
//     *launch = tl / iters;
//     return CUDA_SUCCESS;
// }
//
// // bs_probe_echo measures the round trip through the persistent
// // probe_echo kernel (already running): write i to *in, spin until *out
// // holds it. Mean ns per round trip, −1 when a round trip took over a
// // second (the kernel does not answer).
// static double bs_probe_echo(volatile unsigned int *in, volatile unsigned int *out, int iters) {
//     double t0 = bs_now();
//     for (int i = 1; i <= iters; i++) {
//         *in = (unsigned int)i;
//         double w0 = bs_now();
//         while (*out != (unsigned int)i) {
//             if (bs_now() - w0 > 1e9) return -1;
//         }
//     }
//     return (bs_now() - t0) / iters;
// }
//
// // bs_probe_event_empty times the launch of f (no parameters, one
// // thread) between two events, reps times; it writes the times (ms).
// static CUresult bs_probe_event_empty(CUcontext ctx, CUfunction f, CUstream s, CUevent e0, CUevent e1, int reps, float *ms) {
//     CUresult r = cuCtxSetCurrent(ctx);
//     if (r != CUDA_SUCCESS) return r;
//     for (int i = 0; i < reps; i++) {
//         if ((r = cuEventRecord(e0, s)) != CUDA_SUCCESS) return r;
//         if ((r = cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, NULL, NULL)) != CUDA_SUCCESS) return r;
//         if ((r = cuEventRecord(e1, s)) != CUDA_SUCCESS) return r;
//         if ((r = cuEventSynchronize(e1)) != CUDA_SUCCESS) return r;
//         if ((r = cuEventElapsedTime(&ms[i], e0, e1)) != CUDA_SUCCESS) return r;
//     }
//     return CUDA_SUCCESS;
// }
//
// static CUresult bs_probe_launch_echo(CUcontext ctx, CUfunction f, CUstream s, unsigned long long in, unsigned long long out) {
//     CUresult r = cuCtxSetCurrent(ctx);
//     if (r != CUDA_SUCCESS) return r;
//     unsigned long long slots[2] = {in, out};
//     void *ptrs[2] = {&slots[0], &slots[1]};
//     return cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, ptrs, NULL);
// }
import "C"

import (
	"fmt"
	"slices"
	"sort"
	"sync/atomic"
	"time"
	"unsafe"

	"gorgonia.org/cu"

	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/internal/gpu/kernels"
)

// This file holds latency probes for the benchmarks: the floors under a
// small solve measured in C, without Go's share (cgo calls, locks).

// probeFloor is the result of one floor probe.
type probeFloor struct {
	total, launch float64 // mean ns per iteration, and of the launch call
}

// probeNoop is one empty cgo call.
func probeNoop() { C.bs_noop() }

// currentContext is the context current on the calling thread (device
// thread: the device's).
func currentContext() (C.CUcontext, error) {
	var ctx C.CUcontext
	if r := C.cuCtxGetCurrent(&ctx); r != C.CUDA_SUCCESS {
		return nil, fmt.Errorf("reading the current context: %w", cuda.DriverError(r))
	}
	return ctx, nil
}

// mappedWord is a word of page-locked host memory mapped into the device,
// zeroed (device thread); free releases it.
type mappedWord struct {
	host *uint32      // the word, as the host sees it
	dev  cu.DevicePtr // the same word, as kernels see it
}

func newMappedWord(what string) (*mappedWord, error) {
	p, dp, err := cuda.AllocMapped(4, what)
	if err != nil {
		return nil, err
	}
	w := &mappedWord{host: (*uint32)(p), dev: dp}
	atomic.StoreUint32(w.host, 0)
	return w, nil
}

func (w *mappedWord) free() {
	if w != nil && w.host != nil {
		C.cuMemFreeHost(unsafe.Pointer(w.host))
		w.host = nil
	}
}

// probeFloorRun runs iters launch-and-wait iterations of signal_done in C
// on dev with the given wait mode (0 poll, 1 stream sync, 2 event query
// spin). blocking makes the stream's flags those of the plans' streams
// (cu.DefaultStream, ordered with the legacy default stream) instead of
// cu.NonBlocking.
func probeFloorRun(dev *cuda.Device, mode, iters int, blocking bool) (probeFloor, error) {
	var out probeFloor
	err := dev.Enqueue(func() error {
		ctx, err := currentContext()
		if err != nil {
			return err
		}
		// The C loop fills the parameters of kernels.SignalDoneArgs:
		// flag, word, seq.
		fn, err := dev.Kernel(kernels.SignalDone{}.Kernel().Name(), 0)
		if err != nil {
			return err
		}
		flags := cu.NonBlocking
		if blocking {
			flags = cu.DefaultStream
		}
		st, err := cu.MakeStream(flags)
		if err != nil {
			return err
		}
		defer func() { _ = st.Destroy() }()
		ev, err := cu.MakeEvent(cu.DisableTiming)
		if err != nil {
			return err
		}
		defer func() { _ = cu.DestroyEvent(&ev) }()
		sig, err := newMappedWord("the completion word")
		if err != nil {
			return err
		}
		defer sig.free()
		flag, err := cu.MemAlloc(4)
		if err != nil {
			return err
		}
		defer func() { _ = cu.MemFree(flag) }()
		if err := cu.MemsetD32(flag, 0, 1); err != nil {
			return err
		}
		var total, launch C.double
		r := C.bs_probe_floor(ctx, *(*C.CUfunction)(unsafe.Pointer(&fn)),
			*(*C.CUstream)(unsafe.Pointer(&st)), *(*C.CUevent)(unsafe.Pointer(&ev)), C.int(mode), C.int(iters),
			C.ulonglong(flag), C.ulonglong(sig.dev), (*C.uint)(unsafe.Pointer(sig.host)), 0, &total, &launch)
		if r != C.CUDA_SUCCESS {
			return fmt.Errorf("floor probe: %w", cuda.DriverError(r))
		}
		out = probeFloor{float64(total), float64(launch)}
		return st.Synchronize()
	})
	if err != nil {
		return out, fmt.Errorf("gpuclock: on %s: %w", dev.Name(), err)
	}
	return out, nil
}

// probeEcho measures the host → persistent kernel → host round trip over
// mapped host memory on dev (ns, mean of iters).
func probeEcho(dev *cuda.Device, iters int) (float64, error) {
	var in, out *mappedWord
	var st cu.Stream
	err := dev.Enqueue(func() error {
		ctx, err := currentContext()
		if err != nil {
			return err
		}
		if in, err = newMappedWord("the echo's input word"); err != nil {
			return err
		}
		if out, err = newMappedWord("the echo's output word"); err != nil {
			return err
		}
		if st, err = cu.MakeStream(cu.NonBlocking); err != nil {
			return err
		}
		// The C call fills the parameters of kernels.ProbeEchoArgs: in,
		// out.
		fn, err := dev.Kernel(kernels.ProbeEcho{}.Kernel().Name(), 0)
		if err != nil {
			return err
		}
		if r := C.bs_probe_launch_echo(ctx, *(*C.CUfunction)(unsafe.Pointer(&fn)),
			*(*C.CUstream)(unsafe.Pointer(&st)), C.ulonglong(in.dev), C.ulonglong(out.dev)); r != C.CUDA_SUCCESS {
			return fmt.Errorf("launching %s: %w", kernels.ProbeEcho{}.Kernel().Name(), cuda.DriverError(r))
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("gpuclock: on %s: %w", dev.Name(), err)
	}
	ns := float64(C.bs_probe_echo((*C.uint)(unsafe.Pointer(in.host)), (*C.uint)(unsafe.Pointer(out.host)), C.int(iters)))
	atomic.StoreUint32(in.host, 0xffffffff)
	if ns < 0 {
		return 0, fmt.Errorf("gpuclock: on %s: %s did not answer within a second", dev.Name(), kernels.ProbeEcho{}.Kernel().Name())
	}
	err = dev.Enqueue(func() error {
		err := st.Synchronize()
		_ = st.Destroy()
		in.free()
		out.free()
		return err
	})
	return ns, err
}

// probeEventEmpty returns the median event-timed duration (ns) of an
// empty one-thread kernel over reps launches on dev.
func probeEventEmpty(dev *cuda.Device, reps int) (float64, error) {
	ms := make([]float32, reps)
	err := dev.Enqueue(func() error {
		ctx, err := currentContext()
		if err != nil {
			return err
		}
		fn, err := dev.Kernel(kernels.ProbeEmpty{}.Kernel().Name(), 0)
		if err != nil {
			return err
		}
		st, err := cu.MakeStream(cu.NonBlocking)
		if err != nil {
			return err
		}
		defer func() { _ = st.Destroy() }()
		e0, err := cu.MakeEvent(cu.DefaultEvent)
		if err != nil {
			return err
		}
		defer func() { _ = cu.DestroyEvent(&e0) }()
		e1, err := cu.MakeEvent(cu.DefaultEvent)
		if err != nil {
			return err
		}
		defer func() { _ = cu.DestroyEvent(&e1) }()
		if r := C.bs_probe_event_empty(ctx, *(*C.CUfunction)(unsafe.Pointer(&fn)),
			*(*C.CUstream)(unsafe.Pointer(&st)), *(*C.CUevent)(unsafe.Pointer(&e0)), *(*C.CUevent)(unsafe.Pointer(&e1)),
			C.int(reps), (*C.float)(unsafe.Pointer(&ms[0]))); r != C.CUDA_SUCCESS {
			return fmt.Errorf("empty-kernel probe: %w", cuda.DriverError(r))
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("gpuclock: on %s: %w", dev.Name(), err)
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i] < ms[j] })
	return float64(ms[len(ms)/2]) * 1e6, nil
}

// probeEventEmptyGated is probeEventEmpty timed by the clock's Timer (as
// the bench times plans): the median event-timed duration (ns) of an
// empty kernel when the host's launch calls stay outside the events.
func probeEventEmptyGated(c *Clock, reps int) (float64, error) {
	dev := c.Device()
	var ts []time.Duration
	err := dev.Enqueue(func() error {
		st, err := cu.MakeStream(cu.NonBlocking)
		if err != nil {
			return err
		}
		defer func() { _ = st.Destroy() }()
		ts, err = c.Timer()(st, 0, reps, nil, func() error {
			return kernels.ProbeEmpty{}.Launch(dev, cuda.Dim3{X: 1}, cuda.Dim3{X: 1}, 0, st, &kernels.ProbeEmptyArgs{})
		})
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("gpuclock: on %s: %w", dev.Name(), err)
	}
	slices.Sort(ts)
	return float64(ts[len(ts)/2].Nanoseconds()), nil
}
