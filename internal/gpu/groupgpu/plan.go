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

// Plan solves batches of one shape split across the GPUs of a group:
// share k (Shares) on GPU Shares()[k].Index by its own single-GPU plan
// (Plans). A plan's methods are safe to call from any goroutine; its
// solves run one at a time.
type Plan[T tridiag.Float] struct {
	group  *cuda.Group
	spec   tridiag.Spec
	shares []Share
	plans  []*tridiaggpu.Plan[T]
	mu     sync.Mutex
	// scratch holds, for each share that is not Direct, the host arrays
	// of a, b, c, d and x in the share's layout (made on first use).
	scratch [][5][]T
	closed  bool
}

// NewPlan makes a plan for batches of shape on group g: the batch is
// split into contiguous shares (Split) and each GPU's plan is made for
// its share with opts, the GPUs' plans made at once.
func NewPlan[T tridiag.Float](g *cuda.Group, shape tridiag.Shape, opts tridiag.Options) (*Plan[T], error) {
	if g == nil {
		return nil, fmt.Errorf("%w: a group plan needs a group (nil *cuda.Group)", tridiag.ErrOptions)
	}
	shares, err := Split(shape, g.Len())
	if err != nil {
		return nil, err
	}
	p := &Plan[T]{group: g, spec: tridiag.Spec{Shape: shape.Normalize(), Options: opts}, shares: shares,
		plans: make([]*tridiaggpu.Plan[T], len(shares)), scratch: make([][5][]T, len(shares))}
	errs := make([]error, len(shares))
	each(len(shares), func(k int) {
		sh := shares[k]
		dev := g.Device(sh.Index)
		if p.plans[k], errs[k] = tridiaggpu.NewPlan[T](dev, sh.Shape, opts); errs[k] != nil {
			errs[k] = fmt.Errorf("tridiag: plan of systems [%d, %d) on %s: %w", sh.Start, sh.Start+sh.G, dev.Name(), errs[k])
		}
	})
	if err := errors.Join(errs...); err != nil {
		p.closePlans()
		return nil, err
	}
	return p, nil
}

// Shape returns the batch's shape (its layout resolved).
func (p *Plan[T]) Shape() tridiag.Shape { return p.spec.Shape }

// Group returns the plan's group.
func (p *Plan[T]) Group() *cuda.Group { return p.group }

// Shares returns the shares of the batch, one a GPU that has systems, in
// the order of the systems.
func (p *Plan[T]) Shares() []Share { return append([]Share(nil), p.shares...) }

// Plans returns the single-GPU plans of the shares, in the order of
// Shares: for what a plan does on its own GPU (SetStream, Time,
// MulDevice). Solving through them leaves the group plan's shares
// consistent as long as each plan gets its own share's buffers.
func (p *Plan[T]) Plans() []*tridiaggpu.Plan[T] {
	return append([]*tridiaggpu.Plan[T](nil), p.plans...)
}

// Algorithm returns the algorithm of the first share's plan (Auto
// resolved); Describe says what every share runs.
func (p *Plan[T]) Algorithm() tridiag.Algorithm { return p.plans[0].Algorithm() }

// Describe says how the shares are solved: one description when every
// GPU runs the same, else one a share.
func (p *Plan[T]) Describe() string {
	descs := make([]string, len(p.plans))
	same := true
	for k, pl := range p.plans {
		descs[k] = pl.Describe()
		same = same && descs[k] == descs[0]
	}
	sizes := make([]string, len(p.shares))
	for k, sh := range p.shares {
		sizes[k] = fmt.Sprintf("%d", sh.G)
	}
	head := fmt.Sprintf("%d shares of %s systems on %s", len(p.shares), strings.Join(sizes, "+"), p.group.Name())
	if same {
		return head + ": " + descs[0]
	}
	parts := make([]string, len(p.shares))
	for k, sh := range p.shares {
		parts[k] = fmt.Sprintf("systems [%d, %d): %s", sh.Start, sh.Start+sh.G, descs[k])
	}
	return head + ": " + strings.Join(parts, "; ")
}

