//go:build cuda

package tridiaggpu

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorgonia.org/cu"

	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/tridiag"
)

// Time measures the plan's solve of the batch held in device buffers with
// timer on the plan's stream: warmup untimed solves, then reps timed ones.
// Before every solve, d is restored from dSaved by a device copy outside
// the timed region; the timed region holds what SolveDevice enqueues (the
// kernels) but not its status readback or synchronization. A nil timer is
// cuda.EventTimer(nil): CUDA events around each solve as it is launched;
// a timer with a gate (cuda.EventTimer(g)) brackets the GPU's work alone,
// not the host's launch calls. The status of the solves is checked once
// at the end: systems that broke down give a *tridiag.BatchError along
// with the times. x may be d; dSaved must be another buffer.
func (p *Plan[T]) Time(ctx context.Context, timer cuda.Timer, a, b, c, d, x, dSaved *cuda.Buffer[T], warmup, reps int) ([]time.Duration, error) {
	for _, bf := range []*cuda.Buffer[T]{a, b, c} {
		if bf == nil {
			return nil, fmt.Errorf("%w: nil coefficient buffer", tridiag.ErrLength)
		}
	}
	return p.time(ctx, timer, &launchArgs{a: a.Ptr(), b: b.Ptr(), c: c.Ptr()}, []*cuda.Buffer[T]{a, b, c, d, x}, dSaved, warmup, reps)
}

// TimeConst is Time for constant coefficients ca, cb, cc.
func (p *Plan[T]) TimeConst(ctx context.Context, timer cuda.Timer, ca, cb, cc T, d, x, dSaved *cuda.Buffer[T], warmup, reps int) ([]time.Duration, error) {
	return p.time(ctx, timer, &launchArgs{ca: float64(ca), cb: float64(cb), cc: float64(cc), constant: true}, []*cuda.Buffer[T]{d, x}, dSaved, warmup, reps)
}

func (p *Plan[T]) time(ctx context.Context, timer cuda.Timer, la *launchArgs, bufs []*cuda.Buffer[T], dSaved *cuda.Buffer[T], warmup, reps int) ([]time.Duration, error) {
	if timer == nil {
		timer = cuda.EventTimer(nil)
	}
	if reps < 1 {
		return nil, fmt.Errorf("cuda: timing needs reps ≥ 1, got %d", reps)
	}
	need := p.spec.Len()
	for _, bf := range append(bufs, dSaved) {
		if bf == nil || bf.Ptr() == 0 {
			return nil, fmt.Errorf("%w: nil or freed buffer", tridiag.ErrLength)
		}
		if bf.Len() < need {
			return nil, fmt.Errorf("%w: buffer of %d elements, the %d×%d batch needs %d", tridiag.ErrLength, bf.Len(), p.spec.G, p.spec.N, need)
		}
	}
	n := len(bufs)
	la.d, la.x = bufs[n-2].Ptr(), bufs[n-1].Ptr()
	if dSaved.Ptr() == la.d || dSaved.Ptr() == la.x {
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
			if err := cu.MemcpyDtoDAsync(la.d, dSaved.Ptr(), bytes, p.stream); err != nil {
				return fmt.Errorf("cuda: restoring d: %w", err)
			}
			return nil
		}
		solve := func() error { return p.kp.launch(p.dev, p.stream, la) }
		var err error
		if times, err = timer(p.stream, warmup, reps, restore, solve); err != nil {
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
