//go:build cuda

package gpuclock

// #include <cuda.h>
import "C"

import (
	"errors"
	"sync/atomic"
	"time"
	"unsafe"

	"gorgonia.org/cu"

	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/internal/gpu/kernels"
)

// gate holds a stream while the host queues timed work behind it
// (cuda.TimeEvents with a Clock's gate), so that CUDA events around a
// solve measure the GPU's time for it and not the host's launch calls.
// Without it, a small solve's events also count the time the host spends
// in cuLaunchKernel after the first event has been recorded on an idle GPU
// (about 5 µs on the lent H100s, against 2–4 µs of GPU work).
//
// Use: hold on the stream, queue the repetitions (restores, events,
// solves), open, synchronize the stream, then check expired. A held stream
// that is never opened is released after the limit given to hold, so a
// call that waits for the stream inside the queued work (a peer library
// that synchronizes) cannot hang: the gate expires, the work runs paced by
// the host, and expired says so. hold and free run on the device thread.
// A gate implements cuda.Gate.
type gate struct {
	dev  *cuda.Device
	host *[2]uint32   // [0]: open (non-zero), [1]: expired, as the host sees them
	ptr  cu.DevicePtr // the same words, as the kernel sees them
}

var _ cuda.Gate = (*gate)(nil)

// errGateHeld is returned by hold when the gate still holds a stream.
var errGateHeld = errors.New("gpuclock: the gate already holds a stream")

// newGate allocates a gate of dev, open (device thread).
func newGate(dev *cuda.Device) (*gate, error) {
	p, dp, err := cuda.AllocMapped(8, "the timing gate")
	if err != nil {
		return nil, err
	}
	g := &gate{dev: dev, host: (*[2]uint32)(p), ptr: dp}
	atomic.StoreUint32(&g.host[0], 1) // open: holds nothing
	atomic.StoreUint32(&g.host[1], 0)
	return g, nil
}

// hold closes the gate and queues on s a one-thread kernel (GateWait)
// that waits for open, or for limit to pass on the device's clock; the
// work queued on s after it waits with it. limit ≤ 0 means one second.
func (g *gate) hold(s cu.Stream, limit time.Duration) error {
	if g.host == nil {
		return ErrClosed
	}
	if atomic.LoadUint32(&g.host[0]) == 0 {
		return errGateHeld
	}
	if limit <= 0 {
		limit = time.Second
	}
	atomic.StoreUint32(&g.host[1], 0)
	atomic.StoreUint32(&g.host[0], 0)
	if err := (kernels.GateWait{}).Launch(g.dev, cuda.Dim3{X: 1}, cuda.Dim3{X: 1}, 0, s,
		&kernels.GateWaitArgs{Gate: g.ptr, LimitNs: uint64(limit.Nanoseconds())}); err != nil {
		atomic.StoreUint32(&g.host[0], 1)
		return err
	}
	return nil
}

// Hold is hold with a limit of one second (cuda.Gate).
func (g *gate) Hold(s cu.Stream) error { return g.hold(s, time.Second) }

// Open lets the held stream go on.
func (g *gate) Open() {
	if g.host != nil {
		atomic.StoreUint32(&g.host[0], 1)
	}
}

// Expired reports whether the last hold gave up waiting before Open (read
// it after the stream has synchronized).
func (g *gate) Expired() bool {
	return g.host != nil && atomic.LoadUint32(&g.host[1]) != 0
}

// free opens the gate and frees it; the stream it held must have finished
// (device thread).
func (g *gate) free() {
	if g.host == nil {
		return
	}
	g.Open()
	C.cuMemFreeHost(unsafe.Pointer(g.host))
	g.host = nil
}