// lockOpen takes the plan's lock unless the plan is closed.
func (p *Plan[T]) lockOpen() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return tridiag.ErrClosed
	}
	return nil
}

// checkBufs checks that each of the named buffer lists has one buffer a
// share, on the share's GPU; a list may be nil where nilOK.
func (p *Plan[T]) checkBufs(names string, nilOK string, lists ...[]*cuda.Buffer[T]) error {
	for i, l := range lists {
		name := names[i : i+1]
		if l == nil && strings.Contains(nilOK, name) {
			continue
		}
		if len(l) != len(p.shares) {
			return fmt.Errorf("%w: %d buffers of %s for the %d shares of the batch", tridiag.ErrLength, len(l), name, len(p.shares))
		}
		for k, b := range l {
			if b == nil {
				return fmt.Errorf("%w: nil buffer of %s for systems [%d, %d)", tridiag.ErrLength, name, p.shares[k].Start, p.shares[k].Start+p.shares[k].G)
			}
			if want := p.group.Device(p.shares[k].Index); b.Device() != want {
				return fmt.Errorf("%w: the buffer of %s for systems [%d, %d) is on %s, the share's GPU is %s",
					tridiag.ErrOptions, name, p.shares[k].Start, p.shares[k].Start+p.shares[k].G, b.Device().Name(), want.Name())
			}
		}
	}
	return nil
}

// SolveDevice solves the batch held on the GPUs: a[k], b[k], c[k], d[k]
// and x[k] hold share k (Shares) in its layout, on its GPU; x may be d.
// Every GPU's solve is started before any is waited for. Systems that
// broke down are listed in one *tridiag.BatchError, numbered in the whole
// batch. An LDLT plan does not read a, which may then be nil.
func (p *Plan[T]) SolveDevice(ctx context.Context, a, b, c, d, x []*cuda.Buffer[T]) error {
	ldlt := p.Algorithm() == tridiag.LDLT
	nilOK := ""
	if ldlt {
		nilOK = "a"
	}
	if err := p.checkBufs("abcdx", nilOK, a, b, c, d, x); err != nil {
		return err
	}
	return p.startAll(ctx, func(k int, pl *tridiaggpu.Plan[T]) (*tridiaggpu.Pending, error) {
		ak := b[k]
		if a != nil {
			ak = a[k]
		}
		return pl.Start(ctx, ak, b[k], c[k], d[k], x[k])
	})
}

// SolveDeviceConst is SolveDevice for constant coefficients a, b, c.
func (p *Plan[T]) SolveDeviceConst(ctx context.Context, a, b, c T, d, x []*cuda.Buffer[T]) error {
	if err := p.checkBufs("dx", "", d, x); err != nil {
		return err
	}
	return p.startAll(ctx, func(k int, pl *tridiaggpu.Plan[T]) (*tridiaggpu.Pending, error) {
		return pl.StartConst(ctx, a, b, c, d[k], x[k])
	})
}

// startAll starts every share's solve with start, then waits for them
// all and merges their errors.
func (p *Plan[T]) startAll(ctx context.Context, start func(int, *tridiaggpu.Plan[T]) (*tridiaggpu.Pending, error)) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := p.lockOpen(); err != nil {
		return err
	}
	defer p.mu.Unlock()
	errs := make([]error, len(p.plans))
	pend := make([]*tridiaggpu.Pending, len(p.plans))
	for k, pl := range p.plans {
		if pend[k], errs[k] = start(k, pl); errs[k] != nil {
			break
		}
	}
	for k, w := range pend {
		if w != nil {
			errs[k] = w.Wait()
		}
	}
	return p.merge(errs)
}

