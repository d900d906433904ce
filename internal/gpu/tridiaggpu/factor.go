//go:build cuda

package tridiaggpu

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"
	"unsafe"

	"gorgonia.org/cu"

	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/internal/gpu/kernels"
	"github.com/bandsolve/bandsolve/tridiag"
)

// factorMode is the factorization a plan's Factor makes, the k of the
// fac_k kernels (ptx/src/factor.cuh), chosen from the plan's options as
// the CPU chooses it (tridiag.Factors).
type factorMode int

const (
	modeLU        factorMode = iota // Thomas: LU without pivoting
	modeGT                          // GTSV, Auto with PivotAlways: gttrf
	modePT                          // LDLT: pttrf
	modeAuto                        // Auto: LU where the pivot growth test passes, else gttrf
	modeAutoNever                   // Auto with PivotNever: LU where no pivot is zero, else gttrf
)

// The kind byte the factor kernels write for each held system.
const (
	kindLU     = 1
	kindGT     = 2
	kindPT     = 3
	kindFailed = 4
)

// The k of the fac_solve kernels: the kind of factors they read (mixed:
// each system's own, LU or gttrf, as Auto leaves them).
const (
	solveMixed = 0
	solveLU    = 1
	solveGT    = 2
	solvePT    = 3
)

// factorModeOf is the factorization of a plan of spec whose options asked
// for algorithm asked, or an error wrapping tridiag.ErrOptions when the
// GPU does not factor it.
func factorModeOf(spec tridiag.Spec, asked tridiag.Algorithm) (factorMode, error) {
	if spec.Cyclic {
		return 0, fmt.Errorf("%w: the GPU does not factor cyclic systems (N=%d G=%d): factor them on the CPU", tridiag.ErrOptions, spec.N, spec.G)
	}
	switch asked {
	case tridiag.Thomas:
		return modeLU, nil
	case tridiag.GTSV:
		return modeGT, nil
	case tridiag.LDLT:
		return modePT, nil
	case tridiag.Auto:
		switch spec.Pivoting {
		case tridiag.PivotAlways:
			return modeGT, nil
		case tridiag.PivotNever:
			return modeAutoNever, nil
		}
		return modeAuto, nil
	}
	return 0, fmt.Errorf("%w: algorithm %s does not factor (Factor takes %s, %s, %s or %s)", tridiag.ErrOptions, asked, tridiag.Auto, tridiag.Thomas, tridiag.GTSV, tridiag.LDLT)
}

// planes is how many arrays of N·H values the factors of mode hold.
func (m factorMode) planes() int {
	switch m {
	case modeLU:
		return 3
	case modePT:
		return 2
	}
	return 4
}

// pivots reports whether the factors of mode may hold gttrf's.
func (m factorMode) pivots() bool { return m == modeGT || m == modeAuto || m == modeAutoNever }

// solveKind is the k of the solve kernel of mode's factors.
func (m factorMode) solveKind() int {
	switch m {
	case modeLU:
		return solveLU
	case modeGT:
		return solveGT
	case modePT:
		return solvePT
	}
	return solveMixed
}

// cause is the error a breakdown of mode's factorization wraps.
func (m factorMode) cause() error {
	switch m {
	case modeLU:
		return tridiag.ErrZeroPivot
	case modePT:
		return tridiag.ErrNotPositiveDefinite
	}
	return tridiag.ErrSingular
}

// factorBlock is the threads per block of the factor and solve kernels
// (one thread per system; the staged kernels' FAC_TILE_WARPS warps of 32
// systems).
const factorBlock = 128

