package main

/*
#include <stdint.h>
*/
import "C"

import (
	"context"
	"fmt"
	"math"
	"runtime/cgo"
	"unsafe"

	"github.com/bandsolve/bandsolve/tridiag"
)

// The enum values of bandsolve.h.
const (
	precF32 = 0
	precF64 = 1

	layoutContiguous  = 0
	layoutInterleaved = 1
	layoutStrided     = 2

	flagCyclic     = 1
	flagCheck      = 2
	flagSkipFinite = 4

	deviceCPU  = 0
	deviceCUDA = 1
)

// pointers are the host or device addresses of one solve's arrays.
type pointers struct {
	a, b, c, d, x unsafe.Pointer
}

// devPointers are device addresses and the caller's stream.
type devPointers struct {
	a, b, c, d, x uint64
	stream        uintptr
}

// planImpl is a plan of one precision on one device.
type planImpl interface {
	solve(p pointers, nrhs int) error
	solveConst(a, b, c float64, p pointers, nrhs int) error
	factor(p pointers, a, b, c float64, constant bool) (factorsImpl, error)
	solveDevice(p devPointers, a, b, c float64, constant bool) error
	describe() string
	close() error
}

// factorsImpl is the factors of a batch.
type factorsImpl interface {
	solve(nrhs int, d, x unsafe.Pointer) error
	close() error
}

// planHandle is what a bandsolve_tridiag handle refers to.
type planHandle struct {
	shape tridiag.Shape
	impl  planImpl
}

// cSlice views n elements at p (nil for a null p).
func cSlice[T, P any](p *P, n int) []T {
	if p == nil {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(p)), n)
}

// hostSlice views n elements of type T at p (nil for a null p).
func hostSlice[T tridiag.Float](p unsafe.Pointer, n int) []T {
	if p == nil {
		return nil
	}
	return unsafe.Slice((*T)(p), n)
}

// intArg converts a C size to int, refusing negative values.
func intArg(name string, v C.int64_t) (int, error) {
	if v < 0 || int64(v) > math.MaxInt64/2 {
		return 0, fmt.Errorf("%w: %s = %d", errArgument, name, int64(v))
	}
	return int(v), nil
}

// shapeOf builds the tridiagonal shape of bandsolve_tridiag_create's
// arguments.
func shapeOf(n, g C.int64_t, layout C.int, elem, batch C.int64_t) (tridiag.Shape, error) {
	var s tridiag.Shape
	var err error
	if s.N, err = intArg("n", n); err != nil {
		return s, err
	}
	if s.G, err = intArg("g", g); err != nil {
		return s, err
	}
	switch layout {
	case layoutContiguous:
		s.Layout = tridiag.Contiguous(s.N)
	case layoutInterleaved:
		s.Layout = tridiag.Interleaved(s.G)
	case layoutStrided:
		e, err := intArg("elem_stride", elem)
		if err != nil {
			return s, err
		}
		b, err := intArg("batch_stride", batch)
		if err != nil {
			return s, err
		}
		s.Layout = tridiag.Strided(e, b)
	default:
		return s, fmt.Errorf("%w: unknown layout %d (want BANDSOLVE_LAYOUT_CONTIGUOUS, _INTERLEAVED or _STRIDED)", errArgument, int(layout))
	}
	return s, s.Validate()
}

// optionsOf builds the plan options of bandsolve_tridiag_create's
// arguments.
func optionsOf(algorithm *C.char, pivoting C.int, flags C.uint) (tridiag.Options, error) {
	var o tridiag.Options
	if algorithm != nil && C.GoString(algorithm) != "" {
		a, err := tridiag.ParseAlgorithm(C.GoString(algorithm))
		if err != nil {
			return o, err
		}
		o.Algorithm = a
	}
	switch pivoting {
	case 0:
		o.Pivoting = tridiag.PivotAuto
	case 1:
		o.Pivoting = tridiag.PivotAlways
	case 2:
		o.Pivoting = tridiag.PivotNever
	default:
		return o, fmt.Errorf("%w: unknown pivoting %d (want BANDSOLVE_PIVOT_AUTO, _ALWAYS or _NEVER)", errArgument, int(pivoting))
	}
	if flags&^(flagCyclic|flagCheck|flagSkipFinite) != 0 {
		return o, fmt.Errorf("%w: unknown flags %#x", errArgument, uint(flags)&^(flagCyclic|flagCheck|flagSkipFinite))
	}
	o.Cyclic = flags&flagCyclic != 0
	o.Check = flags&flagCheck != 0
	o.SkipFiniteCheck = flags&flagSkipFinite != 0
	return o, nil
}

