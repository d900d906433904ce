// Package problems generates the sparse test systems of the Krylov
// methods, in the classes of Naumov's suite (sptrsv-levelset-naumov2012):
// symmetric positive definite ones for CG (2-D and 3-D Poisson,
// anisotropic diffusion with varying coefficients, a circuit-like graph
// Laplacian) and non-symmetric ones for BiCGStab (upwind
// convection–diffusion). Sizes are parameters; every generator is
// deterministic (seeded where it draws random numbers) and returns a CSR
// matrix with sorted columns and a stored diagonal.
//
// The grids are m×m (or m×m×m) interior points of the unit square (cube)
// with zero Dirichlet boundaries, numbered lexicographically (x fastest),
// and the operators are scaled by h², h = 1/(m+1), so that the 2-D
// Laplacian has the stencil [−1; −1 4 −1; −1].
package problems

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/bandsolve/bandsolve/sparse"
)

// builder appends rows with ascending columns to a CSR matrix.
type builder struct{ a *sparse.CSR }

func newBuilder(n, perRow int) *builder {
	a := &sparse.CSR{N: n, M: n, RowPtr: make([]int32, 1, n+1)}
	a.Col = make([]int32, 0, n*perRow)
	a.Val = make([]float64, 0, n*perRow)
	return &builder{a: a}
}

func (b *builder) add(j int, v float64) {
	b.a.Col = append(b.a.Col, int32(j))
	b.a.Val = append(b.a.Val, v)
}

func (b *builder) endRow() { b.a.RowPtr = append(b.a.RowPtr, int32(len(b.a.Col))) }

// stencil2D assembles the 5-point operator whose row (x, y) has the
// off-diagonal couplings west, east, south, north (absent on the
// boundary) and the diagonal diag.
func stencil2D(m int, coef func(x, y int) (diag, west, east, south, north float64)) *sparse.CSR {
	b := newBuilder(m*m, 5)
	for y := range m {
		for x := range m {
			k := y*m + x
			d, w, e, s, n := coef(x, y)
			if y > 0 {
				b.add(k-m, s)
			}
			if x > 0 {
				b.add(k-1, w)
			}
			b.add(k, d)
			if x < m-1 {
				b.add(k+1, e)
			}
			if y < m-1 {
				b.add(k+m, n)
			}
			b.endRow()
		}
	}
	return b.a
}

// Poisson2D returns the 5-point Laplacian on an m×m grid: order m², SPD,
// diagonal 4 and off-diagonal −1.
func Poisson2D(m int) *sparse.CSR {
	return stencil2D(m, func(int, int) (float64, float64, float64, float64, float64) { return 4, -1, -1, -1, -1 })
}

// Poisson3D returns the 7-point Laplacian on an m×m×m grid: order m³,
// SPD, diagonal 6 and off-diagonal −1.
func Poisson3D(m int) *sparse.CSR {
	b := newBuilder(m*m*m, 7)
	mm := m * m
	for z := range m {
		for y := range m {
			for x := range m {
				k := z*mm + y*m + x
				if z > 0 {
					b.add(k-mm, -1)
				}
				if y > 0 {
					b.add(k-m, -1)
				}
				if x > 0 {
					b.add(k-1, -1)
				}
				b.add(k, 6)
				if x < m-1 {
					b.add(k+1, -1)
				}
				if y < m-1 {
					b.add(k+m, -1)
				}
				if z < m-1 {
					b.add(k+mm, -1)
				}
				b.endRow()
			}
		}
	}
	return b.a
}

// field is a smooth random function on the unit square: a sum of a few
// Fourier modes with random frequencies, phases and amplitudes.
type field struct{ kx, ky, ph, amp [6]float64 }

func newField(seed uint64) field {
	rng := rand.New(rand.NewPCG(seed, 0x616e69736f))
	var f field
	for i := range f.kx {
		f.kx[i] = 2 * math.Pi * float64(1+rng.IntN(4))
		f.ky[i] = 2 * math.Pi * float64(1+rng.IntN(4))
		f.ph[i] = 2 * math.Pi * rng.Float64()
		f.amp[i] = (2*rng.Float64() - 1) / float64(len(f.kx))
	}
	return f
}

func (f field) at(x, y float64) float64 {
	s := 0.0
	for i := range f.kx {
		s += f.amp[i] * math.Sin(f.kx[i]*x+f.ph[i]) * math.Cos(f.ky[i]*y)
	}
	return s
}

// Anisotropic2D returns the 5-point discretisation of
// −∂ₓ(κ ∂ₓu) − ∂ᵧ(ε·κ ∂ᵧu) on an m×m grid, with the coefficient
// κ(x, y) = 10^(contrast·g(x, y)) for a smooth random g with |g| ≤ 1
// (seeded), taken at the midpoints of the cell faces so that the matrix
// is symmetric: SPD, an M-matrix, with couplings varying by up to
// 10^(2·contrast) and an anisotropy ε (ε ≪ 1 weakens the y couplings).
func Anisotropic2D(m int, eps, contrast float64, seed uint64) *sparse.CSR {
	g := newField(seed)
	h := 1 / float64(m+1)
	kappa := func(x, y float64) float64 { return math.Pow(10, contrast*g.at(x, y)) }
	return stencil2D(m, func(ix, iy int) (float64, float64, float64, float64, float64) {
		// Face midpoints computed alike from both sides of the face.
		x, y := float64(ix+1)*h, float64(iy+1)*h
		xw, xe := (float64(ix)+0.5)*h, (float64(ix)+1.5)*h
		ys, yn := (float64(iy)+0.5)*h, (float64(iy)+1.5)*h
		w := kappa(xw, y)
		e := kappa(xe, y)
		s := eps * kappa(x, ys)
		n := eps * kappa(x, yn)
		return w + e + s + n, -w, -e, -s, -n
	})
}