// gpuFactors is the factorization of one batch in device memory, owned
// by it (tridiag.FactorSolver): the planes of the factors in the
// interleaved layout (row i of held system h at i·H + h, H = G, or 1
// when every system shares system 0's factors), the pivots (one byte a
// row) and one kind byte a held system, with its own stream and status.
// It stays valid after its plan is closed; Close frees it.
type gpuFactors[T tridiag.Float] struct {
	dev    *gpu
	spec   tridiag.Spec
	mode   factorMode
	f64    bool
	held   int  // H
	shared bool // constant coefficients: every system uses system 0's factors
	// group and depth force the solve kernel's variant (solveVariants):
	// the columns it takes at a time (1, 4 or 8) and the rows it loads
	// ahead; 0 lets the solve choose (groupOf, depthOf).
	group int
	depth int
	// stage chooses between the staged kernels (fac_staged_k*: a warp
	// per 32 systems, tiles of rows transposed through shared memory) and
	// the row kernels where both apply (canStage): useStaged's rule, or
	// forced (benchmarks and tests).
	stage  stageChoice
	planes [4]cu.DevicePtr
	vals   cu.DevicePtr // the planes, in one allocation
	bytes  cu.DevicePtr // ipiv (N·H bytes, modes that pivot), then the kinds (H bytes)
	ipiv   cu.DevicePtr
	kinds  cu.DevicePtr
	// status: G codes (row+1), the flag, G columns.
	status cu.DevicePtr
	stream cu.Stream
	codes  []int32
	failed []tridiag.SystemError // the systems that broke down in Factor
	// pivoted is how many held systems Auto sent to gttrf.
	pivoted int
	// host staging: the coefficients (kept for refactoring) and the
	// right-hand sides.
	ha, hb, hc, hd, hx *cuda.Buffer[T]
	closed             bool
}

// newFactors allocates the factors of a batch of spec for mode; shared:
// constant coefficients, one held system. Call outside Device.Enqueue.
func newFactors[T tridiag.Float](d *gpu, spec tridiag.Spec, mode factorMode, shared bool) (*gpuFactors[T], error) {
	f := &gpuFactors[T]{dev: d, spec: spec, mode: mode, f64: elemSize[T]() == 8, held: spec.G, shared: shared}
	if shared {
		f.held = 1
	}
	n, H := int64(spec.N), int64(f.held)
	plane := n * H
	var err error
	if f.vals, err = d.AllocBytes(int64(mode.planes()) * plane * elemSize[T]()); err != nil {
		return nil, fmt.Errorf("cuda: the factors (mode %d) of %d systems of %d rows: %w", mode, H, n, err)
	}
	for i := range mode.planes() {
		f.planes[i] = f.vals + cu.DevicePtr(int64(i)*plane*elemSize[T]())
	}
	for i := mode.planes(); i < 4; i++ {
		f.planes[i] = f.planes[0] // not read
	}
	nb := H
	if mode.pivots() {
		nb += plane
	}
	if f.bytes, err = d.AllocBytes(nb); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("cuda: the pivots of %d systems of %d rows: %w", H, n, err)
	}
	f.kinds, f.ipiv = f.bytes, f.bytes
	if mode.pivots() {
		f.kinds = f.bytes + cu.DevicePtr(plane)
	}
	G := int64(spec.G)
	if f.status, err = d.AllocBytes((2*G + 1) * 4); err != nil {
		_ = f.Close()
		return nil, err
	}
	if err = d.Enqueue(func() error {
		if err := cu.MemsetD32(f.status, 0, 2*G+1); err != nil {
			return fmt.Errorf("cuda: clearing status: %w", err)
		}
		var e error
		f.stream, e = cu.MakeStream(cu.DefaultStream)
		return e
	}); err != nil {
		_ = f.Close()
		return nil, err
	}
	return f, nil
}

// what names the factors in errors.
func (f *gpuFactors[T]) what() string {
	return fmt.Sprintf("factors (mode %d) of N=%d G=%d", f.mode, f.spec.N, f.spec.G)
}

