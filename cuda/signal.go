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

// SpinFor is how long a waiting call polls the completion word before it
// blocks in the driver: long enough for small solves (a few to tens of
// microseconds), short enough not to burn a core on long ones.
const SpinFor = 200 * time.Microsecond

// DoneSignal tells the host that the work enqueued on a stream is finished
// without a driver round trip: after the work, a one-thread kernel
// (signal_done) writes the call's sequence number, with the status flag in
// bit 0, into a word of mapped page-locked host memory, which the host
// polls. A device-to-host copy of the flag followed by a stream
// synchronisation costs two driver calls and their wake-ups instead.
type DoneSignal struct {
	host  *uint32      // the word, as the host sees it
	dev   cu.DevicePtr // the same word, as kernels see it
	seq   uint32       // sequence number of the last enqueued signal (even)
	owned bool         // NewDoneSignal allocated the word
}

// NewDoneSignal allocates the mapped word (device thread).
func NewDoneSignal() (*DoneSignal, error) {
	p, dp, err := AllocMapped(4, "the completion word")
	if err != nil {
		return nil, err
	}
	s := &DoneSignal{host: (*uint32)(p), dev: dp, owned: true}
	atomic.StoreUint32(s.host, 0)
	return s, nil
}

// SignalAt is a DoneSignal on a word of mapped memory the caller owns
// (host is the host's view of it, dev the kernels'); Free leaves it.
func SignalAt(host *uint32, dev cu.DevicePtr) *DoneSignal {
	return &DoneSignal{host: host, dev: dev}
}

// Word is the device address of the word, for kernels that write the
// signal themselves (the sequence number of Next, the flag in bit 0).
func (s *DoneSignal) Word() cu.DevicePtr { return s.dev }

// Seq is the sequence number of the last signal (Next's last result).
func (s *DoneSignal) Seq() uint32 { return s.seq }

// Load reads the word: a sequence number, with the flag in bit 0.
func (s *DoneSignal) Load() uint32 { return atomic.LoadUint32(s.host) }

// Free releases the word NewDoneSignal allocated (device thread).
func (s *DoneSignal) Free() {
	if s != nil && s.owned && s.host != nil {
		C.cuMemFreeHost(unsafe.Pointer(s.host))
		s.host = nil
	}
}

// Enqueue launches signal_done on stream st after the work already there;
// flag is the device address of an int32 status flag (device thread).
func (s *DoneSignal) Enqueue(d *Device, st cu.Stream, flag cu.DevicePtr) error {
	return d.Launch("signal_done", Dim3{X: 1}, Dim3{X: 1}, 0, st, flag, s.dev, int32(s.Next()))
}

// Next advances to the sequence number of a new signal and returns it.
func (s *DoneSignal) Next() uint32 {
	s.seq += 2
	return s.seq
}

// Wait returns when the last enqueued signal has arrived, with the status
// flag it carried. It polls the word for up to SpinFor without holding the
// device, then blocks in cuStreamSynchronize, which also reports a failed
// kernel (after which the signal never comes). what names the work for
// errors.
func (s *DoneSignal) Wait(d *Device, st cu.Stream, what func() string) (flag bool, err error) {
	want := s.seq
	start := time.Now()
	for i := 1; ; i++ {
		if v := atomic.LoadUint32(s.host); v&^1 == want {
			return v&1 != 0, nil
		}
		if i%64 == 0 {
			if time.Since(start) > SpinFor {
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