// merge combines the shares' errors: the systems of their
// *tridiag.BatchErrors renumbered in the batch into one, other errors
// named by their share and joined with it.
func (p *Plan[T]) merge(errs []error) error {
	var be *tridiag.BatchError
	var others []error
	for k, err := range errs {
		if err == nil {
			continue
		}
		sh := p.shares[k]
		var sbe *tridiag.BatchError
		if !errors.As(err, &sbe) {
			others = append(others, fmt.Errorf("tridiag: systems [%d, %d) on %s: %w", sh.Start, sh.Start+sh.G, p.group.Device(sh.Index).Name(), err))
			continue
		}
		if be == nil {
			be = &tridiag.BatchError{G: p.spec.G}
		}
		for _, f := range sbe.Failed {
			f.System += sh.Start
			be.Failed = append(be.Failed, f)
		}
	}
	if len(others) == 0 {
		if be == nil {
			return nil
		}
		return be
	}
	if be != nil {
		others = append(others, be)
	}
	return errors.Join(others...)
}

// Solve solves the batch held in host slices in the batch's layout, each
// GPU copying its share in and its solutions out on its own goroutine (a
// share that is not Direct is gathered into host arrays of its layout
// first). x may be d. An LDLT plan does not read a, which may then be
// nil.
func (p *Plan[T]) Solve(ctx context.Context, a, b, c, d, x []T) error {
	if a == nil && p.Algorithm() != tridiag.LDLT {
		return fmt.Errorf("%w: nil a", tridiag.ErrLength)
	}
	return p.solveHost(ctx, [5][]T{a, b, c, d, x}, func(pl *tridiaggpu.Plan[T], s [5][]T) error {
		return pl.Solve(ctx, s[0], s[1], s[2], s[3], s[4])
	})
}

// SolveConst is Solve for constant coefficients a, b, c.
func (p *Plan[T]) SolveConst(ctx context.Context, a, b, c T, d, x []T) error {
	return p.solveHost(ctx, [5][]T{nil, nil, nil, d, x}, func(pl *tridiaggpu.Plan[T], s [5][]T) error {
		return pl.SolveConst(ctx, a, b, c, s[3], s[4])
	})
}

