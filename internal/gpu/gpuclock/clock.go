//go:build cuda

package gpuclock

import (
	"errors"
	"fmt"
	"sort"
	"sync/atomic"
	"time"

	"gorgonia.org/cu"

	"github.com/bandsolve/bandsolve/cuda"
)

// GateMaxReps is the most repetitions a Clock's Timer queues behind its
// gate; more are timed host-paced.
const GateMaxReps = 64

// ErrClosed reports a gated timing with a closed Clock.
var ErrClosed = errors.New("gpuclock: the clock is closed")

// Clock times work on one device with CUDA events: its Timer queues the
// timed repetitions behind the clock's gate and releases them together,
// so that their events hold GPU work only (gated, the default), or
// launches each while the GPU waits for it (host-paced, SetHostPaced).
// The clock owns its gate (page-locked host memory mapped into the
// device); Close frees it, before the device is closed.
type Clock struct {
	dev  *cuda.Device
	gate *gate // used and freed on the device thread
	// hostPaced: timing without the gate (SetHostPaced).
	hostPaced atomic.Bool
}

// New makes a gated Clock of dev, with its gate.
func New(dev *cuda.Device) (*Clock, error) {
	if dev == nil {
		return nil, errors.New("gpuclock: a clock needs a device, got nil")
	}
	c := &Clock{dev: dev}
	err := dev.Enqueue(func() error {
		var err error
		c.gate, err = newGate(dev)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("gpuclock: making the clock of %s: %w", dev.Name(), err)
	}
	return c, nil
}

// Device returns the clock's device.
func (c *Clock) Device() *cuda.Device { return c.dev }

// Close frees the clock's gate. Call it before the device's Close (the
// gate is freed with the device's context otherwise, when nothing else
// holds it); a closed device is not an error. Gated timing with a closed
// clock fails with ErrClosed.
func (c *Clock) Close() error {
	err := c.dev.Enqueue(func() error {
		c.gate.free()
		return nil
	})
	if err != nil && !errors.Is(err, cuda.ErrClosed) {
		return fmt.Errorf("gpuclock: closing the clock of %s: %w", c.dev.Name(), err)
	}
	return nil
}

// Timer returns the clock's cuda.Timer: cuda.TimeEvents with the clock's
// gate, or without it when the clock is host-paced or the timing has more
// than GateMaxReps repetitions. Like every cuda.Timer it runs on the
// device thread (inside Enqueue or Do of the clock's device), on a stream
// of the clock's device.
func (c *Clock) Timer() cuda.Timer { return c.timeEvents }

// timeEvents is the clock's Timer.
func (c *Clock) timeEvents(s cu.Stream, warmup, reps int, before, body func() error) ([]time.Duration, error) {
	var g cuda.Gate
	if !c.hostPaced.Load() && reps <= GateMaxReps {
		g = c.gate
	}
	return cuda.TimeEvents(s, warmup, reps, before, body, g)
}

// SetHostPaced switches the clock's Timer between gated timing (false,
// the default: the repetitions are queued behind the gate and released at
// once, so their events hold GPU work only) and host-paced timing (true:
// every repetition is launched while the GPU waits for it, so that work
// shorter than the host's launch call is timed at about the launch call's
// length).
func (c *Clock) SetHostPaced(on bool) { c.hostPaced.Store(on) }

// HostPaced reports the setting of SetHostPaced.
func (c *Clock) HostPaced() bool { return c.hostPaced.Load() }

// CopyBandwidth measures dev's copy bandwidth: a device-to-device copy of
// bytes, timed with CUDA events reps times after one untimed copy; it
// returns the bytes read plus written (2·bytes) per second of the median
// time.
func CopyBandwidth(dev *cuda.Device, bytes int64, reps int) (float64, error) {
	if bytes < 1 || reps < 1 {
		return 0, fmt.Errorf("gpuclock: copy bandwidth needs bytes ≥ 1 and reps ≥ 1, got %d and %d", bytes, reps)
	}
	src, err := dev.AllocBytes(bytes)
	if err != nil {
		return 0, err
	}
	dst, err := dev.AllocBytes(bytes)
	if err != nil {
		_ = dev.Enqueue(func() error { return cu.MemFree(src) })
		return 0, err
	}
	ms := make([]float64, reps)
	err = dev.Enqueue(func() error {
		defer func() {
			_ = cu.MemFree(src)
			_ = cu.MemFree(dst)
		}()
		s, err := cu.MakeStream(cu.NonBlocking)
		if err != nil {
			return fmt.Errorf("creating a stream: %w", err)
		}
		defer func() { _ = s.Destroy() }()
		if err := cu.MemsetD8Async(src, 1, bytes, s); err != nil {
			return fmt.Errorf("filling the copy source: %w", err)
		}
		if err := cu.MemcpyDtoDAsync(dst, src, bytes, s); err != nil {
			return fmt.Errorf("copying: %w", err)
		}
		events := make([]cu.Event, 0, 2*reps)
		defer func() {
			for i := range events {
				_ = cu.DestroyEvent(&events[i])
			}
		}()
		for i := 0; i < 2*reps; i++ {
			ev, err := cu.MakeEvent(cu.DefaultEvent)
			if err != nil {
				return fmt.Errorf("creating an event: %w", err)
			}
			events = append(events, ev)
		}
		for i := 0; i < reps; i++ {
			if err := events[2*i].Record(s); err != nil {
				return err
			}
			if err := cu.MemcpyDtoDAsync(dst, src, bytes, s); err != nil {
				return fmt.Errorf("copying: %w", err)
			}
			if err := events[2*i+1].Record(s); err != nil {
				return err
			}
		}
		if err := s.Synchronize(); err != nil {
			return fmt.Errorf("copying: %w", err)
		}
		for i := range ms {
			v, err := events[2*i].Elapsed(events[2*i+1])
			if err != nil {
				return fmt.Errorf("reading an event time: %w", err)
			}
			ms[i] = v
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("gpuclock: copy bandwidth of %s: %w", dev.Name(), err)
	}
	sort.Float64s(ms)
	med := ms[reps/2]
	if reps%2 == 0 {
		med = (ms[reps/2-1] + ms[reps/2]) / 2
	}
	if med <= 0 {
		return 0, fmt.Errorf("gpuclock: copy bandwidth of %s: the copy took no measurable time", dev.Name())
	}
	return 2 * float64(bytes) / (med / 1e3), nil
}

// BackToBack is a cuda.Timer for work that needs nothing restored between
// runs (the batched banded solves):
// warmup untimed runs of body, then reps runs queued back to back on s
// with one CUDA event between consecutive runs (event i+1 ends run i and
// starts run i+1), without a gate. before must be nil (nothing runs
// between the repetitions).
func BackToBack(s cu.Stream, warmup, reps int, before, body func() error) ([]time.Duration, error) {
	if before != nil {
		return nil, errors.New("gpuclock: back-to-back timing runs nothing between the repetitions")
	}
	if reps < 1 {
		return nil, fmt.Errorf("gpuclock: timing needs reps ≥ 1, got %d", reps)
	}
	events := make([]cu.Event, 0, reps+1)
	defer func() {
		for i := range events {
			_ = cu.DestroyEvent(&events[i])
		}
	}()
	for i := 0; i <= reps; i++ {
		ev, err := cu.MakeEvent(cu.DefaultEvent)
		if err != nil {
			return nil, fmt.Errorf("gpuclock: creating an event: %w", err)
		}
		events = append(events, ev)
	}
	for i := 0; i < max(warmup, 0); i++ {
		if err := body(); err != nil {
			return nil, err
		}
	}
	if err := events[0].Record(s); err != nil {
		return nil, err
	}
	for i := 0; i < reps; i++ {
		if err := body(); err != nil {
			return nil, err
		}
		if err := events[i+1].Record(s); err != nil {
			return nil, err
		}
	}
	if err := s.Synchronize(); err != nil {
		return nil, err
	}
	times := make([]time.Duration, reps)
	for i := range times {
		ms, err := events[i].Elapsed(events[i+1])
		if err != nil {
			return nil, fmt.Errorf("gpuclock: reading an event time: %w", err)
		}
		times[i] = time.Duration(ms * float64(time.Millisecond))
	}
	return times, nil
}