// planOf returns the plan of a handle.
func planOf(h C.uintptr_t) (*planHandle, error) {
	if h == 0 {
		return nil, fmt.Errorf("%w: null plan handle", errArgument)
	}
	p, ok := cgo.Handle(h).Value().(*planHandle)
	if !ok {
		return nil, fmt.Errorf("%w: the handle is not a tridiagonal plan", errArgument)
	}
	return p, nil
}

//export bandsolve_tridiag_create
func bandsolve_tridiag_create(plan *C.uintptr_t, n, g C.int64_t, layout C.int, elemStride, batchStride C.int64_t, precision C.int, algorithm *C.char, pivoting C.int, flags C.uint, device, ordinal C.int) (st C.int) {
	const fn = "bandsolve_tridiag_create"
	var ng int
	defer guard(fn, &st, nil, &ng)
	if plan == nil {
		return finish(fn, fmt.Errorf("%w: plan is NULL", errArgument), nil, 0)
	}
	*plan = 0
	shape, err := shapeOf(n, g, layout, elemStride, batchStride)
	if err != nil {
		return finish(fn, err, nil, 0)
	}
	opts, err := optionsOf(algorithm, pivoting, flags)
	if err != nil {
		return finish(fn, err, nil, 0)
	}
	if precision != precF32 && precision != precF64 {
		return finish(fn, fmt.Errorf("%w: unknown precision %d (want BANDSOLVE_F32 or BANDSOLVE_F64)", errArgument, int(precision)), nil, 0)
	}
	var impl planImpl
	switch device {
	case deviceCPU:
		if ordinal < 0 {
			return finish(fn, fmt.Errorf("%w: %d CPU workers", errArgument, int(ordinal)), nil, 0)
		}
		dev := tridiag.DefaultCPU()
		if ordinal > 0 {
			dev = tridiag.NewCPU(int(ordinal))
		}
		if precision == precF32 {
			impl, err = newCPUPlan[float32](dev, shape, opts)
		} else {
			impl, err = newCPUPlan[float64](dev, shape, opts)
		}
	case deviceCUDA:
		impl, err = newGPUPlan(int(ordinal), precision == precF64, shape, opts)
	default:
		err = fmt.Errorf("%w: unknown device %d (want BANDSOLVE_DEVICE_CPU or BANDSOLVE_DEVICE_CUDA)", errArgument, int(device))
	}
	if err != nil {
		return finish(fn, err, nil, 0)
	}
	*plan = C.uintptr_t(cgo.NewHandle(&planHandle{shape: shape.Normalize(), impl: impl}))
	return finish(fn, nil, nil, 0)
}

//export bandsolve_tridiag_destroy
func bandsolve_tridiag_destroy(plan C.uintptr_t) (st C.int) {
	const fn = "bandsolve_tridiag_destroy"
	var ng int
	defer guard(fn, &st, nil, &ng)
	if plan == 0 {
		return finish(fn, nil, nil, 0)
	}
	p, err := planOf(plan)
	if err != nil {
		return finish(fn, err, nil, 0)
	}
	cgo.Handle(plan).Delete()
	return finish(fn, p.impl.close(), nil, 0)
}

//export bandsolve_tridiag_describe
func bandsolve_tridiag_describe(plan C.uintptr_t) *C.char {
	p, err := planOf(plan)
	if err != nil {
		finish("bandsolve_tridiag_describe", err, nil, 0)
		return setText("")
	}
	return setText(p.impl.describe())
}

//export bandsolve_tridiag_solve
func bandsolve_tridiag_solve(plan C.uintptr_t, a, b, c, d, x unsafe.Pointer, info *C.int32_t) (st C.int) {
	return solveHost("bandsolve_tridiag_solve", plan, 1, pointers{a, b, c, d, x}, info)
}

//export bandsolve_tridiag_solve_many
func bandsolve_tridiag_solve_many(plan C.uintptr_t, nrhs C.int64_t, a, b, c, d, x unsafe.Pointer, info *C.int32_t) (st C.int) {
	const fn = "bandsolve_tridiag_solve_many"
	k, err := intArg("nrhs", nrhs)
	if err != nil {
		return finish(fn, err, info, gOf(plan))
	}
	return solveHost(fn, plan, k, pointers{a, b, c, d, x}, info)
}

// gOf is the plan's batch count, 0 for a bad handle.
func gOf(plan C.uintptr_t) int {
	if p, err := planOf(plan); err == nil {
		return p.shape.G
	}
	return 0
}

func solveHost(fn string, plan C.uintptr_t, nrhs int, ptr pointers, info *C.int32_t) (st C.int) {
	var g int
	defer guard(fn, &st, info, &g)
	p, err := planOf(plan)
	if err != nil {
		return finish(fn, err, info, 0)
	}
	g = p.shape.G
	if nrhs > math.MaxInt/p.shape.Len() {
		return finish(fn, fmt.Errorf("%w: %d right-hand sides of %d elements overflow an index", errArgument, nrhs, p.shape.Len()), info, g)
	}
	if err := needHost(p.shape, ptr, true); err != nil {
		return finish(fn, err, info, g)
	}
	return finish(fn, p.impl.solve(ptr, nrhs), info, g)
}

