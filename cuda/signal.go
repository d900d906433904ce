//go:build cuda

package cuda

// #include <cuda.h>
import "C"

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"time"
	"unsafe"

	"gorgonia.org/cu"
)

// spinFor is how long a waiting call polls the completion word before it
// blocks in the driver: long enough for small solves (a few to tens of
// microseconds), short enough not to burn a core on long ones.
const spinFor = 200 * time.Microsecond

// doneSignal tells the host that the work enqueued on a stream is finished
// without a driver round trip: after the work, a one-thread kernel
// (signal_done) writes the call's sequence number, with the status flag in
// bit 0, into a word of mapped page-locked host memory, which the host
// polls. A device-to-host copy of the flag followed by a stream
// synchronisation costs two driver calls and their wake-ups instead.
type doneSignal struct {
	host *uint32      // the word, as the host sees it
	dev  cu.DevicePtr // the same word, as kernels see it
	seq  uint32       // sequence number of the last enqueued signal (even)
}

// newDoneSignal allocates the mapped word (device thread).
func newDoneSignal() (*doneSignal, error) {
	p, dp, err := AllocMapped(4, "the completion word")
	if err != nil {
		return nil, err
	}
	s := &doneSignal{host: (*uint32)(p), dev: dp}
	atomic.StoreUint32(s.host, 0)
	return s, nil
}

// free releases the word (device thread).
func (s *doneSignal) free() {
	if s != nil && s.host != nil {
		C.cuMemFreeHost(unsafe.Pointer(s.host))
		s.host = nil
	}
}

// enqueue launches signal_done on stream st after the work already there;
// flag is the device address of an int32 status flag (device thread).
func (s *doneSignal) enqueue(d *Device, st cu.Stream, flag cu.DevicePtr) error {
	return d.Launch("signal_done", Dim3{X: 1}, Dim3{X: 1}, 0, st, flag, s.dev, int32(s.next()))
}

// next advances to the sequence number of a new signal and returns it.
func (s *doneSignal) next() uint32 {
	s.seq += 2
	return s.seq
}

// wait returns when the last enqueued signal has arrived, with the status
// flag it carried. It polls the word for up to spinFor without holding the
// device, then blocks in cuStreamSynchronize, which also reports a failed
// kernel (after which the signal never comes). what names the work for
// errors.
func (s *doneSignal) wait(d *Device, st cu.Stream, what func() string) (flag bool, err error) {
	want := s.seq
	start := time.Now()
	for i := 1; ; i++ {
		if v := atomic.LoadUint32(s.host); v&^1 == want {
			return v&1 != 0, nil
		}
		if i%64 == 0 {
			if time.Since(start) > spinFor {
				break
			}
			if i%4096 == 0 {
				runtime.Gosched()
			}
		}
	}
	if err := d.Enqueue(func() error { return st.Synchronize() }); err != nil {
		return false, fmt.Errorf("cuda: %s: %w", what(), err)
	}
	if v := atomic.LoadUint32(s.host); v&^1 == want {
		return v&1 != 0, nil
	}
	return false, fmt.Errorf("cuda: %s: the stream finished without its completion signal", what())
}
