//go:build cuda

package tridiaggpu

import (
	"fmt"
	"unsafe"

	"gorgonia.org/cu"

	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/internal/gpu/kernels"
	"github.com/bandsolve/bandsolve/tridiag"
	"github.com/bandsolve/bandsolve/tridiag/partition"
	"github.com/bandsolve/bandsolve/tuning"
)

// Flags of the segment kernels' mode for a part (SEG_KEEP_A, SEG_KEEP_C,
// SEG_RED_ROWS in ptx/src/segment.cuh).
const (
	segKeepA   = 4
	segKeepC   = 8
	segRedRows = 16
)

// PartPlan is one part of a batch whose systems are split by rows (the
// systems split across GPUs of groupgpu.SplitPlan): the part holds rows
// r … r+N−1 of each of G systems, in any layout (adjacent systems, batch
// stride 1 as in Interleaved, take the lanes kernel where the part is
// longer than a segment; the others a block a segment). It runs the segmented partition method's first and last
// passes on the part (the kernels lseg_p16 and segment_p16 in three-pass
// mode): Reduce cuts each system's part into segments of M rows and writes
// every segment's two rows of the reduced system of the segments (the
// partition method's coarse system), Expand recomputes each segment and
// finishes it from the reduced system's solution. A part that is not
// first keeps its row 0's a (the coupling to row r−1, in the part before);
// one that is not last keeps its row N−1's c. So the reduced rows of the
// parts, in row order, form the reduced system of the whole systems: a
// tridiagonal batch of G systems of Σ ReducedRows() rows, solved by any
// plan.
//
// Reduced rows are stored row after row: reduced row j of system g at
// j·G + g of each of the arrays RA, RB, RC, RD (a, b, c, d of the
// reduced system) and of XR (its solution). A part's rows are then one
// block of G·ReducedRows() elements of the whole reduced batch.
//
// Constant coefficients and cyclic systems are not taken. A PartPlan's
// calls must not overlap.
type PartPlan[T tridiag.Float] struct {
	dev         *gpu
	spec        tridiag.Spec
	flags       int32
	lanes       bool
	rows, q     int // M, Q
	threads     int
	shared      int
	blocks      int
	spb         int
	seg         kernels.SegmentP
	lseg        kernels.LsegP
	work        cu.DevicePtr // control words, then the (unused) nested status
	ctl, nst    cu.DevicePtr
	status      cu.DevicePtr
	codes       []int32
	first, last bool
	closed      bool
}

// NewPartPlan makes the plan of a part of shape (its N rows of each of
// its G systems); first and last say whether the part holds the systems'
// first and last rows.
func NewPartPlan[T tridiag.Float](dev *cuda.Device, shape tridiag.Shape, first, last bool) (*PartPlan[T], error) {
	if dev == nil {
		return nil, fmt.Errorf("%w: a part plan needs a device (nil *cuda.Device)", tridiag.ErrOptions)
	}
	if err := shape.Validate(); err != nil {
		return nil, err
	}
	shape = shape.Normalize()
	d := newGPU(dev, config{})
	f64 := elemSize[T]() == 8
	elem := reductionElem(f64)
	p := &PartPlan[T]{dev: d, spec: tridiag.Spec{Shape: shape}, first: first, last: last}
	if !first {
		p.flags |= segKeepA
	}
	if !last {
		p.flags |= segKeepC
	}
	p.flags |= segRedRows
	var ctlWords int64
	err := d.Enqueue(func() error {
		// Adjacent systems: the lanes kernel, where the part is longer
		// than a segment.
		if shape.Layout.BatchStride == 1 && shape.G > 1 {
			k, err := kernels.LsegPFor(16, f64)
			if err != nil {
				return err
			}
			regs, err := d.KernelAttr(k.Kernel().Name(), cu.NumRegs)
			if err != nil {
				return err
			}
			if cfg, err := tuning.LanesSegmentLaunchFor(d.props, shape.N, elem, shape.G, 0, regs); err == nil {
				p.lseg, p.lanes = k, true
				p.rows, p.q, p.threads, p.shared, p.blocks, p.spb = cfg.Rows, cfg.Segments, cfg.Threads, cfg.SharedBytes, cfg.Blocks(), cfg.Systems
				ctlWords = 1 + 4*int64(cfg.Groups) + int64(shape.G)
				return nil
			}
		}
		// Any other layout, and short parts: a block a segment; a part of
		// at most one segment's rows is one segment.
		k, err := kernels.SegmentPFor(16, f64)
		if err != nil {
			return err
		}
		regs, err := d.KernelAttr(k.Kernel().Name(), cu.NumRegs)
		if err != nil {
			return err
		}
		o := tuning.SegmentOptions{Regs: regs}
		if least := tuning.SegmentChunk * tuning.SegmentThreads[0]; shape.N <= least {
			o.Rows = least
		}
		cfg, err := tuning.SegmentLaunchFor(d.props, shape.N, elem, shape.G, o)
		if err != nil {
			return fmt.Errorf("%w: a part of N=%d G=%d: %w", tridiag.ErrShape, shape.N, shape.G, err)
		}
		p.seg = k
		p.rows, p.q, p.threads, p.shared, p.blocks = cfg.Rows, cfg.Segments, cfg.Threads, cfg.SharedBytes, cfg.Blocks(shape.G)
		ctlWords = 1 + 4*int64(shape.G)
		return nil
	})
	if err != nil {
		return nil, err
	}
	// Control words (zeroed once; every launch adds the same amounts),
	// the nested status the expand pass reads (kept zero: the reduced
	// solve's breakdowns are the caller's), the status codes.
	var pk packer
	ctl := pk.take(8 * ctlWords)
	nst := pk.take(4 * int64(shape.G+2))
	st := pk.take(4 * int64(shape.G+2))
	if p.work, err = d.AllocBytes(pk.off); err != nil {
		return nil, err
	}
	p.ctl, p.nst, p.status = p.work+cu.DevicePtr(ctl), p.work+cu.DevicePtr(nst), p.work+cu.DevicePtr(st)
	if err := d.Enqueue(func() error { return cu.MemsetD32(p.work, 0, pk.off/4) }); err != nil {
		_ = p.Close()
		return nil, fmt.Errorf("cuda: clearing a part's workspace: %w", err)
	}
	return p, nil
}

