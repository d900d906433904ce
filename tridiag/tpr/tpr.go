package tpr

import (
	"errors"
	"fmt"
	"math/bits"

	"github.com/bandsolve/bandsolve/tridiag/internal/tri"
)

// ErrSliceSize is returned (wrapped) for a slice size that is not a power of
// two ≥ 2.
var ErrSliceSize = errors.New("tpr: slice size must be a power of two ≥ 2")

// DefaultSliceSize returns the slice size S of the paper's fastest
// configuration ("TPR-fastest", §4.4, Table 4) for a system of n rows.
//
// Kernels 1 and 3 run one thread block of L = S/P threads per slice with
// P = 2 equations per thread. P = 2 already costs 40 registers per thread;
// among the configurations of Table 3 with ≥ 40 registers, L = 64 threads
// (2560 bytes of shared memory per block) maximises warp occupancy and
// resident blocks per SM, hence S = 128. Kernel 2 solves the M = N/S
// reduced equations of a problem with N/(S·P) threads of one block, which
// must stay ≤ 1024, so from N = 2^19 on S grows with N: Table 4 gives
// S = 256, 512, 1024, 2048 for N = 2^19 … 2^22, i.e. S = max(128, N/2048).
// That rule is continued beyond 2^22 (where the paper's kernels 1 and 3
// would need more than 1024 threads per block). N is rounded up to a power
// of two, and S is capped at that size (at least 2), the largest slice size
// that makes a difference for n rows.
func DefaultSliceSize(n int) int {
	np := nextPow2(max(n, 1))
	return min(max(128, np/2048), max(2, np))
}

// StableSliceSize returns the slice size S of the paper's "TPR-stable"
// configuration (§5.2, Figs. 14–16, Table 6) for a system of n rows.
//
// §5.2 observes that the slice size decides the numerical stability:
// larger slices let more equations take part in the sliced forward
// reduction (Stage 1), and the error grows as S shrinks, more so for large
// N. TPR-stable therefore uses S = 2048 (about 1.33x slower than
// TPR-fastest for one system in the paper's measurements), and keeps the
// Stage 2 thread limit of §4.4 (S ≥ N/2048) for larger N. As for
// DefaultSliceSize, S is capped at the next power of two ≥ n (at least 2):
// for n ≤ 2048 the whole system is one slice.
func StableSliceSize(n int) int {
	np := nextPow2(max(n, 1))
	return min(max(2048, np/2048), max(2, np))
}

// Layout is how Solve and the three stages cut a system into slices. Build
// it with NewLayout; the stages must all be given the same Layout.
type Layout struct {
	N    int // rows of the system
	S    int // slice size used: a power of two, 2 ≤ S ≤ max(2, next power of two ≥ N)
	M    int // number of slices, ⌈N/S⌉; rows N … M·S−1 are virtual identity rows
	MPad int // M rounded up to a power of two: the size of the Stage 2 reduction tree
}

// NewLayout returns the layout of an n-row system (n ≥ 0) for slice size s,
// which must be a power of two ≥ 2 (otherwise the error wraps
// ErrSliceSize). An s larger than the next power of two ≥ n is clamped to it
// (at least 2): a larger slice would only add identity rows and give the same
// solution.
func NewLayout(n, s int) (Layout, error) {
	if s < 2 || s&(s-1) != 0 {
		return Layout{}, fmt.Errorf("%w: got %d", ErrSliceSize, s)
	}
	if n < 0 {
		return Layout{}, fmt.Errorf("tpr: negative system size %d", n)
	}
	l := Layout{N: n, S: min(s, max(2, nextPow2(max(n, 1))))}
	l.M = (n + l.S - 1) / l.S
	if l.M > 0 {
		l.MPad = nextPow2(l.M)
	}
	return l, nil
}

// levels returns log2 S, the number of Eq. 5 steps of Stage 1.
func (l Layout) levels() int { return bits.TrailingZeros(uint(l.S)) }

// Eqs is a set of equations in structure-of-arrays form (the layout of the
// GPU's global memory): equation i is A[i], B[i], C[i], D[i]. Which unknowns
// A[i] and C[i] multiply depends on the buffer; see the stages.
type Eqs[T tri.Float] struct{ A, B, C, D []T }

// NewEqs returns room for n equations.
func NewEqs[T tri.Float](n int) Eqs[T] {
	buf := make([]T, 4*n)
	return Eqs[T]{A: buf[:n:n], B: buf[n : 2*n : 2*n], C: buf[2*n : 3*n : 3*n], D: buf[3*n:]}
}

// Len returns the number of equations e can hold (the shortest of its four
// slices).
func (e Eqs[T]) Len() int { return min(len(e.A), len(e.B), len(e.C), len(e.D)) }

func (e Eqs[T]) at(i int) eqn[T] { return eqn[T]{e.A[i], e.B[i], e.C[i], e.D[i]} }

