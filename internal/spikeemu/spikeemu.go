//go:build cudaemu

// spikeemu runs the truncated SPIKE kernels of
// ptx/src/band_spike.cuh, with the window kernels of band_window.cuh, on
// the CPU through the fiber emulation of internal/bandemu, in the order
// spikegpu.Plan launches them and decoded by internal/gpu/spikegpu, so that
// the whole GPU pipeline can be checked against package spike bit for bit
// without a GPU:
//
//	go test -tags cudaemu ./internal/spikeemu
package spikeemu

/*
#cgo CXXFLAGS: -std=c++17 -O2 -DBAND_EMU -I${SRCDIR}/../bandemu -I${SRCDIR}/../../ptx/src
#include <stdint.h>
typedef long long i64;
typedef unsigned long long u64;
void emu_band_factor_window_f32(float *a, int n, int K, const int *bounds, int P, int ul, double tol, int *status, int threads);
void emu_band_factor_window_f64(double *a, int n, int K, const int *bounds, int P, int ul, double tol, int *status, int threads);
void emu_band_solve_window_f32(const float *a, int n, int K, const int *bounds, int P, int ul, float *b, int nrhs, i64 ldb, int sweeps, int cpb);
void emu_band_solve_window_f64(const double *a, int n, int K, const int *bounds, int P, int ul, double *b, int nrhs, i64 ldb, int sweeps, int cpb);
void emu_spike_copy_f32(const float *src, float *dst1, float *dst2, int n, int K, u64 *bad);
void emu_spike_copy_f64(const double *src, double *dst1, double *dst2, int n, int K, u64 *bad);
void emu_spike_ulblock_f32(const float *src, int n, int K, const int *bounds, int l, float *dst, int m2);
void emu_spike_ulblock_f64(const double *src, int n, int K, const int *bounds, int l, double *dst, int m2);
void emu_spike_factor_wide_f32(float *a, int n, int K, const int *bounds, int P, int ul, double tol, int *status, int threads, int shmem);
void emu_spike_factor_wide_f64(double *a, int n, int K, const int *bounds, int P, int ul, double tol, int *status, int threads, int shmem);
void emu_spike_tips_f32(const float *lu, int n, int K, const int *bounds, int nI, const float *ulf, int nul, int l, float *v, float *w);
void emu_spike_tips_f64(const double *lu, int n, int K, const int *bounds, int nI, const double *ulf, int nul, int l, double *v, double *w);
void emu_spike_reduced_f32(const float *v, const float *w, int K, int nI, float *r, int *piv, double tau, int *rstat, int threads);
void emu_spike_reduced_f64(const double *v, const double *w, int K, int nI, double *r, int *piv, double tau, int *rstat, int threads);
void emu_spike_vcopy_f32(const float *src, float *dst, int n, u64 *bad, int *flag);
void emu_spike_vcopy_f64(const double *src, double *dst, int n, u64 *bad, int *flag);
void emu_spike_rsolve_f32(const float *lu, int n, int K, const int *bounds, int nI, const float *v, const float *w, const float *r, const int *piv, const float *g, float *x);
void emu_spike_rsolve_f64(const double *lu, int n, int K, const int *bounds, int nI, const double *v, const double *w, const double *r, const int *piv, const double *g, double *x);
void emu_spike_factor_blocked_f32(float *a, int n, int K, const int *bounds, int P, int ul, double tol, int *status, int threads, int shmem);
void emu_spike_factor_blocked_f64(double *a, int n, int K, const int *bounds, int P, int ul, double tol, int *status, int threads, int shmem);
void emu_spike_tips_blocked_f32(const float *lu, int n, int K, const int *bounds, int nI, const float *ulf, int nul, int l, float *v, float *w);
void emu_spike_tips_blocked_f64(const double *lu, int n, int K, const int *bounds, int nI, const double *ulf, int nul, int l, double *v, double *w);
void emu_spike_rform_f32(const float *v, const float *w, int K, int nI, float *r);
void emu_spike_rform_f64(const double *v, const double *w, int K, int nI, double *r);
void emu_spike_rlu_f32(float *r, int K, int nI, int *piv, double tau, int *rstat, int threads);
void emu_spike_rlu_f64(double *r, int K, int nI, int *piv, double tau, int *rstat, int threads);
void emu_spike_flags(const int *lust, int PL, const int *ulst, int PU, const int *rst, int nI, const u64 *bad, int *hdr);
*/
import "C"

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/bandsolve/bandsolve/banded"
	"github.com/bandsolve/bandsolve/internal/gpu/spikegpu"
	"github.com/bandsolve/bandsolve/spike"
	"github.com/bandsolve/bandsolve/tuning"
)

