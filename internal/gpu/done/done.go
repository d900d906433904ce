//go:build cuda

// Package done tells the host that the work enqueued on a stream is
// finished without a driver round trip: after the work, a one-thread
// kernel (kernels.SignalDone) writes the call's sequence number, with a
// status flag in bit 0, into a word of mapped page-locked host memory,
// which the host polls (Signal). A device-to-host copy of the flag followed
// by a stream synchronisation costs two driver calls and their wake-ups
// instead.
package done

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"time"
	"unsafe"

	"gorgonia.org/cu"

	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/internal/gpu/kernels"
)

// SpinFor is how long a waiting call polls the completion word before it
// blocks in the driver: long enough for small solves (a few to tens of
// microseconds), short enough not to burn a core on long ones.
const SpinFor = 200 * time.Microsecond

// Signal is a completion word in mapped host memory and the sequence
// number of the last signal enqueued on it. Sequence numbers are even and
// grow by two per signal; bit 0 of the word carries the status flag. The
// owner serialises its use.
type Signal struct {
	host  *uint32      // the word, as the host sees it
	dev   cu.DevicePtr // the same word, as kernels see it
	seq   uint32       // sequence number of the last enqueued signal (even)
	owned bool         // NewSignal allocated the word
}

// NewSignal allocates the mapped word, zeroed (device thread: inside
// Device.Enqueue or Device.Do).
func NewSignal() (*Signal, error) {
	p, dp, err := cuda.AllocMapped(4, "the completion word")
	if err != nil {
		return nil, err
	}
	s := &Signal{host: (*uint32)(p), dev: dp, owned: true}
	atomic.StoreUint32(s.host, 0)
	return s, nil
}

// At is a Signal on a word of mapped memory the caller owns (host is the
// host's view of it, dev the kernels'); Free leaves it.
func At(host *uint32, dev cu.DevicePtr) *Signal {
	return &Signal{host: host, dev: dev}
}

// Word is the device address of the word, for kernels that write the
// signal themselves (the sequence number of Next, the flag in bit 0).
func (s *Signal) Word() cu.DevicePtr { return s.dev }

// Seq is the sequence number of the last signal (Next's last result).
func (s *Signal) Seq() uint32 { return s.seq }

// Load reads the word: a sequence number, with the flag in bit 0.
func (s *Signal) Load() uint32 { return atomic.LoadUint32(s.host) }

// Free releases the word NewSignal allocated (device thread); a Signal
// made by At leaves its word alone.
func (s *Signal) Free() {
	if s != nil && s.owned && s.host != nil {
		_ = cu.MemFreeHost(unsafe.Pointer(s.host))
		s.host = nil
	}
}

// Enqueue launches kernels.SignalDone on stream st after the work already
// there, with the sequence number of Next; flag is the device address of
// an int32 status flag, whose being non-zero sets bit 0 of the word
// (device thread).
func (s *Signal) Enqueue(d *cuda.Device, st cu.Stream, flag cu.DevicePtr) error {
	return kernels.SignalDone{}.Launch(d, cuda.Dim3{X: 1}, cuda.Dim3{X: 1}, 0, st,
		&kernels.SignalDoneArgs{Flag: flag, Word: s.dev, Seq: s.Next()})
}

// Next advances to the sequence number of a new signal and returns it.
func (s *Signal) Next() uint32 {
	s.seq += 2
	return s.seq
}

// Wait returns when the last enqueued signal has arrived, with the status
// flag it carried. It polls the word for up to SpinFor without holding the
// device, then blocks in cuStreamSynchronize, which also reports a failed
// kernel (after which the signal never comes). what names the work for
// errors.
func (s *Signal) Wait(d *cuda.Device, st cu.Stream, what func() string) (flag bool, err error) {
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
