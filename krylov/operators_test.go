package krylov

import (
	"context"
	"math"
	"math/rand/v2"
	"sort"
)

// Test operators on the host, written for the tests: a banded matrix in
// row-major band storage, a 2-D convection–diffusion operator, a sparse
// matrix in CSR, and the preconditioners that go with them.

type hostOp = Operator[[]float64]

// band is an n×n matrix with half-bandwidth k: row i holds columns
// i−k…i+k in a[i*(2k+1) : (i+1)*(2k+1)].
type band struct {
	n, k int
	a    []float64
}

func (m *band) at(i, j int) float64 {
	if d := j - i; d >= -m.k && d <= m.k && j >= 0 && j < m.n {
		return m.a[i*(2*m.k+1)+d+m.k]
	}
	return 0
}

func (m *band) set(i, j int, v float64) { m.a[i*(2*m.k+1)+j-i+m.k] = v }

func (m *band) Apply(_ context.Context, x, y []float64) error {
	w := 2*m.k + 1
	for i := range m.n {
		s := 0.0
		row := m.a[i*w : (i+1)*w]
		for d := -m.k; d <= m.k; d++ {
			if j := i + d; j >= 0 && j < m.n {
				s += row[d+m.k] * x[j]
			}
		}
		y[i] = s
	}
	return nil
}

// randomBand returns a band matrix with off-diagonal entries from U(−1,1)
// and diagonal entries dom·Σ|off| (a degree of diagonal dominance dom),
// with random signs on the diagonal when mixed is set.
func randomBand(rng *rand.Rand, n, k int, dom float64, mixed bool) *band {
	m := &band{n: n, k: k, a: make([]float64, n*(2*k+1))}
	for i := range n {
		s := 0.0
		for j := max(0, i-k); j <= min(n-1, i+k); j++ {
			if j != i {
				v := 2*rng.Float64() - 1
				m.set(i, j, v)
				s += math.Abs(v)
			}
		}
		d := dom*s + 1e-3
		if mixed && rng.IntN(2) == 0 {
			d = -d
		}
		m.set(i, i, d)
	}
	return m
}

// tridiagPart returns the tridiagonal part of m.
func (m *band) tridiagPart() *triSystems {
	t := &triSystems{a: make([]float64, m.n), b: make([]float64, m.n), c: make([]float64, m.n)}
	for i := range m.n {
		t.a[i], t.b[i], t.c[i] = m.at(i, i-1), m.at(i, i), m.at(i, i+1)
	}
	return t
}

// triSystems holds one or more independent tridiagonal systems back to back:
// a[i]x[i−1] + b[i]x[i] + c[i]x[i+1] (a and c are zero across system
// boundaries). Its methods solve with the Thomas algorithm.
type triSystems struct{ a, b, c []float64 }

// solve sets z = T⁻¹r in float64.
func (t *triSystems) solve(r, z []float64) {
	n := len(t.b)
	cp := make([]float64, n)
	den := t.b[0]
	cp[0] = t.c[0] / den
	z[0] = r[0] / den
	for i := 1; i < n; i++ {
		den = t.b[i] - t.a[i]*cp[i-1]
		cp[i] = t.c[i] / den
		z[i] = (r[i] - t.a[i]*z[i-1]) / den
	}
	for i := n - 2; i >= 0; i-- {
		z[i] -= cp[i] * z[i+1]
	}
}

// precond returns T⁻¹ as a float64 preconditioner.
func (t *triSystems) precond() Preconditioner[[]float64] {
	return PreconditionerFunc[[]float64](func(_ context.Context, r, z []float64) error {
		t.solve(r, z)
		return nil
	})
}

