//go:build cuda

package main

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/gpu"
	"github.com/bandsolve/bandsolve/tridiag"
)

// splitDouglas is the 3-D Douglas stepper (see hostDouglas) with the grid
// split along z across the GPUs of a group, as a distributed code holds
// it: GPU k keeps z-planes z_k … z_{k+1}−1 of u and f, row-major as the
// whole field. The x and y stages stay on each GPU (their lines lie in a
// plane); the z stage is one gpu.SplitPlan solve across the GPUs, each
// holding its rows of the n² z-lines; the explicit A_z·u needs the
// neighbours' boundary planes, copied between the GPUs (the halo) at the
// start of every step. Zero (Dirichlet) boundaries only: the split plan
// takes no cyclic systems. The split plan reads the z matrix from arrays
// (a, b, c of each slab), filled once with the constant coefficients.
type splitDouglas[T tridiag.Float] struct {
	own    *cuda.Group // a group of the first GPUs, when fewer split the grid
	n      int
	z0, nz []int // each GPU's first plane and planes
	// Per GPU: plans along x (the slab's rows), y (one plane) and z (the
	// slab's z-lines, products only); u, f and their plane views; the
	// halo planes below and above the slab (nil at the grid's ends); the
	// z matrix.
	px, py, pz []*gpu.TridiagPlan[T]
	u, f       []*cuda.Buffer[T]
	uz, fz     [][]*cuda.Buffer[T]
	lo, hi     []*cuda.Buffer[T]
	a, b, c    []*cuda.Buffer[T]
	split      *gpu.SplitPlan[T]
	r          T
}

// splitGPUs is how many GPUs of a group of p split n planes: each part
// needs two planes at least.
func splitGPUs(p, n int) int { return max(1, min(p, n/2)) }

func newSplitDouglas[T tridiag.Float](group *cuda.Group, g grid) (s *splitDouglas[T], err error) {
	if g.periodic || g.dims != 3 {
		return nil, fmt.Errorf("the split stepper takes 3D grids with zero boundaries")
	}
	n := g.n
	P := splitGPUs(group.Len(), n)
	s = &splitDouglas[T]{n: n, r: T(g.r())}
	if P < group.Len() {
		if group, err = cuda.NewGroup(group.Devices()[:P]...); err != nil {
			return nil, err
		}
		s.own = group
	}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	u0 := toT[T](g.mode(0))
	plane := n * n
	h := s.r / 2
	parts := make([]tridiag.Shape, P)
	for k := range P {
		dev := group.Device(k)
		z0, nz := n*k/P, n*(k+1)/P-n*k/P
		s.z0, s.nz = append(s.z0, z0), append(s.nz, nz)
		parts[k] = tridiag.Shape{N: nz, G: plane, Layout: tridiag.Interleaved(plane)}
		plan := func(sh tridiag.Shape) *gpu.TridiagPlan[T] {
			p, e := gpu.NewTridiagPlan[T](dev, sh, tridiag.Options{})
			err = errors.Join(err, e)
			return p
		}
		s.px = append(s.px, plan(tridiag.Shape{N: n, G: n * nz, Layout: tridiag.Strided(1, n)})) // along x
		s.py = append(s.py, plan(tridiag.Shape{N: n, G: n, Layout: tridiag.Strided(n, 1)}))      // along y, one plane
		s.pz = append(s.pz, plan(parts[k]))                                                      // along z
		if err != nil {
			return nil, err
		}
		u, err := cuda.Upload(dev, u0[z0*plane:(z0+nz)*plane])
		if err != nil {
			return nil, err
		}
		s.u = append(s.u, u)
		f, err := cuda.Alloc[T](dev, nz*plane)
		if err != nil {
			return nil, err
		}
		s.f = append(s.f, f)
		var uz, fz []*cuda.Buffer[T]
		for z := range nz {
			uv, err := u.Slice(z*plane, plane)
			if err != nil {
				return nil, err
			}
			fv, err := f.Slice(z*plane, plane)
			if err != nil {
				return nil, err
			}
			uz, fz = append(uz, uv), append(fz, fv)
		}
		s.uz, s.fz = append(s.uz, uz), append(s.fz, fz)
		var lo, hi *cuda.Buffer[T]
		if k > 0 {
			if lo, err = cuda.Alloc[T](dev, plane); err != nil {
				return nil, err
			}
		}
		if k < P-1 {
			if hi, err = cuda.Alloc[T](dev, plane); err != nil {
				return nil, err
			}
		}
		s.lo, s.hi = append(s.lo, lo), append(s.hi, hi)
		fill := func(v T) *cuda.Buffer[T] {
			host := make([]T, nz*plane)
			for i := range host {
				host[i] = v
			}
			buf, e := cuda.Upload(dev, host)
			err = errors.Join(err, e)
			return buf
		}
		s.a, s.b, s.c = append(s.a, fill(-h)), append(s.b, fill(1+s.r)), append(s.c, fill(-h))
		if err != nil {
			return nil, err
		}
	}
	if s.split, err = gpu.NewSplitPlan[T](group, parts); err != nil {
		return nil, err
	}
	return s, nil
}