// factorDevice factors the batch whose coefficients are a, b and c in
// device memory (a is not read in modePT and may be 0), or, when
// f.shared, the constants ca, cb and cc. It returns the *BatchError of
// the systems that broke down (kept for the solves), or nil.
func (f *gpuFactors[T]) factorDevice(a, b, c cu.DevicePtr, ca, cb, cc float64) error {
	launch, err := f.factorLauncher(a, b, c, ca, cb, cc)
	if err != nil {
		return err
	}
	H := f.held
	codes := make([]int32, H)
	kinds := make([]uint8, H)
	if err := f.dev.Enqueue(func() error {
		if err := launch(); err != nil {
			return err
		}
		if err := f.stream.Synchronize(); err != nil {
			return fmt.Errorf("cuda: %s: factoring: %w", f.what(), err)
		}
		if err := cu.MemcpyDtoH(unsafe.Pointer(&codes[0]), f.status, int64(4*H)); err != nil {
			return fmt.Errorf("cuda: %s: reading status: %w", f.what(), err)
		}
		if err := cu.MemcpyDtoH(unsafe.Pointer(&kinds[0]), f.kinds, int64(H)); err != nil {
			return fmt.Errorf("cuda: %s: reading kinds: %w", f.what(), err)
		}
		return cu.MemsetD32(f.status, 0, int64(H))
	}); err != nil {
		return err
	}
	f.pivoted = 0
	for _, kd := range kinds {
		if kd == kindGT {
			f.pivoted++
		}
	}
	f.failed = nil
	for h, code := range codes {
		if code == 0 {
			continue
		}
		row := int(code) - 1
		e := tridiag.SystemError{System: h, Row: row, Err: &tridiag.PivotError{Row: row, Err: f.mode.cause()}}
		if !f.shared {
			f.failed = append(f.failed, e)
			continue
		}
		// The one matrix breaks down: in every system, at the same row.
		for g := range f.spec.G {
			e.System = g
			f.failed = append(f.failed, e)
		}
	}
	if len(f.failed) == 0 {
		return nil
	}
	return &tridiag.BatchError{G: f.spec.G, Failed: append([]tridiag.SystemError(nil), f.failed...)}
}

// factorLauncher returns the launch of the factor kernel on the factors'
// stream (call it on the device thread), for factorDevice's arguments.
func (f *gpuFactors[T]) factorLauncher(a, b, c cu.DevicePtr, ca, cb, cc float64) (func() error, error) {
	k, err := kernels.FacKFor(int(f.mode), f.f64)
	if err != nil {
		return nil, err
	}
	if a == 0 {
		a = b
	}
	sp := f.spec
	args := &kernels.FacKArgs{A: a, B: b, C: c, CA: ca, CB: cb, CC: cc,
		F0: f.planes[0], F1: f.planes[1], F2: f.planes[2], F3: f.planes[3], Ipiv: f.ipiv, Kind: f.kinds,
		N: int32(sp.N), H: int32(f.held), ES: int64(sp.Layout.ElemStride), BS: int64(sp.Layout.BatchStride), Status: f.status}
	if f.shared {
		args.IsConst = 1
		args.A, args.B, args.C = 0, 0, 0
	}
	grid, block := cuda.Dim3{X: (f.held + factorBlock - 1) / factorBlock}, cuda.Dim3{X: factorBlock}
	return func() error { return k.Launch(f.dev.Device, grid, block, 0, f.stream, args) }, nil
}

// factorHost copies the coefficients of bt to the device (kept for the
// next factorization) and factors them.
func (f *gpuFactors[T]) factorHost(bt tridiag.Batch[T]) error {
	if bt.Constant {
		return f.factorDevice(0, 0, 0, float64(bt.ConstA), float64(bt.ConstB), float64(bt.ConstC))
	}
	n := f.spec.Len()
	var err error
	get := func(buf **cuda.Buffer[T], v []T) {
		if err != nil {
			return
		}
		if *buf == nil {
			if *buf, err = cuda.Alloc[T](f.dev.Device, n); err != nil {
				return
			}
		}
		err = (*buf).CopyFrom(v[:n])
	}
	var a cu.DevicePtr
	if f.mode != modePT {
		get(&f.ha, bt.A)
		if f.ha != nil {
			a = f.ha.Ptr()
		}
	}
	get(&f.hb, bt.B)
	get(&f.hc, bt.C)
	if err != nil {
		return err
	}
	return f.factorDevice(a, f.hb.Ptr(), f.hc.Ptr(), 0, 0, 0)
}

