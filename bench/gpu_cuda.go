//go:build cuda

package bench

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/internal/gpu/gpuclock"
	"github.com/bandsolve/bandsolve/internal/gpu/tridiaggpu"
	"github.com/bandsolve/bandsolve/tridiag"
	"gorgonia.org/cu"
)

// gpuBuiltIn reports whether the binary was built with the cuda tag.
const gpuBuiltIn = true

// cudaBackend runs this module's GPU plans and the cuSPARSE peers on one
// device.
type cudaBackend struct {
	dev     *cuda.Device
	clock   *gpuclock.Clock // times the plans and the peers
	bw      float64
	peer    *cusparsePeer
	peerErr error // why there is no peer
	notes   []string
}

func openGPU(ordinal int, copyBytes int64, cusparsePath string) (gpuBackend, error) {
	dev, err := cuda.Open(ordinal)
	if err != nil {
		return nil, err
	}
	clock, err := gpuclock.New(dev)
	if err != nil {
		_ = dev.Close()
		return nil, err
	}
	b := &cudaBackend{dev: dev, clock: clock}
	if free, _, err := dev.MemInfo(); err == nil && copyBytes > free/4 {
		copyBytes = max(1<<20, free/4)
	}
	if b.bw, err = gpuclock.CopyBandwidth(dev, copyBytes, 20); err != nil {
		_ = clock.Close()
		_ = dev.Close()
		return nil, fmt.Errorf("measuring the copy bandwidth: %w", err)
	}
	b.notes = append(b.notes, fmt.Sprintf("device copy of %s, median of 20", fmtBytes(copyBytes)))
	lib, err := loadCusparse(cusparsePath, func(l *cusparseLib) error {
		var e error
		b.peer, e = newCusparsePeer(dev, l)
		return e
	})
	if err != nil {
		b.peerErr = err
		b.notes = append(b.notes, "cusparse peer: "+err.Error())
	} else {
		b.notes = append(b.notes, fmt.Sprintf("cusparse peer: %s, cuSPARSE %s", lib.path, b.peer.versionString()))
	}
	return b, nil
}

func (b *cudaBackend) Name() string       { return b.dev.Name() }
func (b *cudaBackend) Bandwidth() float64 { return b.bw }
func (b *cudaBackend) Notes() []string    { return b.notes }

func (b *cudaBackend) Driver() string {
	v := cu.Version()
	cuda := fmt.Sprintf("CUDA %d.%d", v/1000, v%1000/10)
	if d := nvidiaDriver(); d != "" {
		return d + " (" + cuda + ")"
	}
	return cuda
}

func (b *cudaBackend) Library() string {
	if b.peer == nil {
		return ""
	}
	return "cuSPARSE " + b.peer.versionString()
}

func (b *cudaBackend) SetHostPaced(on bool) { b.clock.SetHostPaced(on) }

func (b *cudaBackend) FreeBytes() int64 {
	free, _, err := b.dev.MemInfo()
	if err != nil {
		return 0
	}
	return free
}

func (b *cudaBackend) Close() {
	if b.peer != nil {
		b.peer.close()
	}
	_ = b.clock.Close()
	_ = b.dev.Close()
}

func (b *cudaBackend) Run32(ctx context.Context, h *hostData[float32], gr gpuRun) []Result {
	return runGPUCase(ctx, b, h, gr)
}

func (b *cudaBackend) Run64(ctx context.Context, h *hostData[float64], gr gpuRun) []Result {
	return runGPUCase(ctx, b, h, gr)
}

func (b *cudaBackend) RunC64(ctx context.Context, h *hostData[complex64], gr gpuRun) []Result {
	return runGPUComplexCase(ctx, b, h, gr)
}

func (b *cudaBackend) RunC128(ctx context.Context, h *hostData[complex128], gr gpuRun) []Result {
	return runGPUComplexCase(ctx, b, h, gr)
}

// deviceData is a case's data on the device.
type deviceData[T tridiag.Scalar] struct {
	a, b, c      *cuda.Buffer[T] // nil for constant cases until peers need them
	d, dSaved, x *cuda.Buffer[T]
	bufs         []*cuda.Buffer[T]
}

func (dd *deviceData[T]) free() {
	for _, b := range dd.bufs {
		_ = b.Free()
	}
	dd.bufs = nil
}

func (dd *deviceData[T]) upload(dev *cuda.Device, host []T) (*cuda.Buffer[T], error) {
	b, err := cuda.Upload(dev, host)
	if err == nil {
		dd.bufs = append(dd.bufs, b)
	}
	return b, err
}

