//go:build cuda

package tridiaggpu

import (
	"fmt"
	"math"
	"unsafe"

	"gorgonia.org/cu"

	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/internal/gpu/kernels"
	"github.com/bandsolve/bandsolve/tridiag"
)

// With Options.Check, the solves whose data stay on the device (SolveDevice,
// SolveDeviceConst, Start, StartConst) are checked on the device: after
// the solve, tri_backward_* (ptx/src/check.cuh) measures every system's
// ‖d − A·x‖∞, ‖A‖∞, ‖x‖∞ and ‖d‖∞ in double precision, and the host forms
// the normwise backward error η = ‖d − A·x‖∞ / (‖A‖∞·‖x‖∞ + ‖d‖∞) from
// those 32 bytes a system and judges it as tridiag's check does
// (tridiag.MergeBackwardErrors). No condition number is estimated there
// (Status.Cond 0): tridiag.Plan.Check on host copies gives κ̂. Host-slice
// solves are checked by the tridiag plan on the host.

// keepD points la.checkD at d, or, for an in-place solve (x = d), at a
// copy of d made on the plan's stream before the solve (device thread).
func (p *Plan[T]) keepD(la *launchArgs) error {
	la.checkD = la.d
	if la.x != la.d {
		return nil
	}
	bytes := int64(p.spec.Len()) * int64(elemSize[T]())
	if p.dcopy == 0 {
		var err error
		if p.dcopy, err = cu.MemAlloc(bytes); err != nil {
			return fmt.Errorf("cuda: %s: the copy of d for the check: %w", p.what(), err)
		}
	}
	la.checkD = p.dcopy
	return cu.MemcpyDtoDAsync(p.dcopy, la.d, bytes, p.stream)
}

// checkDevice measures the solve la on the device and merges the verdict
// with the solve's own result solveErr (a *tridiag.BatchError or nil).
func (p *Plan[T]) checkDevice(la *launchArgs, solveErr error) error {
	G := p.spec.G
	err := p.dev.Enqueue(func() error {
		if p.checkOut == 0 {
			var err error
			if p.checkOut, err = cu.MemAlloc(int64(32 * G)); err != nil {
				return fmt.Errorf("cuda: %s: the check's measures: %w", p.what(), err)
			}
			if p.backward, err = kernels.TriBackwardFor(la.f64); err != nil {
				return err
			}
			p.measures, p.eta = make([]float64, 4*G), make([]float64, G)
		}
		cyclic := int32(0)
		if p.spec.Cyclic {
			cyclic = 1
		}
		l := p.spec.Layout
		if err := p.backward.Launch(p.dev.Device, cuda.Dim3{X: G}, cuda.Dim3{X: 256}, 0, p.stream, &kernels.TriBackwardArgs{
			A: la.a, B: la.b, C: la.c, D: la.checkD, X: la.x, N: int32(p.spec.N), G: int32(G),
			ES: int64(l.ElemStride), BS: int64(l.BatchStride), CA: la.ca, CB: la.cb, CC: la.cc,
			IsConst: la.isConst(), Cyclic: cyclic, Out: p.checkOut}); err != nil {
			return err
		}
		if err := cu.MemcpyDtoHAsync(unsafe.Pointer(&p.measures[0]), p.checkOut, int64(32*G), p.stream); err != nil {
			return err
		}
		return p.stream.Synchronize()
	})
	if err != nil {
		return fmt.Errorf("cuda: %s: checking the solutions: %w", p.what(), err)
	}
	m, eta := p.measures, p.eta
	for g := range eta {
		res, na, nx, nd := m[4*g], m[4*g+1], m[4*g+2], m[4*g+3]
		switch den := na*nx + nd; {
		case math.IsInf(res, 0) || math.IsNaN(res):
			eta[g] = math.Inf(1)
		case den == 0:
			eta[g] = 0 // d = 0 and x = 0: exact
		default:
			eta[g] = res / den
		}
	}
	tol := p.spec.Tol
	if tol == 0 {
		tol = tridiag.DefaultTol[T]()
	}
	_, err = tridiag.MergeBackwardErrors(G, solveErr, eta, tol, tridiag.Epsilon[T]())
	return err
}
