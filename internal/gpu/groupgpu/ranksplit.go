//go:build cuda

package groupgpu

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"unsafe"

	"gorgonia.org/cu"

	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/internal/gpu/tridiaggpu"
	"github.com/bandsolve/bandsolve/internal/nccl"
	"github.com/bandsolve/bandsolve/tridiag"
	"github.com/bandsolve/bandsolve/tridiag/partition"
)

// RankSplitPlan is SplitPlan for ranks joined through NCCL (processes on
// one host or several, or goroutines of one process): rank r holds part
// r, rows Start(r) … of every system, on its GPU. A solve reduces the
// rank's part (tridiaggpu.PartPlan), all-gathers every rank's reduced
// rows (ncclAllGather, each rank's block padded to the longest), solves
// the whole reduced batch on every rank (the same plan and the same data:
// the same solution everywhere, so no scatter) and expands the rank's
// part. Every rank calls SolveDevice for each solve, as NCCL's
// collectives require.
type RankSplitPlan[T tridiag.Float] struct {
	comm   *nccl.Comm
	dev    *cuda.Device
	shape  tridiag.Shape
	part   *tridiaggpu.PartPlan[T]
	stream *cuda.Stream
	rank   int
	rows   []int // every rank's rows
	starts []int // every rank's first row
	red2   []int // every rank's reduced rows (2Q)
	segs   []int // every rank's segment rows (M)
	offs   []int // every rank's first reduced row
	rmax   int   // the longest rank's reduced rows: the all-gather's block
	R, G   int
	// send: this rank's reduced rows, a, b, c, d, rmax·G each; recv:
	// every rank's send; red: the reduced batch (a, b, c, d, x, R·G each).
	send, recv *cuda.Buffer[T]
	red        [5]*cuda.Buffer[T]
	// mine: this rank's reduced rows a, b, c, d in send, and its rows of
	// the reduced solution in red[4] (views).
	mine   [5]*cuda.Buffer[T]
	nested *tridiaggpu.Plan[T]
	mu     sync.Mutex
	closed bool
}

// NewRankSplitPlan makes rank comm.Rank()'s plan: its part, of shape
// part (its rows of each of the G systems, any layout), on comm's
// device; rows lists every rank's rows, in rank order (the parts in the
// order of the systems' rows). Every rank calls it (it exchanges the
// ranks' segment sizes).
func NewRankSplitPlan[T tridiag.Float](comm *nccl.Comm, part tridiag.Shape, rows []int) (*RankSplitPlan[T], error) {
	if comm == nil {
		return nil, fmt.Errorf("%w: a rank split plan needs a communicator", tridiag.ErrOptions)
	}
	P, r := comm.NRanks(), comm.Rank()
	if len(rows) != P || rows[r] != part.N {
		return nil, fmt.Errorf("%w: rows %v for %d ranks, rank %d holding %d", tridiag.ErrShape, rows, P, r, part.N)
	}
	dev := comm.Device()
	p := &RankSplitPlan[T]{comm: comm, dev: dev, shape: part.Normalize(), rank: r, G: part.G,
		rows: slices.Clone(rows), starts: make([]int, P), red2: make([]int, P), segs: make([]int, P), offs: make([]int, P)}
	for k := 1; k < P; k++ {
		p.starts[k] = p.starts[k-1] + rows[k-1]
	}
	var err error
	if p.part, err = tridiaggpu.NewPartPlan[T](dev, p.shape, r == 0, r == P-1); err != nil {
		return nil, fmt.Errorf("tridiag: rank %d's part (rows [%d, %d)): %w", r, p.starts[r], p.starts[r]+part.N, err)
	}
	if p.stream, err = dev.NewStream(); err != nil {
		_ = p.Close()
		return nil, err
	}
	// Every rank's reduced rows and segment rows.
	sizes, err := p.gatherSizes(float64(p.part.ReducedRows()), float64(p.part.SegmentRows()))
	if err != nil {
		_ = p.Close()
		return nil, err
	}
	for k := range P {
		p.red2[k], p.segs[k] = int(sizes[2*k]), int(sizes[2*k+1])
		p.offs[k] = p.R
		p.R += p.red2[k]
		p.rmax = max(p.rmax, p.red2[k])
	}
	G := p.G
	if p.send, err = cuda.Alloc[T](dev, 4*p.rmax*G); err == nil {
		if p.recv, err = cuda.Alloc[T](dev, P*4*p.rmax*G); err == nil {
			for i := range p.red {
				if p.red[i], err = cuda.Alloc[T](dev, p.R*G); err != nil {
					break
				}
			}
		}
	}
	if err != nil {
		_ = p.Close()
		return nil, err
	}
	B, n := p.rmax*G, p.red2[r]*G
	for i := range 4 {
		if p.mine[i], err = p.send.Slice(i*B, n); err != nil {
			_ = p.Close()
			return nil, err
		}
	}
	if p.mine[4], err = p.red[4].Slice(p.offs[r]*G, n); err != nil {
		_ = p.Close()
		return nil, err
	}
	shape := tridiag.Shape{N: p.R, G: G, Layout: tridiag.Interleaved(G)}
	if p.nested, err = tridiaggpu.NewPlan[T](dev, shape, tridiag.Options{Algorithm: tridiag.Partition, SkipFiniteCheck: true}); err != nil {
		_ = p.Close()
		return nil, fmt.Errorf("tridiag: the reduced systems (N=%d G=%d) of a split batch: %w", p.R, G, err)
	}
	return p, nil
}

