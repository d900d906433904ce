//go:build cuda

package main

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"gorgonia.org/cu"

	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/gpu"
	"github.com/bandsolve/bandsolve/tridiag"
)

// variant names the build in bandsolve_version.
const variant = "cuda"

var (
	devMu   sync.Mutex
	devices = map[int]*cuda.Device{}
)

// openDevice opens GPU ordinal once (its primary context, shared with the
// CUDA runtime of the process) and keeps it for the life of the process.
func openDevice(ordinal int) (*cuda.Device, error) {
	devMu.Lock()
	defer devMu.Unlock()
	if d, ok := devices[ordinal]; ok {
		return d, nil
	}
	d, err := gpu.Open(ordinal)
	if err != nil {
		return nil, fmt.Errorf("%w: opening GPU %d: %w", errDevice, ordinal, err)
	}
	devices[ordinal] = d
	return d, nil
}

// gpuPlan is a plan on a GPU.
type gpuPlan[T tridiag.Float] struct {
	dev *cuda.Device
	p   *gpu.TridiagPlan[T]
	n   int  // storage length of one batch
	spd bool // LDLT: a is not read
	// mu orders the stream changes of a device solve with the other
	// solves. A device solve queues on the caller's stream for the length
	// of the call only: the caller may destroy the stream afterwards.
	mu sync.Mutex
}

func newGPUPlan(ordinal int, f64 bool, s tridiag.Shape, o tridiag.Options) (planImpl, error) {
	dev, err := openDevice(ordinal)
	if err != nil {
		return nil, err
	}
	if f64 {
		return makeGPUPlan[float64](dev, s, o)
	}
	return makeGPUPlan[float32](dev, s, o)
}

func makeGPUPlan[T tridiag.Float](dev *cuda.Device, s tridiag.Shape, o tridiag.Options) (planImpl, error) {
	p, err := gpu.NewTridiagPlan[T](dev, s, o)
	if err != nil {
		return nil, deviceErr(err)
	}
	return &gpuPlan[T]{dev: dev, p: p, n: p.Shape().Len(), spd: o.Algorithm == tridiag.LDLT}, nil
}

// deviceErr marks errors that are none of the library's own as CUDA
// errors.
func deviceErr(err error) error {
	if err == nil || statusOf(err) != statusInternal {
		return err
	}
	return fmt.Errorf("%w: %w", errDevice, err)
}

func (g *gpuPlan[T]) solve(p pointers, nrhs int) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	a := hostSlice[T](p.a, g.n)
	b, c := hostSlice[T](p.b, g.n), hostSlice[T](p.c, g.n)
	if a == nil && g.spd {
		a = b
	}
	d, x := hostSlice[T](p.d, nrhs*g.n), hostSlice[T](p.x, nrhs*g.n)
	return deviceErr(columns(nrhs, g.n, func(r int) error {
		return g.p.Solve(context.Background(), a, b, c, d[r*g.n:(r+1)*g.n], x[r*g.n:(r+1)*g.n])
	}))
}

func (g *gpuPlan[T]) solveConst(a, b, c float64, p pointers, nrhs int) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	d, x := hostSlice[T](p.d, nrhs*g.n), hostSlice[T](p.x, nrhs*g.n)
	return deviceErr(columns(nrhs, g.n, func(r int) error {
		return g.p.SolveConst(context.Background(), T(a), T(b), T(c), d[r*g.n:(r+1)*g.n], x[r*g.n:(r+1)*g.n])
	}))
}

// columns solves the nrhs columns one by one; the first error that is not
// a *tridiag.BatchError stops it, batch errors are merged by system.
func columns(nrhs, n int, solve func(r int) error) error {
	var merged *tridiag.BatchError
	for r := range nrhs {
		err := solve(r)
		if err == nil {
			continue
		}
		be, ok := err.(*tridiag.BatchError)
		if !ok {
			return err
		}
		if merged == nil {
			merged = &tridiag.BatchError{G: be.G}
		}
		merged.Failed = mergeFailed(merged.Failed, be.Failed)
	}
	if merged == nil {
		return nil
	}
	return merged
}

// mergeFailed adds the systems of add that are not in f yet, keeping the
// order by system.
func mergeFailed(f, add []tridiag.SystemError) []tridiag.SystemError {
	seen := map[int]bool{}
	for _, e := range f {
		seen[e.System] = true
	}
	for _, e := range add {
		if !seen[e.System] {
			f = append(f, e)
		}
	}
	sortSystems(f)
	return f
}

func (g *gpuPlan[T]) factor(pointers, float64, float64, float64, bool) (factorsImpl, error) {
	return nil, fmt.Errorf("%w: factors of a GPU plan (use a CPU plan, or solve again)", errUnsupported)
}

func (g *gpuPlan[T]) solveDevice(p devPointers, a, b, c float64, constant bool) error {
	wrap := func(name string, ptr uint64) (*cuda.Buffer[T], error) {
		buf, err := cuda.Wrap[T](g.dev, cu.DevicePtr(ptr), g.n)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %w", errArgument, name, err)
		}
		return buf, nil
	}
	if !constant && p.a == 0 && g.spd {
		p.a = p.b
	}
	names := []string{"a", "b", "c", "d", "x"}
	ptrs := []uint64{p.a, p.b, p.c, p.d, p.x}
	if constant {
		names, ptrs = names[3:], ptrs[3:]
	}
	bufs := make([]*cuda.Buffer[T], len(ptrs))
	for i, ptr := range ptrs {
		var err error
		if bufs[i], err = wrap(names[i], ptr); err != nil {
			return err
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.p.SetStream(cuda.WrapStream(g.dev, p.stream)); err != nil {
		return deviceErr(err)
	}
	ctx := context.Background()
	var err error
	if constant {
		err = g.p.SolveDeviceConst(ctx, T(a), T(b), T(c), bufs[0], bufs[1])
	} else {
		err = g.p.SolveDevice(ctx, bufs[0], bufs[1], bufs[2], bufs[3], bufs[4])
	}
	// Back to the plan's own stream while the caller's is alive.
	return deviceErr(errors.Join(err, g.p.SetStream(nil)))
}

func (g *gpuPlan[T]) describe() string { return g.p.Describe() }
func (g *gpuPlan[T]) close() error     { return deviceErr(g.p.Close()) }
