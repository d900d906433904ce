//go:build cuda

package done

import (
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorgonia.org/cu"

	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/internal/gpu/gputest"
)

// dev is the GPU of the tests.
var dev *cuda.Device

func TestMain(m *testing.M) {
	dev = gputest.Open("done")
	gputest.Run(m, dev)
}

// signalRig is a stream and a device int32 status flag.
type signalRig struct {
	st   cu.Stream
	flag cu.DevicePtr
}

func newRig(t *testing.T) *signalRig {
	r := &signalRig{}
	require.NoError(t, dev.Enqueue(func() error {
		var err error
		if r.st, err = cu.MakeStream(cu.NonBlocking); err != nil {
			return err
		}
		if r.flag, err = cu.MemAlloc(4); err != nil {
			return err
		}
		return cu.MemsetD32(r.flag, 0, 1)
	}))
	t.Cleanup(func() {
		_ = dev.Enqueue(func() error {
			_ = r.st.Synchronize()
			_ = r.st.Destroy()
			return cu.MemFree(r.flag)
		})
	})
	return r
}

// setFlag sets the status flag the next signal carries.
func (r *signalRig) setFlag(t *testing.T, v uint32) {
	require.NoError(t, dev.Enqueue(func() error { return cu.MemsetD32Async(r.flag, uint(v), 1, r.st) }))
}

// newTestSignal is a NewSignal made on the device's thread, freed there
// when t ends.
func newTestSignal(t *testing.T) *Signal {
	t.Helper()
	var s *Signal
	require.NoError(t, dev.Enqueue(func() error {
		var err error
		s, err = NewSignal()
		return err
	}))
	t.Cleanup(func() { _ = dev.Enqueue(func() error { s.Free(); return nil }) })
	return s
}

// A signal enqueued behind the work carries its sequence number and the
// status flag; each signal gets the next even number.
func TestSignal(t *testing.T) {
	r := newRig(t)
	s := newTestSignal(t)
	assert.Zero(t, s.Load(), "a new word is zero")
	assert.Zero(t, s.Seq())
	assert.NotZero(t, s.Word())
	what := func() string { return "the test's work" }

	for i, flag := range []uint32{0, 1, 0, 7} {
		r.setFlag(t, flag)
		require.NoError(t, dev.Enqueue(func() error { return s.Enqueue(dev, r.st, r.flag) }))
		got, err := s.Wait(dev, r.st, what)
		require.NoError(t, err)
		seq := uint32(2 * (i + 1))
		assert.Equal(t, seq, s.Seq(), "signal %d", i)
		assert.Equal(t, flag != 0, got, "signal %d: the flag", i)
		want := seq
		if flag != 0 {
			want |= 1
		}
		assert.Equal(t, want, s.Load(), "signal %d: the word", i)
	}
}

// A signal on a word the caller owns writes that word, and Free leaves it.
func TestSignalAt(t *testing.T) {
	r := newRig(t)
	var p unsafe.Pointer
	var dp cu.DevicePtr
	require.NoError(t, dev.Enqueue(func() error {
		var err error
		p, dp, err = cuda.AllocMapped(8, "the test's words")
		return err
	}))
	defer func() { _ = dev.Enqueue(func() error { return cu.MemFreeHost(p) }) }()
	words := (*[2]uint32)(p)
	atomic.StoreUint32(&words[0], 0)
	atomic.StoreUint32(&words[1], 0xdeadbeef)

	s := At(&words[0], dp)
	assert.Equal(t, dp, s.Word())
	r.setFlag(t, 1)
	require.NoError(t, dev.Enqueue(func() error { return s.Enqueue(dev, r.st, r.flag) }))
	flag, err := s.Wait(dev, r.st, func() string { return "the test's work" })
	require.NoError(t, err)
	assert.True(t, flag)
	assert.Equal(t, uint32(3), atomic.LoadUint32(&words[0]))
	assert.Equal(t, uint32(0xdeadbeef), atomic.LoadUint32(&words[1]), "the signal wrote past its word")

	require.NoError(t, dev.Enqueue(func() error { s.Free(); return nil }))
	assert.Equal(t, uint32(3), atomic.LoadUint32(&words[0]), "Free released a word it does not own")
}

// Wait on a signal that was never enqueued gives up after the stream has
// finished and says so.
func TestSignalMissing(t *testing.T) {
	r := newRig(t)
	s := newTestSignal(t)
	s.Next()
	_, err := s.Wait(dev, r.st, func() string { return "the test's work" })
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the test's work")
	assert.Contains(t, err.Error(), "without its completion signal")
}