func (dd *deviceData[T]) alloc(dev *cuda.Device, n int) (*cuda.Buffer[T], error) {
	b, err := cuda.Alloc[T](dev, n)
	if err == nil {
		dd.bufs = append(dd.bufs, b)
	}
	return b, err
}

// runGPUCase uploads the case once, times this module's plan for every
// algorithm asked for, then the cuSPARSE peers that apply.
func runGPUCase[T tridiag.Float](ctx context.Context, be *cudaBackend, h *hostData[T], gr gpuRun) []Result {
	c := h.cs
	var out []Result
	var names []string
	type solver struct {
		name string
		opts tridiag.Options
	}
	var solvers []solver
	for _, a := range gr.algos {
		solvers = append(solvers, solver{"gpu:" + a.String(), tridiag.Options{Algorithm: a, SkipFiniteCheck: true}})
	}
	for _, m := range gr.segRows {
		solvers = append(solvers, solver{fmt.Sprintf("gpu:partition/m=%d", m),
			tridiag.Options{Algorithm: tridiag.Partition, SegmentRows: m, SkipFiniteCheck: true}})
	}
	for _, s := range solvers {
		names = append(names, s.name)
	}
	if gr.cusparse {
		names = append(names, cusparseNames(c)...)
	}
	fail := func(err error) []Result {
		for _, n := range names[len(out):] {
			out = append(out, Result{Case: c, Solver: n, Err: shortErr(err), Resid: -1})
		}
		return out
	}
	dd := &deviceData[T]{}
	defer dd.free()
	if err := dd.uploadCase(be.dev, h); err != nil {
		return fail(err)
	}
	check := checker(h, gr.check)
	for _, sv := range solvers {
		name, algo := sv.name, sv.opts.Algorithm
		gr.progress(name)
		if err := ctx.Err(); err != nil {
			return fail(err)
		}
		p, err := tridiaggpu.NewPlan[T](be.dev, c.Shape(), sv.opts)
		if err != nil {
			out = append(out, Result{Case: c, Solver: name, Err: "unsupported: " + shortErr(err), Resid: -1})
			continue
		}
		times, paced, err := be.timeGated(func() ([]time.Duration, error) {
			if c.Constant {
				return p.TimeConst(ctx, be.timer(), h.ka, h.kb, h.kc, dd.d, dd.x, dd.dSaved, gr.warmup, gr.reps)
			}
			return p.Time(ctx, be.timer(), dd.a, dd.b, dd.c, dd.d, dd.x, dd.dSaved, gr.warmup, gr.reps)
		})
		r := newResult(c, name, times, be.bw)
		if algo == tridiag.Auto {
			r.Note = "auto → " + p.Describe()
		} else if algo == tridiag.Partition {
			r.Note = p.Describe()
		}
		r.Note = joinNote(r.Note, paced)
		if err != nil {
			r.Err = shortErr(err)
		}
		check(&r, dd.x)
		_ = p.Close()
		out = append(out, r)
	}
	if gr.cusparse {
		out = append(out, runCusparse(be, h, dd, gr, check)...)
	}
	return out
}

// uploadCase puts the case's arrays on the device: a, b and c (not for
// constant cases), d, a saved copy of d, and x.
func (dd *deviceData[T]) uploadCase(dev *cuda.Device, h *hostData[T]) error {
	var err error
	if !h.cs.Constant {
		if dd.a, err = dd.upload(dev, h.a); err != nil {
			return err
		}
		if dd.b, err = dd.upload(dev, h.b); err != nil {
			return err
		}
		if dd.c, err = dd.upload(dev, h.c); err != nil {
			return err
		}
	}
	if dd.d, err = dd.upload(dev, h.d); err != nil {
		return err
	}
	if dd.dSaved, err = dd.upload(dev, h.d); err != nil {
		return err
	}
	dd.x, err = dd.alloc(dev, h.cs.Len())
	return err
}

// checker returns the check of a solver's result: the backward error of
// the solution in x on a sample of systems (Result.Resid), when on and
// the result holds a timing.
func checker[T tridiag.Scalar](h *hostData[T], on bool) func(*Result, *cuda.Buffer[T]) {
	var hx []T
	return func(r *Result, x *cuda.Buffer[T]) {
		if !on || !r.OK() {
			return
		}
		if hx == nil {
			hx = make([]T, h.cs.Len())
		}
		if err := x.CopyTo(hx); err != nil {
			r.Note = joinNote(r.Note, "check: "+shortErr(err))
			return
		}
		r.Resid = h.backwardError(hx)
	}
}

// timer is the timing of this module's plans: CUDA events, the
// repetitions queued behind the device's gate unless host-paced
// (SetHostPaced).
func (b *cudaBackend) timer() cuda.Timer { return b.clock.Timer() }

