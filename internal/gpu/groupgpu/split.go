//go:build cuda

package groupgpu

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/internal/gpu/tridiaggpu"
	"github.com/bandsolve/bandsolve/tridiag"
)

// SplitPlan solves a batch of G systems whose rows are split across GPUs:
// part k holds rows Start(k) … Start(k)+N_k−1 of every system, on its GPU,
// in its own layout (a grid decomposed along the systems' axis, or one
// system too long for one GPU). It is the partition method across GPUs:
//
//  1. each part reduces its rows to two rows a segment of the reduced
//     system (tridiaggpu.PartPlan.Reduce), on its GPU;
//  2. the reduced rows are copied to the first part's GPU (peer copies);
//  3. a plan there solves the reduced batch (G systems of R = Σ 2Q_k
//     rows, interleaved);
//  4. each part's rows of that solution are copied back (peer copies);
//  5. each part finishes its rows (tridiaggpu.PartPlan.Expand).
//
// Host data never moves: a solve reads and writes the parts' device
// buffers. The GPUs of steps 1 and 5 work at once; the host waits for
// the GPUs between the steps. Solves run one at a time.
type SplitPlan[T tridiag.Float] struct {
	devs   []*cuda.Device
	shapes []tridiag.Shape
	starts []int // the parts' first rows
	offs   []int // the parts' first reduced rows
	parts  []*tridiaggpu.PartPlan[T]
	stream []*cuda.Stream
	G, R   int
	// red: the reduced batch on the first part's GPU (a, b, c, d, x, R·G
	// elements each); block[k]: part k's rows of it (views); own[k]: part
	// k's reduced rows on its GPU: block[k] on the first GPU, else
	// buffers of its own, copied to and from block[k].
	red    [5]*cuda.Buffer[T]
	block  [][5]*cuda.Buffer[T]
	own    [][5]*cuda.Buffer[T]
	nested *tridiaggpu.Plan[T]
	mu     sync.Mutex
	closed bool
}

// NewSplitPlan makes the plan of a batch split across the GPUs of g:
// part k, of shape shapes[k] (its rows of each system: every part has
// the batch's G systems), on GPU k of the group, the parts in the order
// of the systems' rows. Parts take any layout, at least two rows each;
// adjacent systems (batch stride 1, e.g. Interleaved) or adjacent rows
// (element stride 1, e.g. Contiguous) read memory in whole sectors.
func NewSplitPlan[T tridiag.Float](g *cuda.Group, shapes []tridiag.Shape) (*SplitPlan[T], error) {
	if g == nil {
		return nil, fmt.Errorf("%w: a split plan needs a group (nil *cuda.Group)", tridiag.ErrOptions)
	}
	if len(shapes) != g.Len() {
		return nil, fmt.Errorf("%w: %d parts for the %d GPUs of %s", tridiag.ErrShape, len(shapes), g.Len(), g.Name())
	}
	return newSplitPlan[T](g.Devices(), shapes)
}

