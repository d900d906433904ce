//go:build cuda

package spikegpu

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"unsafe"

	"gorgonia.org/cu"

	"github.com/bandsolve/bandsolve/banded"
	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/internal/gpu/bandedgpu"
	"github.com/bandsolve/bandsolve/internal/gpu/done"
	"github.com/bandsolve/bandsolve/internal/gpu/kernels"
	"github.com/bandsolve/bandsolve/spike"
	"github.com/bandsolve/bandsolve/tridiag"
	"github.com/bandsolve/bandsolve/tuning"
)

// ErrNotFactored is returned by Plan.Solve before a successful Factor
// (spike.ErrNotFactored).
var ErrNotFactored = spike.ErrNotFactored

// Plan is truncated SPIKE (Li et al. 2014 §2.2, §4) for one band
// matrix of order N and half-bandwidth K on the GPU: package spike's
// algorithm, kernel for kernel, with the same partitions (spike.Partitions)
// and results bit for bit (spike/doc.go numbers the steps):
//
// Factor copies A (tall-and-thin storage, (2K+1)·N elements) into two
// device copies while scanning it for non-finite entries, factors every
// partition of the first as L·U and (for the left spikes) every partition
// but the first of the second as U·L, both in place with the
// window-sliding kernels (one thread block per partition: band_window.cuh's
// for K < 16, band_spike.cuh's wide variant from K = 16, where it is the
// faster, and for K > 64; tuning.SpikeKernel.Wide), computes the spike
// blocks V_i⁽ᵇ⁾ and W_{i+1}⁽ᵗ⁾ (one block per interface and spike, one
// thread per column), then R̄_i = I − W_{i+1}⁽ᵗ⁾·V_i⁽ᵇ⁾ and its LU with
// partial pivoting (one block per interface), and reads the status back
// once. With
// spike.Options.ULBlock = l the second copy is only the top-left l×l block
// of each partition (SPIKE::GPU's l = 2K), which is cheap but
// approximates W_{i+1}⁽ᵗ⁾, exactly as on the CPU.
//
// Above tuning.SpikeWideMaxK (K = 167 in FP64, 238 in FP32 on an H100:
// the wide window and the K×K blocks no longer fit in shared memory) the
// plan takes the blocked path of ptx/src/band_blocked.cuh
// (tuning.SpikeBlocked; tuning.SpikeMaxK is its limit): the partitions
// are factored by panels of 16 steps with the
// trailing K×K block updated in global memory, the spike blocks are
// computed tuning.SpikeFactor.TipsColumns columns per thread block, and R̄_i is
// formed by 32×32 tiles and factored in global memory. Every entry gets
// the same operations in the same order as on the CPU, so this path too
// agrees with package spike bit for bit.
//
// Solve sweeps each partition with its LU factors (g = D⁻¹·b, Eq. 4),
// solves the reduced systems and purifies b (Eq. 11b, 11c, 12) in one
// kernel, and sweeps the purified b: x. For P = 1 and BlockJacobi it is
// one sweep. The right-hand side is scanned for NaN/Inf on the way.
//
// Device memory: 2 × (2K+1)·N elements for the factors (the second only
// (2K+1)·(P−1)·l with ULBlock = l), 3·(P−1)·K² for V, W and R̄, N for g.
// Calls of one plan run one at a time.
type Plan[T tridiag.Float] struct {
	dev  *cuda.Device
	l    *Layout
	opts spike.Options
	kern planKernels

	mu      sync.Mutex
	stream  cu.Stream
	sig     *done.Signal
	lu, ul  cu.DevicePtr // the LU and UL copies of A
	v, w, r cu.DevicePtr // K×K blocks per interface
	piv     cu.DevicePtr // int32 interchanges of R̄_i
	g       cu.DevicePtr // D⁻¹·b
	bounds  cu.DevicePtr // int32 partition bounds
	ubounds cu.DevicePtr // int32 bounds of the UL blocks in their band
	status  cu.DevicePtr // l.StLen int32 words
	st      []int32

	stageA   *cuda.Buffer[T] // FactorBand's upload
	stageB   *cuda.Buffer[T] // SolveHost's right-hand side and solution
	factored bool
	boosts   []spike.Boost
	reduced  []int
	closed   bool
	// onStage, when set (benchmarks), is called on the device thread after
	// each stage of a factorization or solve is enqueued.
	onStage func(stage string) error
}