// timeGated runs a timing; when its gate expired (cuda.ErrGateExpired) it
// runs it again host-paced and says so in paced.
func (b *cudaBackend) timeGated(timeIt func() ([]time.Duration, error)) (times []time.Duration, paced string, err error) {
	times, err = timeIt()
	if !errors.Is(err, cuda.ErrGateExpired) {
		return times, "", err
	}
	b.clock.SetHostPaced(true)
	defer b.clock.SetHostPaced(false)
	times, err = timeIt()
	return times, "gate expired: timed host-paced", err
}

func joinNote(a, b string) string {
	if a == "" {
		return b
	}
	if b == "" {
		return a
	}
	return a + "; " + b
}

// runCusparse times the cuSPARSE peers that apply to the case, on the
// data already uploaded (coefficient arrays are uploaded here for
// constant cases: cuSPARSE has no constant-coefficient path). Each solves
// in place in d, which is restored before each call outside the timed
// region; the interleaved batch may overwrite its matrix, so it gets a, b
// and c restored too.
func runCusparse[T tridiag.Scalar](be *cudaBackend, h *hostData[T], dd *deviceData[T], gr gpuRun, check func(*Result, *cuda.Buffer[T])) []Result {
	c := h.cs
	names := cusparseNames(c)
	if len(names) == 0 {
		return nil
	}
	var out []Result
	fail := func(msg string) []Result {
		for _, n := range names[len(out):] {
			out = append(out, Result{Case: c, Solver: n, Err: msg, Resid: -1})
		}
		return out
	}
	if be.peer == nil {
		msg := errNoCusparse.Error()
		if !errors.Is(be.peerErr, errNoCusparse) && be.peerErr != nil {
			msg = shortErr(be.peerErr)
		}
		return fail(msg)
	}
	dev := be.dev
	if dd.a == nil {
		a, b, cc := h.coeffs()
		var err error
		if dd.a, err = dd.upload(dev, a); err != nil {
			return fail(shortErr(err))
		}
		if dd.b, err = dd.upload(dev, b); err != nil {
			return fail(shortErr(err))
		}
		if dd.c, err = dd.upload(dev, cc); err != nil {
			return fail(shortErr(err))
		}
	}
	bytes := int64(c.Len()) * c.ElemSize()
	restoreD := []devCopy{{dst: dd.d.Ptr(), src: dd.dSaved.Ptr(), bytes: bytes}}
	base := csCall{prec: csPrec(c.Precision), dl: dd.a.Ptr(), d: dd.b.Ptr(), du: dd.c.Ptr(), x: dd.d.Ptr(), m: c.N, batch: c.G, stride: c.N}
	note := "cuSPARSE " + be.peer.versionString()
	timeOne := func(name string, call csCall, restores []devCopy) {
		gr.progress(name)
		times, paced, err := be.timeGated(func() ([]time.Duration, error) {
			return be.peer.time(&call, restores, be.clock.Timer(), gr.warmup, gr.reps)
		})
		r := newResult(c, name, times, be.bw)
		r.Note = joinNote(note, paced)
		if err != nil {
			r.Err = shortErr(err)
		}
		check(&r, dd.d)
		out = append(out, r)
	}
	for _, name := range names {
		switch name {
		case "cusparse:gtsv2StridedBatch":
			call := base
			call.kind = csStridedBatch
			timeOne(name, call, restoreD)
		case "cusparse:gtsv2":
			call := base
			call.kind = csGtsv2
			timeOne(name, call, restoreD)
		}
	}
	var ib []string
	for _, n := range names {
		if strings.HasPrefix(n, "cusparse:gtsvInterleavedBatch/") {
			ib = append(ib, n)
		}
	}
	if len(ib) > 0 {
		saved := make([]*cuda.Buffer[T], 3)
		restores := append([]devCopy(nil), restoreD...)
		for i, src := range []*cuda.Buffer[T]{dd.a, dd.b, dd.c} {
			s, err := dd.alloc(dev, c.Len())
			if err == nil {
				err = s.CopyFromBuffer(src)
			}
			if err != nil {
				for _, n := range ib {
					out = append(out, Result{Case: c, Solver: n, Err: "saving the matrix: " + shortErr(err), Resid: -1})
				}
				return out
			}
			saved[i] = s
			restores = append(restores, devCopy{dst: src.Ptr(), src: s.Ptr(), bytes: bytes})
		}
		for algo, name := range ib {
			call := base
			call.kind, call.algo = csInterleaved, algo
			timeOne(name, call, restores)
		}
		// Leave the matrix as uploaded.
		for i, dst := range []*cuda.Buffer[T]{dd.a, dd.b, dd.c} {
			_ = dst.CopyFromBuffer(saved[i])
		}
	}
	return out
}
