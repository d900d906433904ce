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
	"github.com/bandsolve/bandsolve/tuning"
)

// With Options.Check, the solves whose data stay on the device (SolveDevice,
// SolveDeviceConst, Start, StartConst) are checked as tridiag.Plan.Check
// checks host slices: every system's normwise backward error η and
// condition estimate κ̂, judged together with the solve's breakdowns
// (tridiag.MergeChecks).
//
// Large batches are measured on the device (tuning.CondOnDevice):
// tri_backward_* (ptx/src/check.cuh) measures every system's
// ‖d − A·x‖∞, ‖A‖∞, ‖x‖∞ and ‖d‖∞ in double precision, from which the host
// forms η; tri_cond_* runs tridiag's condition estimator, one thread a
// system, with the same operations, so that κ̂ is the host's bit for bit.
// Its workspace, 65 bytes a row, is taken for at most condWorkBytes at a
// time (chunks of systems), halved while the device has not that much
// free: the more systems at once, the faster, as each thread's walk is
// bound by memory latency (BenchmarkCheck, H100, FP64, N = 4096,
// G = 4096: 132 ms with 256 MiB, 31 ms with all 4096 at once). Few systems (long ones) are copied to the host and
// checked there: the estimator is sequential within a system, and a
// device thread walks a long system far slower than a CPU core.

// condWorkBytes bounds the device workspace of the condition estimate.
const condWorkBytes = 2 << 30

// condRowBytes is the estimate's workspace per row: cond_planes (8)
// float64 planes and one byte of row swaps.
const condRowBytes = 8*8 + 1

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

// condOnDevice reports whether the plan's check estimates κ̂ on the
// device.
func (p *Plan[T]) condOnDevice() bool {
	switch {
	case p.dev.cfg.condOnHost:
		return false
	case p.dev.cfg.condOnDevice:
		return true
	}
	return tuning.CondOnDevice(p.spec.G)
}

// checkDevice checks the solve la and merges the verdict with the
// solve's own result solveErr (a *tridiag.BatchError or nil).
func (p *Plan[T]) checkDevice(la *launchArgs, solveErr error) error {
	var st []tridiag.Status
	var err error
	if p.condOnDevice() {
		st, err = p.measureOnDevice(la)
	} else {
		st, err = p.measureOnHost(la)
	}
	if err != nil {
		return fmt.Errorf("cuda: %s: checking the solutions: %w", p.what(), err)
	}
	tol := p.spec.Tol
	if tol == 0 {
		tol = tridiag.DefaultTol[T]()
	}
	_, err = tridiag.MergeChecks(solveErr, st, tol, tridiag.Epsilon[T]())
	return err
}

