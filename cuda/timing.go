//go:build cuda

package cuda

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"gorgonia.org/cu"

	"github.com/bandsolve/bandsolve/tridiag"
)

// Time measures the plan's solve of the batch held in device buffers with
// CUDA events on the plan's stream: warmup untimed solves, then reps timed
// ones. Before every solve, d is restored from dSaved by a device copy
// outside the timed region; the timed region holds what SolveDevice
// enqueues (the kernels) but not its status readback or synchronization.
// The timing is Device.TimeEvents': the events bracket the GPU's work
// alone, not the host's launch calls (see there, and SetHostPaced for
// timing without the gate).
// The status of the solves is checked
// once at the end: systems that broke down give a *tridiag.BatchError
// along with the times. x may be d; dSaved must be another buffer.
func (p *Plan[T]) Time(ctx context.Context, a, b, c, d, x, dSaved *Buffer[T], warmup, reps int) ([]time.Duration, error) {
	for _, bf := range []*Buffer[T]{a, b, c} {
		if bf == nil {
			return nil, fmt.Errorf("%w: nil coefficient buffer", tridiag.ErrLength)
		}
	}
	return p.time(ctx, &launchArgs{a: a.ptr, b: b.ptr, c: c.ptr}, []*Buffer[T]{a, b, c, d, x}, dSaved, warmup, reps)
}

// TimeConst is Time for constant coefficients ca, cb, cc.
func (p *Plan[T]) TimeConst(ctx context.Context, ca, cb, cc T, d, x, dSaved *Buffer[T], warmup, reps int) ([]time.Duration, error) {
	return p.time(ctx, &launchArgs{ca: float64(ca), cb: float64(cb), cc: float64(cc), constant: true}, []*Buffer[T]{d, x}, dSaved, warmup, reps)
}

func (p *Plan[T]) time(ctx context.Context, la *launchArgs, bufs []*Buffer[T], dSaved *Buffer[T], warmup, reps int) ([]time.Duration, error) {
	if reps < 1 {
		return nil, fmt.Errorf("cuda: timing needs reps ≥ 1, got %d", reps)
	}
	need := p.spec.Len()
	for _, bf := range append(bufs, dSaved) {
		if bf == nil || bf.ptr == 0 {
			return nil, fmt.Errorf("%w: nil or freed buffer", tridiag.ErrLength)
		}
		if bf.n < need {
			return nil, fmt.Errorf("%w: buffer of %d elements, the %d×%d batch needs %d", tridiag.ErrLength, bf.n, p.spec.G, p.spec.N, need)
		}
	}
	n := len(bufs)
	la.d, la.x = bufs[n-2].ptr, bufs[n-1].ptr
	if dSaved.ptr == la.d || dSaved.ptr == la.x {
		return nil, errors.New("cuda: timing needs dSaved apart from d and x")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, tridiag.ErrClosed
	}
	la.spec, la.f64, la.work, la.status = p.spec, elemSize[T]() == 8, p.work, p.status
	bytes := int64(need) * elemSize[T]()
	var times []time.Duration
	var be *tridiag.BatchError
	err := p.dev.Enqueue(func() error {
		restore := func() error {
			if err := cu.MemcpyDtoDAsync(la.d, dSaved.ptr, bytes, p.stream); err != nil {
				return fmt.Errorf("cuda: restoring d: %w", err)
			}
			return nil
		}
		solve := func() error { return p.kp.launch(p.dev, p.stream, la) }
		var err error
		if times, err = p.dev.TimeEvents(p.stream, warmup, reps, restore, solve); err != nil {
			return fmt.Errorf("cuda: timing the %s solve of N=%d G=%d: %w", p.algo, p.spec.N, p.spec.G, err)
		}
		be, err = p.checkStatus()
		return err
	})
	if err != nil {
		return nil, err
	}
	if be != nil {
		return times, be
	}
	return times, nil
}

// GateMaxReps is the most repetitions TimeEvents queues behind its gate.
const GateMaxReps = 64

// TimeEvents times body on stream s with CUDA events: warmup untimed runs
// of before and body, then reps timed ones, before outside the events
// (restoring the input, say). Up to GateMaxReps timed runs are queued
// behind the device's gate and released together, so that the events hold
// the GPU's work only; with SetHostPaced, or more repetitions (the
// driver's launch queue would fill before the gate opened), every run is
// launched while the GPU waits for it. It waits for s and fails with
// ErrGateExpired when the gate gave up before everything was queued.
// Call it on the device thread: inside Device.Do (Plan.Time and the
// bench's peers do).
func (d *Device) TimeEvents(s cu.Stream, warmup, reps int, before, body func() error) ([]time.Duration, error) {
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
	var g *gate
	if !d.hostPaced.Load() && reps <= GateMaxReps {
		var err error
		if g, err = d.timingGate(); err != nil {
			return nil, err
		}
		if err := g.hold(s, time.Second); err != nil {
			return nil, err
		}
		defer g.open() // on an error before open below
	}
	for i := 0; i < reps; i++ {
		if err := run(i); err != nil {
			return nil, err
		}
	}
	if g != nil {
		g.open()
	}
	if err := s.Synchronize(); err != nil {
		return nil, err
	}
	if g != nil && g.expired() {
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

// ErrGateExpired: a gated timing's gate gave up waiting for the host (the
// host took over a second to queue the repetitions, or something in them
// waited for the stream); its times would include the host's pace.
var ErrGateExpired = errors.New("cuda: the timing gate expired before the repetitions were queued")

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
