//go:build cuda

package cuda

import (
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorgonia.org/cu"
)

var dev *Device

func TestMain(m *testing.M) {
	var err error
	dev, err = Open(0)
	if err != nil {
		fmt.Fprintln(os.Stderr, "cuda tests need a GPU:", err)
		os.Exit(1)
	}
	fmt.Fprintln(os.Stderr, "testing on", dev.Name())
	code := m.Run()
	_ = dev.Close()
	os.Exit(code)
}

func TestOutOfMemory(t *testing.T) {
	_, total, err := dev.MemInfo()
	require.NoError(t, err)
	_, err = Alloc[float64](dev, int(total/8)*2)
	require.ErrorIs(t, err, ErrOutOfMemory)
	assert.Contains(t, err.Error(), "free")
}

func TestDeviceProperties(t *testing.T) {
	p := dev.Properties()
	assert.Positive(t, p.SMs)
	assert.GreaterOrEqual(t, p.Major, 8)
	assert.GreaterOrEqual(t, p.SharedPerBlockOptin, p.SharedPerBlock)
	t.Logf("%s: %+v", dev.Name(), p)
}

// TestSliceAndWrap: a view reads and writes its part of the buffer and
// cannot be freed; a buffer wrapping memory allocated elsewhere reads and
// writes it, and its Free leaves it to its owner.
func TestSliceAndWrap(t *testing.T) {
	host := []float64{0, 1, 2, 3, 4, 5, 6, 7}
	b, err := Upload(dev, host)
	require.NoError(t, err)
	defer b.Free()
	v, err := b.Slice(2, 3)
	require.NoError(t, err)
	assert.Equal(t, 3, v.Len())
	assert.Equal(t, b.Ptr()+16, v.Ptr())
	require.NoError(t, v.CopyFrom([]float64{-2, -3, -4}))
	got := make([]float64, len(host))
	require.NoError(t, b.CopyTo(got))
	assert.Equal(t, []float64{0, 1, -2, -3, -4, 5, 6, 7}, got)
	assert.ErrorIs(t, v.Free(), ErrView)
	_, err = b.Slice(6, 3)
	assert.ErrorIs(t, err, ErrRange)

	var p cu.DevicePtr
	require.NoError(t, dev.Do(func() error {
		var err error
		p, err = cu.MemAlloc(8 * 8)
		return err
	}))
	defer func() { require.NoError(t, dev.Do(func() error { return cu.MemFree(p) })) }()
	w, err := Wrap[float64](dev, p, 8)
	require.NoError(t, err)
	require.NoError(t, w.CopyFromBuffer(b))
	require.NoError(t, w.Free())
	clear(got)
	require.NoError(t, w.CopyTo(got))
	assert.Equal(t, []float64{0, 1, -2, -3, -4, 5, 6, 7}, got)
	_, err = Wrap[float64](dev, p+4, 2)
	assert.ErrorIs(t, err, ErrRange, "misaligned")
	_, err = Wrap[float64](dev, 0, 2)
	assert.ErrorIs(t, err, ErrRange, "null")
}

// A second Open of the same GPU shares the primary context: memory one
// device value allocates is usable through the other, and closing one
// leaves the other working.
func TestPrimaryContextShared(t *testing.T) {
	other, err := Open(dev.Ordinal())
	require.NoError(t, err)
	b, err := Upload(other, []float32{1, 2, 3})
	require.NoError(t, err)
	w, err := Wrap[float32](dev, b.Ptr(), b.Len())
	require.NoError(t, err)
	got := make([]float32, 3)
	require.NoError(t, w.CopyTo(got))
	assert.Equal(t, []float32{1, 2, 3}, got)
	require.NoError(t, b.Free())
	require.NoError(t, other.Close())
	c, err := Upload(dev, []float32{4})
	require.NoError(t, err, "the context outlives one of its two users")
	require.NoError(t, c.Free())
}

// Streams: one made here and one made by other code, wrapped, both order
// copies queued on them; Close destroys only the first.
func TestStreams(t *testing.T) {
	own, err := dev.NewStream()
	require.NoError(t, err)
	assert.Same(t, dev, own.Device())
	var st cu.Stream
	require.NoError(t, dev.Do(func() error {
		var err error
		st, err = cu.MakeStream(cu.NonBlocking)
		return err
	}))
	ext := WrapStream(dev, *(*uintptr)(unsafe.Pointer(&st)))
	assert.Equal(t, st, ext.Handle())
	src, err := Upload(dev, []float64{1, 2, 3, 4})
	require.NoError(t, err)
	defer src.Free()
	for _, s := range []*Stream{own, ext} {
		dst, err := Alloc[float64](dev, 4)
		require.NoError(t, err)
		require.NoError(t, dev.Enqueue(func() error {
			return cu.MemcpyDtoDAsync(dst.Ptr(), src.Ptr(), 32, s.Handle())
		}))
		require.NoError(t, s.Synchronize())
		got := make([]float64, 4)
		require.NoError(t, dst.CopyTo(got))
		assert.Equal(t, []float64{1, 2, 3, 4}, got)
		require.NoError(t, dst.Free())
	}
	require.NoError(t, ext.Close())
	require.NoError(t, dev.Do(func() error { return st.Synchronize() }), "a wrapped stream is its owner's after Close")
	require.NoError(t, dev.Do(func() error { return st.Destroy() }))
	require.NoError(t, own.Close())
	require.NoError(t, own.Close(), "a second Close does nothing")
}

// Value makes a device's attached value once per key; a failed make keeps
// nothing.
func TestValue(t *testing.T) {
	type key struct{ name string }
	var made atomic.Int32
	mk := func() (any, error) { made.Add(1); return "v", nil }
	v, err := dev.Value(key{"a"}, mk)
	require.NoError(t, err)
	assert.Equal(t, "v", v)
	_, err = dev.Value(key{"a"}, mk)
	require.NoError(t, err)
	assert.EqualValues(t, 1, made.Load())
	_, err = dev.Value(key{"b"}, func() (any, error) { return nil, fmt.Errorf("no") })
	require.Error(t, err)
	v, err = dev.Value(key{"b"}, mk)
	require.NoError(t, err)
	assert.Equal(t, "v", v)
}

type stopper struct{ stops atomic.Int32 }

func (s *stopper) Stop() error { s.stops.Add(1); return nil }

// Persistent work is stopped before Do and Synchronize while it runs, and
// not at all once it is removed or not running.
func TestPersistentStoppedBeforeWaits(t *testing.T) {
	p := &stopper{}
	dev.AddPersistent(p)
	require.NoError(t, dev.Do(func() error { return nil }))
	assert.EqualValues(t, 0, p.stops.Load(), "not running: nothing to stop")
	dev.PersistentRunning(1)
	require.NoError(t, dev.Synchronize())
	assert.EqualValues(t, 1, p.stops.Load())
	require.NoError(t, dev.Do(func() error { return nil }))
	assert.EqualValues(t, 2, p.stops.Load())
	require.NoError(t, dev.Enqueue(func() error { return nil }))
	assert.EqualValues(t, 2, p.stops.Load(), "Enqueue does not stop persistent work")
	dev.PersistentRunning(-1)
	dev.RemovePersistent(p)
	dev.PersistentRunning(1)
	require.NoError(t, dev.Synchronize())
	dev.PersistentRunning(-1)
	assert.EqualValues(t, 2, p.stops.Load(), "removed")
}
