//go:build cuda

package cuda

import (
	"errors"
	"fmt"
	"sort"
	"time"

	"gorgonia.org/cu"
)

// GateMaxReps is the most repetitions timeEvents queues behind its gate.
const GateMaxReps = 64

// timeEvents is TimeEvents with the device's gate, unless host-paced or
// more than GateMaxReps repetitions.
func (d *Device) timeEvents(s cu.Stream, warmup, reps int, before, body func() error) ([]time.Duration, error) {
	var g Gate
	if !d.hostPaced.Load() && reps <= GateMaxReps {
		gg, err := d.timingGate()
		if err != nil {
			return nil, err
		}
		g = gg
	}
	return TimeEvents(s, warmup, reps, before, body, g)
}

// TimeEventsGated is timeEvents, for the bench's peers.
func (d *Device) TimeEventsGated(s cu.Stream, warmup, reps int, before, body func() error) ([]time.Duration, error) {
	return d.timeEvents(s, warmup, reps, before, body)
}

// SetHostPaced switches Plan.Time between gated timing (false, the
// default: the repetitions are queued behind a gate and released at once,
// so their events hold GPU work only) and host-paced timing (true: every
// solve is launched while the GPU waits for it, so that a solve shorter
// than the host's launch call is timed at about the launch call's
// length).
func (d *Device) SetHostPaced(on bool) { d.hostPaced.Store(on) }

// HostPaced reports the setting of SetHostPaced.
func (d *Device) HostPaced() bool { return d.hostPaced.Load() }

// CopyBandwidth measures the device's copy bandwidth: a device-to-device
// copy of bytes, timed with CUDA events reps times after one untimed
// copy; it returns the bytes read plus written (2·bytes) per second of the
// median time.
func (d *Device) CopyBandwidth(bytes int64, reps int) (float64, error) {
	if bytes < 1 || reps < 1 {
		return 0, fmt.Errorf("cuda: copy bandwidth needs bytes ≥ 1 and reps ≥ 1, got %d and %d", bytes, reps)
	}
	src, err := d.AllocBytes(bytes)
	if err != nil {
		return 0, err
	}
	dst, err := d.AllocBytes(bytes)
	if err != nil {
		_ = d.Enqueue(func() error { return cu.MemFree(src) })
		return 0, err
	}
	ms := make([]float64, reps)
	err = d.Enqueue(func() error {
		defer func() {
			_ = cu.MemFree(src)
			_ = cu.MemFree(dst)
		}()
		s, err := cu.MakeStream(cu.NonBlocking)
		if err != nil {
			return fmt.Errorf("cuda: creating a stream: %w", err)
		}
		defer func() { _ = s.Destroy() }()
		if err := cu.MemsetD8Async(src, 1, bytes, s); err != nil {
			return fmt.Errorf("cuda: filling the copy source: %w", err)
		}
		if err := cu.MemcpyDtoDAsync(dst, src, bytes, s); err != nil {
			return fmt.Errorf("cuda: copying: %w", err)
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
				return fmt.Errorf("cuda: creating an event: %w", err)
			}
			events = append(events, ev)
		}
		for i := 0; i < reps; i++ {
			if err := events[2*i].Record(s); err != nil {
				return err
			}
			if err := cu.MemcpyDtoDAsync(dst, src, bytes, s); err != nil {
				return fmt.Errorf("cuda: copying: %w", err)
			}
			if err := events[2*i+1].Record(s); err != nil {
				return err
			}
		}
		if err := s.Synchronize(); err != nil {
			return fmt.Errorf("cuda: copying: %w", err)
		}
		for i := range ms {
			v, err := events[2*i].Elapsed(events[2*i+1])
			if err != nil {
				return fmt.Errorf("cuda: reading an event time: %w", err)
			}
			ms[i] = v
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	sort.Float64s(ms)
	med := ms[reps/2]
	if reps%2 == 0 {
		med = (ms[reps/2-1] + ms[reps/2]) / 2
	}
	if med <= 0 {
		return 0, errors.New("cuda: copy took no measurable time")
	}
	return 2 * float64(bytes) / (med / 1e3), nil
}