// dropCoefficients frees the staging copies of the coefficients.
func (f *gpuFactors[T]) dropCoefficients() {
	for _, b := range []**cuda.Buffer[T]{&f.ha, &f.hb, &f.hc} {
		if *b != nil {
			_ = (*b).Free()
			*b = nil
		}
	}
}

// groupOf is the number of columns a solve kernel takes at a time for
// nrhs right-hand sides: their recurrences are carried in registers so
// that each row's factors are read once for the group.
func groupOf(nrhs int) int {
	switch {
	case nrhs == 1:
		return 1
	case nrhs >= 8:
		return 8
	}
	return 4
}

// depthOf is the rows a solve kernel of group columns loads ahead of its
// recurrence (ptx/src/factor.cuh, fac_pipe). The rule: enough loads in
// flight to cover the memory latency, about 16 or more a thread (D rows
// of group values and 1 to 3 factors each), within about 128 registers a
// thread in FP32 so that four blocks of factorBlock threads fit an SM:
// 4 rows for 1 and 4 columns, 2 for 8. BenchmarkFactor's variants
// sub-benchmarks time every variant against these defaults:
//
//	go test -tags cuda -c ./internal/gpu/tridiaggpu && ./tridiaggpu.test -test.run '^$' -test.bench 'Factor/.*/variants' -test.benchtime 3x
func depthOf(group int) int {
	if group >= 8 {
		return 2
	}
	return 4
}

// stagedRows is the rows of a tile of the staged kernel that takes group
// columns at a time (the d of fac_staged_k*_p*_d*): 32 bytes or more of
// a system's column, within the registers of the next tile's loads.
func stagedRows(group int) int {
	if group >= 8 {
		return 4
	}
	return 8
}

// canStage reports whether the staged kernels solve with f: rows
// adjacent (element stride 1: contiguous and padded layouts) and factors
// of one kind (LU, gttrf or L·D·Lᵀ; Auto's mix takes the row kernels).
func (f *gpuFactors[T]) canStage() bool {
	return f.spec.Layout.ElemStride == 1 && f.mode.solveKind() != solveMixed
}

// stageChoice is how a solve picks the staged kernels.
type stageChoice int

const (
	stageByRule stageChoice = iota // useStaged
	stageOn                        // staged wherever canStage
	stageOff                       // the row kernels
)

// stagedMinSystems is the batch from which the staged kernels solve where
// they apply: a warp of systems. With fewer, the row kernels' lone threads
// are as fast or faster. H200, N = 256, G = 65536 contiguous, FP32
// thomas: 155 µs staged against 872 µs by rows for one right-hand side,
// 11.4 ms against 42.1 ms for 16; G = 1, N = 4096: 931 µs against 920
// (thomas), 1.85 ms against 1.14 (gtsv) (bandsolve bench -device cuda
// -grid factor -peers cusparse: gpu:<alg>/staged against gpu:<alg>/solve).
const stagedMinSystems = 32

// useStaged reports whether a solve takes the staged kernels.
func (f *gpuFactors[T]) useStaged() bool {
	switch f.stage {
	case stageOn:
		return f.canStage()
	case stageOff:
		return false
	}
	return f.canStage() && f.spec.G >= stagedMinSystems
}

// solveVariant is a solve kernel's variant: columns a time and rows
// loaded ahead (the p and d of fac_solve_k*_p*_d*).
type solveVariant struct{ group, depth int }

// solveVariants are the variants of the solve kernels of mode's factors:
// the defaults (groupOf, depthOf) for every mode; for the modes of one
// kind of factors (LU, gttrf, L·D·Lᵀ) more depths, which
// BenchmarkFactor compares with the defaults.
func solveVariants(m factorMode) []solveVariant {
	vs := []solveVariant{{1, 4}, {4, 4}, {8, 2}}
	if m.solveKind() != solveMixed {
		vs = append(vs, solveVariant{1, 8}, solveVariant{4, 2}, solveVariant{8, 4})
	}
	return vs
}