// newFactorKernel returns the partition factorization kernel: the
// blocked one if blocked, else the wide one if wide, else the window
// kernel (tuning.SpikeFactor's choice), in the given precision. The three
// take the same parameters.
func newFactorKernel(blocked, wide, f64 bool) (kernels.BandFactorWindowLauncher, error) {
	switch {
	case blocked:
		return kernels.BandSpikeFactorBlockedFor(f64)
	case wide:
		return kernels.BandSpikeFactorWideFor(f64)
	}
	return kernels.BandFactorWindowFor(f64)
}

// planKernels are the kernels of a plan, in its precision.
type planKernels struct {
	factor      kernels.BandFactorWindowLauncher
	copy        kernels.BandSpikeCopy
	ulblock     kernels.BandSpikeUlblock
	tips        kernels.BandSpikeTips
	reduced     kernels.BandSpikeReduced
	tipsBlocked kernels.BandSpikeTipsBlocked
	rform       kernels.BandSpikeRform
	rlu         kernels.BandSpikeRlu
	flags       kernels.BandSpikeFlags
	sweep       kernels.BandSolveWindow
	vcopy       kernels.BandSpikeVcopy
	rsolve      kernels.BandSpikeRsolve
}

// newPlanKernels looks up the kernels of a plan with the factorization
// launch f.
func newPlanKernels(f tuning.SpikeFactor, f64 bool) (planKernels, error) {
	var (
		ks planKernels
		e  [11]error
	)
	ks.factor, e[0] = newFactorKernel(f.Blocked, f.Wide, f64)
	ks.copy, e[1] = kernels.BandSpikeCopyFor(f64)
	ks.ulblock, e[2] = kernels.BandSpikeUlblockFor(f64)
	ks.tips, e[3] = kernels.BandSpikeTipsFor(f64)
	ks.reduced, e[4] = kernels.BandSpikeReducedFor(f64)
	ks.tipsBlocked, e[5] = kernels.BandSpikeTipsBlockedFor(f64)
	ks.rform, e[6] = kernels.BandSpikeRformFor(f64)
	ks.rlu, e[7] = kernels.BandSpikeRluFor(f64)
	ks.sweep, e[8] = kernels.BandSolveWindowFor(f64)
	ks.vcopy, e[9] = kernels.BandSpikeVcopyFor(f64)
	ks.rsolve, e[10] = kernels.BandSpikeRsolveFor(f64)
	if err := errors.Join(e[:]...); err != nil {
		return planKernels{}, fmt.Errorf("spikegpu: %w", err)
	}
	return ks, nil
}

// mark calls onStage (device thread).
func (p *Plan[T]) mark(stage string) error {
	if p.onStage == nil {
		return nil
	}
	return p.onStage(stage)
}

// NewPlan makes a plan for band matrices of order n and half-bandwidth
// k with spike.Options: Partitions (0: tuning.SpikePartitions for this
// device), ULBlock, BoostTol and Method as for spike.Factor (Workers is
// not used). Errors are spike.Factor's for the shape and options, plus
// banded.ErrShape for K = 0 or K above the blocked path's limit on the
// device (tuning.SpikeMaxK on an H100: 717 in FP64, 1024 in FP32; K above 167 in FP64
// and 238 in FP32 takes the blocked path).
func NewPlan[T tridiag.Float](d *cuda.Device, n, k int, opts spike.Options) (*Plan[T], error) {
	return newPlan[T](d, n, k, opts, tuning.SpikeKernelAuto)
}

