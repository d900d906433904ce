package krylov

import (
	"fmt"
	"runtime"
	"sync"
)

const (
	// parallelMin is the vector length from which HostSpace (and
	// MixedPrecision) split their loops over GOMAXPROCS goroutines.
	parallelMin = 1 << 16
	// dotBlock is the block length of the inner products: each block is
	// summed on its own and the block sums are added in order, so a result
	// does not depend on the number of goroutines.
	dotBlock = 1 << 12
)

// HostSpace is the Space of []float64 vectors of length N in host memory.
// Loops are plain Go; from 65536 entries on they are split over GOMAXPROCS
// goroutines. Inner products are summed block-wise in a fixed order, so they
// are reproducible whatever the number of goroutines. The zero value is the
// space of length-0 vectors; use HostSpace{N: n}.
type HostSpace struct {
	N int
}

var _ Space[[]float64] = HostSpace{}

func (s HostSpace) check(v []float64) error {
	if len(v) != s.N {
		return fmt.Errorf("%w: vector of length %d in a space of length %d", ErrDimension, len(v), s.N)
	}
	return nil
}

// New returns a zero vector of length N.
func (s HostSpace) New() ([]float64, error) {
	if s.N < 0 {
		return nil, fmt.Errorf("%w: negative length %d", ErrDimension, s.N)
	}
	return make([]float64, s.N), nil
}

// Free does nothing: the garbage collector owns host vectors.
func (HostSpace) Free([]float64) {}

// Close does nothing: a HostSpace holds no resources. It makes HostSpace
// a SpaceCloser, the space NewSpace returns for the CPU.
func (HostSpace) Close() error { return nil }

// Copy sets dst = src.
func (s HostSpace) Copy(dst, src []float64) error {
	if err := s.check(dst); err != nil {
		return err
	}
	if err := s.check(src); err != nil {
		return err
	}
	parallelFor(s.N, func(lo, hi int) { copy(dst[lo:hi], src[lo:hi]) })
	return nil
}

// Zero sets v = 0.
func (s HostSpace) Zero(v []float64) error {
	if err := s.check(v); err != nil {
		return err
	}
	parallelFor(s.N, func(lo, hi int) { clear(v[lo:hi]) })
	return nil
}

// Axpby sets y = α·x + β·y (y is not read when β = 0).
func (s HostSpace) Axpby(alpha float64, x []float64, beta float64, y []float64) error {
	if err := s.check(x); err != nil {
		return err
	}
	if err := s.check(y); err != nil {
		return err
	}
	parallelFor(s.N, func(lo, hi int) { axpby(alpha, x[lo:hi], beta, y[lo:hi]) })
	return nil
}

func axpby(alpha float64, x []float64, beta float64, y []float64) {
	x = x[:len(y)]
	switch beta {
	case 1:
		for i, xi := range x {
			y[i] += alpha * xi
		}
	case 0:
		for i, xi := range x {
			y[i] = alpha * xi
		}
	default:
		for i, xi := range x {
			y[i] = alpha*xi + beta*y[i]
		}
	}
}

// Dots sets out[k] = xs[k]·ys[k], reading all vectors block by block in
// one sweep.
func (s HostSpace) Dots(xs, ys [][]float64, out []float64) error {
	if err := checkDots(len(xs), len(ys), len(out)); err != nil {
		return err
	}
	for k := range xs {
		if err := s.check(xs[k]); err != nil {
			return err
		}
		if err := s.check(ys[k]); err != nil {
			return err
		}
	}
	m := len(out)
	if m == 0 {
		return nil
	}
	nb := (s.N + dotBlock - 1) / dotBlock
	w := workers(s.N)
	if w == 1 {
		clear(out)
		for b := range nb {
			lo, hi := b*dotBlock, min((b+1)*dotBlock, s.N)
			for k := range m {
				out[k] += dot(xs[k][lo:hi], ys[k][lo:hi])
			}
		}
		return nil
	}
	part := make([]float64, nb*m)
	var wg sync.WaitGroup
	for g := range w {
		b0, b1 := g*nb/w, (g+1)*nb/w
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := b0; b < b1; b++ {
				lo, hi := b*dotBlock, min((b+1)*dotBlock, s.N)
				for k := range m {
					part[b*m+k] = dot(xs[k][lo:hi], ys[k][lo:hi])
				}
			}
		}()
	}
	wg.Wait()
	clear(out)
	for b := range nb {
		for k := range m {
			out[k] += part[b*m+k]
		}
	}
	return nil
}

// dot is a plain inner product with four partial sums.
func dot(x, y []float64) float64 {
	y = y[:len(x)]
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(x); i += 4 {
		s0 += x[i] * y[i]
		s1 += x[i+1] * y[i+1]
		s2 += x[i+2] * y[i+2]
		s3 += x[i+3] * y[i+3]
	}
	for ; i < len(x); i++ {
		s0 += x[i] * y[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// workers is the number of goroutines a loop over n entries uses.
func workers(n int) int {
	if n < parallelMin {
		return 1
	}
	return max(1, min(runtime.GOMAXPROCS(0), n/(parallelMin/4)))
}

// parallelFor runs body over [0, n) split into contiguous ranges, one per
// worker; serially below parallelMin.
func parallelFor(n int, body func(lo, hi int)) {
	w := workers(n)
	if w == 1 {
		body(0, n)
		return
	}
	var wg sync.WaitGroup
	for g := range w {
		lo, hi := g*n/w, (g+1)*n/w
		wg.Add(1)
		go func() {
			defer wg.Done()
			body(lo, hi)
		}()
	}
	wg.Wait()
}