// Float is float32 or float64.
type Float = banded.Float

func is64[T Float]() bool {
	var z T
	_, ok := any(z).(float64)
	return ok
}

func ptr[T any](s []T) unsafe.Pointer {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Pointer(&s[0])
}

func fp[T Float](s []T) unsafe.Pointer { return ptr(s) }

// Plan is spikegpu.Plan with host slices for device memory and the
// emulated kernels for launches.
type Plan[T Float] struct {
	L        *spikegpu.Layout
	opts     spike.Options
	lu, ul   []T
	v, w, r  []T
	piv      []int32
	st       []int32
	b32, u32 []int32
	g        []T
	a        *banded.Band[T]
	factored bool
	boosts   []spike.Boost
	reduced  []int
}

// NewPlan lays out a plan for the H100's limits with the given choice of
// factorization kernel.
func NewPlan[T Float](n, k int, opts spike.Options, kern tuning.SpikeKernel) (*Plan[T], error) {
	elem := 4
	if is64[T]() {
		elem = 8
	}
	l, err := spikegpu.NewLayout(n, k, elem, opts, tuning.H100, 0, 0, kern)
	if err != nil {
		return nil, err
	}
	p := &Plan[T]{L: l, opts: opts, lu: make([]T, (2*k+1)*n), st: make([]int32, l.StLen+1), g: make([]T, n)}
	for _, b := range l.Bounds {
		p.b32 = append(p.b32, int32(b))
	}
	if l.Coupled {
		p.ul = make([]T, (2*k+1)*l.ULN)
		for _, b := range l.ULBounds {
			p.u32 = append(p.u32, int32(b))
		}
		kk := (p.L.P - 1) * k * k
		p.v, p.w, p.r = make([]T, kk), make([]T, kk), make([]T, kk)
		p.piv = make([]int32, (p.L.P-1)*k)
	}
	p.resetB()
	return p, nil
}

func (p *Plan[T]) resetB() {
	p.st[p.L.StBadB], p.st[p.L.StBadB+1], p.st[p.L.StFlagB] = -1, -1, 0
}

func (p *Plan[T]) factorKernel(a []T, n int, bounds []int32, ul bool, st []int32) {
	f := p.L.Factor
	P := len(bounds) - 1
	u := C.int(0)
	if ul {
		u = 1
	}
	cb, cs := (*C.int)(ptr(bounds)), (*C.int)(ptr(st))
	switch {
	case f.Blocked && is64[T]():
		C.emu_spike_factor_blocked_f64((*C.double)(fp(a)), C.int(n), C.int(p.L.K), cb, C.int(P), u, C.double(p.L.Tol), cs, C.int(f.Threads), C.int(f.Shared))
	case f.Blocked:
		C.emu_spike_factor_blocked_f32((*C.float)(fp(a)), C.int(n), C.int(p.L.K), cb, C.int(P), u, C.double(p.L.Tol), cs, C.int(f.Threads), C.int(f.Shared))
	case f.Wide && is64[T]():
		C.emu_spike_factor_wide_f64((*C.double)(fp(a)), C.int(n), C.int(p.L.K), cb, C.int(P), u, C.double(p.L.Tol), cs, C.int(f.Threads), C.int(f.Shared))
	case f.Wide:
		C.emu_spike_factor_wide_f32((*C.float)(fp(a)), C.int(n), C.int(p.L.K), cb, C.int(P), u, C.double(p.L.Tol), cs, C.int(f.Threads), C.int(f.Shared))
	case is64[T]():
		C.emu_band_factor_window_f64((*C.double)(fp(a)), C.int(n), C.int(p.L.K), cb, C.int(P), u, C.double(p.L.Tol), cs, C.int(f.Threads))
	default:
		C.emu_band_factor_window_f32((*C.float)(fp(a)), C.int(n), C.int(p.L.K), cb, C.int(P), u, C.double(p.L.Tol), cs, C.int(f.Threads))
	}
}

func (p *Plan[T]) sweep(b []T) {
	n, k, P := p.L.N, p.L.K, p.L.P
	if is64[T]() {
		C.emu_band_solve_window_f64((*C.double)(fp(p.lu)), C.int(n), C.int(k), (*C.int)(ptr(p.b32)), C.int(P), 0, (*C.double)(fp(b)), 1, C.i64(n), 3, 1)
	} else {
		C.emu_band_solve_window_f32((*C.float)(fp(p.lu)), C.int(n), C.int(k), (*C.int)(ptr(p.b32)), C.int(P), 0, (*C.float)(fp(b)), 1, C.i64(n), 3, 1)
	}
}