// solveDevice solves the factored batch for nrhs right-hand sides held
// in device memory, column r of the batch at d + r·L elements, the
// solutions to x in the same places (x may be d). It returns the failures
// as Factors.SolveMany reports them.
func (f *gpuFactors[T]) solveDevice(nrhs int, d, x cu.DevicePtr) error {
	if err := f.launchSolve(nrhs, d, x); err != nil {
		return err
	}
	return f.solveStatus(nrhs)
}

// launchSolve enqueues the solve kernel on the factors' stream.
func (f *gpuFactors[T]) launchSolve(nrhs int, d, x cu.DevicePtr) error {
	launch, err := f.solveLauncher(nrhs, d, x)
	if err != nil {
		return err
	}
	return f.dev.Enqueue(launch)
}

// solveLauncher returns the launch of the solve kernel on the factors'
// stream (call it on the device thread), for launchSolve's arguments.
func (f *gpuFactors[T]) solveLauncher(nrhs int, d, x cu.DevicePtr) (func() error, error) {
	p, depth := f.group, f.depth
	if p == 0 {
		p = groupOf(nrhs)
	}
	if depth == 0 {
		depth = depthOf(p)
	}
	var k interface {
		Launch(*cuda.Device, cuda.Dim3, cuda.Dim3, int, cu.Stream, *kernels.FacSolveKPDArgs) error
	}
	var err error
	if f.useStaged() {
		k, err = kernels.FacStagedKPDFor(f.mode.solveKind(), p, stagedRows(p), f.f64)
	} else {
		k, err = kernels.FacSolveKPDFor(f.mode.solveKind(), p, depth, f.f64)
	}
	if err != nil {
		return nil, err
	}
	sp := f.spec
	shared := int32(0)
	if f.shared {
		shared = 1
	}
	args := &kernels.FacSolveKPDArgs{F0: f.planes[0], F1: f.planes[1], F2: f.planes[2], F3: f.planes[3], Ipiv: f.ipiv, Kind: f.kinds,
		D: d, X: x, N: int32(sp.N), G: int32(sp.G), Shared: shared,
		ES: int64(sp.Layout.ElemStride), BS: int64(sp.Layout.BatchStride), CS: int64(sp.Len()), Nrhs: int32(nrhs), Status: f.status}
	grid, block := cuda.Dim3{X: (sp.G + factorBlock - 1) / factorBlock}, cuda.Dim3{X: factorBlock}
	return func() error { return k.Launch(f.dev.Device, grid, block, 0, f.stream, args) }, nil
}

// solveStatus waits for the enqueued solve and returns the systems whose
// solution is not finite (their first such column named when nrhs > 1)
// together with those that broke down in Factor.
func (f *gpuFactors[T]) solveStatus(nrhs int) error {
	G := f.spec.G
	var flag int32
	if err := f.dev.Enqueue(func() error {
		if err := f.stream.Synchronize(); err != nil {
			return fmt.Errorf("cuda: %s: solving: %w", f.what(), err)
		}
		if err := cu.MemcpyDtoH(unsafe.Pointer(&flag), f.status+cu.DevicePtr(4*G), 4); err != nil {
			return fmt.Errorf("cuda: %s: reading status: %w", f.what(), err)
		}
		if flag == 0 {
			return nil
		}
		if len(f.codes) < 2*G+1 {
			f.codes = make([]int32, 2*G+1)
		}
		if err := cu.MemcpyDtoH(unsafe.Pointer(&f.codes[0]), f.status, int64(4*(2*G+1))); err != nil {
			return fmt.Errorf("cuda: %s: reading status: %w", f.what(), err)
		}
		return cu.MemsetD32(f.status, 0, int64(2*G+1))
	}); err != nil {
		return err
	}
	failed := append([]tridiag.SystemError(nil), f.failed...)
	if flag != 0 {
		for g, code := range f.codes[:G] {
			if code == 0 {
				continue
			}
			row, col := int(code)-1, int(f.codes[G+1+g])
			var err error = &tridiag.PivotError{Row: row, Err: tridiag.ErrNonFiniteResult}
			if nrhs > 1 {
				err = fmt.Errorf("right-hand side %d: %w", col, err)
			}
			failed = append(failed, tridiag.SystemError{System: g, Row: row, Err: err})
		}
	}
	if len(failed) == 0 {
		return nil
	}
	sort.Slice(failed, func(i, j int) bool { return failed[i].System < failed[j].System })
	return &tridiag.BatchError{G: G, Failed: failed}
}