// measureOnDevice measures η and κ̂ of every system of la on the device.
func (p *Plan[T]) measureOnDevice(la *launchArgs) ([]tridiag.Status, error) {
	G, n := p.spec.G, p.spec.N
	limit := condWorkBytes
	if p.dev.cfg.condWorkBytes > 0 {
		limit = p.dev.cfg.condWorkBytes
	}
	gc := max(1, min(G, limit/(condRowBytes*n)))
	if p.condWork != 0 {
		gc = p.condSystems
	}
	l := p.spec.Layout
	cyclic := int32(0)
	if p.spec.Cyclic {
		cyclic = 1
	}
	err := p.dev.Enqueue(func() error {
		if p.checkOut == 0 {
			var err error
			// 4 measures and 2 condition words a system.
			if p.checkOut, err = cu.MemAlloc(int64(48 * G)); err != nil {
				return fmt.Errorf("the check's measures: %w", err)
			}
			if p.backward, err = kernels.TriBackwardFor(la.f64); err != nil {
				return err
			}
			if p.cond, err = kernels.TriCondFor(la.f64); err != nil {
				return err
			}
			p.measures = make([]float64, 6*G)
		}
		for p.condWork == 0 {
			bytes := int64(condRowBytes) * int64(n) * int64(gc)
			var err error
			if p.condWork, err = cu.MemAlloc(bytes); err != nil {
				if gc == 1 {
					return fmt.Errorf("the condition estimate's workspace (%d bytes): %w", bytes, err)
				}
				gc = (gc + 1) / 2
			}
			p.condSystems = gc
		}
		if err := p.backward.Launch(p.dev.Device, cuda.Dim3{X: G}, cuda.Dim3{X: 256}, 0, p.stream, &kernels.TriBackwardArgs{
			A: la.a, B: la.b, C: la.c, D: la.checkD, X: la.x, N: int32(n), G: int32(G),
			ES: int64(l.ElemStride), BS: int64(l.BatchStride), CA: la.ca, CB: la.cb, CC: la.cc,
			IsConst: la.isConst(), Cyclic: cyclic, Out: p.checkOut}); err != nil {
			return err
		}
		condOut := p.checkOut + cu.DevicePtr(32*G)
		sw := p.condWork + cu.DevicePtr(8*8*int64(n)*int64(gc))
		for g0 := 0; g0 < G; g0 += gc {
			if err := p.cond.Launch(p.dev.Device, cuda.Dim3{X: (min(gc, G-g0) + 255) / 256}, cuda.Dim3{X: 256}, 0, p.stream, &kernels.TriCondArgs{
				A: la.a, B: la.b, C: la.c, N: int32(n), G: int32(G),
				ES: int64(l.ElemStride), BS: int64(l.BatchStride), CA: la.ca, CB: la.cb, CC: la.cc,
				IsConst: la.isConst(), Cyclic: cyclic, G0: int32(g0), GC: int32(gc),
				Work: p.condWork, SW: sw, Out: condOut}); err != nil {
				return err
			}
		}
		if err := cu.MemcpyDtoHAsync(unsafe.Pointer(&p.measures[0]), p.checkOut, int64(48*G), p.stream); err != nil {
			return err
		}
		return p.stream.Synchronize()
	})
	if err != nil {
		return nil, err
	}
	m, cond := p.measures[:4*G], p.measures[4*G:]
	st := make([]tridiag.Status, G)
	for g := range st {
		st[g].BackwardError = backwardError(m[4*g], m[4*g+1], m[4*g+2], m[4*g+3])
		st[g].Cond = cond[2*g]
		if cond[2*g+1] != 0 {
			st[g].Flags |= tridiag.Singular
		}
	}
	return st, nil
}

// backwardError is η = res / (‖A‖∞·‖x‖∞ + ‖d‖∞) from the device's measures.
func backwardError(res, na, nx, nd float64) float64 {
	switch den := na*nx + nd; {
	case math.IsInf(res, 0) || math.IsNaN(res):
		return math.Inf(1)
	case den == 0:
		return 0 // d = 0 and x = 0: exact
	default:
		return res / den
	}
}

// measureOnHost copies the batch of la to the host and checks it there
// with tridiag's check.
func (p *Plan[T]) measureOnHost(la *launchArgs) ([]tridiag.Status, error) {
	size := p.spec.Len()
	if p.hostCheck == nil {
		opts := p.spec.Options
		opts.Algorithm, opts.Check = tridiag.GTSV, false
		hp, err := tridiag.NewPlan[T](nil, p.spec.Shape, opts)
		if err != nil {
			return nil, err
		}
		p.hostCheck = hp
		p.checkHost = make([]T, 5*size)
	}
	h := p.checkHost
	a, b, c, d, x := h[:size], h[size:2*size], h[2*size:3*size], h[3*size:4*size], h[4*size:]
	bytes := int64(size) * int64(elemSize[T]())
	err := p.dev.Enqueue(func() error {
		dsts, srcs := [][]T{d, x}, []cu.DevicePtr{la.checkD, la.x}
		if !la.constant {
			dsts, srcs = append(dsts, a, b, c), append(srcs, la.a, la.b, la.c)
		}
		for k, dst := range dsts {
			if err := cu.MemcpyDtoHAsync(unsafe.Pointer(&dst[0]), srcs[k], bytes, p.stream); err != nil {
				return err
			}
		}
		return p.stream.Synchronize()
	})
	if err != nil {
		return nil, err
	}
	var st []tridiag.Status
	if la.constant {
		st, err = p.hostCheck.CheckConst(T(la.ca), T(la.cb), T(la.cc), d, x)
	} else {
		st, err = p.hostCheck.Check(a, b, c, d, x)
	}
	if st == nil {
		return nil, err
	}
	// The verdict is MergeChecks': the statuses carry it.
	return st, nil
}