func newPlan[T tridiag.Float](d *cuda.Device, n, k int, opts spike.Options, kern tuning.SpikeKernel) (*Plan[T], error) {
	if d == nil {
		return nil, fmt.Errorf("%w: nil device", banded.ErrShape)
	}
	p := &Plan[T]{dev: d, opts: opts}
	f64 := bandedgpu.ElemSize[T]() == 8
	fk, err := newFactorKernel(tuning.SpikeBlocked(d.Properties(), k, int(bandedgpu.ElemSize[T]()), kern), kern.Wide(k), f64)
	if err != nil {
		return nil, fmt.Errorf("spikegpu: %w", err)
	}
	sk, err := kernels.BandSolveWindowFor(f64)
	if err != nil {
		return nil, fmt.Errorf("spikegpu: %w", err)
	}
	var fregs, sregs int
	if err := d.Enqueue(func() error {
		// Registers per thread as the driver compiled the kernels, for
		// the occupancy behind the choice of P (best effort).
		fregs, _ = d.KernelAttr(fk.Kernel().Name(), cu.NumRegs)
		sregs, _ = d.KernelAttr(sk.Kernel().Name(), cu.NumRegs)
		return nil
	}); err != nil {
		return nil, err
	}
	l, err := NewLayout(n, k, int(bandedgpu.ElemSize[T]()), opts, d.Properties(), fregs, sregs, kern)
	if err != nil {
		return nil, err
	}
	p.l = l
	if p.kern, err = newPlanKernels(l.Factor, f64); err != nil {
		return nil, err
	}
	p.st = make([]int32, l.StLen)
	es := bandedgpu.ElemSize[T]()
	band := int64(2*k+1) * int64(n) * es
	alloc := func(dst *cu.DevicePtr, bytes int64, what string) {
		if err != nil || bytes == 0 {
			return
		}
		if *dst, err = d.AllocBytes(bytes); err != nil {
			err = fmt.Errorf("cuda: SPIKE %s: %w", what, err)
		}
	}
	alloc(&p.lu, band, "LU factors")
	alloc(&p.g, int64(n)*es, "work vector")
	alloc(&p.bounds, int64(4*len(l.Bounds)), "bounds")
	alloc(&p.status, int64(4*l.StLen), "status")
	if l.Coupled {
		kk := int64(l.P-1) * int64(k) * int64(k) * es
		alloc(&p.ul, int64(2*k+1)*int64(l.ULN)*es, "UL factors")
		alloc(&p.ubounds, int64(4*len(l.ULBounds)), "UL bounds")
		alloc(&p.v, kk, "spikes V")
		alloc(&p.w, kk, "spikes W")
		alloc(&p.r, kk, "reduced matrices")
		alloc(&p.piv, int64(4*(l.P-1)*k), "pivots")
	}
	if err != nil {
		_ = p.Close()
		return nil, err
	}
	up := func(dst cu.DevicePtr, b []int) error {
		b32 := make([]int32, len(b))
		for i, v := range b {
			b32[i] = int32(v)
		}
		return cu.MemcpyHtoD(dst, unsafe.Pointer(&b32[0]), int64(4*len(b32)))
	}
	if err = d.Enqueue(func() error {
		if err := up(p.bounds, l.Bounds); err != nil {
			return fmt.Errorf("cuda: copying SPIKE bounds: %w", err)
		}
		if l.Coupled {
			if err := up(p.ubounds, l.ULBounds); err != nil {
				return fmt.Errorf("cuda: copying SPIKE bounds: %w", err)
			}
		}
		// b's non-finite index (~0 when none) and flag.
		if err := cu.MemsetD32(p.status+cu.DevicePtr(4*l.StBadB), 0xffffffff, 2); err != nil {
			return fmt.Errorf("cuda: clearing status: %w", err)
		}
		if err := cu.MemsetD32(p.status+cu.DevicePtr(4*l.StFlagB), 0, 1); err != nil {
			return fmt.Errorf("cuda: clearing status: %w", err)
		}
		var e error
		if p.stream, e = cu.MakeStream(cu.DefaultStream); e != nil {
			return fmt.Errorf("cuda: creating a stream: %w", e)
		}
		if p.sig, e = done.NewSignal(); e != nil {
			return e
		}
		return nil
	}); err != nil {
		_ = p.Close()
		return nil, err
	}
	return p, nil
}

// N is the order of the matrix.
func (p *Plan[T]) N() int { return p.l.N }

// K is the half-bandwidth.
func (p *Plan[T]) K() int { return p.l.K }

// P is the number of partitions.
func (p *Plan[T]) P() int { return p.l.P }

