//go:build cudaemu

// partemu runs bandsolve's partition kernels on the CPU — the segmented
// kernels (segment_p16_f32/_f64 of ptx/src/segment.cuh and, with the
// systems across the lanes, lseg_p16_f32/_f64 of lseg.cuh) and the kernels
// that solve whole systems (partition_p*, partition_const_p16,
// partition_lanes_p16, partition_stream_p16, partition_cstream_*) —
// compiled as host C++ with a fiber emulation of CUDA in which the blocks
// of a grid run concurrently (partemu.cc), so that their logic can be
// tested against their CPU twins, partition.SolveSegmented and
// partition.Solve, bit for bit and without a GPU.
// It needs cgo and a C++17 compiler and builds only with the cudaemu tag:
//
//	go test -tags cudaemu ./internal/partemu
//
// (scripts/test-partemu.sh, which also rebuilds it when ptx/src changes).
// partemu.cc turns off floating-point contraction, as the PTX uses
// -fmad=false, so the emulated kernel rounds every operation as the GPU
// does.
package partemu

/*
#cgo CXXFLAGS: -std=c++17 -O2 -fno-strict-aliasing -DPART_EMU -I${SRCDIR} -I${SRCDIR}/../../ptx/src
#include <stdint.h>
typedef long long i64;
typedef unsigned long long u64;
const char *emu_error(void);
int emu_segment_f32(const float *a, const float *b, const float *c, const float *d, float *x, int n, int G, i64 es, i64 bs, float ca, float cb, float cc, int isConst, int *status, int M, int Q, int mode, u64 *ctl, float *RA, float *RB, float *RC, float *RD, float *XR, int *nst, unsigned *word, unsigned seq, int threads, int smem, int resident, u64 seed);
int emu_part_f32(int kernel, const float *a, const float *b, const float *c, const float *d, float *x, int n, int G, i64 es, i64 bs, float ca, float cb, float cc, int isConst, int *status, int spb, int tps, int grid, int threads, int smem, int resident, u64 seed);
int emu_part_f64(int kernel, const double *a, const double *b, const double *c, const double *d, double *x, int n, int G, i64 es, i64 bs, double ca, double cb, double cc, int isConst, int *status, int spb, int tps, int grid, int threads, int smem, int resident, u64 seed);
int emu_segment_f64(const double *a, const double *b, const double *c, const double *d, double *x, int n, int G, i64 es, i64 bs, double ca, double cb, double cc, int isConst, int *status, int M, int Q, int mode, u64 *ctl, double *RA, double *RB, double *RC, double *RD, double *XR, int *nst, unsigned *word, unsigned seq, int threads, int smem, int resident, u64 seed);
int emu_lseg_f32(const float *a, const float *b, const float *c, const float *d, float *x, int n, int G, i64 es, i64 bs, float ca, float cb, float cc, int isConst, int *status, int M, int Q, int spb, int mode, u64 *ctl, float *RA, float *RB, float *RC, float *RD, float *XR, int *nst, unsigned *word, unsigned seq, int threads, int smem, int resident, u64 seed);
int emu_lseg_f64(const double *a, const double *b, const double *c, const double *d, double *x, int n, int G, i64 es, i64 bs, double ca, double cb, double cc, int isConst, int *status, int M, int Q, int spb, int mode, u64 *ctl, double *RA, double *RB, double *RC, double *RD, double *XR, int *nst, unsigned *word, unsigned seq, int threads, int smem, int resident, u64 seed);
*/
import "C"

import (
	"errors"
	"fmt"
	"sync"
	"unsafe"
)

// Float is float32 or float64.
type Float interface{ float32 | float64 }

func is64[T Float]() bool {
	var z T
	_, ok := any(z).(float64)
	return ok
}

func sizeOf[T Float]() int {
	if is64[T]() {
		return 8
	}
	return 4
}

func ptr[T any](s []T) unsafe.Pointer {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Pointer(&s[0])
}

// Modes of the kernel (SEG_ONEPASS, SEG_REDUCE, SEG_EXPAND of segment.cuh).
const (
	OnePass = 0 // one launch: the last block of a system solves its reduced system
	Reduce  = 1 // writes every system's 2Q reduced rows into RA … RD
	Expand  = 2 // recovers x from the solution of the reduced rows in XR
)

// Chunk is the kernel's chunk of rows (segment_p16).
const Chunk = 16