// Factor runs the factorization pipeline on a (left unchanged).
func (p *Plan[T]) Factor(a *banded.Band[T]) error {
	l := p.L
	n, k := l.N, l.K
	if a.N != n || a.K != k || len(a.Data) != (2*k+1)*n {
		return fmt.Errorf("%w: band N=%d K=%d, plan N=%d K=%d", banded.ErrShape, a.N, a.K, n, k)
	}
	p.factored, p.boosts, p.reduced = false, nil, nil
	for i := 0; i < l.StBad; i++ {
		p.st[i] = 0
	}
	p.st[l.StBad], p.st[l.StBad+1] = -1, -1
	bad := (*C.u64)(unsafe.Pointer(&p.st[l.StBad]))
	var dst2 []T
	if l.Coupled && !l.Compact {
		dst2 = p.ul
	}
	if is64[T]() {
		C.emu_spike_copy_f64((*C.double)(fp(a.Data)), (*C.double)(fp(p.lu)), (*C.double)(fp(dst2)), C.int(n), C.int(k), bad)
	} else {
		C.emu_spike_copy_f32((*C.float)(fp(a.Data)), (*C.float)(fp(p.lu)), (*C.float)(fp(dst2)), C.int(n), C.int(k), bad)
	}
	if l.Compact {
		if is64[T]() {
			C.emu_spike_ulblock_f64((*C.double)(fp(a.Data)), C.int(n), C.int(k), (*C.int)(ptr(p.b32)), C.int(l.ULBlock), (*C.double)(fp(p.ul)), C.int(l.ULN))
		} else {
			C.emu_spike_ulblock_f32((*C.float)(fp(a.Data)), C.int(n), C.int(k), (*C.int)(ptr(p.b32)), C.int(l.ULBlock), (*C.float)(fp(p.ul)), C.int(l.ULN))
		}
	}
	p.factorKernel(p.lu, n, p.b32, false, p.st[l.StLU:])
	var ulst, rst unsafe.Pointer
	nI := l.P - 1
	if l.Coupled {
		p.factorKernel(p.ul, l.ULN, p.u32, true, p.st[l.StUL:])
		ulN, ulL := l.ULN, 0
		if l.Compact {
			ulL = l.ULBlock
		}
		cb := (*C.int)(ptr(p.b32))
		rs, pv := (*C.int)(ptr(p.st[l.StRed:])), (*C.int)(ptr(p.piv))
		switch {
		case l.Factor.Blocked && is64[T]():
			C.emu_spike_tips_blocked_f64((*C.double)(fp(p.lu)), C.int(n), C.int(k), cb, C.int(nI), (*C.double)(fp(p.ul)), C.int(ulN), C.int(ulL), (*C.double)(fp(p.v)), (*C.double)(fp(p.w)))
			C.emu_spike_rform_f64((*C.double)(fp(p.v)), (*C.double)(fp(p.w)), C.int(k), C.int(nI), (*C.double)(fp(p.r)))
			C.emu_spike_rlu_f64((*C.double)(fp(p.r)), C.int(k), C.int(nI), pv, C.double(l.Tau), rs, C.int(l.ReducedThreads))
		case l.Factor.Blocked:
			C.emu_spike_tips_blocked_f32((*C.float)(fp(p.lu)), C.int(n), C.int(k), cb, C.int(nI), (*C.float)(fp(p.ul)), C.int(ulN), C.int(ulL), (*C.float)(fp(p.v)), (*C.float)(fp(p.w)))
			C.emu_spike_rform_f32((*C.float)(fp(p.v)), (*C.float)(fp(p.w)), C.int(k), C.int(nI), (*C.float)(fp(p.r)))
			C.emu_spike_rlu_f32((*C.float)(fp(p.r)), C.int(k), C.int(nI), pv, C.double(l.Tau), rs, C.int(l.ReducedThreads))
		case is64[T]():
			C.emu_spike_tips_f64((*C.double)(fp(p.lu)), C.int(n), C.int(k), cb, C.int(nI), (*C.double)(fp(p.ul)), C.int(ulN), C.int(ulL), (*C.double)(fp(p.v)), (*C.double)(fp(p.w)))
			C.emu_spike_reduced_f64((*C.double)(fp(p.v)), (*C.double)(fp(p.w)), C.int(k), C.int(nI), (*C.double)(fp(p.r)), pv, C.double(l.Tau), rs, C.int(l.ReducedThreads))
		default:
			C.emu_spike_tips_f32((*C.float)(fp(p.lu)), C.int(n), C.int(k), cb, C.int(nI), (*C.float)(fp(p.ul)), C.int(ulN), C.int(ulL), (*C.float)(fp(p.v)), (*C.float)(fp(p.w)))
			C.emu_spike_reduced_f32((*C.float)(fp(p.v)), (*C.float)(fp(p.w)), C.int(k), C.int(nI), (*C.float)(fp(p.r)), pv, C.double(l.Tau), rs, C.int(l.ReducedThreads))
		}
		ulst, rst = ptr(p.st[l.StUL:]), ptr(p.st[l.StRed:])
	}
	C.emu_spike_flags((*C.int)(ptr(p.st[l.StLU:])), C.int(l.P), (*C.int)(ulst), C.int(nI), (*C.int)(rst), C.int(nI), bad, (*C.int)(ptr(p.st[l.StHdr:])))
	if p.st[l.StHdr] == 0 {
		p.factored = true
		return nil
	}
	if err := l.FactorError(p.st); err != nil {
		return err
	}
	lu, ul, red := l.BoostCounts(p.st)
	b, err := spikegpu.Boosts(l, lu, ul, a, p.opts)
	if err != nil {
		return err
	}
	p.boosts, p.reduced, p.factored = b, red, true
	return nil
}

