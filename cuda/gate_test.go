//go:build cuda

package cuda

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorgonia.org/cu"

	"github.com/bandsolve/bandsolve/tridiag"
)

// A gate holds the work queued behind it until open, expires (and says
// so) when it is not opened in time, and refuses a second hold while it
// holds a stream.
func TestGate(t *testing.T) {
	err := dev.Do(func() error {
		g, err := dev.newGate()
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

// Gated and host-paced timing leave in x the plan's own solve of the
// batch, bit for bit, and report positive times.
func TestTimeGated(t *testing.T) {
	defer dev.SetHostPaced(false)
	r := rand.New(rand.NewPCG(7, 8))
	for _, paced := range []bool{false, true} {
		dev.SetHostPaced(paced)
		for _, n := range []int{100, 3000} {
			shape := tridiag.Shape{N: n, G: 7}
			bt := newBatch[float64](r, shape, 4)
			p, err := NewPlan[float64](dev, shape, tridiag.Options{})
			require.NoError(t, err)
			want := make([]float64, len(bt.d))
			require.NoError(t, p.Solve(context.Background(), bt.a, bt.b, bt.c, bt.d, want))
			bufs := make([]*Buffer[float64], 6)
			for i, h := range [][]float64{bt.a, bt.b, bt.c, bt.d, bt.d, bt.d} {
				bufs[i], err = Upload(dev, h)
				require.NoError(t, err)
			}
			reps := 5
			if n == 100 {
				reps = GateMaxReps + 6 // beyond the gate's repetitions: timed host-paced
			}
			times, err := p.Time(context.Background(), bufs[0], bufs[1], bufs[2], bufs[3], bufs[4], bufs[5], 1, reps)
			require.NoError(t, err, "host-paced %v, N=%d", paced, n)
			require.Len(t, times, reps)
			for _, tm := range times {
				assert.Greater(t, tm, time.Duration(0))
			}
			got := make([]float64, len(want))
			require.NoError(t, bufs[4].CopyTo(got))
			assert.Equal(t, want, got, "host-paced %v, N=%d: x after timing", paced, n)
			for _, b := range bufs {
				require.NoError(t, b.Free())
			}
			require.NoError(t, p.Close())
		}
	}
}