// SolveMany solves the factored batch for nrhs right-hand sides in host
// memory (tridiag.FactorSolver): column r at d[r·L : (r+1)·L].
func (f *gpuFactors[T]) SolveMany(ctx context.Context, nrhs int, d, x []T) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if f.closed {
		return tridiag.ErrClosed
	}
	n := nrhs * f.spec.Len()
	if err := f.staging(&f.hd, n); err != nil {
		return err
	}
	if err := f.hd.CopyFrom(d[:n]); err != nil {
		return err
	}
	// A layout with gaps between its rows: x's gaps keep their values, as
	// on the CPU, so x is solved into where it is copied in.
	out := f.hd
	if f.spec.Len() != f.spec.N*f.spec.G && &x[0] != &d[0] {
		if err := f.staging(&f.hx, n); err != nil {
			return err
		}
		if err := f.hx.CopyFrom(x[:n]); err != nil {
			return err
		}
		out = f.hx
	}
	err := f.solveDevice(nrhs, f.hd.Ptr(), out.Ptr())
	var be *tridiag.BatchError
	if err != nil && !errors.As(err, &be) {
		return err
	}
	if cerr := out.CopyTo(x[:n]); cerr != nil {
		return cerr
	}
	return err
}

// staging makes *buf a device buffer of n elements at least.
func (f *gpuFactors[T]) staging(buf **cuda.Buffer[T], n int) error {
	if *buf != nil && (*buf).Len() >= n {
		return nil
	}
	if *buf != nil {
		_ = (*buf).Free()
		*buf = nil
	}
	var err error
	*buf, err = cuda.Alloc[T](f.dev.Device, n)
	return err
}

// Describe names the factorization as the CPU's factors do.
func (f *gpuFactors[T]) Describe() string {
	switch f.mode {
	case modeLU:
		return "thomas (lu without pivoting)"
	case modeGT:
		return "gtsv (gttrf: lu with partial pivoting)"
	case modePT:
		return "ldlt (pttrf: l·d·lᵀ)"
	}
	pivoted := f.pivoted
	if f.shared {
		pivoted *= f.spec.G
	}
	return fmt.Sprintf("thomas (lu without pivoting), gtsv (gttrf) for %d of %d systems", pivoted, f.spec.G)
}

// Close frees the factors' device memory.
func (f *gpuFactors[T]) Close() error {
	if f.closed {
		return nil
	}
	f.closed = true
	f.dropCoefficients()
	for _, b := range []**cuda.Buffer[T]{&f.hd, &f.hx} {
		if *b != nil {
			_ = (*b).Free()
			*b = nil
		}
	}
	return f.dev.Enqueue(func() error {
		if f.stream != (cu.Stream{}) {
			_ = f.stream.Synchronize()
			_ = f.stream.Destroy()
		}
		for _, m := range []cu.DevicePtr{f.vals, f.bytes, f.status} {
			if m != 0 {
				_ = cu.MemFree(m)
			}
		}
		return nil
	})
}