// solve32 returns T⁻¹ computed entirely in float32 (coefficients rounded
// to float32 too), for MixedPrecision.
func (t *triSystems) solve32() func(ctx context.Context, r, z []float32) error {
	n := len(t.b)
	a, b, c := make([]float32, n), make([]float32, n), make([]float32, n)
	for i := range n {
		a[i], b[i], c[i] = float32(t.a[i]), float32(t.b[i]), float32(t.c[i])
	}
	cp := make([]float32, n)
	return func(_ context.Context, r, z []float32) error {
		den := b[0]
		cp[0] = c[0] / den
		z[0] = r[0] / den
		for i := 1; i < n; i++ {
			den = b[i] - a[i]*cp[i-1]
			cp[i] = c[i] / den
			z[i] = (r[i] - a[i]*z[i-1]) / den
		}
		for i := n - 2; i >= 0; i-- {
			z[i] -= cp[i] * z[i+1]
		}
		return nil
	}
}

// convDiff is the 5-point central-difference discretisation of
// −Δu + β·(∂u/∂x + ∂u/∂y) on the unit square with an m×m interior grid and
// zero Dirichlet boundaries, scaled by h². With cell Péclet number βh/2 > 1
// it is strongly non-symmetric, with eigenvalues far off the real axis.
type convDiff struct {
	m    int
	beta float64
}

func (o convDiff) coef() (diag, west, east, south, north float64) {
	h := 1 / float64(o.m+1)
	p := o.beta * h / 2
	return 4, -1 - p, -1 + p, -1 - p, -1 + p
}

func (o convDiff) Apply(_ context.Context, x, y []float64) error {
	m := o.m
	d, w, e, s, nn := o.coef()
	for j := range m {
		for i := range m {
			k := j*m + i
			v := d * x[k]
			if i > 0 {
				v += w * x[k-1]
			}
			if i < m-1 {
				v += e * x[k+1]
			}
			if j > 0 {
				v += s * x[k-m]
			}
			if j < m-1 {
				v += nn * x[k+m]
			}
			y[k] = v
		}
	}
	return nil
}

// lines returns the x-direction tridiagonal part (one system per grid
// line): the line-Jacobi preconditioner.
func (o convDiff) lines() *triSystems {
	m := o.m
	d, w, e, _, _ := o.coef()
	t := &triSystems{a: make([]float64, m*m), b: make([]float64, m*m), c: make([]float64, m*m)}
	for k := range m * m {
		t.b[k] = d
		if k%m > 0 {
			t.a[k] = w
		}
		if k%m < m-1 {
			t.c[k] = e
		}
	}
	return t
}

// csr is a sparse matrix in compressed sparse row form.
type csr struct {
	n      int
	rowPtr []int
	col    []int
	val    []float64
}

func (m *csr) Apply(_ context.Context, x, y []float64) error {
	for i := range m.n {
		s := 0.0
		for p := m.rowPtr[i]; p < m.rowPtr[i+1]; p++ {
			s += m.val[p] * x[m.col[p]]
		}
		y[i] = s
	}
	return nil
}

// diag returns the diagonal of m.
func (m *csr) diag() []float64 {
	d := make([]float64, m.n)
	for i := range m.n {
		for p := m.rowPtr[i]; p < m.rowPtr[i+1]; p++ {
			if m.col[p] == i {
				d[i] = m.val[p]
			}
		}
	}
	return d
}

// randomSparse builds an n×n matrix with about perRow random off-diagonal
// entries per row from U(−1,1) and diagonal dom·Σ|off|, then scales row i
// by 10^U(−2,2): still diagonally dominant, but badly scaled, which Jacobi
// preconditioning undoes.
func randomSparse(rng *rand.Rand, n, perRow int, dom float64) *csr {
	entries := make([]map[int]float64, n)
	for i := range n {
		entries[i] = map[int]float64{}
		for range perRow {
			j := rng.IntN(n)
			if j != i {
				entries[i][j] = 2*rng.Float64() - 1
			}
		}
	}
	m := &csr{n: n, rowPtr: make([]int, n+1)}
	for i := range n {
		scale := math.Pow(10, 4*rng.Float64()-2)
		cols := make([]int, 0, len(entries[i])+1)
		for j := range entries[i] {
			cols = append(cols, j)
		}
		sort.Ints(cols) // sum in a fixed order: map order would change the diagonal's last bits
		s := 0.0
		for _, j := range cols {
			s += math.Abs(entries[i][j])
		}
		entries[i][i] = dom*s + 0.1
		cols = append(cols, i)
		sort.Ints(cols)
		for _, j := range cols {
			m.col = append(m.col, j)
			m.val = append(m.val, scale*entries[i][j])
		}
		m.rowPtr[i+1] = len(m.col)
	}
	return m
}

