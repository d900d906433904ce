// Package idle stops a resource that has gone unused for a while: a
// Timer calls its stop function once no use was noted for the idle time
// since it was started. Noting a use is one atomic store (no timer reset),
// so that it can sit on a path where nanoseconds count; the timer checks
// the time of the last use when it fires and waits again if it was
// recent.
package idle

import (
	"sync"
	"sync/atomic"
	"time"
)

// Timer calls stop when the resource it watches has been idle long
// enough. Its methods may be called from any goroutine.
type Timer struct {
	mu    sync.Mutex
	idle  time.Duration
	armed bool
	t     *time.Timer
	used  atomic.Int64 // UnixNano of the last use
	stop  func()
}

// New returns a disarmed timer that will call stop (on a goroutine of its
// own) once armed and idle for d.
func New(d time.Duration, stop func()) *Timer {
	it := &Timer{idle: d, stop: stop}
	it.t = time.AfterFunc(time.Hour, it.fire)
	it.t.Stop()
	return it
}

// Start arms the timer (the resource started) and counts as a use.
func (it *Timer) Start() {
	it.Touch()
	it.mu.Lock()
	it.armed = true
	it.t.Reset(it.idle)
	it.mu.Unlock()
}

// Touch notes a use of the resource.
func (it *Timer) Touch() { it.used.Store(time.Now().UnixNano()) }

// SetIdle changes the idle time; an armed timer counts with the new one
// from now on.
func (it *Timer) SetIdle(d time.Duration) {
	it.mu.Lock()
	it.idle = d
	if it.armed {
		it.t.Reset(d)
	}
	it.mu.Unlock()
}

// Idle returns the idle time.
func (it *Timer) Idle() time.Duration {
	it.mu.Lock()
	defer it.mu.Unlock()
	return it.idle
}

// Disarm stops the countdown (the resource stopped by other means).
func (it *Timer) Disarm() {
	it.mu.Lock()
	it.armed = false
	it.t.Stop()
	it.mu.Unlock()
}

// fire runs on the timer: stop when the last use is idle old, wait for
// the rest otherwise.
func (it *Timer) fire() {
	it.mu.Lock()
	if !it.armed {
		it.mu.Unlock()
		return
	}
	if left := it.idle - time.Duration(time.Now().UnixNano()-it.used.Load()); left > 0 {
		it.t.Reset(left)
		it.mu.Unlock()
		return
	}
	it.armed = false
	it.mu.Unlock()
	it.stop()
}
