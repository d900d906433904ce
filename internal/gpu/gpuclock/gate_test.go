//go:build cuda

package gpuclock

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorgonia.org/cu"

	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/internal/gpu/kernels"
)

// A gate holds the work queued behind it until open, expires (and says
// so) when it is not opened in time, and refuses a second hold while it
// holds a stream.
func TestGate(t *testing.T) {
	err := dev.Do(func() error {
		g, err := newGate(dev)
		require.NoError(t, err)
		defer g.free()
		s, err := cu.MakeStream(cu.NonBlocking)
		require.NoError(t, err)
		defer func() { _ = s.Destroy() }()
		ev, err := cu.MakeEvent(cu.DisableTiming)
		require.NoError(t, err)
		defer func() { _ = cu.DestroyEvent(&ev) }()

		// Held: the event behind the gate is not reached until open.
		require.NoError(t, g.hold(s, 10*time.Second))
		require.ErrorIs(t, g.hold(s, time.Second), errGateHeld)
		require.NoError(t, ev.Record(s))
		time.Sleep(50 * time.Millisecond)
		assert.ErrorIs(t, ev.Query(), cu.NotReady, "the gate let the event through before open")
		g.Open()
		require.NoError(t, s.Synchronize())
		assert.NoError(t, ev.Query())
		assert.False(t, g.Expired(), "opened within the limit")

		// Not opened within its limit: the gate gives up and says so.
		require.NoError(t, g.hold(s, time.Millisecond))
		require.NoError(t, ev.Record(s))
		deadline := time.Now().Add(5 * time.Second)
		for ev.Query() != nil && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		assert.NoError(t, ev.Query(), "the gate did not expire")
		g.Open()
		require.NoError(t, s.Synchronize())
		assert.True(t, g.Expired(), "the gate expired but does not say so")

		// The next hold starts afresh.
		require.NoError(t, g.hold(s, 10*time.Second))
		g.Open()
		require.NoError(t, s.Synchronize())
		assert.False(t, g.Expired())
		return nil
	})
	require.NoError(t, err)
}

// timeCopies times, with timer on a stream of dev, a copy of src into dst
// (with an empty kernel) after dst is cleared outside the events; it
// returns the times and how often before and body ran.
func timeCopies(t *testing.T, timer cuda.Timer, src, dst *cuda.Buffer[float64], warmup, reps int) (times []time.Duration, befores, bodies int, err error) {
	t.Helper()
	bytes := int64(src.Len()) * 8
	err = dev.Enqueue(func() error {
		s, err := cu.MakeStream(cu.NonBlocking)
		require.NoError(t, err)
		defer func() { _ = s.Destroy() }()
		times, err = timer(s, warmup, reps, func() error {
			befores++
			return cu.MemsetD8Async(dst.Ptr(), 0, bytes, s)
		}, func() error {
			bodies++
			if err := cu.MemcpyDtoDAsync(dst.Ptr(), src.Ptr(), bytes, s); err != nil {
				return err
			}
			return kernels.ProbeEmpty{}.Launch(dev, cuda.Dim3{X: 1}, cuda.Dim3{X: 1}, 0, s, &kernels.ProbeEmptyArgs{})
		})
		return err
	})
	return times, befores, bodies, err
}

// The clock's Timer, gated, host-paced and beyond GateMaxReps, runs
// before and body warmup+reps times, leaves the work done and reports a
// positive time for each repetition.
func TestTimer(t *testing.T) {
	defer clk.SetHostPaced(false)
	want := make([]float64, 1<<16)
	for i := range want {
		want[i] = float64(i) + 0.5
	}
	src, err := cuda.Upload(dev, want)
	require.NoError(t, err)
	defer src.Free()
	dst, err := cuda.Alloc[float64](dev, len(want))
	require.NoError(t, err)
	defer dst.Free()
	for _, paced := range []bool{false, true} {
		clk.SetHostPaced(paced)
		assert.Equal(t, paced, clk.HostPaced())
		for _, reps := range []int{5, GateMaxReps + 6} {
			times, befores, bodies, err := timeCopies(t, clk.Timer(), src, dst, 2, reps)
			require.NoError(t, err, "host-paced %v, %d reps", paced, reps)
			require.Len(t, times, reps)
			for _, tm := range times {
				assert.Greater(t, tm, time.Duration(0))
			}
			assert.Equal(t, 2+reps, befores)
			assert.Equal(t, 2+reps, bodies)
			got := make([]float64, len(want))
			require.NoError(t, dst.CopyTo(got))
			assert.Equal(t, want, got, "host-paced %v, %d reps: the copy after timing", paced, reps)
		}
	}
}

// A gated timing whose repetitions take the host longer to queue than the
// gate waits fails with cuda.ErrGateExpired; host-paced, it is timed.
func TestTimerExpired(t *testing.T) {
	defer clk.SetHostPaced(false)
	timeSlow := func() ([]time.Duration, error) {
		var times []time.Duration
		err := dev.Enqueue(func() error {
			st, err := cu.MakeStream(cu.NonBlocking)
			require.NoError(t, err)
			defer func() { _ = st.Destroy() }()
			first := true
			times, err = clk.Timer()(st, 0, 2, nil, func() error {
				if first {
					first = false
					time.Sleep(1200 * time.Millisecond) // beyond the gate's second
				}
				return kernels.ProbeEmpty{}.Launch(dev, cuda.Dim3{X: 1}, cuda.Dim3{X: 1}, 0, st, &kernels.ProbeEmptyArgs{})
			})
			return err
		})
		return times, err
	}
	_, err := timeSlow()
	require.ErrorIs(t, err, cuda.ErrGateExpired)
	clk.SetHostPaced(true)
	times, err := timeSlow()
	require.NoError(t, err)
	assert.Len(t, times, 2)
}

// A closed clock's gated timing fails with ErrClosed; host-paced timing
// needs no gate. Close twice is no error.
func TestClockClose(t *testing.T) {
	c, err := New(dev)
	require.NoError(t, err)
	assert.Same(t, dev, c.Device())
	require.NoError(t, c.Close())
	require.NoError(t, c.Close())
	src, err := cuda.Upload(dev, []float64{1, 2, 3})
	require.NoError(t, err)
	defer src.Free()
	dst, err := cuda.Alloc[float64](dev, 3)
	require.NoError(t, err)
	defer dst.Free()
	_, _, _, err = timeCopies(t, c.Timer(), src, dst, 0, 3)
	require.ErrorIs(t, err, ErrClosed)
	c.SetHostPaced(true)
	times, _, _, err := timeCopies(t, c.Timer(), src, dst, 0, 3)
	require.NoError(t, err)
	assert.Len(t, times, 3)

	_, err = New(nil)
	assert.Error(t, err)
}

// CopyBandwidth reports a data-centre GPU's device copy in a sensible
// range and refuses empty measurements.
func TestCopyBandwidth(t *testing.T) {
	bw, err := CopyBandwidth(dev, 256<<20, 10)
	require.NoError(t, err)
	t.Logf("%s: device-to-device copy %.0f GB/s (read+written)", dev.Name(), bw/1e9)
	assert.Greater(t, bw, 100e9, "a data-centre GPU copies faster than 100 GB/s")
	assert.Less(t, bw, 20e12)
	_, err = CopyBandwidth(dev, 0, 10)
	assert.Error(t, err)
	_, err = CopyBandwidth(dev, 1<<20, 0)
	assert.Error(t, err)
}