// jacobi returns the preconditioner z = r ./ d.
func jacobi(d []float64) Preconditioner[[]float64] {
	return PreconditionerFunc[[]float64](func(_ context.Context, r, z []float64) error {
		for i := range r {
			z[i] = r[i] / d[i]
		}
		return nil
	})
}

// residual returns ‖b − A·x‖/‖b‖ computed independently of the solver.
func residual(a hostOp, b, x []float64) float64 {
	y := make([]float64, len(b))
	if err := a.Apply(context.Background(), x, y); err != nil {
		panic(err)
	}
	var rr, bb float64
	for i := range b {
		d := b[i] - y[i]
		rr += d * d
		bb += b[i] * b[i]
	}
	return math.Sqrt(rr / bb)
}

// rhsFor returns b = A·xs for a random xs, and xs.
func rhsFor(rng *rand.Rand, a hostOp, n int) (b, xs []float64) {
	xs = make([]float64, n)
	for i := range xs {
		xs[i] = 2*rng.Float64() - 1
	}
	b = make([]float64, n)
	if err := a.Apply(context.Background(), xs, b); err != nil {
		panic(err)
	}
	return b, xs
}

// relErr returns ‖x − xs‖/‖xs‖.
func relErr(x, xs []float64) float64 {
	var d, s float64
	for i := range x {
		d += (x[i] - xs[i]) * (x[i] - xs[i])
		s += xs[i] * xs[i]
	}
	return math.Sqrt(d / s)
}

// ilu0 is the incomplete LU factorisation without fill of convDiff's
// 5-point matrix (lexicographic order): L is unit lower triangular with the
// west and south couplings divided by the pivots, U holds the pivots d and
// the east and north couplings. It is computed in T, so the float32 version
// is a float32 preconditioner throughout.
type ilu0[T float32 | float64] struct {
	m             int
	d             []T
	w, e, s, n, _ T
}

func newILU0[T float32 | float64](o convDiff) *ilu0[T] {
	m := o.m
	dd, w, e, s, n := o.coef()
	f := &ilu0[T]{m: m, d: make([]T, m*m), w: T(w), e: T(e), s: T(s), n: T(n)}
	for k := range m * m {
		v := T(dd)
		if k%m > 0 {
			v -= f.w * f.e / f.d[k-1]
		}
		if k >= m {
			v -= f.s * f.n / f.d[k-m]
		}
		f.d[k] = v
	}
	return f
}

// solve sets z = (LU)⁻¹r.
func (f *ilu0[T]) solve(r, z []T) {
	m := f.m
	// L·y = r (y in z): y_k = r_k − (w/d_{k−1})·y_{k−1} − (s/d_{k−m})·y_{k−m}.
	for k := range m * m {
		v := r[k]
		if k%m > 0 {
			v -= f.w / f.d[k-1] * z[k-1]
		}
		if k >= m {
			v -= f.s / f.d[k-m] * z[k-m]
		}
		z[k] = v
	}
	// U·z = y: z_k = (y_k − e·z_{k+1} − n·z_{k+m})/d_k.
	for k := m*m - 1; k >= 0; k-- {
		v := z[k]
		if k%m < m-1 {
			v -= f.e * z[k+1]
		}
		if k+m < m*m {
			v -= f.n * z[k+m]
		}
		z[k] = v / f.d[k]
	}
}
