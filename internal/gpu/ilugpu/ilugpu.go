//go:build cuda

// Package ilugpu computes the incomplete factorizations ILU(0) and IC(0)
// of package ilu on a GPU (kernels in ptx/src/ilu.cuh), in FP64 and bit
// for bit the CPU's factors: the host analysis (ilu.Analyze: pattern and
// level sets) is uploaded once, and each factorization loads A's values,
// shifts the diagonal and factors level by level, a thread a row; runs of
// narrow levels are chained in one block with barriers between them, as
// the level-set triangular solve does (sptrsvgpu.Schedule).
package ilugpu

import (
	"errors"
	"fmt"
	"math"
	"unsafe"

	"gorgonia.org/cu"

	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/ilu"
	"github.com/bandsolve/bandsolve/internal/gpu/kernels"
	"github.com/bandsolve/bandsolve/internal/gpu/sptrsvgpu"
)

// Launch geometry of ptx/src/ilu.cuh.
const (
	block      = 256  // ILU_BLOCK
	chainBlock = 1024 // ILU_CHAIN_BLOCK
)

// DefaultChainRows is the widest level that runs inside a chain rather
// than with a launch of its own.
const DefaultChainRows = 2048

// chainRows is the widest level of a chain of the factorizations that New
// makes, and programmed whether New writes programs where they fit (tests
// vary both).
var (
	chainRows  = DefaultChainRows
	programmed = true
)

// Factorization holds a pattern's analysis on the device and the factors
// of the last Factor. Its methods are not safe for concurrent use.
type Factorization struct {
	dev    *cuda.Device
	stream cu.Stream
	pat    *ilu.Pattern
	opts   ilu.Options
	steps  []sptrsvgpu.Step
	nnz    int // entries of the factors

	rowPtr, col, diagPos, src, order, levelPtr cu.DevicePtr
	aval, val, fail                            cu.DevicePtr

	// The program (newProgram, on the host until it is uploaded) and on
	// the device, when there is one, with the values in level order that
	// it factors.
	prog                               *program
	progPtr, words, valPtr, perm, srcL cu.DevicePtr
	diagL, valL, progLevel             cu.DevicePtr

	shift  float64
	ok     bool // the values are factors
	allocs []cu.DevicePtr
	closed bool
}

// New uploads the analysis pat to dev. Factor computes the factors with
// the shifts that opts allow (its Workers field is not used).
func New(dev *cuda.Device, pat *ilu.Pattern, opts ilu.Options) (*Factorization, error) {
	if pat == nil {
		return nil, errors.New("ilu: GPU factorization of a nil pattern")
	}
	if err := opts.Check(pat.Kind); err != nil {
		return nil, err
	}
	if len(pat.Col) >= math.MaxInt32 || pat.NNZA >= math.MaxInt32 {
		return nil, fmt.Errorf("%w: %s of order %d with %d entries: the GPU factorization takes 32-bit indices", ilu.ErrShape, pat.Kind, pat.N, pat.NNZA)
	}
	f := &Factorization{dev: dev, pat: pat, opts: opts, nnz: len(pat.Col),
		steps: sptrsvgpu.Schedule(pat.LevelPtr, chainRows)}
	if programmed {
		if pr, ok := newProgram(pat); ok {
			f.prog = pr
		}
	}
	err := f.upload()
	f.prog = nil
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("ilu: %s of order %d on the GPU: %w", pat.Kind, pat.N, err)
	}
	return f, nil
}