// solveHost runs solve on every share's plan at once, with the share's
// parts of arrs (a, b, c, d, x; nil arrays stay nil).
func (p *Plan[T]) solveHost(ctx context.Context, arrs [5][]T, solve func(*tridiaggpu.Plan[T], [5][]T) error) error {
	n := p.spec.Len()
	for i, v := range arrs {
		if v != nil && len(v) < n {
			return fmt.Errorf("%w: %s has %d elements, the %d×%d batch needs %d", tridiag.ErrLength, "abcdx"[i:i+1], len(v), p.spec.G, p.spec.N, n)
		}
	}
	if arrs[3] == nil || arrs[4] == nil {
		return fmt.Errorf("%w: nil d or x", tridiag.ErrLength)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := p.lockOpen(); err != nil {
		return err
	}
	defer p.mu.Unlock()
	errs := make([]error, len(p.plans))
	each(len(p.plans), func(k int) { errs[k] = p.solveShare(k, p.plans[k], arrs, solve) })
	return p.merge(errs)
}

// solveShare solves share k with its plan from the batch's host arrays.
func (p *Plan[T]) solveShare(k int, pl *tridiaggpu.Plan[T], arrs [5][]T, solve func(*tridiaggpu.Plan[T], [5][]T) error) error {
	sh := p.shares[k]
	m := sh.Shape.Len()
	var part [5][]T
	if sh.Direct {
		for i, v := range arrs {
			if v != nil {
				part[i] = v[sh.Offset : sh.Offset+m]
			}
		}
		return solve(pl, part)
	}
	for i, v := range arrs {
		if v == nil {
			continue
		}
		if p.scratch[k][i] == nil {
			p.scratch[k][i] = make([]T, m)
		}
		part[i] = p.scratch[k][i]
		if i < 4 {
			Pack(sh, p.spec.Shape, v, part[i])
		}
	}
	err := solve(pl, part)
	var be *tridiag.BatchError
	if err == nil || errors.As(err, &be) {
		Unpack(sh, p.spec.Shape, part[4], arrs[4])
	}
	return err
}

// Alloc allocates one device buffer a share, on the share's GPU, of the
// share's length (contents undefined): a set of the arrays SolveDevice
// takes.
func (p *Plan[T]) Alloc() ([]*cuda.Buffer[T], error) {
	bufs := make([]*cuda.Buffer[T], len(p.shares))
	for k, sh := range p.shares {
		var err error
		if bufs[k], err = cuda.Alloc[T](p.group.Device(sh.Index), sh.Shape.Len()); err != nil {
			Free(bufs)
			return nil, fmt.Errorf("tridiag: buffer of systems [%d, %d): %w", sh.Start, sh.Start+sh.G, err)
		}
	}
	return bufs, nil
}

// Scatter allocates one device buffer a share (Alloc) and copies into
// each its share of host, an array in the batch's layout.
func (p *Plan[T]) Scatter(host []T) ([]*cuda.Buffer[T], error) {
	if n := p.spec.Len(); len(host) < n {
		return nil, fmt.Errorf("%w: array of %d elements, the %d×%d batch needs %d", tridiag.ErrLength, len(host), p.spec.G, p.spec.N, n)
	}
	bufs, err := p.Alloc()
	if err != nil {
		return nil, err
	}
	errs := make([]error, len(p.shares))
	each(len(p.shares), func(k int) {
		sh := p.shares[k]
		m := sh.Shape.Len()
		part := host[sh.Offset : sh.Offset+m]
		if !sh.Direct {
			part = make([]T, m)
			Pack(sh, p.spec.Shape, host, part)
		}
		errs[k] = bufs[k].CopyFrom(part)
	})
	if err := errors.Join(errs...); err != nil {
		Free(bufs)
		return nil, err
	}
	return bufs, nil
}

// Gather copies the rows of every share from bufs (one buffer a share,
// in the share's layout, as SolveDevice takes) into host, an array in
// the batch's layout; elements of host outside the batch's rows are left
// as they are.
func (p *Plan[T]) Gather(bufs []*cuda.Buffer[T], host []T) error {
	if err := p.checkBufs("x", "", bufs); err != nil {
		return err
	}
	if n := p.spec.Len(); len(host) < n {
		return fmt.Errorf("%w: array of %d elements, the %d×%d batch needs %d", tridiag.ErrLength, len(host), p.spec.G, p.spec.N, n)
	}
	errs := make([]error, len(p.shares))
	each(len(p.shares), func(k int) {
		sh := p.shares[k]
		m := sh.Shape.Len()
		if sh.Direct && sh.Shape.Layout.IsContiguous(sh.Shape.N) {
			errs[k] = bufs[k].CopyTo(host[sh.Offset : sh.Offset+m])
			return
		}
		part := make([]T, m)
		if errs[k] = bufs[k].CopyTo(part); errs[k] == nil {
			Unpack(sh, p.spec.Shape, part, host)
		}
	})
	return errors.Join(errs...)
}

// Free frees buffers of Alloc or Scatter (nil entries are skipped).
func Free[T cuda.Elem](bufs []*cuda.Buffer[T]) {
	for _, b := range bufs {
		if b != nil {
			_ = b.Free()
		}
	}
}

// Close closes the GPUs' plans; the group stays open.
func (p *Plan[T]) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil
	}
	p.closed = true
	return p.closePlans()
}

func (p *Plan[T]) closePlans() error {
	var errs []error
	for _, pl := range p.plans {
		if pl != nil {
			errs = append(errs, pl.Close())
		}
	}
	return errors.Join(errs...)
}

// each runs f(0), …, f(n−1) on goroutines of their own and waits for
// them: one a GPU.
func each(n int, f func(k int)) {
	var wg sync.WaitGroup
	wg.Add(n)
	for k := range n {
		go func() {
			defer wg.Done()
			f(k)
		}()
	}
	wg.Wait()
}
