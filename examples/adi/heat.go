package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"

	"github.com/bandsolve/bandsolve/tridiag"
)

// grid is one heat-equation problem u_t = Δu on the unit square (dims 2)
// or cube (dims 3), n unknowns per side, advanced by steps time steps of
// dt. With zero (Dirichlet) boundaries the unknowns are the interior
// points x_i = (i+1)·h, h = 1/(n+1); with periodic boundaries they are
// x_i = i·h, h = 1/n. The array is row-major: u[y·n + x] in 2D,
// u[(z·n + y)·n + x] in 3D.
type grid struct {
	dims     int
	n        int
	periodic bool
	steps    int
	dt       float64
}

func (g grid) h() float64 {
	if g.periodic {
		return 1 / float64(g.n)
	}
	return 1 / float64(g.n+1)
}

// r is the mesh ratio Δt/h².
func (g grid) r() float64 { h := g.h(); return g.dt / (h * h) }

// size is the number of unknowns, n^dims.
func (g grid) size() int {
	s := 1
	for range g.dims {
		s *= g.n
	}
	return s
}

// mode returns the exact solution at time t: a single Fourier mode that
// decays as e^{−λt}. Dirichlet: Π sin(π·x_k), λ = dims·π². Periodic:
// sin(2πx)·Π_{k>0} cos(2π·x_k), λ = dims·4π².
func (g grid) mode(t float64) []float64 {
	h := g.h()
	f := make([][]float64, g.dims) // one factor per axis and coordinate
	lambda := 0.0
	for k := range f {
		f[k] = make([]float64, g.n)
		for i := range f[k] {
			switch {
			case !g.periodic:
				f[k][i] = math.Sin(math.Pi * float64(i+1) * h)
			case k == 0:
				f[k][i] = math.Sin(2 * math.Pi * float64(i) * h)
			default:
				f[k][i] = math.Cos(2 * math.Pi * float64(i) * h)
			}
		}
		if g.periodic {
			lambda += 4 * math.Pi * math.Pi
		} else {
			lambda += math.Pi * math.Pi
		}
	}
	amp := math.Exp(-lambda * t)
	u := make([]float64, g.size())
	n := g.n
	for idx := range u {
		v := amp
		for k, rest := 0, idx; k < g.dims; k, rest = k+1, rest/n {
			v *= f[k][rest%n]
		}
		u[idx] = v
	}
	return u
}

// axis describes the grid lines along one axis: a batch shape on the
// row-major array, repeated on slabs slabs that lie slabStride apart. Only
// the y-axis of a 3-D array needs slabs: its lines start at z·n² + x, which
// no single stride can express.
type axis struct {
	shape      tridiag.Shape
	slabs      int
	slabStride int
}

// axes returns the lines of the grid along x, y (and z).
func (g grid) axes() []axis {
	n := g.n
	if g.dims == 2 {
		return []axis{
			{tridiag.Shape{N: n, G: n, Layout: tridiag.Strided(1, n)}, 1, 0}, // along x: rows
			{tridiag.Shape{N: n, G: n, Layout: tridiag.Strided(n, 1)}, 1, 0}, // along y: columns
		}
	}
	return []axis{
		{tridiag.Shape{N: n, G: n * n, Layout: tridiag.Strided(1, n)}, 1, 0},
		{tridiag.Shape{N: n, G: n, Layout: tridiag.Strided(n, 1)}, n, n * n}, // one z-slab at a time
		{tridiag.Shape{N: n, G: n * n, Layout: tridiag.Strided(n*n, 1)}, 1, 0},
	}
}

// implicit solves (I − ½r·δ²)·v = v in place along one axis, the constant
// matrix with −½r, 1 + r, −½r on its diagonals: with its factorization,
// made once, where the device keeps one (the CPU: each solve is then a
// forward and a back substitution, no division), else by SolveConst.
type implicit[T tridiag.Float] struct {
	plan    *tridiag.Plan[T]
	factors *tridiag.Factors[T] // nil: SolveConst
	h, r    T
}

