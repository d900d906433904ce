//go:build cuda

package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/gpu"
	"github.com/bandsolve/bandsolve/tridiag"
)

// device is where the example runs: the CPU or a GPU.
type device struct {
	name   string
	dev    tridiag.Device // solves host arrays (the 3D stepper)
	gpu    *cuda.Device   // nil on the CPU
	group  *cuda.Group    // "gpus": every GPU of the host
	note3D string         // said before the tables, when not empty
	close  func()
}

// availableDevices lists the devices of this build: the CPU, the first
// GPU, and every GPU of the host with the 3D grid split along z.
func availableDevices() []string { return []string{"cpu", "cuda", "gpus"} }

// openDevice opens "cpu", "cuda" (the first GPU) or "gpus" (every GPU:
// the 3D grids with zero boundaries split along z across them, the
// others on the first).
func openDevice(name string) (*device, error) {
	switch name {
	case "gpus":
		n, err := cuda.Count()
		if err != nil {
			return nil, err
		}
		ordinals := make([]int, n)
		for i := range ordinals {
			ordinals[i] = i
		}
		group, err := gpu.OpenGroup(ordinals...)
		if err != nil {
			return nil, err
		}
		return &device{name: group.Name(), dev: group.Device(0), gpu: group.Device(0), group: group,
			close:  func() { _ = group.Close() },
			note3D: "3D grids with zero boundaries split along z across the GPUs (two planes a GPU at least; the z solves by a split plan, halo planes copied between GPUs every step); 2D and periodic grids on the first GPU"}, nil
	case "cpu":
		cpu := tridiag.DefaultCPU()
		return &device{name: cpu.Name(), dev: cpu, close: func() {}}, nil
	case "cuda":
		gpu, err := cuda.Open(0)
		if err != nil {
			return nil, err
		}
		return &device{name: gpu.Name(), dev: gpu, gpu: gpu, close: func() { _ = gpu.Close() },
			note3D: "fields resident on the GPU; the 3D y-axis runs slab by slab (one call per z-slab, through buffer views)"}, nil
	}
	return nil, fmt.Errorf("device %q: want cpu or cuda", name)
}

// newPR makes the 2D Peaceman–Rachford stepper of grid g on device d.
func newPR[T tridiag.Float](d *device, g grid) (stepper, error) {
	if d.gpu == nil {
		return newHostPR[T](d.dev, g)
	}
	return newGPUPR[T](d.gpu, g)
}

// gpuPR is the 2-D Peaceman–Rachford stepper with the field resident on the
// GPU for the whole run: the explicit halves are tridiagonal products
// (MulDeviceConst) and the implicit halves batched solves
// (SolveDeviceConst), both along one axis of the row-major array through
// the plan of that axis. Nothing crosses the bus between steps.
type gpuPR[T tridiag.Float] struct {
	px, py *gpu.TridiagPlan[T]
	u, w   *cuda.Buffer[T]
	r      T
}

func newGPUPR[T tridiag.Float](dev *cuda.Device, g grid) (s *gpuPR[T], err error) {
	ax := g.axes()
	opts := tridiag.Options{Cyclic: g.periodic}
	s = &gpuPR[T]{r: T(g.r())}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	if s.px, err = gpu.NewTridiagPlan[T](dev, ax[0].shape, opts); err != nil {
		return nil, err
	}
	if s.py, err = gpu.NewTridiagPlan[T](dev, ax[1].shape, opts); err != nil {
		return nil, err
	}
	if s.u, err = cuda.Upload(dev, toT[T](g.mode(0))); err != nil {
		return nil, err
	}
	if s.w, err = cuda.Alloc[T](dev, g.size()); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *gpuPR[T]) Step(ctx context.Context, k int) error {
	h, r := s.r/2, s.r
	for range k {
		// w = (I + ½r·δy²)·u; solve (I − ½r·δx²)·w = w in place.
		if err := s.py.MulDeviceConst(ctx, h, 1-r, h, s.u, s.w); err != nil {
			return err
		}
		if err := s.px.SolveDeviceConst(ctx, -h, 1+r, -h, s.w, s.w); err != nil {
			return err
		}
		// u = (I + ½r·δx²)·w; solve (I − ½r·δy²)·u = u in place.
		if err := s.px.MulDeviceConst(ctx, h, 1-r, h, s.w, s.u); err != nil {
			return err
		}
		if err := s.py.SolveDeviceConst(ctx, -h, 1+r, -h, s.u, s.u); err != nil {
			return err
		}
	}
	return nil
}

// Field copies the field to the host: the only transfer after the start.
func (s *gpuPR[T]) Field(u []float64) error {
	host := make([]T, len(u))
	if err := s.u.CopyTo(host); err != nil {
		return err
	}
	for i, v := range host {
		u[i] = float64(v)
	}
	return nil
}