// Header is the flag word of the last factorization.
func (p *Plan[T]) Header() int32 { return p.st[p.L.StHdr] }

// Boosts are the boosted pivots of the last factorization.
func (p *Plan[T]) Boosts() []spike.Boost { return p.boosts }

// ReducedBoosts are the interfaces whose reduced matrix was boosted.
func (p *Plan[T]) ReducedBoosts() []int { return p.reduced }

// Spikes returns copies of V_i⁽ᵇ⁾ and W_{i+1}⁽ᵗ⁾.
func (p *Plan[T]) Spikes(i int) (v, w []T) {
	if !p.L.Coupled {
		return nil, nil
	}
	kk := p.L.K * p.L.K
	return append([]T(nil), p.v[i*kk:(i+1)*kk]...), append([]T(nil), p.w[i*kk:(i+1)*kk]...)
}

// Solve runs the solve pipeline; x may be b.
func (p *Plan[T]) Solve(b, x []T) error {
	l := p.L
	if !p.factored {
		return errors.New("spikeemu: not factored")
	}
	n := l.N
	bad := (*C.u64)(unsafe.Pointer(&p.st[l.StBadB]))
	flag := (*C.int)(unsafe.Pointer(&p.st[l.StFlagB]))
	vcopy := func(src, dst []T) {
		if is64[T]() {
			C.emu_spike_vcopy_f64((*C.double)(fp(src)), (*C.double)(fp(dst)), C.int(n), bad, flag)
		} else {
			C.emu_spike_vcopy_f32((*C.float)(fp(src)), (*C.float)(fp(dst)), C.int(n), bad, flag)
		}
	}
	if !l.Coupled {
		vcopy(b, x)
		p.sweep(x)
	} else {
		vcopy(b, p.g)
		p.sweep(p.g)
		if &x[0] != &b[0] {
			copy(x, b)
		}
		nI, k := l.P-1, l.K
		cb := (*C.int)(ptr(p.b32))
		if is64[T]() {
			C.emu_spike_rsolve_f64((*C.double)(fp(p.lu)), C.int(n), C.int(k), cb, C.int(nI), (*C.double)(fp(p.v)), (*C.double)(fp(p.w)), (*C.double)(fp(p.r)), (*C.int)(ptr(p.piv)), (*C.double)(fp(p.g)), (*C.double)(fp(x)))
		} else {
			C.emu_spike_rsolve_f32((*C.float)(fp(p.lu)), C.int(n), C.int(k), cb, C.int(nI), (*C.float)(fp(p.v)), (*C.float)(fp(p.w)), (*C.float)(fp(p.r)), (*C.int)(ptr(p.piv)), (*C.float)(fp(p.g)), (*C.float)(fp(x)))
		}
		p.sweep(x)
	}
	if p.st[l.StFlagB] != 0 {
		err := l.SolveError(p.st)
		p.resetB()
		return err
	}
	return nil
}
