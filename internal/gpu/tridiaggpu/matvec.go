//go:build cuda

package tridiaggpu

import (
	"context"
	"fmt"

	"gorgonia.org/cu"

	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/internal/gpu/kernels"
	"github.com/bandsolve/bandsolve/tridiag"
)

// MulDevice computes y = T·x for every system of the batch, T being the
// tridiagonal matrix with coefficients a, b, c in the plan's shape and
// layout (periodic when the plan is cyclic). It is the explicit half of
// ADI and Crank–Nicolson steps, and a residual check, without leaving the
// device. y must not be x. The call returns when y is complete.
func (p *Plan[T]) MulDevice(ctx context.Context, a, b, c, x, y *cuda.Buffer[T]) error {
	return p.MulAddDevice(ctx, 1, a, b, c, x, 0, y)
}

// MulDeviceConst is MulDevice for constant coefficients a, b, c.
func (p *Plan[T]) MulDeviceConst(ctx context.Context, a, b, c T, x, y *cuda.Buffer[T]) error {
	return p.MulAddDeviceConst(ctx, 1, a, b, c, x, 0, y)
}

// MulAddDevice computes y = α·T·x + β·y for every system of the batch (T
// as in MulDevice). With β = 0, y is not read. With T = I (a = c = 0,
// b = 1 through MulAddDeviceConst) it is the vector update y = α·x + β·y
// on the plan's elements, which time-steppers need between solves (e.g.
// Douglas ADI's u += f). y must not be x. The call returns when y is
// complete.
func (p *Plan[T]) MulAddDevice(ctx context.Context, alpha T, a, b, c, x *cuda.Buffer[T], beta T, y *cuda.Buffer[T]) error {
	for _, bf := range []*cuda.Buffer[T]{a, b, c} {
		if bf == nil {
			return fmt.Errorf("%w: nil coefficient buffer", tridiag.ErrLength)
		}
	}
	return p.mul(ctx, &launchArgs{a: a.Ptr(), b: b.Ptr(), c: c.Ptr()}, alpha, beta, []*cuda.Buffer[T]{a, b, c, x, y})
}

// MulAddDeviceConst is MulAddDevice for constant coefficients a, b, c.
func (p *Plan[T]) MulAddDeviceConst(ctx context.Context, alpha, a, b, c T, x *cuda.Buffer[T], beta T, y *cuda.Buffer[T]) error {
	return p.mul(ctx, &launchArgs{ca: float64(a), cb: float64(b), cc: float64(c), constant: true}, alpha, beta, []*cuda.Buffer[T]{x, y})
}

func (p *Plan[T]) mul(ctx context.Context, la *launchArgs, alpha, beta T, bufs []*cuda.Buffer[T]) error {
	need := p.spec.Len()
	for _, bf := range bufs {
		if bf == nil || bf.Ptr() == 0 {
			return fmt.Errorf("%w: nil or freed buffer", tridiag.ErrLength)
		}
		if bf.Len() < need {
			return fmt.Errorf("%w: buffer of %d elements, the %d×%d batch needs %d", tridiag.ErrLength, bf.Len(), p.spec.G, p.spec.N, need)
		}
	}
	n := len(bufs)
	x, y := bufs[n-2], bufs[n-1]
	if overlaps(x, y, need) {
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
	if err := p.dev.Enqueue(func() error {
		if err := p.matvec.Launch(p.dev.Device, cuda.Dim3{X: (rows + blk - 1) / blk}, cuda.Dim3{X: blk}, 0, p.stream, &kernels.MatvecArgs{
			A: la.a, B: la.b, C: la.c, CA: la.ca, CB: la.cb, CC: la.cc, IsConst: la.isConst(),
			X: x.Ptr(), Y: y.Ptr(), N: int32(sp.N), G: int32(sp.G), ES: int64(sp.Layout.ElemStride), BS: int64(sp.Layout.BatchStride),
			Cyclic: cyclic, Alpha: float64(alpha), Beta: float64(beta)}); err != nil {
			return err
		}
		return p.sig.Enqueue(p.dev.Device, p.stream, p.flagPtr())
	}); err != nil {
		return err
	}
	_, err := p.sig.Wait(p.dev.Device, p.stream, func() string {
		return fmt.Sprintf("tridiagonal product of N=%d G=%d", sp.N, sp.G)
	})
	return err
}

// overlaps reports whether the first span elements of x and y share memory.
func overlaps[T tridiag.Float](x, y *cuda.Buffer[T], span int) bool {
	bytes := cu.DevicePtr(int64(span) * elemSize[T]())
	return x.Ptr() < y.Ptr()+bytes && y.Ptr() < x.Ptr()+bytes
}