// newSplitPlan is NewSplitPlan with part k on devs[k]; a device may hold
// several parts (tests run the arithmetic of several GPUs on one).
func newSplitPlan[T tridiag.Float](devs []*cuda.Device, shapes []tridiag.Shape) (*SplitPlan[T], error) {
	P := len(shapes)
	if P == 0 || len(devs) != P {
		return nil, fmt.Errorf("%w: %d parts on %d devices", tridiag.ErrShape, P, len(devs))
	}
	G := shapes[0].G
	p := &SplitPlan[T]{devs: devs, shapes: make([]tridiag.Shape, P), starts: make([]int, P), offs: make([]int, P),
		parts: make([]*tridiaggpu.PartPlan[T], P), stream: make([]*cuda.Stream, P),
		block: make([][5]*cuda.Buffer[T], P), own: make([][5]*cuda.Buffer[T], P), G: G}
	row := 0
	for k, sh := range shapes {
		if sh.G != G {
			return nil, fmt.Errorf("%w: part %d has %d systems, part 0 has %d", tridiag.ErrShape, k, sh.G, G)
		}
		p.shapes[k] = sh.Normalize()
		p.starts[k] = row
		row += sh.N
	}
	errs := make([]error, P)
	each(P, func(k int) {
		if p.parts[k], errs[k] = tridiaggpu.NewPartPlan[T](devs[k], p.shapes[k], k == 0, k == P-1); errs[k] != nil {
			errs[k] = fmt.Errorf("tridiag: part %d (rows [%d, %d)) on %s: %w", k, p.starts[k], p.starts[k]+shapes[k].N, devs[k].Name(), errs[k])
		}
	})
	if err := errors.Join(errs...); err != nil {
		_ = p.Close()
		return nil, err
	}
	for k, pt := range p.parts {
		p.offs[k] = p.R
		p.R += pt.ReducedRows()
	}
	var err error
	for k := range p.parts {
		if p.stream[k], err = devs[k].NewStream(); err != nil {
			_ = p.Close()
			return nil, err
		}
	}
	for i := range p.red {
		if p.red[i], err = cuda.Alloc[T](devs[0], p.R*G); err != nil {
			_ = p.Close()
			return nil, err
		}
	}
	for k, pt := range p.parts {
		for i := range p.block[k] {
			if p.block[k][i], err = p.red[i].Slice(p.offs[k]*G, pt.ReducedRows()*G); err != nil {
				_ = p.Close()
				return nil, err
			}
		}
		if devs[k] == devs[0] {
			p.own[k] = p.block[k]
			continue
		}
		for i := range p.own[k] {
			if p.own[k][i], err = cuda.Alloc[T](devs[k], pt.ReducedRows()*G); err != nil {
				_ = p.Close()
				return nil, err
			}
		}
	}
	// The reduced systems: the partition method, as the single-GPU
	// segmented plans solve theirs.
	shape := tridiag.Shape{N: p.R, G: G, Layout: tridiag.Interleaved(G)}
	if p.nested, err = tridiaggpu.NewPlan[T](devs[0], shape, tridiag.Options{Algorithm: tridiag.Partition, SkipFiniteCheck: true}); err != nil {
		_ = p.Close()
		return nil, fmt.Errorf("tridiag: the reduced systems (N=%d G=%d) of a split batch: %w", p.R, G, err)
	}
	return p, nil
}

// Parts returns the number of parts.
func (p *SplitPlan[T]) Parts() int { return len(p.parts) }

// Start returns part k's first row.
func (p *SplitPlan[T]) Start(k int) int { return p.starts[k] }

// Rows returns the rows of each system, all parts together.
func (p *SplitPlan[T]) Rows() int { return p.starts[len(p.starts)-1] + p.shapes[len(p.shapes)-1].N }

// ReducedRows returns the rows of each reduced system.
func (p *SplitPlan[T]) ReducedRows() int { return p.R }

// Describe says how the batch is split and solved.
func (p *SplitPlan[T]) Describe() string {
	parts := make([]string, len(p.parts))
	for k, pt := range p.parts {
		parts[k] = fmt.Sprintf("rows [%d, %d) on %s: %s", p.starts[k], p.starts[k]+p.shapes[k].N, p.devs[k].Name(), pt.Describe())
	}
	return fmt.Sprintf("%d systems of %d rows split in %d parts (%s); reduced systems of %d rows: %s",
		p.G, p.Rows(), len(p.parts), strings.Join(parts, "; "), p.R, p.nested.Describe())
}