// gatherSizes all-gathers two values of every rank.
func (p *RankSplitPlan[T]) gatherSizes(v0, v1 float64) ([]float64, error) {
	P := p.comm.NRanks()
	send, err := cuda.Upload(p.dev, []float64{v0, v1})
	if err != nil {
		return nil, err
	}
	defer send.Free()
	recv, err := cuda.Alloc[float64](p.dev, 2*P)
	if err != nil {
		return nil, err
	}
	defer recv.Free()
	if err := p.comm.AllGather(send.Ptr(), recv.Ptr(), 2, nccl.Float64, p.stream.Handle()); err != nil {
		return nil, err
	}
	if err := p.stream.Synchronize(); err != nil {
		return nil, err
	}
	out := make([]float64, 2*P)
	return out, recv.CopyTo(out)
}

// Rows returns the rows of each system, all ranks' parts together.
func (p *RankSplitPlan[T]) Rows() int { return p.starts[len(p.starts)-1] + p.rows[len(p.rows)-1] }

// Start returns rank k's first row.
func (p *RankSplitPlan[T]) Start(k int) int { return p.starts[k] }

// Describe says how the rank's part and the reduced systems are solved.
func (p *RankSplitPlan[T]) Describe() string {
	return fmt.Sprintf("rank %d of %d: rows [%d, %d) on %s: %s; reduced systems of %d rows (every rank): %s",
		p.rank, len(p.starts), p.starts[p.rank], p.starts[p.rank]+p.shape.N, p.dev.Name(), p.part.Describe(), p.R, p.nested.Describe())
}

// SolveDevice solves the batch: a, b, c, d, x hold the rank's part in its
// layout on its GPU (x may be d). Every rank calls it. The systems this
// rank sees break down, within its part, in the reduced systems (mapped to
// the row of the part that holds it) or as a non-finite x of its part,
// are listed in a *tridiag.BatchError at the row that explains them as
// SplitPlan says (mergeFailures), and their x is NaN in this rank's part;
// a breakdown within another rank's part shows here through the reduced
// systems or this part's x.
func (p *RankSplitPlan[T]) SolveDevice(ctx context.Context, a, b, c, d, x *cuda.Buffer[T]) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return tridiag.ErrClosed
	}
	G, B := p.G, p.rmax*p.G
	if err := p.part.Reduce(p.stream, a, b, c, d, p.mine[0], p.mine[1], p.mine[2], p.mine[3]); err != nil {
		return err
	}
	if err := p.comm.AllGather(p.send.Ptr(), p.recv.Ptr(), 4*B, nccl.TypeOf[T](), p.stream.Handle()); err != nil {
		return err
	}
	// Rank k's block of array i, from its slot of recv.
	var zero T
	elem := int64(unsafe.Sizeof(zero))
	err := p.dev.Enqueue(func() error {
		for k := range p.red2 {
			for i := range 4 {
				src := p.recv.Ptr() + cu.DevicePtr(int64(k*4*B+i*B)*elem)
				dst := p.red[i].Ptr() + cu.DevicePtr(int64(p.offs[k]*G)*elem)
				if err := cu.MemcpyDtoDAsync(dst, src, int64(p.red2[k]*G)*elem, p.stream.Handle()); err != nil {
					return fmt.Errorf("cuda: the reduced rows of rank %d: %w", k, err)
				}
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := p.stream.Synchronize(); err != nil {
		return err
	}
	var reduced []tridiag.SystemError
	err = p.nested.SolveDevice(ctx, p.red[0], p.red[1], p.red[2], p.red[3], p.red[4])
	if be := (*tridiag.BatchError)(nil); errors.As(err, &be) {
		for _, f := range be.Failed {
			k := 0
			for k+1 < len(p.offs) && p.offs[k+1] <= f.Row {
				k++
			}
			f.Row = p.starts[k] + partition.ReducedRow(f.Row-p.offs[k], p.rows[k], p.segs[k])
			reduced = append(reduced, f)
		}
	} else if err != nil {
		return fmt.Errorf("tridiag: the reduced systems of a split batch: %w", err)
	}
	if err := p.part.Expand(p.stream, a, b, c, d, x, p.mine[4]); err != nil {
		return err
	}
	if err := p.stream.Synchronize(); err != nil {
		return err
	}
	fails, err := p.part.Failures()
	if err != nil {
		return err
	}
	mineFails := make([]partFailure, len(fails))
	for i, f := range fails {
		mineFails[i] = partFailure{system: f.System, row: p.starts[p.rank] + f.Row, within: f.Within}
	}
	be := mergeFailures(G, reduced, mineFails, tridiaggpu.ErrBreakdown)
	if be == nil {
		return nil
	}
	if err := p.part.FillNaN(p.stream, x, be.Systems()); err != nil {
		return err
	}
	if err := p.stream.Synchronize(); err != nil {
		return err
	}
	return be
}

// Close frees the plan's memory and stream; the communicator stays the
// caller's.
func (p *RankSplitPlan[T]) Close() error {
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
	if p.part != nil {
		errs = append(errs, p.part.Close())
	}
	for _, b := range append([]*cuda.Buffer[T]{p.send, p.recv}, p.red[:]...) {
		if b != nil {
			errs = append(errs, b.Free())
		}
	}
	if p.stream != nil {
		errs = append(errs, p.stream.Close())
	}
	return errors.Join(errs...)
}
