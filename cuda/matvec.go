//go:build cuda

package cuda

import (
	"context"
	"fmt"

	"github.com/bandsolve/bandsolve/tridiag"
)

// MulDevice computes y = T·x for every system of the batch, T being the
// tridiagonal matrix with coefficients a, b, c in the plan's shape and
// layout (periodic when the plan is cyclic). It is the explicit half of
// ADI and Crank–Nicolson steps, and a residual check, without leaving the
// device. y must not be x. The call returns when y is complete.
func (p *Plan[T]) MulDevice(ctx context.Context, a, b, c, x, y *Buffer[T]) error {
	for _, bf := range []*Buffer[T]{a, b, c} {
		if bf == nil {
			return fmt.Errorf("%w: nil coefficient buffer", tridiag.ErrLength)
		}
	}
	return p.mul(ctx, &launchArgs{a: a.ptr, b: b.ptr, c: c.ptr}, []*Buffer[T]{a, b, c, x, y})
}

// MulDeviceConst is MulDevice for constant coefficients a, b, c.
func (p *Plan[T]) MulDeviceConst(ctx context.Context, a, b, c T, x, y *Buffer[T]) error {
	return p.mul(ctx, &launchArgs{ca: float64(a), cb: float64(b), cc: float64(c), constant: true}, []*Buffer[T]{x, y})
}

func (p *Plan[T]) mul(ctx context.Context, la *launchArgs, bufs []*Buffer[T]) error {
	need := p.spec.Len()
	for _, bf := range bufs {
		if bf == nil || bf.ptr == 0 {
			return fmt.Errorf("%w: nil or freed buffer", tridiag.ErrLength)
		}
		if bf.n < need {
			return fmt.Errorf("%w: buffer of %d elements, the %d×%d batch needs %d", tridiag.ErrLength, bf.n, p.spec.G, p.spec.N, need)
		}
	}
	n := len(bufs)
	x, y := bufs[n-2], bufs[n-1]
	if x.ptr == y.ptr {
		return fmt.Errorf("%w: MulDevice needs y apart from x", tridiag.ErrLength)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return tridiag.ErrClosed
	}
	la.f64 = elemSize[T]() == 8
	sp := p.spec
	cyclic := int32(0)
	if sp.Cyclic {
		cyclic = 1
	}
	rows := sp.N * sp.G
	const blk = 256
	return p.dev.do(func() error {
		if err := p.dev.launch("matvec"+la.suffix(), dim3{X: (rows + blk - 1) / blk}, dim3{X: blk}, 0, p.stream,
			la.a, la.b, la.c, la.scalar(la.ca), la.scalar(la.cb), la.scalar(la.cc), la.isConst(),
			x.ptr, y.ptr, int32(sp.N), int32(sp.G), int64(sp.Layout.ElemStride), int64(sp.Layout.BatchStride), cyclic); err != nil {
			return err
		}
		if err := p.stream.Synchronize(); err != nil {
			return fmt.Errorf("cuda: tridiagonal product of N=%d G=%d: %w", sp.N, sp.G, err)
		}
		return nil
	})
}