// SolveDevice solves the batch: a[k], b[k], c[k], d[k] and x[k] hold part
// k in its layout, on its GPU; x may be d. Systems that broke down are
// listed in one *tridiag.BatchError with the first row (in the whole
// system) each was found at; their x is NaN.
func (p *SplitPlan[T]) SolveDevice(ctx context.Context, a, b, c, d, x []*cuda.Buffer[T]) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return tridiag.ErrClosed
	}
	P := len(p.parts)
	for i, l := range [][]*cuda.Buffer[T]{a, b, c, d, x} {
		if len(l) != P {
			return fmt.Errorf("%w: %d buffers of %c for the %d parts", tridiag.ErrLength, len(l), "abcdx"[i], P)
		}
	}
	// Steps 1 and 2: reduce, rows to the first GPU.
	errs := make([]error, P)
	each(P, func(k int) {
		errs[k] = func() error {
			own := p.own[k]
			if err := p.parts[k].Reduce(p.stream[k], a[k], b[k], c[k], d[k], own[0], own[1], own[2], own[3]); err != nil {
				return err
			}
			if p.devs[k] != p.devs[0] {
				for i := range 4 {
					if err := cuda.CopyPeerAsync(p.stream[k], p.block[k][i], own[i]); err != nil {
						return err
					}
				}
			}
			return p.stream[k].Synchronize()
		}()
	})
	if err := p.partsErr(errs); err != nil {
		return err
	}
	// Step 3: the reduced systems.
	var reduced []tridiag.SystemError
	err := p.nested.SolveDevice(ctx, p.red[0], p.red[1], p.red[2], p.red[3], p.red[4])
	if be := (*tridiag.BatchError)(nil); errors.As(err, &be) {
		for _, f := range be.Failed {
			k := 0
			for k+1 < P && p.offs[k+1] <= f.Row {
				k++
			}
			f.Row = p.starts[k] + p.parts[k].RowOf(f.Row-p.offs[k])
			reduced = append(reduced, f)
		}
	} else if err != nil {
		return fmt.Errorf("tridiag: the reduced systems of a split batch: %w", err)
	}
	// Steps 4 and 5: the solution back, expand.
	fails := make([][]tridiaggpu.PartFailure, P)
	each(P, func(k int) {
		errs[k] = func() error {
			xr := p.own[k][4]
			if p.devs[k] != p.devs[0] {
				if err := cuda.CopyPeerAsync(p.stream[k], xr, p.block[k][4]); err != nil {
					return err
				}
			}
			if err := p.parts[k].Expand(p.stream[k], a[k], b[k], c[k], d[k], x[k], xr); err != nil {
				return err
			}
			if err := p.stream[k].Synchronize(); err != nil {
				return err
			}
			var err error
			fails[k], err = p.parts[k].Failures()
			return err
		}()
	})
	if err := p.partsErr(errs); err != nil {
		return err
	}
	be := p.failures(reduced, fails)
	if be == nil {
		return nil
	}
	// A part whose rows solved (its neighbour broke down) has an x
	// that the breakdown made meaningless: every part is filled.
	sys := be.Systems()
	each(P, func(k int) {
		errs[k] = p.parts[k].FillNaN(p.stream[k], x[k], sys)
		if errs[k] == nil {
			errs[k] = p.stream[k].Synchronize()
		}
	})
	if err := p.partsErr(errs); err != nil {
		return err
	}
	return be
}

// failures merges the breakdowns of a solve (mergeFailures), the parts'
// rows made rows of the whole systems.
func (p *SplitPlan[T]) failures(reduced []tridiag.SystemError, parts [][]tridiaggpu.PartFailure) *tridiag.BatchError {
	var all []partFailure
	for k, l := range parts {
		for _, f := range l {
			all = append(all, partFailure{system: f.System, row: p.starts[k] + f.Row, within: f.Within})
		}
	}
	return mergeFailures(p.G, reduced, all, tridiaggpu.ErrBreakdown)
}

// partsErr joins the parts' errors, each naming its part.
func (p *SplitPlan[T]) partsErr(errs []error) error {
	var out []error
	for k, err := range errs {
		if err != nil {
			out = append(out, fmt.Errorf("tridiag: part %d (rows [%d, %d)) on %s: %w", k, p.starts[k], p.starts[k]+p.shapes[k].N, p.devs[k].Name(), err))
		}
	}
	return errors.Join(out...)
}

// Close frees the plan's device memory and streams.
func (p *SplitPlan[T]) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil
	}
	p.closed = true
	var errs []error
	if p.nested != nil {
		errs = append(errs, p.nested.Close())
	}
	for k := range p.parts {
		if p.parts[k] != nil {
			errs = append(errs, p.parts[k].Close())
		}
		if p.stream[k] != nil {
			errs = append(errs, p.stream[k].Close())
		}
		if p.devs[k] != p.devs[0] {
			for _, b := range p.own[k] {
				if b != nil {
					errs = append(errs, b.Free())
				}
			}
		}
	}
	for _, b := range p.red {
		if b != nil {
			errs = append(errs, b.Free())
		}
	}
	return errors.Join(errs...)
}