// SharedExtra is the reserve for a block's few shared values after its
// four arrays (SEG_SHARED_BYTES).
const SharedExtra = 256

// Plan is a batched launch of the segment kernel: G systems of N rows in
// segments of M rows, row i of system g at g·BS + i·ES. With Lanes > 0 it
// is a launch of the lanes segment kernel (lseg_p16_*), Lanes systems a
// block.
type Plan struct {
	N, G, M int
	ES, BS  int64
	Lanes   int
}

// Q is the number of segments of a system.
func (p Plan) Q() int { return (p.N + p.M - 1) / p.M }

// Threads is the block size, M/16 (times Lanes for the lanes kernel).
func (p Plan) Threads() int { return p.M / Chunk * max(1, p.Lanes) }

// Groups is the number of blocks a segment: ⌈G/Lanes⌉, or G.
func (p Plan) Groups() int {
	if p.Lanes > 0 {
		return (p.G + p.Lanes - 1) / p.Lanes
	}
	return p.G
}

// ctlWords is the number of control words: the ticket, four a group
// (system), and for the lanes kernel a key a system.
func (p Plan) ctlWords() int {
	if p.Lanes > 0 {
		return 1 + 4*p.Groups() + p.G
	}
	return 1 + 4*p.G
}

// LanesSharedBytes is the dynamic shared memory of a block of the lanes
// segment kernel with segments of m rows and s systems: the exchange (12
// values a chunk of 16 rows of each system), s LsegSys (8 + 24 elements'
// bytes) and the block's 16 bytes (lseg.cuh).
func LanesSharedBytes[T Float](m, s int) int {
	e := sizeOf[T]()
	return 12*(m/Chunk)*s*e + s*(8+24*e) + 16
}

// SharedBytes is the dynamic shared memory of a block of the segment kernel
// for segments of m rows: four arrays of W elements, W the segment's units
// (part_ss) rounded up to a multiple of 8 units of 16 bytes, then
// SharedExtra.
func SharedBytes[T Float](m int) int {
	r := 16 / sizeOf[T]() // rows per unit
	u := Chunk / r        // units per chunk
	ss := (m + Chunk - 1) / Chunk * u
	w := ((ss + 7) &^ 7) * r
	return 4*w*sizeOf[T]() + SharedExtra
}

// Coeffs are the coefficients: the arrays A, B, C in the batch layout, or
// the constants CA, CB, CC for every row when Const.
type Coeffs[T Float] struct {
	A, B, C    []T
	CA, CB, CC T
	Const      bool
}

// Workspace is a plan's device workspace: the control words (1 + 4G, or
// 1 + 4·Groups + G for the lanes kernel; never reset between launches), the reduced rows and their solution (G·2Q
// elements each), and the status of the nested solve (G + 2).
type Workspace[T Float] struct {
	Ctl                []uint64
	RA, RB, RC, RD, XR []T
	Nst                []int32
}

// NewWorkspace returns a zeroed workspace for p.
func NewWorkspace[T Float](p Plan) *Workspace[T] {
	r := p.G * 2 * p.Q()
	return &Workspace[T]{
		Ctl: make([]uint64, p.ctlWords()),
		RA:  make([]T, r), RB: make([]T, r), RC: make([]T, r), RD: make([]T, r), XR: make([]T, r),
		Nst: make([]int32, p.G+2),
	}
}

// Options are a launch's schedule in the emulation and its completion
// word.
type Options struct {
	// At most Resident blocks run at once (0: all); a free slot takes a
	// waiting block at random, from Seed.
	Resident int
	Seed     uint64
	// Word, when not nil, is the completion word of a self-signalling
	// launch (mapped host memory on the GPU; the plans pass it to the
	// one-pass kernel): the grid's last block writes Seq | flag there,
	// counting the blocks in status[G+1] (block_done_signal).
	Word *uint32
	Seq  uint32
}

// ErrEmulation reports a failed check of the emulation (a deadlock,
// divergent warp operations); the error's text says which.
var ErrEmulation = errors.New("partemu")

// The emulation's state is global in C.
var mu sync.Mutex

// cConst is the kernels' isConst argument for k.
func (k Coeffs[T]) cConst() C.int {
	if k.Const {
		return 1
	}
	return 0
}