// factor makes the device factors of bt (Plan.Factor on a GPU plan).
func (p *Plan[T]) factor(ctx context.Context, bt tridiag.Batch[T]) (*gpuFactors[T], error) {
	mode, err := factorModeOf(p.spec, p.asked)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p.mu.Lock()
	closed := p.closed
	p.mu.Unlock()
	if closed {
		return nil, tridiag.ErrClosed
	}
	f, err := newFactors[T](p.dev, p.spec, mode, bt.Constant)
	if err != nil {
		return nil, err
	}
	err = f.factorHost(bt)
	f.dropCoefficients()
	var be *tridiag.BatchError
	if err != nil && !errors.As(err, &be) {
		_ = f.Close()
		return nil, err
	}
	return f, err
}

// solveMany solves bt for nrhs right-hand sides by factoring it into the
// plan's cached factors and solving with them: the results of Factor
// then Factors.SolveMany, bit for bit (Plan.SolveMany).
func (p *Plan[T]) solveMany(ctx context.Context, nrhs int, bt tridiag.Batch[T]) error {
	mode, err := factorModeOf(p.spec, p.asked)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return tridiag.ErrClosed
	}
	f, _ := p.many.(*gpuFactors[T])
	if f != nil && f.shared != bt.Constant {
		_ = f.Close()
		f, p.many = nil, nil
	}
	if f == nil {
		if f, err = newFactors[T](p.dev, p.spec, mode, bt.Constant); err != nil {
			return err
		}
		p.many = f
	}
	ferr := f.factorHost(bt)
	var be *tridiag.BatchError
	if ferr != nil && !errors.As(ferr, &be) {
		return ferr
	}
	return f.SolveMany(ctx, nrhs, bt.D, bt.X)
}

// Factor factors the batch on the device (tridiag.Factorer): Thomas,
// GTSV, LDLT and Auto plans, not cyclic ones.
func (h hostSolver[T]) Factor(ctx context.Context, bt tridiag.Batch[T]) (tridiag.FactorSolver[T], error) {
	f, err := h.p.factor(ctx, bt)
	if f == nil {
		return nil, err
	}
	return f, err
}

// manySolver is the host solver of a plan that factors: it solves several
// right-hand sides per call with one factorization (tridiag.ManySolver).
type manySolver[T tridiag.Float] struct{ hostSolver[T] }

// SolveMany solves bt for nrhs right-hand sides (Plan.SolveMany).
func (m manySolver[T]) SolveMany(ctx context.Context, nrhs int, bt tridiag.Batch[T]) error {
	return m.p.solveMany(ctx, nrhs, bt)
}

// hostSolverOf is the host solver of plan p: a manySolver where p
// factors.
func hostSolverOf[T tridiag.Float](p *Plan[T], spec tridiag.Spec) tridiag.Solver[T] {
	if _, err := factorModeOf(p.spec, spec.Algorithm); err == nil {
		return manySolver[T]{hostSolver[T]{p}}
	}
	return hostSolver[T]{p}
}

var (
	_ tridiag.Factorer[float32]     = hostSolver[float32]{}
	_ tridiag.ManySolver[float64]   = manySolver[float64]{}
	_ tridiag.FactorSolver[float32] = (*gpuFactors[float32])(nil)
	_ tridiag.Describer             = (*gpuFactors[float64])(nil)
)

// FactorTiming times a stored factorization on device buffers, the
// factor and the solves apart (the bench's factor grid): the factors of
// one batch of a plan's shape and options (Thomas, GTSV, LDLT or Auto),
// made from coefficient buffers that stay the caller's.
type FactorTiming[T tridiag.Float] struct {
	f       *gpuFactors[T]
	a, b, c cu.DevicePtr
}