// needHost refuses null d and x (and b, c when coef): a Go slice of a
// null pointer would read as an empty array.
func needHost(s tridiag.Shape, p pointers, coef bool) error {
	for _, v := range []struct {
		name string
		p    unsafe.Pointer
		use  bool
	}{{"b", p.b, coef}, {"c", p.c, coef}, {"d", p.d, true}, {"x", p.x, true}} {
		if v.use && v.p == nil {
			return fmt.Errorf("%w: %s is NULL (the %d×%d batch needs %d elements)", errArgument, v.name, s.G, s.N, s.Len())
		}
	}
	return nil
}

//export bandsolve_tridiag_solve_const
func bandsolve_tridiag_solve_const(plan C.uintptr_t, a, b, c C.double, d, x unsafe.Pointer, info *C.int32_t) (st C.int) {
	const fn = "bandsolve_tridiag_solve_const"
	var g int
	defer guard(fn, &st, info, &g)
	p, err := planOf(plan)
	if err != nil {
		return finish(fn, err, info, 0)
	}
	g = p.shape.G
	ptr := pointers{d: d, x: x}
	if err := needHost(p.shape, ptr, false); err != nil {
		return finish(fn, err, info, g)
	}
	return finish(fn, p.impl.solveConst(float64(a), float64(b), float64(c), ptr, 1), info, g)
}

//export bandsolve_tridiag_factor
func bandsolve_tridiag_factor(plan C.uintptr_t, a, b, c unsafe.Pointer, factors *C.uintptr_t, info *C.int32_t) (st C.int) {
	return factor("bandsolve_tridiag_factor", plan, pointers{a: a, b: b, c: c}, 0, 0, 0, false, factors, info)
}

//export bandsolve_tridiag_factor_const
func bandsolve_tridiag_factor_const(plan C.uintptr_t, a, b, c C.double, factors *C.uintptr_t, info *C.int32_t) (st C.int) {
	return factor("bandsolve_tridiag_factor_const", plan, pointers{}, float64(a), float64(b), float64(c), true, factors, info)
}

// factorsHandle is what a bandsolve_factors handle refers to.
type factorsHandle struct {
	shape tridiag.Shape
	impl  factorsImpl
}

func factor(fn string, plan C.uintptr_t, ptr pointers, a, b, c float64, constant bool, factors *C.uintptr_t, info *C.int32_t) (st C.int) {
	var g int
	defer guard(fn, &st, info, &g)
	p, err := planOf(plan)
	if err != nil {
		return finish(fn, err, info, 0)
	}
	g = p.shape.G
	if factors == nil {
		return finish(fn, fmt.Errorf("%w: factors is NULL", errArgument), info, g)
	}
	*factors = 0
	if !constant {
		for _, v := range []struct {
			name string
			p    unsafe.Pointer
		}{{"b", ptr.b}, {"c", ptr.c}} {
			if v.p == nil {
				return finish(fn, fmt.Errorf("%w: %s is NULL", errArgument, v.name), info, g)
			}
		}
	}
	f, err := p.impl.factor(ptr, a, b, c, constant)
	if f != nil {
		*factors = C.uintptr_t(cgo.NewHandle(&factorsHandle{shape: p.shape, impl: f}))
	}
	return finish(fn, err, info, g)
}

// factorsOf returns the factors of a handle.
func factorsOf(h C.uintptr_t) (*factorsHandle, error) {
	if h == 0 {
		return nil, fmt.Errorf("%w: null factors handle", errArgument)
	}
	f, ok := cgo.Handle(h).Value().(*factorsHandle)
	if !ok {
		return nil, fmt.Errorf("%w: the handle is not tridiagonal factors", errArgument)
	}
	return f, nil
}

//export bandsolve_factors_solve
func bandsolve_factors_solve(factors C.uintptr_t, nrhs C.int64_t, d, x unsafe.Pointer, info *C.int32_t) (st C.int) {
	const fn = "bandsolve_factors_solve"
	var g int
	defer guard(fn, &st, info, &g)
	f, err := factorsOf(factors)
	if err != nil {
		return finish(fn, err, info, 0)
	}
	g = f.shape.G
	k, err := intArg("nrhs", nrhs)
	if err == nil && k > math.MaxInt/f.shape.Len() {
		err = fmt.Errorf("%w: %d right-hand sides of %d elements overflow an index", errArgument, k, f.shape.Len())
	}
	if err != nil {
		return finish(fn, err, info, g)
	}
	if err := needHost(f.shape, pointers{d: d, x: x}, false); err != nil {
		return finish(fn, err, info, g)
	}
	return finish(fn, f.impl.solve(k, d, x), info, g)
}