// checkArrays checks that d, x and the coefficient arrays hold a batch of
// g systems of n rows, row i of system g at g·bs + i·es.
func checkArrays[T Float](n, g int, es, bs int64, k Coeffs[T], d, x []T) error {
	need := int64(g-1)*bs + int64(n-1)*es + 1
	arrays := [][]T{d, x}
	if !k.Const {
		arrays = append(arrays, k.A, k.B, k.C)
	}
	for _, a := range arrays {
		if int64(len(a)) < need {
			return fmt.Errorf("partemu: an array of %d elements for a batch of %d", len(a), need)
		}
	}
	return nil
}

// Launch runs the kernel in the given mode over the batch: status (G + 2
// ints) as the kernel takes it, d and x in the batch layout (x may alias
// d).
func Launch[T Float](p Plan, mode int, k Coeffs[T], d, x []T, status []int32, ws *Workspace[T], o Options) error {
	q := p.Q()
	if p.N < 2 || p.G < 1 || p.M%Chunk != 0 || p.Threads()%32 != 0 || q > 32 || p.ES < 1 || p.BS < 0 ||
		(p.Lanes != 0 && p.Lanes != 8 && p.Lanes != 16 && p.Lanes != 32) {
		return fmt.Errorf("partemu: bad plan %+v", p)
	}
	if err := checkArrays(p.N, p.G, p.ES, p.BS, k, d, x); err != nil {
		return err
	}
	r := p.G * 2 * q
	if len(status) < p.G+2 || len(ws.Ctl) < p.ctlWords() || len(ws.Nst) < p.G+2 || len(ws.RA) < r || len(ws.RB) < r ||
		len(ws.RC) < r || len(ws.RD) < r || len(ws.XR) < r {
		return fmt.Errorf("partemu: status or workspace too small")
	}
	isConst := k.cConst()
	mu.Lock()
	defer mu.Unlock()
	var rc C.int
	n, g, es, bs, m, qq, md := C.int(p.N), C.int(p.G), C.i64(p.ES), C.i64(p.BS), C.int(p.M), C.int(q), C.int(mode)
	smem := SharedBytes[T](p.M)
	if p.Lanes > 0 {
		smem = LanesSharedBytes[T](p.M, p.Lanes)
	}
	th, sm, res, seed := C.int(p.Threads()), C.int(smem), C.int(o.Resident), C.u64(o.Seed)
	spb := C.int(p.Lanes)
	word, seq := (*C.uint)(unsafe.Pointer(o.Word)), C.uint(o.Seq)
	st, ctl, nst := (*C.int)(ptr(status)), (*C.u64)(ptr(ws.Ctl)), (*C.int)(ptr(ws.Nst))
	switch {
	case is64[T]():
		f := func(s []T) *C.double { return (*C.double)(ptr(s)) }
		if p.Lanes > 0 {
			rc = C.emu_lseg_f64(f(k.A), f(k.B), f(k.C), f(d), f(x), n, g, es, bs,
				C.double(k.CA), C.double(k.CB), C.double(k.CC), isConst, st, m, qq, spb, md, ctl,
				f(ws.RA), f(ws.RB), f(ws.RC), f(ws.RD), f(ws.XR), nst, word, seq, th, sm, res, seed)
			break
		}
		rc = C.emu_segment_f64(f(k.A), f(k.B), f(k.C), f(d), f(x), n, g, es, bs,
			C.double(k.CA), C.double(k.CB), C.double(k.CC), isConst, st, m, qq, md, ctl,
			f(ws.RA), f(ws.RB), f(ws.RC), f(ws.RD), f(ws.XR), nst, word, seq, th, sm, res, seed)
	default:
		f := func(s []T) *C.float { return (*C.float)(ptr(s)) }
		if p.Lanes > 0 {
			rc = C.emu_lseg_f32(f(k.A), f(k.B), f(k.C), f(d), f(x), n, g, es, bs,
				C.float(k.CA), C.float(k.CB), C.float(k.CC), isConst, st, m, qq, spb, md, ctl,
				f(ws.RA), f(ws.RB), f(ws.RC), f(ws.RD), f(ws.XR), nst, word, seq, th, sm, res, seed)
			break
		}
		rc = C.emu_segment_f32(f(k.A), f(k.B), f(k.C), f(d), f(x), n, g, es, bs,
			C.float(k.CA), C.float(k.CB), C.float(k.CC), isConst, st, m, qq, md, ctl,
			f(ws.RA), f(ws.RB), f(ws.RC), f(ws.RD), f(ws.XR), nst, word, seq, th, sm, res, seed)
	}
	if rc != 0 {
		return fmt.Errorf("%w: %s", ErrEmulation, C.GoString(C.emu_error()))
	}
	return nil
}

