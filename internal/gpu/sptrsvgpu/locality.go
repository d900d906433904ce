//go:build cuda

package sptrsvgpu

import (
	"fmt"
	"slices"
	"unsafe"

	"gorgonia.org/cu"

	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/internal/gpu/kernels"
	"github.com/bandsolve/bandsolve/sparse"
	"github.com/bandsolve/bandsolve/sptrsv"
)

// localityPlan is the device copy of a sptrsv.LocalityPlan: Picciau et
// al.'s sub-graphs, analysed on the host (sptrsv.AnalyzeLocality), solved
// one launch a sub-graph level.
type localityPlan struct {
	levelPtr []int32 // the sub-graphs of each level, on the host
	capacity int     // the most rows of a sub-graph: the shared memory of a block
	stats    sptrsv.LocalityStats

	rowPtr, rows, diag, extSlotPtr, extPtr, extCol, extDst, extVal cu.DevicePtr
	stepPtr, stepRowPtr, edgePtr, edgeSrc, edgeDst, edgeVal        cu.DevicePtr
}

// freeLocality frees the device arrays of the locality plan, if any.
func (p *Plan[T]) freeLocality() {
	lp := p.loc
	if lp == nil {
		return
	}
	p.loc = nil
	gone := map[cu.DevicePtr]bool{}
	for _, d := range []cu.DevicePtr{lp.rowPtr, lp.rows, lp.diag, lp.extSlotPtr, lp.extPtr, lp.extCol, lp.extDst, lp.extVal,
		lp.stepPtr, lp.stepRowPtr, lp.edgePtr, lp.edgeSrc, lp.edgeDst, lp.edgeVal} {
		gone[d] = true
	}
	_ = p.dev.Enqueue(func() error {
		for d := range gone {
			_ = cu.MemFree(d)
		}
		return nil
	})
	p.allocs = slices.DeleteFunc(p.allocs, func(d cu.DevicePtr) bool { return gone[d] })
}

// analyseLocality runs the host analysis of the triangle of a and copies
// its arrays to the device, in place of those of an earlier analysis.
func (p *Plan[T]) analyseLocality(a *sparse.CSR) error {
	p.freeLocality()
	an, err := sptrsv.Analyze(a, p.tri)
	if err != nil {
		return err
	}
	loc, err := sptrsv.AnalyzeLocality(an, sptrsv.LocalityOptions{})
	if err != nil {
		return err
	}
	arr := sptrsv.LocalityArrays[T](loc)
	lp := &localityPlan{levelPtr: arr.LevelPtr, capacity: loc.Capacity(), stats: loc.Stats()}
	ints := []struct {
		dst *cu.DevicePtr
		src []int32
	}{{&lp.rowPtr, arr.RowPtr}, {&lp.rows, arr.Rows}, {&lp.extSlotPtr, arr.ExtSlotPtr}, {&lp.extPtr, arr.ExtPtr},
		{&lp.extCol, arr.ExtCol}, {&lp.extDst, arr.ExtDst}, {&lp.stepPtr, arr.StepPtr}, {&lp.stepRowPtr, arr.StepRowPtr},
		{&lp.edgePtr, arr.EdgePtr}, {&lp.edgeSrc, arr.EdgeSrc}, {&lp.edgeDst, arr.EdgeDst}}
	vals := []struct {
		dst *cu.DevicePtr
		src []T
	}{{&lp.diag, arr.Diag}, {&lp.extVal, arr.ExtVal}, {&lp.edgeVal, arr.EdgeVal}}
	for _, v := range ints {
		if *v.dst, err = p.alloc(4 * int64(len(v.src))); err != nil {
			return err
		}
	}
	for _, v := range vals {
		if *v.dst, err = p.alloc(p.elem() * int64(len(v.src))); err != nil {
			return err
		}
	}
	err = p.dev.Enqueue(func() error {
		for _, v := range ints {
			if len(v.src) > 0 {
				if e := cu.MemcpyHtoD(*v.dst, unsafe.Pointer(&v.src[0]), 4*int64(len(v.src))); e != nil {
					return e
				}
			}
		}
		for _, v := range vals {
			if len(v.src) > 0 {
				if e := cu.MemcpyHtoD(*v.dst, unsafe.Pointer(&v.src[0]), p.elem()*int64(len(v.src))); e != nil {
					return e
				}
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("sptrsv: copying the locality plan of a triangle of order %d to the GPU: %w", p.n, err)
	}
	p.loc = lp
	return nil
}

// enqueueLocality queues the locality-aware solve on s (device thread).
func (p *Plan[T]) enqueueLocality(s cu.Stream, b, x cu.DevicePtr) error {
	k, err := kernels.TrsvLocalityFor(p.f64)
	if err != nil {
		return err
	}
	lp := p.loc
	args := kernels.TrsvLocalityArgs{RowPtr: lp.rowPtr, Rows: lp.rows, Diag: lp.diag, ExtSlotPtr: lp.extSlotPtr,
		ExtPtr: lp.extPtr, ExtCol: lp.extCol, ExtDst: lp.extDst, ExtVal: lp.extVal, StepPtr: lp.stepPtr,
		StepRowPtr: lp.stepRowPtr, EdgePtr: lp.edgePtr, EdgeSrc: lp.edgeSrc, EdgeDst: lp.edgeDst, EdgeVal: lp.edgeVal, B: b, X: x}
	shmem := lp.capacity * int(p.elem())
	for l := 0; l+1 < len(lp.levelPtr); l++ {
		args.G0 = lp.levelPtr[l]
		grid := cuda.Dim3{X: int(lp.levelPtr[l+1] - lp.levelPtr[l]), Y: 1, Z: 1}
		if err := k.Launch(p.dev, grid, threads, shmem, s, &args); err != nil {
			return err
		}
	}
	return nil
}

// LocalityStats returns the statistics of the locality-aware partition (a
// plan for sptrsv.LocalityAware; the zero value otherwise).
func (p *Plan[T]) LocalityStats() sptrsv.LocalityStats {
	if p.loc == nil {
		return sptrsv.LocalityStats{}
	}
	return p.loc.stats
}
