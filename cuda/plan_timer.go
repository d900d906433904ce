//go:build cuda

package cuda

import (
	"sync/atomic"
	"time"

	"gorgonia.org/cu"
)

// planTimerKey is the key of the device's Value holding its planTimer.
type planTimerKey struct{}

// planTimer holds the Timer of a device's Plan.Time.
type planTimer struct{ t atomic.Pointer[Timer] }

func (d *Device) planTimer() *planTimer {
	v, _ := d.Value(planTimerKey{}, func() (any, error) { return &planTimer{}, nil })
	return v.(*planTimer)
}

// SetPlanTimer sets the Timer with which Plan.Time of d's plans times
// their solves (a benchmark's clock, say); nil, the default, is
// TimeEvents without a gate.
func SetPlanTimer(d *Device, t Timer) {
	if t == nil {
		d.planTimer().t.Store(nil)
		return
	}
	d.planTimer().t.Store(&t)
}

// timeEvents times with the Timer set by SetPlanTimer (device thread).
func (d *Device) timeEvents(s cu.Stream, warmup, reps int, before, body func() error) ([]time.Duration, error) {
	if t := d.planTimer().t.Load(); t != nil {
		return (*t)(s, warmup, reps, before, body)
	}
	return TimeEvents(s, warmup, reps, before, body, nil)
}
