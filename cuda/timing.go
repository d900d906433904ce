//go:build cuda

package cuda

import (
	"errors"
	"fmt"
	"time"

	"gorgonia.org/cu"
)

// Gate holds a stream while timed work is queued behind it, so that the
// events around each repetition measure the GPU's work and not the host's
// launch calls (a benchmark's instrument provides one).
type Gate interface {
	// Hold queues on s a wait that lasts until Open (or a time limit).
	Hold(s cu.Stream) error
	// Open lets the held stream go on.
	Open()
	// Expired reports whether the last Hold gave up before Open: the
	// times then include the host's pace.
	Expired() bool
}

// ErrGateExpired: a gated timing's gate gave up waiting for the host (the
// host took too long to queue the repetitions, or something in them waited
// for the stream); its times would include the host's pace.
var ErrGateExpired = errors.New("cuda: the timing gate expired before the repetitions were queued")

// Timer times work queued on stream s: warmup untimed runs of before and
// body, then reps timed ones, before outside the timing (restoring the
// input, say). It is called on the device thread (inside Enqueue). Plans'
// Time methods take one; TimeEvents with a gate or without makes one.
type Timer func(s cu.Stream, warmup, reps int, before, body func() error) ([]time.Duration, error)

// EventTimer returns the Timer of TimeEvents with gate g (nil: none).
func EventTimer(g Gate) Timer {
	return func(s cu.Stream, warmup, reps int, before, body func() error) ([]time.Duration, error) {
		return TimeEvents(s, warmup, reps, before, body, g)
	}
}

// TimeEvents times body on stream s with CUDA events: warmup untimed runs
// of before and body, then reps timed ones, before outside the events.
// With a gate, the timed runs are queued behind it and released together,
// so that the events hold the GPU's work only; without one (nil), every
// run is launched while the GPU waits for it. It waits for s and fails
// with ErrGateExpired when the gate gave up before everything was queued.
// Call it on the device thread (inside Enqueue or Do).
func TimeEvents(s cu.Stream, warmup, reps int, before, body func() error, g Gate) ([]time.Duration, error) {
	if reps < 1 {
		return nil, fmt.Errorf("cuda: timing needs reps ≥ 1, got %d", reps)
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
			return nil, fmt.Errorf("cuda: creating an event: %w", err)
		}
		events = append(events, ev)
	}
	run := func(timed int) error {
		if before != nil {
			if err := before(); err != nil {
				return err
			}
		}
		if timed >= 0 {
			if err := events[2*timed].Record(s); err != nil {
				return fmt.Errorf("cuda: recording an event: %w", err)
			}
		}
		if err := body(); err != nil {
			return err
		}
		if timed >= 0 {
			if err := events[2*timed+1].Record(s); err != nil {
				return fmt.Errorf("cuda: recording an event: %w", err)
			}
		}
		return nil
	}
	for i := 0; i < max(warmup, 0); i++ {
		if err := run(-1); err != nil {
			return nil, err
		}
	}
	if g != nil {
		if err := g.Hold(s); err != nil {
			return nil, err
		}
		defer g.Open() // on an error before Open below
	}
	for i := 0; i < reps; i++ {
		if err := run(i); err != nil {
			return nil, err
		}
	}
	if g != nil {
		g.Open()
	}
	if err := s.Synchronize(); err != nil {
		return nil, err
	}
	if g != nil && g.Expired() {
		return nil, ErrGateExpired
	}
	times := make([]time.Duration, reps)
	for i := range times {
		ms, err := events[2*i].Elapsed(events[2*i+1])
		if err != nil {
			return nil, fmt.Errorf("cuda: reading an event time: %w", err)
		}
		times[i] = time.Duration(ms * float64(time.Millisecond))
	}
	return times, nil
}
