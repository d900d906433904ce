//go:build cuda

package tridiaggpu

// #cgo LDFLAGS: -lcuda
// #include <cuda.h>
import "C"

import (
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"gorgonia.org/cu"

	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/internal/gpu/done"
	"github.com/bandsolve/bandsolve/internal/gpu/kernels"
	"github.com/bandsolve/bandsolve/internal/idle"
	"github.com/bandsolve/bandsolve/tridiag"
	"github.com/bandsolve/bandsolve/tuning"
)

// residentStop is the stop bit of a resident grid's command word.
const residentStop = uint64(1) << 32

// resident is a plan's resident grid (partition_resident_p<P>_*, see
// ptx/src/partition.cuh): the partition launch of the plan, started once
// and kept on the GPU, which takes solves from a mailbox in mapped host
// memory instead of a launch per solve.
type resident struct {
	dev     *gpu
	mu      sync.Mutex // guards what follows and the command word
	mbox    *[16]uint64
	mboxDev cu.DevicePtr
	dbox    cu.DevicePtr // the device mailbox (block 0 copies mbox there)
	stream  cu.Stream    // non-blocking: the legacy default stream never waits for the grid
	kernel  *directKernel
	family  kernels.PartitionResidentP
	args    kernels.PartitionResidentPArgs // Last set at each start
	slots   [kernels.PartitionResidentPSlots]uint64
	running bool
	last    uint32      // low word of the last command written
	sent    [9]uint64   // the arguments in the mailbox
	idle    *idle.Timer // stops the grid once idle; armed while it runs
}