// upload allocates the device arrays and copies the analysis.
func (f *Factorization) upload() error {
	p := f.pat
	arrays := []struct {
		ptr  *cu.DevicePtr
		host []int32
	}{{&f.rowPtr, p.RowPtr}, {&f.col, p.Col}, {&f.diagPos, p.DiagPos}, {&f.src, p.Src}, {&f.order, p.Order}, {&f.levelPtr, p.LevelPtr}}
	if pr := f.prog; pr != nil {
		arrays = append(arrays, []struct {
			ptr  *cu.DevicePtr
			host []int32
		}{{&f.progPtr, pr.progPtr}, {&f.words, pr.prog}, {&f.progLevel, pr.progLevel}, {&f.valPtr, pr.valPtr}, {&f.perm, pr.perm},
			{&f.srcL, pr.srcL}, {&f.diagL, pr.diagL}}...)
	}
	for _, a := range arrays {
		if len(a.host) == 0 {
			continue
		}
		ptr, err := f.alloc(4 * int64(len(a.host)))
		if err != nil {
			return err
		}
		*a.ptr = ptr
	}
	var err error
	if f.aval, err = f.alloc(8 * int64(p.NNZA)); err != nil {
		return err
	}
	if f.val, err = f.alloc(8 * int64(f.nnz)); err != nil {
		return err
	}
	if f.fail, err = f.alloc(8); err != nil {
		return err
	}
	if f.prog != nil {
		if f.valL, err = f.alloc(8 * int64(f.nnz)); err != nil {
			return err
		}
	}
	return f.dev.Enqueue(func() error {
		var e error
		// A blocking stream: it waits for package cuda's copies on the
		// legacy default stream.
		if f.stream, e = cu.MakeStream(cu.DefaultStream); e != nil {
			return e
		}
		for _, a := range arrays {
			if len(a.host) == 0 {
				continue
			}
			if e = cu.MemcpyHtoD(*a.ptr, unsafe.Pointer(&a.host[0]), 4*int64(len(a.host))); e != nil {
				return e
			}
		}
		return nil
	})
}

// alloc allocates bytes (at least 8) kept until Close. Call it outside
// Device.Enqueue.
func (f *Factorization) alloc(bytes int64) (cu.DevicePtr, error) {
	ptr, err := f.dev.AllocBytes(max(bytes, 8))
	if err != nil {
		return 0, err
	}
	f.allocs = append(f.allocs, ptr)
	return ptr, nil
}

// Pattern returns the analysis the factorization runs on.
func (f *Factorization) Pattern() *ilu.Pattern { return f.pat }

// Shift returns the relative diagonal shift of the current factors.
func (f *Factorization) Shift() float64 { return f.shift }

// Launches returns the number of kernel launches of one factorization
// pass (without the loading of the values).
func (f *Factorization) Launches() int { return len(f.steps) }

// Values returns the device array of the factors' values (FP64, one a
// entry of the pattern: ilu.Factors.LU's layout). It is valid until the
// next Factor or Close.
func (f *Factorization) Values() cu.DevicePtr { return f.val }

// Factor computes the factors of the matrix with values aval (host, in
// the analysed matrix's order), with the shifts that the options allow.
// The errors are the CPU's: ilu.ErrZeroPivot or ilu.ErrNotPositive naming
// the row, ilu.ErrShape for a wrong length.
func (f *Factorization) Factor(aval []float64) error {
	if err := f.usable(len(aval)); err != nil {
		return err
	}
	if len(aval) > 0 {
		if err := f.dev.Enqueue(func() error {
			return cu.MemcpyHtoD(f.aval, unsafe.Pointer(&aval[0]), 8*int64(len(aval)))
		}); err != nil {
			return err
		}
	}
	return f.factor(f.aval)
}

// FactorDevice is Factor with the values already in the device's memory
// (FP64, n = the analysed matrix's entries).
func (f *Factorization) FactorDevice(aval *cuda.Buffer[float64]) error {
	if aval == nil {
		return fmt.Errorf("%w: nil value buffer", ilu.ErrShape)
	}
	if err := f.usable(aval.Len()); err != nil {
		return err
	}
	return f.factor(aval.Ptr())
}

func (f *Factorization) usable(n int) error {
	if f.closed {
		return errors.New("ilu: the GPU factorization is closed")
	}
	if n != f.pat.NNZA {
		return fmt.Errorf("%w: %s of the %d×%d matrix with %d values for %d entries", ilu.ErrShape, f.pat.Kind, f.pat.N, f.pat.N, n, f.pat.NNZA)
	}
	return nil
}

// factor runs the passes with the shifts that the options allow.
func (f *Factorization) factor(aval cu.DevicePtr) error {
	f.ok = false
	s, err := ilu.TryShifts(f.opts, func(s float64) error { return f.pass(aval, s) })
	if err != nil {
		return err
	}
	f.shift, f.ok = s, true
	return nil
}