func newImplicit[T tridiag.Float](dev tridiag.Device, shape tridiag.Shape, opts tridiag.Options, r T) (*implicit[T], error) {
	p, err := tridiag.NewPlan[T](dev, shape, opts)
	if err != nil {
		return nil, err
	}
	im := &implicit[T]{plan: p, h: r / 2, r: r}
	im.factors, err = p.FactorConst(context.Background(), -im.h, 1+r, -im.h)
	if errors.Is(err, tridiag.ErrOptions) {
		// The device keeps no factorization (a GPU).
		im.factors, err = nil, nil
	}
	if err != nil {
		p.Close()
		return nil, err
	}
	return im, nil
}

func (im *implicit[T]) solve(ctx context.Context, v []T) error {
	if im.factors != nil {
		return im.factors.Solve(ctx, v, v)
	}
	return im.plan.SolveConst(ctx, -im.h, 1+im.r, -im.h, v, v)
}

func (im *implicit[T]) Close() error {
	if im.factors != nil {
		im.factors.Close()
	}
	return im.plan.Close()
}

// stepper advances a field by ADI time steps on one device.
type stepper interface {
	// Step takes k time steps.
	Step(ctx context.Context, k int) error
	// Field copies the current solution to u (converted to float64).
	Field(u []float64) error
	Close() error
}

// hostPR is the 2-D Peaceman–Rachford stepper on host arrays, with one
// tridiag plan per axis made once: each step is
//
//	(I − ½r·δx²)·w = (I + ½r·δy²)·u    (explicit along y, implicit along x)
//	(I − ½r·δy²)·u = (I + ½r·δx²)·w    (explicit along x, implicit along y)
//
// where δ² is the second difference along an axis (periodic when the grid
// is). The implicit halves solve in place on the row-major arrays through
// strided layouts; the explicit halves are mulLines, the host twin of the
// GPU's MulDeviceConst.
type hostPR[T tridiag.Float] struct {
	ax     []axis
	px, py *implicit[T]
	u, w   []T
	r      T
	cyclic bool
}

func newHostPR[T tridiag.Float](dev tridiag.Device, g grid) (*hostPR[T], error) {
	s := &hostPR[T]{ax: g.axes(), r: T(g.r()), cyclic: g.periodic}
	// The matrices are constant and diagonally dominant, and the inputs are
	// our own finite arrays: no per-solve NaN scan in the hot loop.
	opts := tridiag.Options{Cyclic: g.periodic, SkipFiniteCheck: true}
	var err error
	if s.px, err = newImplicit(dev, s.ax[0].shape, opts, s.r); err != nil {
		return nil, err
	}
	if s.py, err = newImplicit(dev, s.ax[1].shape, opts, s.r); err != nil {
		s.px.Close()
		return nil, err
	}
	s.u, s.w = toT[T](g.mode(0)), make([]T, g.size())
	return s, nil
}

func (s *hostPR[T]) Step(ctx context.Context, k int) error {
	h, r := s.r/2, s.r
	for range k {
		mulLines(s.ax[1].shape, s.cyclic, false, h, 1-r, h, s.u, s.w)
		if err := s.px.solve(ctx, s.w); err != nil {
			return err
		}
		mulLines(s.ax[0].shape, s.cyclic, false, h, 1-r, h, s.w, s.u)
		if err := s.py.solve(ctx, s.u); err != nil {
			return err
		}
	}
	return nil
}

func (s *hostPR[T]) Field(u []float64) error {
	for i, v := range s.u {
		u[i] = float64(v)
	}
	return nil
}

func (s *hostPR[T]) Close() error { s.px.Close(); return s.py.Close() }

// hostDouglas is the 3-D Douglas (Douglas–Gunn, θ = ½) stepper on host
// arrays, in delta form with A_k = r·δ_k²:
//
//	f  = (A_x + A_y + A_z)·u
//	(I − ½A_x)·f₁ = f
//	(I − ½A_y)·f₂ = f₁
//	(I − ½A_z)·f₃ = f₂
//	u += f₃
//
// which is second order in time and space. Each implicit stage is a batch
// of tridiagonal solves along one axis, in place; the y stage runs slab by
// slab (one plan of n lines, called on each z-slab's slice). dev may be a
// GPU: the plans then copy each batch to the device and back.
type hostDouglas[T tridiag.Float] struct {
	ax     []axis
	plans  []*implicit[T]
	u, f   []T
	r      T
	cyclic bool
}

