//go:build cuda

package tridiaggpu

import (
	"errors"
	"fmt"

	"gorgonia.org/cu"

	"github.com/bandsolve/bandsolve/internal/gpu/kernels"
	"github.com/bandsolve/bandsolve/tridiag"
	"github.com/bandsolve/bandsolve/tuning"
	"github.com/bandsolve/bandsolve/tuning/route"
)

// partitionOptions are the switches of c as the partition family's
// dispatch takes them.
func (c config) partitionOptions() route.Options {
	return route.Options{
		NoClusters: c.noClusters, NoLatencyChunks: c.noLatencyChunks, NoConstStream: c.noConstStream,
		NoLanesKernel: c.noLanesKernel, NoConstKernel: c.noConstKernel, NoStreamKernel: c.noStreamKernel,
		NoLanesSegments: c.noLanesSegments, NoLanesStream: c.noLanesStream, ForceLanesStream: c.forceLanesStream,
		NoTranspose: c.noTranspose,
	}
}

// problemOf is spec as tuning's dispatch sees it (auto: Auto's rules).
func problemOf(spec tridiag.Spec, f64, auto bool) route.Problem {
	l := spec.Layout
	return route.Problem{N: spec.N, G: spec.G, Elem: reductionElem(f64), ElemStride: l.ElemStride, BatchStride: l.BatchStride,
		SegmentRows: spec.SegmentRows, Auto: auto}
}

// regs is the kernels' registers per thread as the driver reports them,
// negative for a kernel the device cannot load (device thread).
func (d *gpu) regs() route.Regs {
	return func(k kernels.Kernel) int {
		r, err := d.KernelAttr(k.Name(), cu.NumRegs)
		if err != nil {
			return -1
		}
		return r
	}
}

// routeErr is a dispatch error as tridiag reports it: tridiag.ErrOptions
// for a forced choice no kernel runs, tridiag.ErrShape otherwise.
func routeErr(err error) error {
	if errors.Is(err, route.ErrOptions) {
		return fmt.Errorf("%w: %w", tridiag.ErrOptions, err)
	}
	return fmt.Errorf("%w: %w", tridiag.ErrShape, err)
}

// routeLocked is the partition family's route for spec with options o
// (device thread).
func (d *gpu) routeLocked(spec tridiag.Spec, f64, auto bool, o route.Options) (route.Route, error) {
	r, err := route.Partition(d.props, problemOf(spec, f64, auto), d.regs(), o)
	if err != nil {
		return r, routeErr(err)
	}
	return r, nil
}

// routePlan is the plan of the partition family's route for spec: Auto's
// (auto) or tridiag.Partition's, with the plan's switches and the
// forcing fields of force.
func (d *gpu) routePlan(spec tridiag.Spec, f64, auto bool, force route.Options) (kernelPlan, error) {
	o := d.cfg.partitionOptions()
	o.Force, o.Chunk, o.Systems, o.ThreePass = force.Force, force.Chunk, force.Systems, force.ThreePass
	o.ConstStream, o.ConstStreamSystems = force.ConstStream, force.ConstStreamSystems
	var kp kernelPlan
	err := d.Enqueue(func() error {
		r, err := d.routeLocked(spec, f64, auto, o)
		if err != nil {
			return err
		}
		kp, err = d.fromRoute(spec, f64, &r)
		return err
	})
	if err != nil {
		return nil, err
	}
	return kp, nil
}

// forcedPlan is routePlan with the plan kind that force names, as its
// type P (tests and benchmarks build one kind of plan this way).
func forcedPlan[P kernelPlan](d *gpu, spec tridiag.Spec, f64 bool, force route.Options) (P, error) {
	kp, err := d.routePlan(spec, f64, false, force)
	if err != nil {
		var zero P
		return zero, err
	}
	return kp.(P), nil
}

// fromRoute builds the plan of route r for spec: its kernels resolved,
// its launches prepared, the plans it contains built alike (device
// thread). It makes no choice.
func (d *gpu) fromRoute(spec tridiag.Spec, f64 bool, r *route.Route) (kernelPlan, error) {
	switch r.Plan {
	case route.PlanShared, route.PlanLanes:
		return d.partitionFromRoute(spec, f64, r)
	case route.PlanLanesStream:
		k, err := kernels.PartitionLanesStreamPSFor(16, tuning.LanesStreamSystems, f64)
		if err != nil {
			return nil, err
		}
		p := &lanesStreamPlan{cfg: *r.LanesStream, kernel: k}
		if r.Constant != nil {
			if p.lanes, err = d.partitionFromRoute(spec, f64, r.Constant); err != nil {
				return nil, err
			}
		}
		return p, nil
	case route.PlanStream:
		k, err := kernels.PartitionStreamPFor(16, f64)
		if err != nil {
			return nil, err
		}
		p := &streamPlan{cfg: *r.Stream, kernel: k}
		if r.Constant != nil {
			if p.other, err = d.fromRoute(spec, f64, r.Constant); err != nil {
				return nil, err
			}
		}
		return p, nil
	case route.PlanSegments:
		return d.segmentFromRoute(spec, f64, r)
	case route.PlanLanesSegments:
		return d.lanesSegFromRoute(spec, f64, r)
	case route.PlanGather:
		return d.transposeFromRoute(spec, f64, r)
	}
	return nil, fmt.Errorf("cuda: route of plan %s for N=%d G=%d has no GPU plan", r.Plan, spec.N, spec.G)
}

// nestedFromRoute is the plan of the reduced systems of a three-pass
// segmented plan of q segments (route r) and their spec.
func (d *gpu) nestedFromRoute(spec tridiag.Spec, f64 bool, q int, r *route.Route) (kernelPlan, tridiag.Spec, error) {
	nspec := tridiag.Spec{Shape: tridiag.Shape{N: 2 * q, G: spec.G}.Normalize(),
		Options: tridiag.Options{Algorithm: tridiag.Partition, SkipFiniteCheck: true}}
	if r == nil {
		return nil, nspec, fmt.Errorf("cuda: the reduced systems of %d segments have no route", q)
	}
	kp, err := d.fromRoute(nspec, f64, r)
	if err != nil {
		return nil, nspec, fmt.Errorf("cuda: the reduced systems of %d segments: %w", q, err)
	}
	return kp, nspec, nil
}
