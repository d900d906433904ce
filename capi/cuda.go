//go:build cuda

package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"unsafe"

	"gorgonia.org/cu"

	"github.com/bandsolve/bandsolve/banded"
	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/gpu"
	"github.com/bandsolve/bandsolve/internal/memguard"
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

// bandKey is the shape of a device banded solve's plan.
type bandKey struct {
	ordinal, n, k, g int
	f64              bool
}

// bandIdle is a plan of the pool (a *gpu.BandBatchPlan of the key's
// precision).
type bandIdle struct {
	key  bandKey
	plan interface{ Close() error }
}

// bandPoolSize is the number of idle plans kept for the next device
// banded solves (their workspace stays allocated).
const bandPoolSize = 4

var (
	bandMu   sync.Mutex
	bandPool []bandIdle // the most recently used last
)

// takeBandPlan takes an idle plan of the key from the pool, or makes one:
// LU with partial pivoting, solutions that are not finite failing their
// system, the contiguous layout of bandsolve_solve_banded. A plan is used
// by one call at a time.
func takeBandPlan[T tridiag.Float](dev *cuda.Device, key bandKey) (*gpu.BandBatchPlan[T], error) {
	bandMu.Lock()
	for i := len(bandPool) - 1; i >= 0; i-- {
		if bandPool[i].key == key {
			p := bandPool[i].plan.(*gpu.BandBatchPlan[T])
			bandPool = append(bandPool[:i], bandPool[i+1:]...)
			bandMu.Unlock()
			return p, nil
		}
	}
	bandMu.Unlock()
	p, err := gpu.NewBandBatchPlan[T](dev, key.n, key.k, key.g, banded.Contiguous, gpu.BandBatchOptions{Pivot: true, CheckFinite: true})
	if err != nil {
		return nil, deviceErr(err)
	}
	return p, nil
}

// putBandPlan returns a plan to the pool, closing the least recently
// used one beyond bandPoolSize.
func putBandPlan(key bandKey, p interface{ Close() error }) {
	bandMu.Lock()
	bandPool = append(bandPool, bandIdle{key: key, plan: p})
	var old []bandIdle
	if len(bandPool) > bandPoolSize {
		old = append(old, bandPool[:len(bandPool)-bandPoolSize]...)
		bandPool = append([]bandIdle(nil), bandPool[len(bandPool)-bandPoolSize:]...)
	}
	bandMu.Unlock()
	for _, o := range old {
		_ = o.plan.Close()
	}
}

// solveBandedDevice solves the batch of bandsolve_solve_banded_device on
// GPU ordinal, queued on the caller's stream: with gpu.BandBatchPlan's
// pivoting kernel where the band fits it (K = max(1, kl, ku) ≤
// gpu.MaxBatchK and K < n), else on the CPU from host copies.
func solveBandedDevice(ordinal int, f64 bool, s bandShape, p bandPointers) error {
	dev, err := openDevice(ordinal)
	if err != nil {
		return err
	}
	if f64 {
		return solveBandedOn[float64](dev, s, p)
	}
	return solveBandedOn[float32](dev, s, p)
}

func solveBandedOn[T tridiag.Float](dev *cuda.Device, s bandShape, p bandPointers) error {
	rows, vec := (s.kl+s.ku+1)*s.n*s.g, s.n*s.nrhs*s.g
	var bufs [3]*cuda.Buffer[T]
	for i, v := range []struct {
		name string
		ptr  uint64
		n    int
	}{{"ab", p.ab, rows}, {"b", p.b, vec}, {"x", p.x, vec}} {
		buf, err := cuda.Wrap[T](dev, cu.DevicePtr(v.ptr), v.n)
		if err != nil {
			return fmt.Errorf("%w: %s: %w", errArgument, v.name, err)
		}
		bufs[i] = buf
	}
	ab, b, x := bufs[0], bufs[1], bufs[2]
	k := max(1, s.kl, s.ku)
	if k > gpu.MaxBatchK || k >= s.n {
		return deviceErr(bandedViaHost(dev, s, ab, b, x, p.stream))
	}
	key := bandKey{ordinal: dev.Ordinal(), n: s.n, k: k, g: s.g, f64: isF64[T]()}
	plan, err := takeBandPlan[T](dev, key)
	if err != nil {
		return err
	}
	if err := plan.SetStream(cuda.WrapStream(dev, p.stream)); err != nil {
		_ = plan.Close()
		return deviceErr(err)
	}
	_, err = plan.SolveDeviceGeneral(context.Background(), s.kl, s.ku, ab, b, x, s.nrhs)
	// Back to the plan's own stream while the caller's is alive.
	serr := plan.SetStream(nil)
	var be *tridiag.BatchError
	if serr != nil || (err != nil && !errors.As(err, &be)) {
		_ = plan.Close()
	} else {
		putBandPlan(key, plan)
	}
	if serr != nil {
		return deviceErr(errors.Join(err, serr))
	}
	return deviceErr(err)
}

// isF64 reports whether T is float64.
func isF64[T tridiag.Float]() bool {
	_, ok := any(T(0)).(float64)
	return ok
}

// bandedViaHost solves the batch of device buffers on the CPU: it waits
// for the caller's stream, copies ab and b to the host, solves them as
// bandsolve_solve_banded does (each system scanned for NaN and Inf
// instead of the whole call failing) and copies x back, landed before it
// returns.
func bandedViaHost[T tridiag.Float](dev *cuda.Device, s bandShape, ab, b, x *cuda.Buffer[T], stream uintptr) error {
	var zero T
	size := int(unsafe.Sizeof(zero))
	if err := memguard.Check(fmt.Sprintf("bandsolve_solve_banded_device: host copies of %d %T systems of N=%d, KL=%d, KU=%d, %d right-hand sides", s.g, zero, s.n, s.kl, s.ku, s.nrhs),
		memguard.Add(memguard.Bytes(size, s.kl+s.ku+1, s.n, s.g), memguard.Bytes(size, 2, s.n, s.nrhs, s.g))); err != nil {
		return err
	}
	if err := cuda.WrapStream(dev, stream).Synchronize(); err != nil {
		return err
	}
	hab, hb, hx := make([]T, ab.Len()), make([]T, b.Len()), make([]T, x.Len())
	if err := ab.CopyTo(hab); err != nil {
		return err
	}
	if err := b.CopyTo(hb); err != nil {
		return err
	}
	err := solveBandedSlices(s, hab, hb, hx, true)
	var be *tridiag.BatchError
	if err != nil && !errors.As(err, &be) {
		return err
	}
	if cerr := x.CopyFrom(hx); cerr != nil {
		return cerr
	}
	// From pageable memory the copy may return before its data lands; the
	// caller's stream may not wait for the legacy default one.
	if serr := dev.Enqueue(func() error { return (cu.Stream{}).Synchronize() }); serr != nil {
		return serr
	}
	return err
}