func newHostDouglas[T tridiag.Float](dev tridiag.Device, g grid) (*hostDouglas[T], error) {
	s := &hostDouglas[T]{ax: g.axes(), r: T(g.r()), cyclic: g.periodic}
	opts := tridiag.Options{Cyclic: g.periodic, SkipFiniteCheck: true}
	for _, a := range s.ax {
		p, err := newImplicit(dev, a.shape, opts, s.r)
		if err != nil {
			s.Close()
			return nil, err
		}
		s.plans = append(s.plans, p)
	}
	s.u, s.f = toT[T](g.mode(0)), make([]T, g.size())
	return s, nil
}

func (s *hostDouglas[T]) Step(ctx context.Context, k int) error {
	r := s.r
	for range k {
		clear(s.f)
		for _, a := range s.ax {
			for z := range a.slabs {
				o := z * a.slabStride
				mulLines(a.shape, s.cyclic, true, r, -2*r, r, s.u[o:], s.f[o:])
			}
		}
		for i, a := range s.ax {
			for z := range a.slabs {
				o := z * a.slabStride
				if err := s.plans[i].solve(ctx, s.f[o:]); err != nil {
					return err
				}
			}
		}
		for i, v := range s.f {
			s.u[i] += v
		}
	}
	return nil
}

func (s *hostDouglas[T]) Field(u []float64) error {
	for i, v := range s.u {
		u[i] = float64(v)
	}
	return nil
}

func (s *hostDouglas[T]) Close() error {
	for _, p := range s.plans {
		p.Close()
	}
	return nil
}

// mulLines computes y = T·x (or y += T·x when add) for every line of the
// batch shape, T being the constant tridiagonal matrix with a on the
// sub-diagonal, b on the diagonal and c on the super-diagonal (and in the
// corners when cyclic). It is the host counterpart of cuda's
// Plan.MulDeviceConst; the lines are split among the CPU's cores.
func mulLines[T tridiag.Float](sh tridiag.Shape, cyclic, add bool, a, b, c T, x, y []T) {
	n, G := sh.N, sh.G
	es, bs := sh.Layout.ElemStride, sh.Layout.BatchStride
	row := func(g, i int) {
		k := i*es + g*bs
		v := b * x[k]
		switch {
		case i > 0:
			v += a * x[k-es]
		case cyclic:
			v += a * x[k+(n-1)*es]
		}
		switch {
		case i < n-1:
			v += c * x[k+es]
		case cyclic:
			v += c * x[k-(n-1)*es]
		}
		if add {
			y[k] += v
		} else {
			y[k] = v
		}
	}
	// Walk memory in order: the index with the smaller stride innermost.
	outer, inner := n, G
	body := func(o int) {
		for in := range inner {
			row(in, o)
		}
	}
	if es < bs {
		outer, inner = G, n
		body = func(o int) {
			for in := range inner {
				row(o, in)
			}
		}
	}
	workers := min(runtime.GOMAXPROCS(0), outer, max(1, n*G/16384))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for o := w * outer / workers; o < (w+1)*outer/workers; o++ {
				body(o)
			}
		}()
	}
	wg.Wait()
}

func toT[T tridiag.Float](v []float64) []T {
	out := make([]T, len(v))
	for i, x := range v {
		out[i] = T(x)
	}
	return out
}

// relMaxError returns max|u − v| / max|v|.
func relMaxError(u, v []float64) float64 {
	var e, m float64
	for i := range u {
		e = max(e, math.Abs(u[i]-v[i]))
		m = max(m, math.Abs(v[i]))
	}
	return e / m
}

// scheme names the stepper of a grid.
func (g grid) scheme() string {
	if g.dims == 2 {
		return "Peaceman–Rachford"
	}
	return "Douglas"
}

func (g grid) describe() string {
	bc, sol := "zero (Dirichlet) boundaries", "sin πx·sin πy"
	if g.dims == 3 {
		sol += "·sin πz"
	}
	lambda := fmt.Sprintf("%dπ²", g.dims)
	if g.periodic {
		bc, sol = "periodic boundaries (cyclic solves)", "sin 2πx·cos 2πy"
		if g.dims == 3 {
			sol += "·cos 2πz"
		}
		lambda = fmt.Sprintf("%dπ²", 4*g.dims)
	}
	return fmt.Sprintf("%dD heat equation, %s ADI, %s: u = e^(−%s·t)·%s", g.dims, g.scheme(), bc, lambda, sol)
}
