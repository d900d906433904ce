//go:build cuda

package cuda

// #include <cuda.h>
import "C"

import (
	"errors"
	"fmt"
	"sync/atomic"
	"time"
	"unsafe"

	"gorgonia.org/cu"
)

// Gate holds a stream while the host queues timed work behind it, so that
// CUDA events around a solve measure the GPU's time for it and not the
// host's launch calls. Without a gate, a small solve's events also count
// the time the host spends in cuLaunchKernel after the first event has
// already been recorded on an idle GPU (about 5 µs on the lent H100s,
// against 2–4 µs of GPU work).
//
// Use: Hold on the stream, queue the warm-up-free repetitions (restores,
// events, solves), Open, synchronize the stream, then check Expired. A
// held stream that is never opened is released after the limit given to
// Hold, so a call that waits for the stream inside the queued work (a
// peer library that synchronizes) cannot hang: the gate expires, the work
// runs paced by the host, and Expired says so.
//
// A Gate belongs to one Device. Hold runs on the device thread (inside
// Device.Do); NewGate and Close outside it; Open and Expired anywhere.
type Gate struct {
	dev  *Device
	host *[2]uint32   // [0]: open (non-zero), [1]: expired, as the host sees them
	ptr  cu.DevicePtr // the same words, as the kernel sees them
}

// ErrGateHeld is returned by Hold when the gate still holds a stream.
var ErrGateHeld = errors.New("cuda: the gate already holds a stream")

// NewGate allocates a gate (two words of mapped, page-locked host memory).
// Call it outside Device.Do.
func (d *Device) NewGate() (*Gate, error) {
	var g *Gate
	err := d.do(func() error {
		var err error
		g, err = d.newGate()
		return err
	})
	return g, err
}

// newGate is NewGate on the device thread.
func (d *Device) newGate() (*Gate, error) {
	var p unsafe.Pointer
	if r := C.cuMemHostAlloc(&p, 8, C.CU_MEMHOSTALLOC_DEVICEMAP|C.CU_MEMHOSTALLOC_PORTABLE); r != C.CUDA_SUCCESS {
		return nil, fmt.Errorf("cuda: allocating the gate's mapped host memory: %w", driverError(r))
	}
	var dp C.CUdeviceptr
	if r := C.cuMemHostGetDevicePointer(&dp, p, 0); r != C.CUDA_SUCCESS {
		C.cuMemFreeHost(p)
		return nil, fmt.Errorf("cuda: mapping the gate into the device: %w", driverError(r))
	}
	g := &Gate{dev: d, host: (*[2]uint32)(p), ptr: cu.DevicePtr(dp)}
	atomic.StoreUint32(&g.host[0], 1) // open: holds nothing
	atomic.StoreUint32(&g.host[1], 0)
	return g, nil
}

// timingGate is the device's own gate for Plan.Time (device thread).
func (d *Device) timingGate() (*Gate, error) {
	if d.gate == nil {
		g, err := d.newGate()
		if err != nil {
			return nil, err
		}
		d.gate = g
	}
	return d.gate, nil
}

// Hold closes the gate and queues on s a one-thread kernel that waits for
// Open (or for limit to pass on the device's clock); the work queued on s
// after it waits with it. It runs on the device thread (inside
// Device.Do). limit ≤ 0 means one second.
func (g *Gate) Hold(s cu.Stream, limit time.Duration) error {
	if g.host == nil {
		return ErrClosed
	}
	if atomic.LoadUint32(&g.host[0]) == 0 {
		return ErrGateHeld
	}
	if limit <= 0 {
		limit = time.Second
	}
	atomic.StoreUint32(&g.host[1], 0)
	atomic.StoreUint32(&g.host[0], 0)
	if err := g.dev.launch("gate_wait", dim3{X: 1}, dim3{X: 1}, 0, s, g.ptr, int64(limit.Nanoseconds())); err != nil {
		atomic.StoreUint32(&g.host[0], 1)
		return err
	}
	return nil
}

// Open lets the held stream go on.
func (g *Gate) Open() {
	if g.host != nil {
		atomic.StoreUint32(&g.host[0], 1)
	}
}

// Expired reports whether the last Hold gave up waiting before Open (read
// it after the stream has synchronized).
func (g *Gate) Expired() bool {
	return g.host != nil && atomic.LoadUint32(&g.host[1]) != 0
}

// Close opens the gate and frees it; the stream it held must have
// finished. Call it outside Device.Do.
func (g *Gate) Close() error {
	if g.host == nil {
		return nil
	}
	return g.dev.do(func() error {
		g.free()
		return nil
	})
}

// free is Close on the device thread.
func (g *Gate) free() {
	if g.host == nil {
		return
	}
	g.Open()
	C.cuMemFreeHost(unsafe.Pointer(g.host))
	g.host = nil
}