// Shape returns the part's shape.
func (p *PartPlan[T]) Shape() tridiag.Shape { return p.spec.Shape }

// ReducedRows is the part's rows of the reduced system, 2Q for Q
// segments, the same for every system.
func (p *PartPlan[T]) ReducedRows() int { return 2 * p.q }

// SegmentRows is M, the rows of the part's segments (the last may be
// shorter).
func (p *PartPlan[T]) SegmentRows() int { return p.rows }

// RowOf is the part's row (0 … N−1) whose unknown is the part's reduced
// row j: a segment's first row for even j, its last for odd j.
func (p *PartPlan[T]) RowOf(j int) int { return partition.ReducedRow(j, p.spec.N, p.rows) }

// Describe says how the part is solved.
func (p *PartPlan[T]) Describe() string {
	k := "rows adjacent"
	if p.lanes {
		k = fmt.Sprintf("%d systems across the lanes of a block", p.spb)
	}
	return fmt.Sprintf("part of N=%d G=%d: %d segments of %d rows, %s", p.spec.N, p.spec.G, p.q, p.rows, k)
}

// check verifies that bufs are on the plan's device and hold the part
// (n elements each, or the reduced rows) and that s is the device's.
func (p *PartPlan[T]) check(s *cuda.Stream, n int, names string, bufs ...*cuda.Buffer[T]) error {
	if p.closed {
		return fmt.Errorf("%w: the part plan is closed", tridiag.ErrOptions)
	}
	if s == nil || s.Device() != p.dev.Device {
		return fmt.Errorf("%w: a part's work goes on a stream of its device %s", tridiag.ErrOptions, p.dev.Name())
	}
	for i, b := range bufs {
		if b == nil || b.Device() != p.dev.Device || b.Len() < n {
			return fmt.Errorf("%w: array %c of the part N=%d G=%d: want %d elements on %s",
				tridiag.ErrShape, names[i], p.spec.N, p.spec.G, n, p.dev.Name())
		}
	}
	return nil
}

// Reduce queues the first pass on s: the part's reduced rows into ra, rb,
// rc, rd (G·ReducedRows() elements each, row j of system g at j·G + g).
// a, b, c, d are the part's arrays in its layout.
func (p *PartPlan[T]) Reduce(s *cuda.Stream, a, b, c, d, ra, rb, rc, rd *cuda.Buffer[T]) error {
	if err := p.check(s, p.spec.Len(), "abcd", a, b, c, d); err != nil {
		return err
	}
	if err := p.check(s, p.spec.G*p.ReducedRows(), "ABCD", ra, rb, rc, rd); err != nil {
		return err
	}
	return p.launch(s, segReduce, a, b, c, d, nil, [5]*cuda.Buffer[T]{ra, rb, rc, rd, nil})
}

// Expand queues the last pass on s: x of the part from the reduced
// system's solution at the part's rows, xr (G·ReducedRows() elements, row
// j of system g at j·G + g). x may be d. Failures reports the systems
// that broke down once s has run it.
func (p *PartPlan[T]) Expand(s *cuda.Stream, a, b, c, d, x, xr *cuda.Buffer[T]) error {
	if err := p.check(s, p.spec.Len(), "abcdx", a, b, c, d, x); err != nil {
		return err
	}
	if err := p.check(s, p.spec.G*p.ReducedRows(), "X", xr); err != nil {
		return err
	}
	return p.launch(s, segExpand, a, b, c, d, x, [5]*cuda.Buffer[T]{nil, nil, nil, nil, xr})
}