// SetResident switches the plan's solves to a resident grid when idle > 0
// (a persistent kernel that waits for solves in mapped host memory, so
// that a solve costs no launch) and back to launches when idle ≤ 0. The
// grid starts with the next solve and stops idle after the last one, so
// that it holds no SMs between bursts of solves; Device.Synchronize,
// Buffer.Free, Device.Close and Plan.Close stop it first.
//
// A resident solve reads its buffers without stream ordering: whatever
// wrote them must be complete, as it is when this package's calls return
// (Buffer.CopyFrom and CopyFromBuffer wait for their copies while a grid
// is resident). Work of other CUDA code on the buffers must be
// synchronised before the solve.
//
// A plan on the caller's stream (SetStream) cannot be resident: SetResident
// fails for it with tridiag.ErrOptions.
//
// Only plans of the partition method with chunks of 16 rows (Auto's and
// tridiag.Partition's; Auto's 4 or 8 for small batches) of at most 512
// threads a block (the resident kernels' launch bounds), not cyclic, whose
// blocks all fit on the device at once (tuning.ResidentBlocks per
// multiprocessor; a few hundred blocks on an H100, so batches of small
// systems up to thousands of them), can be resident; others get
// tridiag.ErrOptions. Auto's plans of small batches (chunks of 4 or 8,
// tuning.LatencyChunk) are resident with their own chunks: the same bits
// resident or launched. Where their constant solves take chunks of 16
// (tuning.LatencyConstChunk16), or where the short-chunk blocks do not
// all fit but those of chunks of 16 do, the plan takes chunks of 16 for
// all its solves, launched ones too.
func (p *Plan[T]) SetResident(idle time.Duration) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return tridiag.ErrClosed
	}
	if idle <= 0 {
		if p.res == nil {
			return nil
		}
		err := p.res.close()
		p.res = nil
		return err
	}
	if p.res != nil {
		p.res.idle.SetIdle(idle)
		return nil
	}
	if p.ext != nil {
		return fmt.Errorf("%w: a resident plan takes its solves on a persistent grid, not on a stream; this %s plan of N=%d G=%d runs on the caller's stream (SetStream(nil) first)",
			tridiag.ErrOptions, p.algo, p.spec.N, p.spec.G)
	}
	if _, ok := p.kp.(*segmentPlan); ok {
		return fmt.Errorf("%w: a resident plan holds each system in one block; this plan cuts systems of N=%d into segments of several blocks (Options.SegmentRows ≥ N keeps one block per system)",
			tridiag.ErrOptions, p.spec.N)
	}
	pp, ok := p.kp.(*partitionPlan)
	_, gathered := p.kp.(*transposePlan)
	_, lstream := p.kp.(*lanesStreamPlan)
	if _, lseg := p.kp.(*lanesSegPlan); gathered || lseg || lstream || ok && pp.lanes() {
		// The resident grid runs the kernel with the systems in shared
		// memory (partition_resident_p16_* is built on it), one block a
		// system, in place: for the lanes kernel's batches the same bits,
		// for gathered ones and lanes segments (several blocks or launches
		// a solve) partition.Solve's,
		// which the contiguous plan gives where it runs one block a system.
		var err error
		if pp, err = newSharedPartitionPlan(p.dev, p.spec, elemSize[T]() == 8, 16); err != nil {
			return fmt.Errorf("%w: a resident plan holds each system in one block: %w", tridiag.ErrOptions, err)
		}
		ok = true
	}
	f64 := elemSize[T]() == 8
	if !ok || !residentChunk(pp) || pp.cfg.Threads > residentMaxThreads(pp.cfg.Chunk, f64) {
		return fmt.Errorf("%w: a resident plan needs the partition method with chunks of 16 rows (or Auto's 4 or 8 for small batches) and at most %d threads a block (%s plan of N=%d G=%d)",
			tridiag.ErrOptions, residentMaxThreads(16, f64), p.algo, p.spec.N, p.spec.G)
	}
	// replaced: the grid runs Auto's small batch with chunks of 16; the
	// plan takes them too once the grid runs (launched solves then keep
	// the resident grid's bits).
	replaced := false
	if cp := pp.constPlan(); cp != pp {
		// The resident grid runs one kernel for general and constant
		// solves: the chunks of 16 of the plan's constant solves.
		pp, replaced = cp, true
	}
	// Every block of the grid must be on the device at once: block 0
	// relays the solves to the others, which wait for them, so a block
	// that is not scheduled would never be and the solve would hang.
	if err := residentFits(p.dev, pp, p.spec.G, f64); err != nil {
		// Auto's short chunks for a small batch take more threads a
		// block (FP64 N = 2048, G = 300: chunks of 8, 256 threads, two
		// blocks an SM): chunks of 16 where those fit.
		if !pp.latency {
			return err
		}
		p16, err16 := newSharedPartitionPlan(p.dev, p.spec, f64, 16)
		if err16 != nil || residentFits(p.dev, p16, p.spec.G, f64) != nil {
			return err
		}
		pp, replaced = p16, true
	}
	r, err := newResident(p.dev, pp, p.spec, f64, p.status, p.sig.Word(), idle)
	if err != nil {
		return err
	}
	if replaced {
		p.kp = pp
	}
	p.res = r
	return nil
}

// residentChunk reports whether a resident kernel runs pp's chunks: 16
// rows, or 4 and 8 for Auto's small batches (the latency variant of route.Partition).
func residentChunk(pp *partitionPlan) bool {
	c := pp.cfg.Chunk
	return pp.sharedChunk(c) && (c == 16 || pp.latency && (c == 4 || c == 8))
}

// residentKernel is the resident kernel for pp's chunks.
func residentKernel(pp *partitionPlan, f64 bool) (kernels.PartitionResidentP, error) {
	return kernels.PartitionResidentPFor(pp.cfg.Chunk, f64)
}

// residentMaxThreads is the block size the resident kernel of chunks of
// chunk rows is built for (its launch bounds; 0 where there is none).
func residentMaxThreads(chunk int, f64 bool) int {
	k, err := kernels.PartitionResidentPFor(chunk, f64)
	if err != nil {
		return 0
	}
	return k.Kernel().Info().MaxThreads
}