func (e Eqs[T]) set(i int, q eqn[T]) { e.A[i], e.B[i], e.C[i], e.D[i] = q.a, q.b, q.c, q.d }

// Workspace holds the scratch memory of the stages (the shared memory and
// registers of one thread block: slice equations, per-thread results and
// unknowns) and, for Solve, the buffers passed between the stages (eq, bnd,
// xb; see the package documentation). NewWorkspace sizes it for one (n, s);
// Solve and the stages grow it when given a larger problem, so a Workspace
// can be reused for any sequence of calls, and calls that fit allocate
// nothing. It must not be used by two calls at the same time.
type Workspace[T tri.Float] struct {
	sh  []eqn[T] // the equations of one slice / the reduced system ("shared memory")
	reg []eqn[T] // new equations of one step before they are written back ("registers")
	xs  []T      // unknowns of one slice (with the two neighbours) / of the reduced system
	eq  Eqs[T]   // Stage 1 → Stage 3
	bnd Eqs[T]   // Stage 1 → Stage 2
	xb  []T      // Stage 2 → Stage 3
}

// NewWorkspace returns a workspace sized for systems of n rows solved with
// slice size s (an invalid s is sized as the next valid one; Solve still
// rejects it).
func NewWorkspace[T tri.Float](n, s int) *Workspace[T] {
	n = max(n, 0)
	lay, err := NewLayout(n, nextPow2(max(s, 2)))
	if err != nil {
		panic(err) // unreachable: the size is a valid power of two
	}
	w := &Workspace[T]{}
	w.fitScratch(lay)
	w.fitGlobal(lay)
	return w
}

// fitScratch makes sure w can serve the stages for lay, allocating a new w
// when it is nil.
func (w *Workspace[T]) fitScratch(lay Layout) *Workspace[T] {
	if w == nil {
		w = &Workspace[T]{}
	}
	if need := max(lay.S, lay.MPad); len(w.sh) < need {
		w.sh = make([]eqn[T], need)
		w.reg = make([]eqn[T], need)
	}
	if need := max(lay.S+1, lay.MPad); len(w.xs) < need {
		w.xs = make([]T, need)
	}
	return w
}

// fitGlobal makes sure w holds the inter-stage buffers of lay.
func (w *Workspace[T]) fitGlobal(lay Layout) {
	if w.eq.Len() < lay.N {
		w.eq = NewEqs[T](lay.N)
	}
	if w.bnd.Len() < 2*lay.M {
		w.bnd = NewEqs[T](2 * lay.M)
	}
	if len(w.xb) < lay.M {
		w.xb = make([]T, lay.M)
	}
}

// Solve solves one tridiagonal system by TPR with slice size s: the forward
// reduction of Fig. 8 (Stage 1 within the slices, the intermediate stage and
// Stage 2 on the reduced system) and the substitution of Fig. 10 (Stage 2,
// then Stage 3 within the slices). It is exactly Stage1, Stage2, Stage3 run
// in turn on the workspace's buffers.
//
// s must be a power of two ≥ 2 (otherwise the error wraps ErrSliceSize);
// values larger than n behave like s = the next power of two ≥ n. a, b, c,
// d and x must all have length n = len(b) (Solve panics otherwise); a[0]
// and c[n−1] are ignored. The inputs are not modified and x may alias d. A
// nil ws makes Solve allocate a temporary workspace.
//
// When a divisor is zero or not finite Solve returns a *tri.PivotError
// wrapping tri.ErrZeroPivot naming the original row of the equation whose
// divisor went bad (the first one met in the order of the stages' loops).
// x is then not modified: it is written only by Stage 3, which divides only
// by coefficients that Stage 1 has already checked.
func Solve[T tri.Float](a, b, c, d, x []T, s int, ws *Workspace[T]) error {
	n := len(b)
	checkLens(n, a, c, d, x)
	lay, err := NewLayout(n, s)
	if err != nil {
		return err
	}
	if n == 0 {
		return nil
	}
	ws = ws.fitScratch(lay)
	ws.fitGlobal(lay)
	if err := Stage1(lay, a, b, c, d, ws.eq, ws.bnd, ws); err != nil {
		return err
	}
	if err := Stage2(lay, ws.bnd, ws.xb, ws); err != nil {
		return err
	}
	return Stage3(lay, a, b, c, d, ws.eq, ws.xb, x, ws)
}

func checkLens[T tri.Float](n int, s ...[]T) {
	for _, v := range s {
		if len(v) != n {
			panic(fmt.Sprintf("tpr: slice of length %d for a system of %d rows", len(v), n))
		}
	}
}

// nextPow2 returns the smallest power of two ≥ v (v ≥ 1).
func nextPow2(v int) int { return 1 << bits.Len(uint(v-1)) }

// pivotErr reports a bad divisor in the equation of the given row.
func pivotErr(row int) error { return &tri.PivotError{Row: row, Err: tri.ErrZeroPivot} }