// Bounds returns a copy of the partition bounds: partition i is rows
// [Bounds()[i], Bounds()[i+1]), as spike.Partitions(N, P).
func (p *Plan[T]) Bounds() []int { return append([]int(nil), p.l.Bounds...) }

// Method is the method of the plan (spike.Truncated or BlockJacobi).
func (p *Plan[T]) Method() spike.Method { return p.l.Method }

// ULBlock is spike.Options.ULBlock as given (0: whole partitions).
func (p *Plan[T]) ULBlock() int { return p.l.ULBlock }

// Kernel names the partition factorization kernel the plan launches.
func (p *Plan[T]) Kernel() string { return p.kern.factor.Kernel().Name() }

// Describe says how the plan runs: its factorization kernel, P and
// device.
func (p *Plan[T]) Describe() string {
	return fmt.Sprintf("%s, %d partitions, on %s", p.Kernel(), p.l.P, p.dev.Name())
}

// Blocked reports whether the plan takes the blocked path
// (tuning.SpikeBlocked).
func (p *Plan[T]) Blocked() bool { return p.l.Factor.Blocked }

// Boosts returns the partitions where the last factorization boosted a
// pivot, as spike.Factorization.Boosts (rows from the CPU twins of the
// boosted partitions; nil when none was).
func (p *Plan[T]) Boosts() []spike.Boost {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.boosts
}

// BoostCount is the number of boosted pivots of the last factorization
// (LU and UL).
func (p *Plan[T]) BoostCount() int {
	c := 0
	for _, b := range p.Boosts() {
		c += b.LU.Count() + b.UL.Count()
	}
	return c
}

// ReducedBoosts returns the interfaces whose reduced matrix R̄_i was
// exactly singular and got a boosted pivot.
func (p *Plan[T]) ReducedBoosts() []int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.reduced
}

// Factor computes the factorization of the band matrix held in a (its
// tall-and-thin storage, banded.Band's Data: (2K+1)·N elements), leaving a
// unchanged. Errors are spike.Factor's, worded alike: a non-finite entry
// of A (its row and column), a block factorization's zero pivot (boosting
// off) or overflow (partition, row), a reduced system's non-finite pivot;
// the plan then has no factorization. When pivots were boosted, a is read
// back to list their rows (Boosts).
func (p *Plan[T]) Factor(ctx context.Context, a *cuda.Buffer[T]) error {
	if err := bandedgpu.CheckBand(a, p.l.N, p.l.K, true); err != nil {
		return err
	}
	return p.factor(ctx, a, nil)
}

// FactorBand uploads m (of the plan's N and K) and factors it like Factor.
func (p *Plan[T]) FactorBand(ctx context.Context, m *banded.Band[T]) error {
	if m == nil || m.N != p.l.N || m.K != p.l.K || len(m.Data) != (2*m.K+1)*m.N {
		if m == nil {
			return fmt.Errorf("%w: nil band matrix", banded.ErrShape)
		}
		return fmt.Errorf("%w: band N=%d K=%d len(Data)=%d, plan N=%d K=%d", banded.ErrShape, m.N, m.K, len(m.Data), p.l.N, p.l.K)
	}
	p.mu.Lock()
	var err error
	if p.stageA == nil && !p.closed {
		p.stageA, err = cuda.Alloc[T](p.dev, len(m.Data))
	}
	stage := p.stageA
	p.mu.Unlock()
	if err != nil {
		return err
	}
	if stage == nil {
		return tridiag.ErrClosed
	}
	if err := stage.CopyFrom(m.Data); err != nil {
		return err
	}
	return p.factor(ctx, stage, m)
}