// newResident allocates the mailbox and the stream of a resident grid.
func newResident(d *gpu, pp *partitionPlan, spec tridiag.Spec, f64 bool, status, word cu.DevicePtr, idleFor time.Duration) (*resident, error) {
	r := &resident{dev: d}
	r.idle = idle.New(idleFor, func() { _ = r.Stop() })
	err := d.Enqueue(func() error {
		p, dp, err := cuda.AllocMapped(128, "a resident plan's mailbox")
		if err != nil {
			return err
		}
		r.mbox, r.mboxDev = (*[16]uint64)(p), dp
		if r.dbox, err = cu.MemAlloc(128); err != nil {
			return fmt.Errorf("cuda: allocating a resident plan's device mailbox: %w", err)
		}
		for i := range r.mbox {
			atomic.StoreUint64(&r.mbox[i], 0)
		}
		if r.stream, err = cu.MakeStream(cu.NonBlocking); err != nil {
			return fmt.Errorf("cuda: creating a resident plan's stream: %w", err)
		}
		k, err := residentKernel(pp, f64)
		r.family = k
		if err != nil {
			return err
		}
		r.kernel, err = d.prepareDirect(k.Kernel(), pp.cfg.Blocks(spec.G), pp.cfg.Threads, pp.cfg.SharedBytes)
		return err
	})
	if err != nil {
		r.free()
		return nil, err
	}
	r.args = kernels.PartitionResidentPArgs{
		N: int32(spec.N), G: int32(spec.G), ES: int64(spec.Layout.ElemStride), BS: int64(spec.Layout.BatchStride),
		Status: status, Spb: int32(pp.cfg.SystemsPerBlock), Tps: int32(pp.cfg.ThreadsPerSystem),
		Word: word, Mbox: r.mboxDev, Dbox: r.dbox}
	d.AddPersistent(r)
	return r, nil
}

// submit posts the solve la with sequence number seq, starting the grid
// if it is not running. The caller holds the plan's lock.
func (r *resident) submit(la *launchArgs, seq uint32) error {
	args := [9]uint64{uint64(la.a), uint64(la.b), uint64(la.c), uint64(la.d), uint64(la.x),
		math.Float64bits(la.ca), math.Float64bits(la.cb), math.Float64bits(la.cc), uint64(uint32(la.isConst()))}
	r.mu.Lock()
	defer r.mu.Unlock()
	cmd := uint64(seq)
	if !r.running || args != r.sent {
		// New arguments (a new grid has none): written before the
		// command, which tells the grid to read them (bit 0).
		for i, v := range args {
			atomic.StoreUint64(&r.mbox[1+i], v)
		}
		r.sent = args
		cmd |= 1
	}
	atomic.StoreUint64(&r.mbox[0], cmd)
	if !r.running {
		// The device mailbox starts at the last command served, without
		// stop (copied from the spare mbox[15] in stream order).
		r.args.Last = r.last
		r.family.Pack(&r.args, r.slots[:])
		atomic.StoreUint64(&r.mbox[15], uint64(r.last))
		if err := r.dev.Enqueue(func() error {
			// The grid's non-blocking stream does not wait for the legacy
			// default stream, and copies made there while no grid ran
			// (Buffer.CopyFrom: from pageable memory cuMemcpyHtoD returns
			// before its data lands; SyncLegacyStream waits only while a
			// grid runs) may still be in flight, and the grid's first
			// solve would read stale inputs (TestResident).
			if rc := C.cuStreamSynchronize(nil); rc != C.CUDA_SUCCESS {
				return fmt.Errorf("cuda: synchronising the default stream before a resident grid starts: %w", cuda.DriverError(rc))
			}
			if rc := C.cuMemcpyHtoDAsync(C.CUdeviceptr(r.dbox), unsafe.Pointer(&r.mbox[15]), 8,
				*(*C.CUstream)(unsafe.Pointer(&r.stream))); rc != C.CUDA_SUCCESS {
				return fmt.Errorf("cuda: clearing a resident grid's device mailbox: %w", cuda.DriverError(rc))
			}
			return nil
		}); err != nil {
			return err
		}
		if err := r.dev.LaunchDirect(r.kernel.k, r.stream, r.slots[:]); err != nil {
			return err
		}
		r.running = true
		r.dev.PersistentRunning(1)
		r.idle.Start()
	}
	r.last = uint32(cmd)
	return nil
}