// NewFactorTiming factors the batch whose coefficients are a, b and c
// (device buffers of shape's length; a is not read by LDLT and may be
// nil) on dev. A breakdown of any system is an error.
func NewFactorTiming[T tridiag.Float](dev *cuda.Device, shape tridiag.Shape, opts tridiag.Options, a, b, c *cuda.Buffer[T]) (*FactorTiming[T], error) {
	if err := shape.Validate(); err != nil {
		return nil, err
	}
	spec := tridiag.Spec{Shape: shape.Normalize(), Options: opts}
	mode, err := factorModeOf(spec, opts.Algorithm)
	if err != nil {
		return nil, err
	}
	for _, bf := range []*cuda.Buffer[T]{b, c} {
		if bf == nil || bf.Len() < spec.Len() {
			return nil, fmt.Errorf("%w: a coefficient buffer of fewer than %d elements", tridiag.ErrLength, spec.Len())
		}
	}
	t := &FactorTiming[T]{b: b.Ptr(), c: c.Ptr()}
	if mode != modePT {
		if a == nil || a.Len() < spec.Len() {
			return nil, fmt.Errorf("%w: a coefficient buffer of fewer than %d elements", tridiag.ErrLength, spec.Len())
		}
		t.a = a.Ptr()
	}
	if t.f, err = newFactors[T](newGPU(dev, config{}), spec, mode, false); err != nil {
		return nil, err
	}
	if err := t.f.factorDevice(t.a, t.b, t.c, 0, 0, 0); err != nil {
		_ = t.f.Close()
		return nil, err
	}
	return t, nil
}

// FactorValues is the values of T a row of the factors holds (the
// planes, and the pivots' bytes where the factorization pivots): what a
// solve reads per row besides its right-hand sides.
func (t *FactorTiming[T]) FactorValues() float64 {
	v := float64(t.f.mode.planes())
	if t.f.mode.pivots() {
		v += 1 / float64(elemSize[T]())
	}
	return v
}

// Factor times the factorization (warmup untimed, then reps) with timer.
func (t *FactorTiming[T]) Factor(timer cuda.Timer, warmup, reps int) ([]time.Duration, error) {
	launch, err := t.f.factorLauncher(t.a, t.b, t.c, 0, 0, 0)
	if err != nil {
		return nil, err
	}
	return t.time(timer, warmup, reps, launch)
}

// Solve times the solve of nrhs right-hand sides, column r of d at
// r·L elements, into x (as large; not d, so that every repetition
// solves the same columns), and checks that every solution is finite.
func (t *FactorTiming[T]) Solve(timer cuda.Timer, nrhs int, d, x *cuda.Buffer[T], warmup, reps int) ([]time.Duration, error) {
	need := nrhs * t.f.spec.Len()
	if nrhs < 1 || d == nil || x == nil || d.Len() < need || x.Len() < need {
		return nil, fmt.Errorf("%w: %d right-hand sides need d and x of %d elements", tridiag.ErrLength, nrhs, need)
	}
	launch, err := t.f.solveLauncher(nrhs, d.Ptr(), x.Ptr())
	if err != nil {
		return nil, err
	}
	ts, err := t.time(timer, warmup, reps, launch)
	if err != nil {
		return nil, err
	}
	return ts, t.f.solveStatus(nrhs)
}

// time runs launch with timer on the factors' stream (device thread).
func (t *FactorTiming[T]) time(timer cuda.Timer, warmup, reps int, launch func() error) ([]time.Duration, error) {
	if timer == nil {
		timer = cuda.EventTimer(nil)
	}
	var ts []time.Duration
	err := t.f.dev.Enqueue(func() error {
		var err error
		ts, err = timer(t.f.stream, warmup, reps, nil, launch)
		return err
	})
	return ts, err
}

// SetStaged makes Solve use the staged kernels (on) or the row kernels,
// whatever the batch's size; it reports whether the staged kernels apply
// to the batch (rows adjacent, factors of one kind), Solve using the row
// kernels otherwise.
func (t *FactorTiming[T]) SetStaged(on bool) bool {
	t.f.stage = stageOff
	if on {
		t.f.stage = stageOn
	}
	return t.f.canStage()
}

// Describe names the factorization.
func (t *FactorTiming[T]) Describe() string { return t.f.Describe() }

// Close frees the factors.
func (t *FactorTiming[T]) Close() error { return t.f.Close() }
