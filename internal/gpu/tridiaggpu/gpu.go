//go:build cuda

package tridiaggpu

import (
	"context"
	"sync"
	"unsafe"

	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/internal/gpu/kernels"
	"github.com/bandsolve/bandsolve/tridiag"
	"github.com/bandsolve/bandsolve/tuning"
)

// config holds the switches of a plan's kernel choices. The zero config
// is what NewPlan builds: every kernel in use where the tuning takes it.
// Tests and benchmarks turn kernels off (or force one) to compare them
// with the paths they replace.
type config struct {
	// noDirectLaunch: launch through Device.Enqueue, not LaunchDirect.
	noDirectLaunch bool
	// noClusters: segment plans without the cluster kernels.
	noClusters bool
	// noLatencyChunks: Auto keeps chunks of 16 for small batches
	// (tuning.LatencyChunk).
	noLatencyChunks bool
	// noConstStream: partition plans without the constant streaming
	// kernel for the constant solves of large batches.
	noConstStream bool
	// noLanesKernel: batches of adjacent systems (batch stride 1) without
	// the lanes kernel.
	noLanesKernel bool
	// noConstKernel: constant solves in the general partition kernel, not
	// the constant-coefficient one.
	noConstKernel bool
	// noStreamKernel: systems that leave one block per SM without the
	// streaming partition kernel.
	noStreamKernel bool
	// noLanesSegments: long systems adjacent in memory gathered into
	// contiguous ones instead of the lanes segment kernel.
	noLanesSegments bool
	// noLanesStream: large batches of the lanes kernel without the
	// streamed lanes kernel.
	noLanesStream bool
	// forceLanesStream: the streamed lanes kernel wherever it applies,
	// whatever tuning.PreferLanesStream says.
	forceLanesStream bool
	// noTranspose: batches stored systems first are not gathered into
	// contiguous systems when no kernel takes them in place.
	noTranspose bool
	// condOnHost, condOnDevice: Options.Check estimates κ̂ on the host,
	// or on the device, whatever tuning.CondOnDevice says.
	condOnHost, condOnDevice bool
	// condWorkBytes: the condition estimate's workspace bound (0:
	// condWorkBytes), smaller in tests to split batches into chunks.
	condWorkBytes int
}

// gpu is a device as the kernel plans see it: the runtime's device (its
// launches, kernels and locking), its properties and the switches of the
// plan being built.
type gpu struct {
	*cuda.Device
	props tuning.Device
	cfg   config
}

// newGPU is d with the switches cfg.
func newGPU(d *cuda.Device, cfg config) *gpu {
	return &gpu{Device: d, props: d.Properties(), cfg: cfg}
}

// elemSize is the size in bytes of T.
func elemSize[T tridiag.Float]() int64 {
	var v T
	return int64(unsafe.Sizeof(v))
}

// Register adds the GPU tridiagonal solvers to tridiag: tridiag.NewPlan
// then solves on a *cuda.Device, copying host slices in and out of device
// memory for each solve. Calls after the first do nothing.
func Register() {
	register.Do(func() {
		tridiag.RegisterBackend(func(dev tridiag.Device) (tridiag.Backend, bool) {
			d, ok := dev.(*cuda.Device)
			if !ok || d == nil {
				return nil, false
			}
			return backend{d}, true
		})
	})
}

var register sync.Once

// backend builds the host-slice solvers of tridiag.NewPlan on a device.
type backend struct{ d *cuda.Device }

// NewSolver32 is a GPU plan for float32 host slices.
func (b backend) NewSolver32(spec tridiag.Spec) (tridiag.Solver[float32], error) {
	p, err := NewPlan[float32](b.d, spec.Shape, spec.Options)
	if err != nil {
		return nil, err
	}
	return hostSolverOf(p, spec), nil
}

// NewSolver64 is a GPU plan for float64 host slices.
func (b backend) NewSolver64(spec tridiag.Spec) (tridiag.Solver[float64], error) {
	p, err := NewPlan[float64](b.d, spec.Shape, spec.Options)
	if err != nil {
		return nil, err
	}
	return hostSolverOf(p, spec), nil
}

// hostSolver solves host slices with a plan (tridiag.Solver).
type hostSolver[T tridiag.Float] struct{ p *Plan[T] }

func (h hostSolver[T]) Solve(ctx context.Context, b tridiag.Batch[T]) error {
	if b.Constant {
		return h.p.SolveConst(ctx, b.ConstA, b.ConstB, b.ConstC, b.D, b.X)
	}
	return h.p.Solve(ctx, b.A, b.B, b.C, b.D, b.X)
}

func (h hostSolver[T]) Close() error { return h.p.Close() }

// Describe says how the plan runs (Plan.Describe).
func (h hostSolver[T]) Describe() string { return h.p.Describe() }

var (
	_ tridiag.Describer = hostSolver[float32]{}
	_ tridiag.Backend   = backend{}
)

// directKernel is a kernel resolved for Device.LaunchDirect, with the
// launch it was resolved for (which the kernel's typed launcher takes
// too).
type directKernel struct {
	k                  *cuda.DirectKernel
	grid, block, shmem int
}

// prepareDirect resolves kernel k for launches of grid × block threads
// with shmem bytes of dynamic shared memory (device thread).
func (d *gpu) prepareDirect(k kernels.Kernel, grid, block, shmem int) (*directKernel, error) {
	dk, err := d.PrepareDirect(k.Name(), grid, block, shmem)
	if err != nil {
		return nil, err
	}
	return &directKernel{k: dk, grid: grid, block: block, shmem: shmem}, nil
}