//export bandsolve_factors_destroy
func bandsolve_factors_destroy(factors C.uintptr_t) (st C.int) {
	const fn = "bandsolve_factors_destroy"
	var ng int
	defer guard(fn, &st, nil, &ng)
	if factors == 0 {
		return finish(fn, nil, nil, 0)
	}
	f, err := factorsOf(factors)
	if err != nil {
		return finish(fn, err, nil, 0)
	}
	cgo.Handle(factors).Delete()
	return finish(fn, f.impl.close(), nil, 0)
}

//export bandsolve_tridiag_solve_device
func bandsolve_tridiag_solve_device(plan C.uintptr_t, a, b, c, d, x C.uint64_t, stream C.uintptr_t, info *C.int32_t) (st C.int) {
	return solveDevice("bandsolve_tridiag_solve_device", plan,
		devPointers{uint64(a), uint64(b), uint64(c), uint64(d), uint64(x), uintptr(stream)}, 0, 0, 0, false, info)
}

//export bandsolve_tridiag_solve_device_const
func bandsolve_tridiag_solve_device_const(plan C.uintptr_t, a, b, c C.double, d, x C.uint64_t, stream C.uintptr_t, info *C.int32_t) (st C.int) {
	return solveDevice("bandsolve_tridiag_solve_device_const", plan,
		devPointers{d: uint64(d), x: uint64(x), stream: uintptr(stream)}, float64(a), float64(b), float64(c), true, info)
}

func solveDevice(fn string, plan C.uintptr_t, ptr devPointers, a, b, c float64, constant bool, info *C.int32_t) (st C.int) {
	var g int
	defer guard(fn, &st, info, &g)
	p, err := planOf(plan)
	if err != nil {
		return finish(fn, err, info, 0)
	}
	g = p.shape.G
	return finish(fn, p.impl.solveDevice(ptr, a, b, c, constant), info, g)
}

// cpuPlan is a plan on the CPU.
type cpuPlan[T tridiag.Float] struct {
	p *tridiag.Plan[T]
	n int // storage length of one batch
}

func newCPUPlan[T tridiag.Float](dev *tridiag.CPU, s tridiag.Shape, o tridiag.Options) (planImpl, error) {
	p, err := tridiag.NewPlan[T](dev, s, o)
	if err != nil {
		return nil, err
	}
	return &cpuPlan[T]{p: p, n: p.Shape().Len()}, nil
}

func (c *cpuPlan[T]) solve(p pointers, nrhs int) error {
	m := nrhs * c.n
	a, b, cc := hostSlice[T](p.a, c.n), hostSlice[T](p.b, c.n), hostSlice[T](p.c, c.n)
	d, x := hostSlice[T](p.d, m), hostSlice[T](p.x, m)
	if nrhs == 1 {
		return c.p.Solve(context.Background(), a, b, cc, d, x)
	}
	return c.p.SolveMany(context.Background(), nrhs, a, b, cc, d, x)
}

func (c *cpuPlan[T]) solveConst(a, b, cc float64, p pointers, nrhs int) error {
	m := nrhs * c.n
	return c.p.SolveConst(context.Background(), T(a), T(b), T(cc), hostSlice[T](p.d, m), hostSlice[T](p.x, m))
}

func (c *cpuPlan[T]) factor(p pointers, a, b, cc float64, constant bool) (factorsImpl, error) {
	var f *tridiag.Factors[T]
	var err error
	if constant {
		f, err = c.p.FactorConst(context.Background(), T(a), T(b), T(cc))
	} else {
		f, err = c.p.Factor(context.Background(), hostSlice[T](p.a, c.n), hostSlice[T](p.b, c.n), hostSlice[T](p.c, c.n))
	}
	if f == nil {
		return nil, err
	}
	return &cpuFactors[T]{f: f, n: c.n}, err
}

func (c *cpuPlan[T]) solveDevice(devPointers, float64, float64, float64, bool) error {
	return fmt.Errorf("%w: device pointers on a CPU plan (make the plan with BANDSOLVE_DEVICE_CUDA in the CUDA variant)", errUnsupported)
}

func (c *cpuPlan[T]) describe() string { return c.p.Describe() }
func (c *cpuPlan[T]) close() error     { return c.p.Close() }

// cpuFactors are factors on the CPU.
type cpuFactors[T tridiag.Float] struct {
	f *tridiag.Factors[T]
	n int
}

func (f *cpuFactors[T]) solve(nrhs int, d, x unsafe.Pointer) error {
	m := nrhs * f.n
	return f.f.SolveMany(context.Background(), nrhs, hostSlice[T](d, m), hostSlice[T](x, m))
}

func (f *cpuFactors[T]) close() error { return f.f.Close() }