// pass loads A + shift·diag(A) and factors it, then reads the failure
// word and, on a failure, the failing pivot.
func (f *Factorization) pass(aval cu.DevicePtr, shift float64) error {
	p := f.pat
	var fail uint64
	var pivot float64
	err := f.dev.Enqueue(func() error {
		if e := f.Enqueue(f.stream, aval, shift); e != nil {
			return e
		}
		if e := cu.MemcpyDtoHAsync(unsafe.Pointer(&fail), f.fail, 8, f.stream); e != nil {
			return e
		}
		if e := f.stream.Synchronize(); e != nil {
			return e
		}
		if fail == math.MaxUint64 {
			return nil
		}
		row := int(uint32(fail))
		return cu.MemcpyDtoH(unsafe.Pointer(&pivot), f.val+cu.DevicePtr(8*int64(p.DiagPos[row])), 8)
	})
	if err != nil {
		return fmt.Errorf("ilu: %s of order %d on the GPU: %w", p.Kind, p.N, err)
	}
	if fail != math.MaxUint64 {
		return p.PivotError(shift, int(uint32(fail)), pivot)
	}
	return nil
}

// Enqueue queues one factorization of the values aval (device, FP64)
// with the given shift on s, without waiting: the load, the shift and the
// level passes; the failure word (MaxUint64 when every pivot is good, else
// (level << 32) | row of the CPU's failing row) is set by its end. Call it
// on the device thread.
func (f *Factorization) Enqueue(s cu.Stream, aval cu.DevicePtr, shift float64) error {
	p := f.pat
	one := cuda.Dim3{X: 1, Y: 1, Z: 1}
	threads := cuda.Dim3{X: block, Y: 1, Z: 1}
	if err := cu.MemsetD32Async(f.fail, math.MaxUint32, 2, s); err != nil {
		return err
	}
	if f.words != 0 {
		return f.enqueueProgram(s, aval, shift)
	}
	if err := (kernels.IluGather{}).Launch(f.dev, grid(f.nnz), threads, 0, s,
		&kernels.IluGatherArgs{Aval: aval, Src: f.src, Nnz: int32(f.nnz), Val: f.val}); err != nil {
		return err
	}
	if shift != 0 {
		if err := (kernels.IluScale{}).Launch(f.dev, grid(p.N), threads, 0, s,
			&kernels.IluScaleArgs{DiagPos: f.diagPos, N: int32(p.N), Scale: 1 + shift, Val: f.val}); err != nil {
			return err
		}
	}
	ic := int32(0)
	if p.Kind == ilu.KindIC0 {
		ic = 1
	}
	for _, st := range f.steps {
		var err error
		if st.Chain {
			err = (kernels.IluChain{}).Launch(f.dev, one, cuda.Dim3{X: chainBlock, Y: 1, Z: 1}, 0, s, &kernels.IluChainArgs{
				RowPtr: f.rowPtr, Col: f.col, DiagPos: f.diagPos, Val: f.val, IC: ic, Order: f.order,
				LevelPtr: f.levelPtr, L0: int32(st.L0), L1: int32(st.L1), Fail: f.fail,
			})
		} else {
			lo, hi := p.LevelPtr[st.L0], p.LevelPtr[st.L0+1]
			err = (kernels.IluLevel{}).Launch(f.dev, grid(int(hi-lo)), threads, 0, s, &kernels.IluLevelArgs{
				RowPtr: f.rowPtr, Col: f.col, DiagPos: f.diagPos, Val: f.val, IC: ic, Order: f.order,
				LO: lo, HI: hi, Level: int32(st.L0), Fail: f.fail,
			})
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// enqueueProgram queues the programmed factorization: A's values gathered
// in level order, the shift, the levels, and the factors scattered back
// to the pattern's order.
func (f *Factorization) enqueueProgram(s cu.Stream, aval cu.DevicePtr, shift float64) error {
	p := f.pat
	one := cuda.Dim3{X: 1, Y: 1, Z: 1}
	threads := cuda.Dim3{X: block, Y: 1, Z: 1}
	if err := (kernels.IluGather{}).Launch(f.dev, grid(f.nnz), threads, 0, s,
		&kernels.IluGatherArgs{Aval: aval, Src: f.srcL, Nnz: int32(f.nnz), Val: f.valL}); err != nil {
		return err
	}
	if shift != 0 {
		if err := (kernels.IluScale{}).Launch(f.dev, grid(p.N), threads, 0, s,
			&kernels.IluScaleArgs{DiagPos: f.diagL, N: int32(p.N), Scale: 1 + shift, Val: f.valL}); err != nil {
			return err
		}
	}
	levels := int32(len(p.LevelPtr) - 1)
	ic := p.Kind == ilu.KindIC0
	chainThreads := cuda.Dim3{X: chainBlock, Y: 1, Z: 1}
	for _, st := range f.steps {
		var err error
		if st.Chain {
			a := kernels.IluProgChainIluArgs{ProgPtr: f.progPtr, Prog: f.words, Val: f.valL, Order: f.order,
				LevelPtr: f.levelPtr, ProgLevel: f.progLevel, ValPtr: f.valPtr, NLevels: levels, L0: int32(st.L0), L1: int32(st.L1), Fail: f.fail}
			if ic {
				err = (kernels.IluProgChainIc{}).Launch(f.dev, one, chainThreads, 0, s, &a)
			} else {
				err = (kernels.IluProgChainIlu{}).Launch(f.dev, one, chainThreads, 0, s, &a)
			}
		} else {
			rows := int(p.LevelPtr[st.L0+1] - p.LevelPtr[st.L0])
			a := kernels.IluProgLevelIluArgs{ProgPtr: f.progPtr, Prog: f.words, Val: f.valL, Order: f.order,
				LevelPtr: f.levelPtr, ProgLevel: f.progLevel, ValPtr: f.valPtr, NLevels: levels, L: int32(st.L0), Fail: f.fail}
			if ic {
				err = (kernels.IluProgLevelIc{}).Launch(f.dev, grid(rows), threads, 0, s, &a)
			} else {
				err = (kernels.IluProgLevelIlu{}).Launch(f.dev, grid(rows), threads, 0, s, &a)
			}
		}
		if err != nil {
			return err
		}
	}
	return (kernels.IluScatter{}).Launch(f.dev, grid(f.nnz), threads, 0, s,
		&kernels.IluScatterArgs{Src: f.valL, Perm: f.perm, Nnz: int32(f.nnz), Dst: f.val})
}

// Programmed reports whether the factorization runs from a program (the
// pattern's rows share few enough columns), else by merge walks over the
// pattern.
func (f *Factorization) Programmed() bool { return f.words != 0 }

// Stream returns the stream the factorization runs on.
func (f *Factorization) Stream() cu.Stream { return f.stream }

// grid is the number of blocks of a thread an item.
func grid(items int) cuda.Dim3 { return cuda.Dim3{X: max(1, (items+block-1)/block), Y: 1, Z: 1} }

// Download returns the factors' values on the host (ilu.Factors.LU's
// layout), or an error when the last Factor failed.
func (f *Factorization) Download() ([]float64, error) {
	if !f.ok {
		return nil, errors.New("ilu: no factors on the GPU: the last factorization failed or none ran")
	}
	v := make([]float64, f.nnz)
	if f.nnz == 0 {
		return v, nil
	}
	err := f.dev.Enqueue(func() error { return cu.MemcpyDtoH(unsafe.Pointer(&v[0]), f.val, 8*int64(f.nnz)) })
	return v, err
}

// Close frees the device memory and the stream.
func (f *Factorization) Close() error {
	if f.closed {
		return nil
	}
	f.closed = true
	return f.dev.Enqueue(func() error {
		var errs []error
		if f.stream != (cu.Stream{}) {
			errs = append(errs, f.stream.Synchronize(), f.stream.Destroy())
		}
		for _, ptr := range f.allocs {
			errs = append(errs, cu.MemFree(ptr))
		}
		f.allocs = nil
		return errors.Join(errs...)
	})
}
