package idle

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func counter() (*atomic.Int32, func()) {
	var n atomic.Int32
	return &n, func() { n.Add(1) }
}

func TestStopsWhenIdle(t *testing.T) {
	n, stop := counter()
	it := New(5*time.Millisecond, stop)
	it.Start()
	require.Eventually(t, func() bool { return n.Load() == 1 }, 2*time.Second, time.Millisecond)
	// Once: a fired timer is disarmed.
	time.Sleep(30 * time.Millisecond)
	assert.Equal(t, int32(1), n.Load())
}

func TestNotStartedNeverStops(t *testing.T) {
	n, stop := counter()
	New(time.Millisecond, stop)
	time.Sleep(20 * time.Millisecond)
	assert.Zero(t, n.Load())
}

func TestUsesKeepItAlive(t *testing.T) {
	n, stop := counter()
	it := New(50*time.Millisecond, stop)
	it.Start()
	for range 20 { // 100 ms of uses every 5 ms: never 50 ms idle
		time.Sleep(5 * time.Millisecond)
		it.Touch()
	}
	assert.Zero(t, n.Load())
	require.Eventually(t, func() bool { return n.Load() == 1 }, 2*time.Second, time.Millisecond)
}

// A shorter idle time set while armed takes effect at once (not after the
// countdown of the old one).
func TestSetIdleWhileArmed(t *testing.T) {
	n, stop := counter()
	it := New(time.Hour, stop)
	it.Start()
	it.SetIdle(5 * time.Millisecond)
	assert.Equal(t, 5*time.Millisecond, it.Idle())
	require.Eventually(t, func() bool { return n.Load() == 1 }, 2*time.Second, time.Millisecond)
}

func TestDisarm(t *testing.T) {
	n, stop := counter()
	it := New(5*time.Millisecond, stop)
	it.Start()
	it.Disarm()
	time.Sleep(30 * time.Millisecond)
	assert.Zero(t, n.Load())
	it.Start() // armed again
	require.Eventually(t, func() bool { return n.Load() == 1 }, 2*time.Second, time.Millisecond)
}