// each runs f for every GPU at once and joins the errors.
func (s *splitDouglas[T]) each(f func(k int) error) error {
	errs := make([]error, len(s.u))
	var wg sync.WaitGroup
	for k := range s.u {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[k] = f(k)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (s *splitDouglas[T]) Step(ctx context.Context, k int) error {
	r, h := s.r, s.r/2
	P := len(s.u)
	for range k {
		// The halo: each slab's neighbouring planes.
		for k := range P {
			if k > 0 {
				if err := cuda.CopyPeer(s.lo[k], s.uz[k-1][s.nz[k-1]-1]); err != nil {
					return err
				}
			}
			if k < P-1 {
				if err := cuda.CopyPeer(s.hi[k], s.uz[k+1][0]); err != nil {
					return err
				}
			}
		}
		err := s.each(func(k int) error {
			px, py, pz, u, f := s.px[k], s.py[k], s.pz[k], s.u[k], s.f[k]
			// f = (A_x + A_y + A_z)·u, A_z with the halo planes.
			if err := px.MulAddDeviceConst(ctx, 1, r, -2*r, r, u, 0, f); err != nil {
				return err
			}
			for z := range s.uz[k] {
				if err := py.MulAddDeviceConst(ctx, 1, r, -2*r, r, s.uz[k][z], 1, s.fz[k][z]); err != nil {
					return err
				}
			}
			if err := pz.MulAddDeviceConst(ctx, 1, r, -2*r, r, u, 1, f); err != nil {
				return err
			}
			if s.lo[k] != nil {
				if err := py.MulAddDeviceConst(ctx, 1, 0, r, 0, s.lo[k], 1, s.fz[k][0]); err != nil {
					return err
				}
			}
			if s.hi[k] != nil {
				if err := py.MulAddDeviceConst(ctx, 1, 0, r, 0, s.hi[k], 1, s.fz[k][s.nz[k]-1]); err != nil {
					return err
				}
			}
			// (I − ½A_x) and (I − ½A_y) on the GPU's own planes.
			if err := px.SolveDeviceConst(ctx, -h, 1+r, -h, f, f); err != nil {
				return err
			}
			for z := range s.fz[k] {
				if err := py.SolveDeviceConst(ctx, -h, 1+r, -h, s.fz[k][z], s.fz[k][z]); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		// (I − ½A_z) across the GPUs.
		if err := s.split.SolveDevice(ctx, s.a, s.b, s.c, s.f, s.f); err != nil {
			return err
		}
		// u += f₃.
		if err := s.each(func(k int) error {
			return s.px[k].MulAddDeviceConst(ctx, 1, 0, 1, 0, s.f[k], 1, s.u[k])
		}); err != nil {
			return err
		}
	}
	return nil
}

// Field gathers the slabs to the host.
func (s *splitDouglas[T]) Field(u []float64) error {
	plane := s.n * s.n
	for k, b := range s.u {
		host := make([]T, b.Len())
		if err := b.CopyTo(host); err != nil {
			return err
		}
		for i, v := range host {
			u[s.z0[k]*plane+i] = float64(v)
		}
	}
	return nil
}

func (s *splitDouglas[T]) Close() error {
	var err error
	if s.split != nil {
		err = s.split.Close()
	}
	for _, l := range [][]*gpu.TridiagPlan[T]{s.px, s.py, s.pz} {
		for _, p := range l {
			if p != nil {
				err = errors.Join(err, p.Close())
			}
		}
	}
	for _, l := range [][]*cuda.Buffer[T]{s.u, s.f, s.lo, s.hi, s.a, s.b, s.c} {
		for _, b := range l {
			if b != nil {
				err = errors.Join(err, b.Free())
			}
		}
	}
	if s.own != nil {
		err = errors.Join(err, s.own.Close())
	}
	return err
}