func (s *gpuPR[T]) Close() error {
	var err error
	for _, b := range []*cuda.Buffer[T]{s.u, s.w} {
		if b != nil {
			err = errors.Join(err, b.Free())
		}
	}
	for _, p := range []*gpu.TridiagPlan[T]{s.px, s.py} {
		if p != nil {
			err = errors.Join(err, p.Close())
		}
	}
	return err
}

// newDouglas makes the 3D Douglas stepper of grid g on device d.
func newDouglas[T tridiag.Float](d *device, g grid) (stepper, error) {
	if d.gpu == nil {
		return newHostDouglas[T](d.dev, g)
	}
	if d.group != nil && !g.periodic {
		return newSplitDouglas[T](d.group, g)
	}
	return newGPUDouglas[T](d.gpu, g)
}

// gpuDouglas is the 3-D Douglas stepper (see hostDouglas) with u and f
// resident on the GPU: f = Σ A_k·u by MulAddDeviceConst along each axis,
// the three implicit stages by SolveDeviceConst, and u += f by
// MulAddDeviceConst with the identity. The y-axis lines of one z-slab are
// one batch, so that axis runs slab by slab on views of the fields.
type gpuDouglas[T tridiag.Float] struct {
	plans  []*gpu.TridiagPlan[T] // along x, y (one slab), z
	u, f   *cuda.Buffer[T]
	uz, fz []*cuda.Buffer[T] // views of the z-slabs
	ax     []axis
	r      T
}

func newGPUDouglas[T tridiag.Float](dev *cuda.Device, g grid) (s *gpuDouglas[T], err error) {
	s = &gpuDouglas[T]{ax: g.axes(), r: T(g.r())}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	opts := tridiag.Options{Cyclic: g.periodic}
	for _, a := range s.ax {
		p, err := gpu.NewTridiagPlan[T](dev, a.shape, opts)
		if err != nil {
			return nil, err
		}
		s.plans = append(s.plans, p)
	}
	if s.u, err = cuda.Upload(dev, toT[T](g.mode(0))); err != nil {
		return nil, err
	}
	if s.f, err = cuda.Alloc[T](dev, g.size()); err != nil {
		return nil, err
	}
	ay := s.ax[1]
	for z := range ay.slabs {
		uz, err := s.u.Slice(z*ay.slabStride, ay.shape.Len())
		if err != nil {
			return nil, err
		}
		fz, err := s.f.Slice(z*ay.slabStride, ay.shape.Len())
		if err != nil {
			return nil, err
		}
		s.uz, s.fz = append(s.uz, uz), append(s.fz, fz)
	}
	return s, nil
}

func (s *gpuDouglas[T]) Step(ctx context.Context, k int) error {
	r, h := s.r, s.r/2
	px, py, pz := s.plans[0], s.plans[1], s.plans[2]
	for range k {
		// f = (A_x + A_y + A_z)·u
		if err := px.MulAddDeviceConst(ctx, 1, r, -2*r, r, s.u, 0, s.f); err != nil {
			return err
		}
		for z := range s.uz {
			if err := py.MulAddDeviceConst(ctx, 1, r, -2*r, r, s.uz[z], 1, s.fz[z]); err != nil {
				return err
			}
		}
		if err := pz.MulAddDeviceConst(ctx, 1, r, -2*r, r, s.u, 1, s.f); err != nil {
			return err
		}
		// (I − ½A_x)(I − ½A_y)(I − ½A_z)·f₃ = f, one axis at a time, in place.
		if err := px.SolveDeviceConst(ctx, -h, 1+r, -h, s.f, s.f); err != nil {
			return err
		}
		for z := range s.fz {
			if err := py.SolveDeviceConst(ctx, -h, 1+r, -h, s.fz[z], s.fz[z]); err != nil {
				return err
			}
		}
		if err := pz.SolveDeviceConst(ctx, -h, 1+r, -h, s.f, s.f); err != nil {
			return err
		}
		// u += f₃ (the identity through the x plan, which covers the field).
		if err := px.MulAddDeviceConst(ctx, 1, 0, 1, 0, s.f, 1, s.u); err != nil {
			return err
		}
	}
	return nil
}

// Field copies the field to the host: the only transfer after the start.
func (s *gpuDouglas[T]) Field(u []float64) error {
	host := make([]T, len(u))
	if err := s.u.CopyTo(host); err != nil {
		return err
	}
	for i, v := range host {
		u[i] = float64(v)
	}
	return nil
}

func (s *gpuDouglas[T]) Close() error {
	var err error
	for _, b := range []*cuda.Buffer[T]{s.u, s.f} {
		if b != nil {
			err = errors.Join(err, b.Free())
		}
	}
	for _, p := range s.plans {
		err = errors.Join(err, p.Close())
	}
	return err
}