// ConvectionDiffusion2D returns the discretisation of −Δu + w·∇u on an
// m×m grid, central differences for the diffusion and first-order upwind
// differences for the convection, with the recirculating velocity
//
//	w(x, y) = pe·((2y−1)(1−(2x−1)²), −(2x−1)(1−(2y−1)²))
//
// (|w| ≤ pe, pe the global Péclet number). Non-symmetric for pe > 0,
// an M-matrix, weakly diagonally dominant by rows for every pe: the
// non-symmetric problem of BiCGStab.
func ConvectionDiffusion2D(m int, pe float64) *sparse.CSR {
	h := 1 / float64(m+1)
	return stencil2D(m, func(ix, iy int) (float64, float64, float64, float64, float64) {
		x, y := float64(ix+1)*h, float64(iy+1)*h
		wx := pe * (2*y - 1) * (1 - (2*x-1)*(2*x-1))
		wy := -pe * (2*x - 1) * (1 - (2*y-1)*(2*y-1))
		w := -1 - h*math.Max(wx, 0)
		e := -1 - h*math.Max(-wx, 0)
		s := -1 - h*math.Max(wy, 0)
		n := -1 - h*math.Max(-wy, 0)
		return 4 + h*(math.Abs(wx)+math.Abs(wy)), w, e, s, n
	})
}

// GraphLaplacian returns a circuit-like conductance matrix of order n: the
// Laplacian D − W of a graph whose node i is wired to its neighbours i+1
// and i+⌈√n⌉ (a mesh of local wires) and, with probability 1/20, to a
// random node (a long wire), every wire with a conductance drawn
// log-uniformly from [10⁻², 10²] (seeded), plus shift·dᵢᵢ on every
// diagonal entry (the leak to ground that makes it SPD; shift > 0).
func GraphLaplacian(n int, shift float64, seed uint64) (*sparse.CSR, error) {
	if n < 1 || !(shift > 0) {
		return nil, fmt.Errorf("%w: graph Laplacian of order %d with shift %g (want n ≥ 1, shift > 0)", sparse.ErrShape, n, shift)
	}
	rng := rand.New(rand.NewPCG(seed, 0x63697263))
	w := int(math.Ceil(math.Sqrt(float64(n))))
	c := sparse.NewCOO(n, n, 8*n)
	deg := make([]float64, n)
	wire := func(i, j int) {
		if i == j {
			return
		}
		g := math.Pow(10, 4*rng.Float64()-2)
		c.Add(i, j, -g)
		c.Add(j, i, -g)
		deg[i] += g
		deg[j] += g
	}
	for i := range n {
		if i+1 < n {
			wire(i, i+1)
		}
		if i+w < n {
			wire(i, i+w)
		}
		if rng.IntN(20) == 0 {
			wire(i, rng.IntN(n))
		}
	}
	for i := range n {
		d := deg[i]
		if d == 0 {
			d = 1
		}
		c.Add(i, i, d*(1+shift))
	}
	return c.ToCSR()
}

// OnesRHS returns b = A·e with e = (1, …, 1), the right-hand side of
// Naumov's experiments (the exact solution is e).
func OnesRHS(a *sparse.CSR) []float64 {
	e := make([]float64, a.M)
	for i := range e {
		e[i] = 1
	}
	b := make([]float64, a.N)
	if err := a.MulVec(e, b); err != nil {
		panic(err) // a's own dimensions: cannot fail
	}
	return b
}

// Problem is one system of the suite.
type Problem struct {
	Name string
	A    *sparse.CSR
	// SPD says whether A is symmetric positive definite (CG and IC(0)
	// apply); otherwise BiCGStab and ILU(0).
	SPD bool
}

// Suite returns the suite at grid size m (m² rows for the 2-D problems,
// about m² for the 3-D Poisson and the graph Laplacian): Poisson 2-D and
// 3-D, anisotropic diffusion (ε = 10⁻², contrast 1), the graph Laplacian
// (shift 10⁻³) and convection–diffusion (Péclet 100 and 1000).
func Suite(m int) []Problem {
	m3 := max(2, int(math.Round(math.Cbrt(float64(m*m)))))
	gl, err := GraphLaplacian(m*m, 1e-3, 1)
	if err != nil {
		panic(err) // m*m ≥ 1 and a positive shift: cannot fail
	}
	return []Problem{
		{Name: fmt.Sprintf("poisson2d-%d", m), A: Poisson2D(m), SPD: true},
		{Name: fmt.Sprintf("poisson3d-%d", m3), A: Poisson3D(m3), SPD: true},
		{Name: fmt.Sprintf("aniso2d-%d", m), A: Anisotropic2D(m, 1e-2, 1, 1), SPD: true},
		{Name: fmt.Sprintf("circuit-%d", m*m), A: gl, SPD: true},
		{Name: fmt.Sprintf("convdiff2d-%d-pe100", m), A: ConvectionDiffusion2D(m, 100)},
		{Name: fmt.Sprintf("convdiff2d-%d-pe1000", m), A: ConvectionDiffusion2D(m, 1000)},
	}
}