func (p *Plan[T]) factor(ctx context.Context, a *cuda.Buffer[T], host *banded.Band[T]) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return tridiag.ErrClosed
	}
	p.factored, p.boosts, p.reduced = false, nil, nil
	l := p.l
	var hdr int32
	err := p.dev.Enqueue(func() error {
		if err := p.enqueueFactor(a.Ptr()); err != nil {
			_ = p.stream.Synchronize()
			return err
		}
		if err := p.stream.Synchronize(); err != nil {
			return fmt.Errorf("cuda: SPIKE factorization N=%d K=%d P=%d: %w", l.N, l.K, l.P, err)
		}
		if err := cu.MemcpyDtoH(unsafe.Pointer(&hdr), p.status+cu.DevicePtr(4*l.StHdr), 4); err != nil {
			return fmt.Errorf("cuda: reading status: %w", err)
		}
		if hdr == 0 {
			return nil
		}
		if err := cu.MemcpyDtoH(unsafe.Pointer(&p.st[0]), p.status, int64(4*l.StLen)); err != nil {
			return fmt.Errorf("cuda: reading status: %w", err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if hdr == 0 {
		p.factored = true
		return nil
	}
	if err := l.FactorError(p.st); err != nil {
		return err
	}
	lu, ul, red := l.BoostCounts(p.st)
	if host == nil {
		host = &banded.Band[T]{N: l.N, K: l.K, Data: make([]T, a.Len())}
		if err := a.CopyTo(host.Data); err != nil {
			return err
		}
	}
	b, err := Boosts(l, lu, ul, host, p.opts)
	if err != nil {
		return err
	}
	p.boosts, p.reduced, p.factored = b, red, true
	return nil
}

// copyGrid is the grid of the element-wise kernels over n elements.
func copyGrid(n int) int { return max(1, min((n+255)/256, 1<<16)) }

// enqueueFactor launches the factorization of a (device thread).
func (p *Plan[T]) enqueueFactor(a cu.DevicePtr) error {
	l, d, s, ks := p.l, p.dev, p.stream, &p.kern
	n, k, P := int32(l.N), int32(l.K), int32(l.P)
	if err := cu.MemsetD32Async(p.status, 0, int64(l.StBad), s); err != nil {
		return fmt.Errorf("cuda: clearing status: %w", err)
	}
	bad := p.status + cu.DevicePtr(4*l.StBad)
	if err := cu.MemsetD32Async(bad, 0xffffffff, 2, s); err != nil {
		return fmt.Errorf("cuda: clearing status: %w", err)
	}
	var ul2 cu.DevicePtr
	if l.Coupled && !l.Compact {
		ul2 = p.ul
	}
	if err := ks.copy.Launch(d, cuda.Dim3{X: copyGrid(l.N), Y: 2*l.K + 1}, cuda.Dim3{X: 256}, 0, s, &kernels.BandSpikeCopyArgs{
		Src: a, Dst1: p.lu, Dst2: ul2, N: n, K: k, Bad: bad,
	}); err != nil {
		return err
	}
	if err := p.mark("copy"); err != nil {
		return err
	}
	if l.Compact {
		if err := ks.ulblock.Launch(d, cuda.Dim3{X: copyGrid(l.ULN), Y: 2*l.K + 1}, cuda.Dim3{X: 256}, 0, s, &kernels.BandSpikeUlblockArgs{
			Src: a, N: n, K: k, Bounds: p.bounds, L: int32(l.ULBlock), Dst: p.ul, M2: int32(l.ULN),
		}); err != nil {
			return err
		}
		if err := p.mark("ulblock"); err != nil {
			return err
		}
	}
	fblock := cuda.Dim3{X: l.Factor.Threads}
	if err := ks.factor.Launch(d, cuda.Dim3{X: l.P}, fblock, l.Factor.Shared, s, &kernels.BandFactorWindowArgs{
		A: p.lu, N: n, K: k, Bounds: p.bounds, P: P, UL: 0, Tol: l.Tol, Status: p.status + cu.DevicePtr(4*l.StLU),
	}); err != nil {
		return err
	}
	if err := p.mark("LU"); err != nil {
		return err
	}
	var ulst, rst cu.DevicePtr
	nI := int32(l.P - 1)
	if l.Coupled {
		ulst, rst = p.status+cu.DevicePtr(4*l.StUL), p.status+cu.DevicePtr(4*l.StRed)
		if err := ks.factor.Launch(d, cuda.Dim3{X: l.P - 1}, fblock, l.Factor.Shared, s, &kernels.BandFactorWindowArgs{
			A: p.ul, N: int32(l.ULN), K: k, Bounds: p.ubounds, P: nI, UL: 1, Tol: l.Tol, Status: ulst,
		}); err != nil {
			return err
		}
		if err := p.mark("UL"); err != nil {
			return err
		}
		ulL := int32(0)
		if l.Compact {
			ulL = int32(l.ULBlock)
		}
		es := int(bandedgpu.ElemSize[T]())
		if l.Factor.Blocked {
			if err := ks.tipsBlocked.Launch(d, cuda.Dim3{X: l.P - 1, Y: 2, Z: (l.K + l.Factor.TipsColumns - 1) / l.Factor.TipsColumns},
				cuda.Dim3{X: l.Factor.TipsThreads}, l.Factor.TipsShared, s, &kernels.BandSpikeTipsBlockedArgs{
					LU: p.lu, N: n, K: k, Bounds: p.bounds, Ulf: p.ul, Nul: int32(l.ULN), L: ulL, Vout: p.v, Wout: p.w,
				}); err != nil {
				return err
			}
			if err := p.mark("tips"); err != nil {
				return err
			}
			t32 := (l.K + 31) / 32
			if err := ks.rform.Launch(d, cuda.Dim3{X: t32, Y: t32, Z: l.P - 1}, cuda.Dim3{X: 256}, 0, s, &kernels.BandSpikeRformArgs{
				V: p.v, W: p.w, K: k, Rout: p.r,
			}); err != nil {
				return err
			}
			if err := p.mark("rform"); err != nil {
				return err
			}
			if err := ks.rlu.Launch(d, cuda.Dim3{X: l.P - 1}, cuda.Dim3{X: l.ReducedThreads}, 0, s, &kernels.BandSpikeRluArgs{
				Rout: p.r, K: k, NI: nI, Piv: p.piv, Tau: l.Tau, Rstat: rst,
			}); err != nil {
				return err
			}
		} else {
			if err := ks.tips.Launch(d, cuda.Dim3{X: l.P - 1, Y: 2}, cuda.Dim3{X: l.K}, l.K*l.K*es, s, &kernels.BandSpikeTipsArgs{
				LU: p.lu, N: n, K: k, Bounds: p.bounds, Ulf: p.ul, Nul: int32(l.ULN), L: ulL, Vout: p.v, Wout: p.w,
			}); err != nil {
				return err
			}
			if err := p.mark("tips"); err != nil {
				return err
			}
			if err := ks.reduced.Launch(d, cuda.Dim3{X: l.P - 1}, cuda.Dim3{X: l.ReducedThreads}, l.K*l.K*es, s, &kernels.BandSpikeReducedArgs{
				V: p.v, W: p.w, K: k, NI: nI, Rout: p.r, Piv: p.piv, Tau: l.Tau, Rstat: rst,
			}); err != nil {
				return err
			}
		}
		if err := p.mark("reduced"); err != nil {
			return err
		}
	}
	return ks.flags.Launch(d, cuda.Dim3{X: 1}, cuda.Dim3{X: 1}, 0, s, &kernels.BandSpikeFlagsArgs{
		Lust: p.status + cu.DevicePtr(4*l.StLU), PL: P, Ulst: ulst, PU: nI, Rst: rst, NI: nI, Bad: bad, Hdr: p.status + cu.DevicePtr(4*l.StHdr),
	})
}

func (p *Plan[T]) checkVec(b *cuda.Buffer[T], what string) error {
	if b == nil || b.Ptr() == 0 {
		return fmt.Errorf("%w: nil or freed %s buffer", banded.ErrShape, what)
	}
	if b.Len() != p.l.N {
		return fmt.Errorf("%w: %s buffer of %d elements for N=%d", banded.ErrShape, what, b.Len(), p.l.N)
	}
	return nil
}

// Solve solves A·x = b with the factorization, b and x in device memory
// (N elements each; x may be b, other overlaps are not allowed; b is
// otherwise unchanged). It returns when x is ready. A NaN or ±Inf in b
// gives an error naming its first row (x then holds NaN/Inf), as
// spike.Factorization.Solve.
func (p *Plan[T]) Solve(ctx context.Context, b, x *cuda.Buffer[T]) error {
	if err := p.checkVec(b, "right-hand side"); err != nil {
		return err
	}
	if err := p.checkVec(x, "solution"); err != nil {
		return err
	}
	if b.Ptr() != x.Ptr() {
		bytes := cu.DevicePtr(int64(p.l.N) * bandedgpu.ElemSize[T]())
		if b.Ptr() < x.Ptr()+bytes && x.Ptr() < b.Ptr()+bytes {
			return fmt.Errorf("%w: b and x overlap without being the same buffer", banded.ErrShape)
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return tridiag.ErrClosed
	}
	if !p.factored {
		return ErrNotFactored
	}
	if err := p.dev.Enqueue(func() error {
		if err := p.enqueueSolve(b.Ptr(), x.Ptr()); err != nil {
			return err
		}
		return p.sig.Enqueue(p.dev, p.stream, p.status+cu.DevicePtr(4*p.l.StFlagB))
	}); err != nil {
		_ = p.dev.Enqueue(func() error { return p.stream.Synchronize() })
		return err
	}
	failed, err := p.sig.Wait(p.dev, p.stream, func() string {
		return fmt.Sprintf("SPIKE solve N=%d K=%d P=%d", p.l.N, p.l.K, p.l.P)
	})
	if err != nil || !failed {
		return err
	}
	l := p.l
	var serr error
	if err := p.dev.Enqueue(func() error {
		if err := cu.MemcpyDtoH(unsafe.Pointer(&p.st[l.StBadB]), p.status+cu.DevicePtr(4*l.StBadB), 12); err != nil {
			return fmt.Errorf("cuda: reading status: %w", err)
		}
		serr = l.SolveError(p.st)
		if err := cu.MemsetD32(p.status+cu.DevicePtr(4*l.StBadB), 0xffffffff, 2); err != nil {
			return fmt.Errorf("cuda: clearing status: %w", err)
		}
		return cu.MemsetD32(p.status+cu.DevicePtr(4*l.StFlagB), 0, 1)
	}); err != nil {
		return err
	}
	return serr
}

// Apply is Solve (z = M⁻¹·r, M the factored matrix), so that a
// Plan[float64] is a krylov.Preconditioner of device vectors for
// krylov.BiCGStab2 on a GPU Space; a Space in deferred mode must be
// synced before (the plan runs on its own stream). For the
// mixed-precision strategy of SPIKE::GPU (§4) wrap a Plan[float32]'s
// Solve with the GPU Krylov package's NewMixedPrecision.
func (p *Plan[T]) Apply(ctx context.Context, r, z *cuda.Buffer[T]) error { return p.Solve(ctx, r, z) }

// enqueueSolve launches the solve of b into x (device thread).
func (p *Plan[T]) enqueueSolve(b, x cu.DevicePtr) error {
	l, d, s, ks := p.l, p.dev, p.stream, &p.kern
	n, k := int32(l.N), int32(l.K)
	bad, flag := p.status+cu.DevicePtr(4*l.StBadB), p.status+cu.DevicePtr(4*l.StFlagB)
	sweep := func(v cu.DevicePtr) error {
		if err := ks.sweep.Launch(d, cuda.Dim3{X: l.P, Y: 1}, cuda.Dim3{X: l.K}, (l.K+1)*int(bandedgpu.ElemSize[T]()), s, &kernels.BandSolveWindowArgs{
			A: p.lu, N: n, K: k, Bounds: p.bounds, UL: 0, B: v, Nrhs: 1, Ldb: int64(l.N), Sweeps: 3,
		}); err != nil {
			return err
		}
		return p.mark("sweep")
	}
	if !l.Coupled {
		if err := ks.vcopy.Launch(d, cuda.Dim3{X: copyGrid(l.N)}, cuda.Dim3{X: 256}, 0, s, &kernels.BandSpikeVcopyArgs{
			Src: b, Dst: x, N: n, Bad: bad, Flag: flag,
		}); err != nil {
			return err
		}
		return sweep(x)
	}
	if err := ks.vcopy.Launch(d, cuda.Dim3{X: copyGrid(l.N)}, cuda.Dim3{X: 256}, 0, s, &kernels.BandSpikeVcopyArgs{
		Src: b, Dst: p.g, N: n, Bad: bad, Flag: flag,
	}); err != nil {
		return err
	}
	if err := p.mark("vcopy"); err != nil {
		return err
	}
	if err := sweep(p.g); err != nil {
		return err
	}
	if x != b {
		if err := cu.MemcpyDtoDAsync(x, b, int64(l.N)*bandedgpu.ElemSize[T](), s); err != nil {
			return fmt.Errorf("cuda: copying b: %w", err)
		}
	}
	if err := ks.rsolve.Launch(d, cuda.Dim3{X: l.P - 1}, cuda.Dim3{X: l.K}, 3*l.K*int(bandedgpu.ElemSize[T]()), s, &kernels.BandSpikeRsolveArgs{
		LU: p.lu, N: n, K: k, Bounds: p.bounds, V: p.v, W: p.w, RF: p.r, Piv: p.piv, G: p.g, X: x,
	}); err != nil {
		return err
	}
	if err := p.mark("rsolve"); err != nil {
		return err
	}
	return sweep(x)
}

// SolveHost copies b to the device, solves and copies x back (x may be b).
func (p *Plan[T]) SolveHost(ctx context.Context, b, x []T) error {
	if len(b) != p.l.N || len(x) != p.l.N {
		return fmt.Errorf("%w: Solve with len(b)=%d, len(x)=%d for N=%d", banded.ErrShape, len(b), len(x), p.l.N)
	}
	p.mu.Lock()
	var err error
	if p.stageB == nil && !p.closed {
		p.stageB, err = cuda.Alloc[T](p.dev, p.l.N)
	}
	stage := p.stageB
	p.mu.Unlock()
	if err != nil {
		return err
	}
	if stage == nil {
		return tridiag.ErrClosed
	}
	if err := stage.CopyFrom(b); err != nil {
		return err
	}
	serr := p.Solve(ctx, stage, stage)
	if serr != nil && !errors.Is(serr, banded.ErrNonFinite) {
		return serr
	}
	if err := stage.CopyTo(x); err != nil {
		return err
	}
	return serr
}

// Spikes returns copies of V_i⁽ᵇ⁾ and W_{i+1}⁽ᵗ⁾ of interface i (0 ≤ i <
// P−1) as K×K column-major blocks, like spike.Factorization.Spikes (nil
// for BlockJacobi or P = 1).
func (p *Plan[T]) Spikes(i int) (v, w []T, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, nil, tridiag.ErrClosed
	}
	if !p.factored {
		return nil, nil, ErrNotFactored
	}
	if i < 0 || i >= p.l.P-1 {
		return nil, nil, fmt.Errorf("cuda: Spikes(%d) with %d interfaces", i, p.l.P-1)
	}
	if !p.l.Coupled {
		return nil, nil, nil
	}
	kk := p.l.K * p.l.K
	v, w = make([]T, kk), make([]T, kk)
	off := cu.DevicePtr(int64(i*kk) * bandedgpu.ElemSize[T]())
	err = p.dev.Enqueue(func() error {
		if err := cu.MemcpyDtoH(unsafe.Pointer(&v[0]), p.v+off, int64(kk)*bandedgpu.ElemSize[T]()); err != nil {
			return err
		}
		return cu.MemcpyDtoH(unsafe.Pointer(&w[0]), p.w+off, int64(kk)*bandedgpu.ElemSize[T]())
	})
	return v, w, err
}

// Close frees the plan's device memory.
func (p *Plan[T]) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil
	}
	p.closed = true
	for _, b := range []*cuda.Buffer[T]{p.stageA, p.stageB} {
		if b != nil {
			_ = b.Free()
		}
	}
	return p.dev.Enqueue(func() error {
		if p.stream != (cu.Stream{}) {
			_ = p.stream.Synchronize()
			_ = p.stream.Destroy()
		}
		for _, ptr := range []cu.DevicePtr{p.lu, p.ul, p.v, p.w, p.r, p.piv, p.g, p.bounds, p.ubounds, p.status} {
			if ptr != 0 {
				_ = cu.MemFree(ptr)
			}
		}
		p.sig.Free()
		return nil
	})
}
