//go:build cuda

package cuda

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorgonia.org/cu"
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