// wait returns when the solve with sequence number of s.seq is complete,
// with its status flag: it polls the completion word, for up to done.SpinFor
// without rest, then with pauses in which it checks that the grid did not
// fail or end.
func (r *resident) wait(s *done.Signal, what func() string) (bool, error) {
	want := s.Seq()
	start := time.Now()
	for i := 1; ; i++ {
		if v := s.Load(); v&^1 == want {
			return v&1 != 0, nil
		}
		if i%64 == 0 && time.Since(start) > done.SpinFor {
			break
		}
	}
	for {
		if v := s.Load(); v&^1 == want {
			return v&1 != 0, nil
		}
		var rc C.CUresult
		if err := r.dev.Enqueue(func() error {
			rc = C.cuStreamQuery(*(*C.CUstream)(unsafe.Pointer(&r.stream)))
			return nil
		}); err != nil {
			return false, err
		}
		if v := s.Load(); v&^1 == want {
			return v&1 != 0, nil
		}
		switch rc {
		case C.CUDA_ERROR_NOT_READY:
			time.Sleep(20 * time.Microsecond)
			runtime.Gosched()
		case C.CUDA_SUCCESS:
			return false, fmt.Errorf("cuda: %s: the resident grid ended without completing the solve", what())
		default:
			return false, fmt.Errorf("cuda: %s (resident): %w", what(), cuda.DriverError(rc))
		}
	}
}

// touch restarts the idle countdown after a solve (one atomic store).
func (r *resident) touch() { r.idle.Touch() }

// Stop ends the grid after any solve posted, and waits for it to end
// (cuda.Persistent). It needs no plan lock: the stop bit joins the last
// command, which the grid serves first if it has not yet.
func (r *resident) Stop() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.running {
		return nil
	}
	atomic.StoreUint64(&r.mbox[0], uint64(r.last)|residentStop)
	err := r.dev.Enqueue(func() error { return r.stream.Synchronize() })
	r.running = false
	r.dev.PersistentRunning(-1)
	r.idle.Disarm()
	if err != nil {
		return fmt.Errorf("cuda: stopping a resident grid: %w", err)
	}
	return nil
}

// close stops the grid and frees the mailbox and the stream.
func (r *resident) close() error {
	r.idle.Disarm()
	err := r.Stop()
	r.dev.RemovePersistent(r)
	r.free()
	return err
}

func (r *resident) free() {
	_ = r.dev.Enqueue(func() error {
		if r.stream != (cu.Stream{}) {
			_ = r.stream.Destroy()
			r.stream = cu.Stream{}
		}
		if r.mbox != nil {
			C.cuMemFreeHost(unsafe.Pointer(r.mbox))
			r.mbox = nil
		}
		if r.dbox != 0 {
			_ = cu.MemFree(r.dbox)
			r.dbox = 0
		}
		return nil
	})
}

// residentFits reports an error wrapping tridiag.ErrOptions unless the
// resident grid of plan pp for g systems fits on the device at once, with
// the registers and static shared memory the driver gave its kernel.
func residentFits(d *gpu, pp *partitionPlan, g int, f64 bool) error {
	k, err := residentKernel(pp, f64)
	if err != nil {
		return fmt.Errorf("%w: %w", tridiag.ErrOptions, err)
	}
	name := k.Kernel().Name()
	var regs, static int
	if err := d.Enqueue(func() error {
		var err error
		if regs, err = d.KernelAttr(name, cu.NumRegs); err != nil {
			return err
		}
		static, err = d.KernelAttr(name, cu.SharedSizeBytes)
		return err
	}); err != nil {
		return fmt.Errorf("cuda: resident kernel attributes: %w", err)
	}
	blocks := pp.cfg.Blocks(g)
	fit := d.props.SMs * tuning.ResidentBlocks(d.props, pp.cfg.Threads, pp.cfg.SharedBytes+static, regs)
	if blocks > fit {
		return fmt.Errorf("%w: a resident plan needs all its blocks on the device at once: %d blocks of %d threads (G=%d) for at most %d on %s",
			tridiag.ErrOptions, blocks, pp.cfg.Threads, g, fit, d.props.Name)
	}
	return nil
}
