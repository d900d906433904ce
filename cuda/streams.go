//go:build cuda

package cuda

// #include <cuda.h>
import "C"

import (
	"fmt"
	"unsafe"

	"gorgonia.org/cu"
)

// Stream is a queue of work on a device: one bandsolve made (NewStream),
// or one other CUDA code made and passes in (WrapStream), so that solves
// are ordered with the caller's own kernels and copies.
type Stream struct {
	dev   *Device
	h     cu.Stream
	owned bool
}

// NewStream makes a non-blocking stream on the device (one that does not
// wait for the legacy default stream). Close it when done.
func (d *Device) NewStream() (*Stream, error) {
	s := &Stream{dev: d, owned: true}
	err := d.Enqueue(func() error {
		var err error
		s.h, err = cu.MakeStream(cu.NonBlocking)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("cuda: creating a stream on %s: %w", d.Name(), err)
	}
	return s, nil
}

// WrapStream returns the stream whose CUstream handle is h, made by other
// code in the device's primary context (CuPy's stream.ptr, PyTorch's
// cuda_stream). Close does not destroy it. The null handle is the legacy
// default stream.
func WrapStream(d *Device, h uintptr) *Stream {
	var s cu.Stream
	*(*uintptr)(unsafe.Pointer(&s)) = h
	return &Stream{dev: d, h: s}
}

// Handle returns the stream's driver handle.
func (s *Stream) Handle() cu.Stream { return s.h }

// Device returns the stream's device.
func (s *Stream) Device() *Device { return s.dev }

// Synchronize waits for the work queued on the stream.
func (s *Stream) Synchronize() error {
	return s.dev.Enqueue(func() error {
		if r := C.cuStreamSynchronize(*(*C.CUstream)(unsafe.Pointer(&s.h))); r != C.CUDA_SUCCESS {
			return fmt.Errorf("cuda: synchronising a stream: %w", DriverError(r))
		}
		return nil
	})
}

// Close destroys a stream NewStream made; it does nothing to a wrapped one.
func (s *Stream) Close() error {
	if !s.owned || s.h == (cu.Stream{}) {
		return nil
	}
	err := s.dev.Enqueue(func() error { return s.h.Destroy() })
	s.h = cu.Stream{}
	return err
}
