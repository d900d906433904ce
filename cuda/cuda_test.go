//go:build cuda

package cuda

import (
	"fmt"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorgonia.org/cu"

	"github.com/bandsolve/bandsolve/tridiag"
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

func eps[T tridiag.Float]() float64 {
	var v T
	if _, ok := any(v).(float32); ok {
		return 0x1p-23
	}
	return 0x1p-52
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
	assert.ErrorIs(t, err, tridiag.ErrLength)

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
	assert.ErrorIs(t, err, tridiag.ErrLength, "misaligned")
	_, err = Wrap[float64](dev, 0, 2)
	assert.ErrorIs(t, err, tridiag.ErrLength, "null")
}