// Kernel is one of the partition kernels that solve whole systems.
type Kernel int

// The kernels of LaunchBlocks (the order of emu_part_* in partemu.cc).
const (
	PartitionP4         Kernel = iota // partition_p4 (chunks of 4 rows)
	PartitionP8                       // partition_p8
	PartitionP16                      // partition_p16, Auto's chunk
	PartitionP32                      // partition_p32 (FP32 only)
	Lanes                             // partition_lanes_p16 (systems across a warp's lanes)
	Const                             // partition_const_p16 (constant coefficients)
	Stream                            // partition_stream_p16 (a persistent grid, one system a block)
	ConstStream                       // partition_cstream_p16 (constant coefficients, streamed)
	ConstStreamWarp                   // partition_cstream_warp_p16 (its warp variant)
	LanesStream                       // partition_lanes_stream_p16_s8 (the lanes kernel streamed, 8 systems a block)
	ConstStreamRows                   // partition_cstream_rows_p16 (d and x row-major: systems closer than rows)
	ConstStreamWarpRows               // partition_cstream_warp_rows_p16
)

// Blocks is a launch of LaunchBlocks: Grid blocks of Threads threads with
// SharedBytes of dynamic shared memory, SPB systems a block of TPS threads
// each (the kernels' spb, tps; the streaming kernel takes neither).
type Blocks struct {
	Grid, Threads, SharedBytes, SPB, TPS int
}

// LaunchBlocks runs kernel kern over G systems of N rows, row i of system g
// at g·bs + i·es of d, x and (unless k.Const) k.A, k.B, k.C; status has
// G + 2 ints. The blocks run one at a time (lanes.cuh's static shared
// keys are one array for the whole grid here; no block of these kernels
// waits for another), in an order drawn from o.Seed.
func LaunchBlocks[T Float](kern Kernel, l Blocks, n, g int, es, bs int64, k Coeffs[T], d, x []T, status []int32, o Options) error {
	if n < 1 || g < 1 || l.Grid < 1 || l.Threads < 1 || es < 1 || bs < 0 {
		return fmt.Errorf("partemu: bad launch %+v for N=%d G=%d es=%d bs=%d", l, n, g, es, bs)
	}
	if err := checkArrays(n, g, es, bs, k, d, x); err != nil {
		return err
	}
	if len(status) < g+2 {
		return fmt.Errorf("partemu: status of %d ints for %d systems", len(status), g)
	}
	isConst := k.cConst()
	mu.Lock()
	defer mu.Unlock()
	var rc C.int
	kn, nn, gg, es2, bs2 := C.int(kern), C.int(n), C.int(g), C.i64(es), C.i64(bs)
	st := (*C.int)(ptr(status))
	spb, tps, grid, th, sm, seed := C.int(l.SPB), C.int(l.TPS), C.int(l.Grid), C.int(l.Threads), C.int(l.SharedBytes), C.u64(o.Seed)
	if is64[T]() {
		f := func(s []T) *C.double { return (*C.double)(ptr(s)) }
		rc = C.emu_part_f64(kn, f(k.A), f(k.B), f(k.C), f(d), f(x), nn, gg, es2, bs2,
			C.double(k.CA), C.double(k.CB), C.double(k.CC), isConst, st, spb, tps, grid, th, sm, 1, seed)
	} else {
		f := func(s []T) *C.float { return (*C.float)(ptr(s)) }
		rc = C.emu_part_f32(kn, f(k.A), f(k.B), f(k.C), f(d), f(x), nn, gg, es2, bs2,
			C.float(k.CA), C.float(k.CB), C.float(k.CC), isConst, st, spb, tps, grid, th, sm, 1, seed)
	}
	switch rc {
	case 0:
		return nil
	case 1:
		return fmt.Errorf("partemu: kernel %d has no %d-byte variant", kern, sizeOf[T]())
	}
	return fmt.Errorf("%w: %s", ErrEmulation, C.GoString(C.emu_error()))
}
