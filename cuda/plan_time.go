//go:build cuda

package cuda

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorgonia.org/cu"

	"github.com/bandsolve/bandsolve/tridiag"
)

// Time measures the plan's solve of the batch held in device buffers with
// CUDA events on the plan's stream: warmup untimed solves, then reps timed
// ones. Before every solve, d is restored from dSaved by a device copy
// outside the timed region; the timed region holds what SolveDevice
// enqueues (the kernels) but not its status readback or synchronization.
// The timing is the Timer set with SetPlanTimer (TimeEvents without a
// gate when none is set).
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
		if times, err = p.dev.timeEvents(p.stream, warmup, reps, restore, solve); err != nil {
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