func (p *PartPlan[T]) launch(s *cuda.Stream, mode int32, a, b, c, d, x *cuda.Buffer[T], r [5]*cuda.Buffer[T]) error {
	ptr := func(b *cuda.Buffer[T]) cu.DevicePtr {
		if b == nil {
			return 0
		}
		return b.Ptr()
	}
	sp := p.spec
	mode |= p.flags
	return p.dev.Enqueue(func() error {
		if p.lanes {
			return p.lseg.Launch(p.dev.Device, cuda.Dim3{X: p.blocks}, cuda.Dim3{X: p.threads}, p.shared, s.Handle(), &kernels.LsegPArgs{
				A: a.Ptr(), B: b.Ptr(), C: c.Ptr(), D: d.Ptr(), X: ptr(x), N: int32(sp.N), G: int32(sp.G),
				ES: int64(sp.Layout.ElemStride), BS: int64(sp.Layout.BatchStride), Status: p.status,
				M: int32(p.rows), Q: int32(p.q), Spb: int32(p.spb), Mode: mode, Ctl: p.ctl,
				RA: ptr(r[0]), RB: ptr(r[1]), RC: ptr(r[2]), RD: ptr(r[3]), XR: ptr(r[4]), Nst: p.nst})
		}
		return p.seg.Launch(p.dev.Device, cuda.Dim3{X: p.blocks}, cuda.Dim3{X: p.threads}, p.shared, s.Handle(), &kernels.SegmentPArgs{
			A: a.Ptr(), B: b.Ptr(), C: c.Ptr(), D: d.Ptr(), X: ptr(x), N: int32(sp.N), G: int32(sp.G),
			ES: int64(sp.Layout.ElemStride), BS: int64(sp.Layout.BatchStride), Status: p.status,
			M: int32(p.rows), Q: int32(p.q), Mode: mode, Ctl: p.ctl,
			RA: ptr(r[0]), RB: ptr(r[1]), RC: ptr(r[2]), RD: ptr(r[3]), XR: ptr(r[4]), Nst: p.nst})
	})
}

// PartFailure is a system whose part broke down or came out non-finite.
type PartFailure struct {
	System, Row int // the system, the part's row (0 … N−1)
	// Within: a zero pivot within the part's segments at Row; else the
	// part's x is not finite from Row on (what a breakdown elsewhere, in
	// another part or the reduced system, leaves).
	Within bool
}

// Failures returns the systems whose part broke down or came out
// non-finite in the last Expand (call after its stream has run it), with
// the first row of each. The codes are cleared for the next solve.
func (p *PartPlan[T]) Failures() ([]PartFailure, error) {
	G := p.spec.G
	var out []PartFailure
	err := p.dev.Enqueue(func() error {
		var flag int32
		if err := cu.MemcpyDtoH(unsafe.Pointer(&flag), p.status+cu.DevicePtr(4*G), 4); err != nil {
			return fmt.Errorf("cuda: reading a part's status: %w", err)
		}
		if flag == 0 {
			return nil
		}
		if p.codes == nil {
			p.codes = make([]int32, G)
		}
		if err := cu.MemcpyDtoH(unsafe.Pointer(&p.codes[0]), p.status, int64(4*G)); err != nil {
			return fmt.Errorf("cuda: reading a part's status: %w", err)
		}
		if err := cu.MemsetD32(p.status, 0, int64(G+1)); err != nil {
			return fmt.Errorf("cuda: clearing a part's status: %w", err)
		}
		// Codes: row + 1 for a breakdown within the part, −(row + 1) for
		// a non-finite x (seg_code in ptx/src/segment.cuh).
		for g, code := range p.codes {
			switch {
			case code > 0:
				out = append(out, PartFailure{System: g, Row: int(code) - 1, Within: true})
			case code < 0:
				out = append(out, PartFailure{System: g, Row: int(-code) - 1})
			}
		}
		return nil
	})
	return out, err
}

// FillNaN queues on s the filling of the part's rows of systems in x
// with NaN (all bits set: a NaN in either precision).
func (p *PartPlan[T]) FillNaN(s *cuda.Stream, x *cuda.Buffer[T], systems []int) error {
	if err := p.check(s, p.spec.Len(), "x", x); err != nil {
		return err
	}
	sp, elem := p.spec, elemSize[T]()
	return p.dev.Enqueue(func() error {
		for _, g := range systems {
			if g < 0 || g >= sp.G {
				return fmt.Errorf("%w: system %d of a part of %d systems", tridiag.ErrShape, g, sp.G)
			}
			at := x.Ptr() + cu.DevicePtr(int64(g)*int64(sp.Layout.BatchStride)*elem)
			var err error
			if sp.Layout.ElemStride == 1 {
				err = cu.MemsetD32Async(at, 0xffffffff, int64(sp.N)*elem/4, s.Handle())
			} else {
				err = cu.MemsetD2D32Async(at, int64(sp.Layout.ElemStride)*elem, 0xffffffff, elem/4, int64(sp.N), s.Handle())
			}
			if err != nil {
				return fmt.Errorf("cuda: filling system %d of a part with NaN: %w", g, err)
			}
		}
		return nil
	})
}

// Close frees the plan's device memory.
func (p *PartPlan[T]) Close() error {
	if p.closed {
		return nil
	}
	p.closed = true
	if p.work == 0 {
		return nil
	}
	return p.dev.Enqueue(func() error { return cu.MemFree(p.work) })
}
