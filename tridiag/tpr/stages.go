package tpr

import (
	"fmt"

	"github.com/bandsolve/bandsolve/tridiag/internal/tri"
)

// eqn is one equation a·x_left + b·x_centre + c·x_right = d (a float4 /
// double4 of the paper's kernels).
type eqn[T tri.Float] struct{ a, b, c, d T }

// Virtual equations (see the package documentation, "Stage 1" and "Any N").
func identity[T tri.Float]() eqn[T] { return eqn[T]{0, 1, 0, 0} }

// passLeft stands for a left neighbour outside the slice: x_v − x_out = 0,
// written a = −1 (on x_out), b = 1 (on x_v). With it, Eq. 5 gives a' = a_i
// exactly, keeping E_i's coupling to the unknown left of the slice.
func passLeft[T tri.Float]() eqn[T] { return eqn[T]{-1, 1, 0, 0} }

// passRight is the mirror image for a right neighbour outside the slice:
// b = 1 (on x_v), c = −1 (on x_out); Eq. 5 gives c' = c_i exactly.
func passRight[T tri.Float]() eqn[T] { return eqn[T]{0, 1, -1, 0} }

// eq5 is the coefficient update of Eq. 5: E_i (m) updated with its
// neighbours E_{i−u} (l) and E_{i+u} (r) of the previous level. Every
// product is rounded on its own (no fused multiply-add) and the sums are
// taken left to right, as written in the paper.
func eq5[T tri.Float](l, m, r eqn[T]) eqn[T] {
	s1 := m.a / l.b
	s2 := m.c / r.b
	return eqn[T]{
		a: -T(l.a * s1),
		b: T(m.b-T(l.c*s1)) - T(r.a*s2),
		c: -T(r.c * s2),
		d: T(m.d-T(l.d*s1)) - T(r.d*s2),
	}
}

// substitute is Eq. 7: x_i = (d_i − a_i·x_left − c_i·x_right)/b_i.
func substitute[T tri.Float](e eqn[T], xl, xr T) T {
	return T(T(e.d-T(e.a*xl))-T(e.c*xr)) / e.b
}

// load returns row i of the original system as read by the kernels: a[0]
// and c[n−1] as 0, and rows i ≥ n as the virtual identity row.
func load[T tri.Float](a, b, c, d []T, i int) eqn[T] {
	n := len(b)
	if i >= n {
		return identity[T]()
	}
	e := eqn[T]{a[i], b[i], c[i], d[i]}
	if i == 0 {
		e.a = 0
	}
	if i == n-1 {
		e.c = 0
	}
	return e
}

// Stage1 is the first kernel (§4.3, Fig. 11): the sliced forward reduction,
// steps 1 … log2 S + 1 of Fig. 8, for every slice independently (one
// thread block per slice on the GPU).
//
// a, b, c, d are the system (length lay.N; a[0] and c[N−1] read as 0). It
// writes
//
//   - eq.A/B/C/D[i] for every row i < N with odd local index l = i mod S:
//     the equation the even sub-system tree left for row i, at the last step
//     that updated it (step k for l ≡ 2^k − 1 mod 2^(k+1), step log2 S for
//     l = S−1). For 1 ≤ l < S−1 it couples x_{i−2^k}, x_i, x_{i+2^k} (x_{jS−1}
//     being the last unknown of the slice above). Rows with even l are not
//     written: Stage 3 uses their original equations. eq must hold ≥ N
//     equations.
//   - bnd[2j] = first'_j (row jS after step log2 S + 1, in x_{jS−1}, x_{jS},
//     x_{jS+S−1}) and bnd[2j+1] = last_j (row jS+S−1 after step log2 S, in
//     x_{jS−1}, x_{jS+S−1}, x_{jS+S}), for every slice j < M. bnd must hold
//     ≥ 2M equations.
//
// ws provides scratch (nil: allocated). Stage1 panics on short buffers. A
// zero or non-finite divisor b of row i gives a *tri.PivotError{Row: i}.
func Stage1[T tri.Float](lay Layout, a, b, c, d []T, eq, bnd Eqs[T], ws *Workspace[T]) error {
	n, S, K := lay.N, lay.S, lay.levels()
	checkLens(n, a, b, c, d)
	if eq.Len() < n || bnd.Len() < 2*lay.M {
		panic(fmt.Sprintf("tpr: Stage1 buffers hold %d and %d equations, need %d and %d", eq.Len(), bnd.Len(), n, 2*lay.M))
	}
	ws = ws.fitScratch(lay)
	sh, reg := ws.sh[:S], ws.reg[:S]

	// One thread block per slice: B_x = M (slice j = the paper's p = jS+1).
	for j := 0; j < lay.M; j++ {
		base := j * S

		// Load the slice into shared memory (Fig. 11 lines 7–11): level 0 is
		// the original equations; rows ≥ N are virtual identity rows.
		for l := range S {
			sh[l] = load(a, b, c, d, base+l)
		}

		// Stage 1 steps k = 1 … log2 S (Fig. 8 lines 4–16), u = 2^(k−1).
		for k := 1; k <= K; k++ {
			u, step := 1<<(k-1), 1<<k

			// Read phase: every active equation, in parallel, reads level
			// k−1 (sh) and computes its level-k equation into a register.
			//
			// Odd sub-system (Fig. 8 lines 8–9: i = p, p+2^k, …): l ≡ 0 mod
			// 2^k. Its first row has no left neighbour in the slice.
			for l := 0; l < S; l += step {
				left := passLeft[T]()
				if l-u >= 0 {
					left = sh[l-u]
				}
				right := sh[l+u]
				if err := checkDivisors(base, l, u, left, right); err != nil {
					return err
				}
				reg[l] = eq5(left, sh[l], right)
			}
			// Even sub-system (Fig. 8 lines 11–12: i = p+2^k−1, …):
			// l ≡ 2^k−1 mod 2^k. Its last row has no right neighbour.
			for l := step - 1; l < S; l += step {
				left := sh[l-u]
				right := passRight[T]()
				if l+u < S {
					right = sh[l+u]
				}
				if err := checkDivisors(base, l, u, left, right); err != nil {
					return err
				}
				reg[l] = eq5(left, sh[l], right)
			}
			// Write phase (after the barrier): level k replaces level k−1
			// at the active positions; the others keep their last level.
			for l := 0; l < S; l += step {
				sh[l] = reg[l]
			}
			for l := step - 1; l < S; l += step {
				sh[l] = reg[l]
			}
		}

		// Step log2 S + 1 (Fig. 8 lines 18–24, update(p, +(u−1)) with
		// u = S): the first row (odd tree) is updated with the last row
		// (even tree). Both couple to x_{jS+S}; eliminate it:
		// first' = first − r·last, r = c_first/c_last. c_last is the
		// original c of row jS+S−1 (the even tree's last row always had
		// a pass-through right neighbour), and c_first is c_last times the
		// multipliers of the odd tree, so c_last = 0 means c_first = 0 and
		// nothing is to be eliminated (r = 0).
		first, last := sh[0], sh[S-1]
		var r T
		if last.c != 0 {
			r = first.c / last.c
		}
		sh[0] = eqn[T]{
			a: first.a - T(r*last.a),
			b: first.b,
			c: -T(r * last.b),
			d: first.d - T(r*last.d),
		}

		// Store (Fig. 11 lines 35–38): the auxiliary buffer gets the two
		// boundary equations of the slice, and the rows with odd l (the
		// paper's even-indexed rows) their last-level equation.
		bnd.set(2*j, sh[0])
		bnd.set(2*j+1, sh[S-1])
		for l := 1; l < S && base+l < n; l += 2 {
			eq.set(base+l, sh[l])
		}
	}
	return nil
}

// checkDivisors checks the divisors b of the two neighbours l−u and l+u of
// slice-local row l (virtual neighbours have b = 1).
func checkDivisors[T tri.Float](base, l, u int, left, right eqn[T]) error {
	if tri.BadDivisor(left.b) {
		return pivotErr(base + l - u)
	}
	if tri.BadDivisor(right.b) {
		return pivotErr(base + l + u)
	}
	return nil
}

// Stage2 is the second kernel (§4.3): the steps of Fig. 8 and Fig. 10 that
// need the whole system, on the 2M boundary equations Stage 1 wrote to bnd
// (2 per slice, in the 2M unknowns x_{jS} and x_{jS+S−1}).
//
// The intermediate stage (Fig. 8 lines 26–29) eliminates x_{(j+1)S} from
// last_j with first'_{j+1}, leaving M equations R_j in the last unknowns
// X_j = x_{jS+S−1} of the slices; these are padded with identity equations
// to MPad (a power of two), reduced by log2 MPad − 1 steps of Eq. 5
// (Fig. 8 lines 31–39), the remaining two equations are solved by Eq. 6
// (Fig. 10 lines 6–10; one equation, M = 1, by x = d/b) and the other X_j
// substituted back by Eq. 7 (Fig. 10 lines 12–20).
//
// It writes xb[j] = X_j for j < M (xb must hold ≥ M values); X_{M−1} is 0
// when row MS−1 is a virtual row. ws provides scratch (nil: allocated).
// A bad divisor is reported with the row of its equation: jS+S−1 for R_j
// (the determinant of Eq. 6 counts as the divisor of its second
// equation's row), jS for first'_j.
func Stage2[T tri.Float](lay Layout, bnd Eqs[T], xb []T, ws *Workspace[T]) error {
	M, MP, S, n := lay.M, lay.MPad, lay.S, lay.N
	if M == 0 {
		return nil
	}
	if bnd.Len() < 2*M || len(xb) < M {
		panic(fmt.Sprintf("tpr: Stage2 buffers hold %d equations and %d values, need %d and %d", bnd.Len(), len(xb), 2*M, M))
	}
	ws = ws.fitScratch(lay)
	sh, reg, xs := ws.sh[:MP], ws.reg[:MP], ws.xs[:MP]
	row := func(j int) int { return min(j*S+S-1, n-1) } // row of R_j

	// Intermediate stage (Fig. 8 lines 27–28: for i = S, 2S, …, N−S,
	// update(i, +1)): for every slice j, in parallel, last_j is updated with
	// its right neighbour first'_{j+1} (the last slice: with the identity,
	// its c is 0) and keeps its coupling to X_{j−1} (pass-through left).
	for j := range M {
		right := identity[T]()
		if j+1 < M {
			right = bnd.at(2 * (j + 1))
			if tri.BadDivisor(right.b) {
				return pivotErr((j + 1) * S)
			}
		}
		reg[j] = eq5(passLeft[T](), bnd.at(2*j+1), right)
	}
	for j := range MP {
		if j < M {
			sh[j] = reg[j]
		} else {
			sh[j] = identity[T]() // padding of the reduced system
		}
	}

	// Stage 2 forward reduction (Fig. 8 lines 31–39: for i = 2^k, 2·2^k, …,
	// update(i, ±u)): step t = 1 … log2 MPad − 1 updates R_j for
	// j ≡ 2^t−1 mod 2^t with R_{j∓2^(t−1)}; beyond the end: identity.
	levels := 0
	for 1<<levels < MP {
		levels++
	}
	for t := 1; t < levels; t++ {
		u, step := 1<<(t-1), 1<<t
		for j := step - 1; j < MP; j += step { // read phase
			left, right := sh[j-u], identity[T]()
			if j+u < MP {
				right = sh[j+u]
			}
			if tri.BadDivisor(left.b) {
				return pivotErr(row(j - u))
			}
			if tri.BadDivisor(right.b) {
				return pivotErr(row(j + u))
			}
			reg[j] = eq5(left, sh[j], right)
		}
		for j := step - 1; j < MP; j += step { // write phase
			sh[j] = reg[j]
		}
	}

	// First substitution step (Fig. 10 lines 6–10, Eq. 6): the two
	// remaining equations, i = MPad/2 − 1 and i+u = MPad − 1.
	if MP == 1 {
		if tri.BadDivisor(sh[0].b) {
			return pivotErr(row(0))
		}
		xs[0] = sh[0].d / sh[0].b
	} else {
		i, i2 := MP/2-1, MP-1
		e1, e2 := sh[i], sh[i2]
		den := T(e2.b*e1.b) - T(e1.c*e2.a)
		if tri.BadDivisor(den) {
			if r := i2*S + S - 1; r < n {
				return pivotErr(r)
			}
			return pivotErr(row(i))
		}
		xs[i] = T(T(e2.b*e1.d)-T(e1.c*e2.d)) / den
		xs[i2] = T(T(e2.d*e1.b)-T(e1.d*e2.a)) / den
	}

	// Remaining substitution steps of Stage 2 (Fig. 10 lines 12–20, Eq. 7):
	// stride u = MPad/4 … 1, unknowns j ≡ u−1 mod 2u, each from the equation
	// of the step that last updated it. X_{−1} (left of the first slice)
	// has a zero coefficient and is read as 0.
	for t := levels - 1; t >= 1; t-- {
		u := 1 << (t - 1)
		for j := u - 1; j < MP; j += 2 * u {
			e := sh[j]
			if tri.BadDivisor(e.b) {
				return pivotErr(row(j))
			}
			var xl T
			if j-u >= 0 {
				xl = xs[j-u]
			}
			xs[j] = substitute(e, xl, xs[j+u])
		}
	}
	copy(xb[:M], xs[:M])
	return nil
}

// Stage3 is the third kernel (§4.3): the sliced backward substitution
// (Fig. 10 lines 22–40), for every slice independently (one thread block
// per slice).
//
// Slice j reads X_{j−1} = xb[j−1] (0 for j = 0) and X_j = xb[j], the
// equations of its rows from eq (rows with odd l, as written by Stage 1)
// and from a, b, c, d (rows with even l: the "replace" loop of Fig. 10),
// solves its unknowns level by level with Eq. 7 and writes x for all its
// rows < N (x[jS+S−1] = X_j). a, b, c, d, x have length lay.N; x may alias d
// (a slice reads d only for its own rows, before writing them). ws provides
// scratch (nil: allocated). A bad divisor b of row i gives
// *tri.PivotError{Row: i}, with the slices before it already written.
func Stage3[T tri.Float](lay Layout, a, b, c, d []T, eq Eqs[T], xb, x []T, ws *Workspace[T]) error {
	n, S, K := lay.N, lay.S, lay.levels()
	checkLens(n, a, b, c, d, x)
	if eq.Len() < n || len(xb) < lay.M {
		panic(fmt.Sprintf("tpr: Stage3 buffers hold %d equations and %d values, need %d and %d", eq.Len(), len(xb), n, lay.M))
	}
	ws = ws.fitScratch(lay)
	// xs[l+1] is x_{jS+l}: xs[0] is X_{j−1}, xs[S] is X_j.
	xs := ws.xs[:S+1]

	for j := 0; j < lay.M; j++ { // one thread block per slice
		base := j * S
		xs[0] = 0
		if j > 0 {
			xs[0] = xb[j-1]
		}
		xs[S] = xb[j]

		// Levels k = log2 S − 1 … 1 (Fig. 10 lines 30–40 with I = u = 2^k):
		// rows l ≡ 2^k−1 mod 2^(k+1), from the equation the even tree left
		// for them at step k (stride 2^k). Each level writes unknowns that
		// this level does not read.
		for k := K - 1; k >= 1; k-- {
			w := 1 << k
			for l := w - 1; l < S-1; l += 2 * w {
				e := identity[T]()
				if base+l < n {
					e = eq.at(base + l)
				}
				if tri.BadDivisor(e.b) {
					return pivotErr(base + l)
				}
				xs[l+1] = substitute(e, xs[l+1-w], xs[l+1+w])
			}
		}
		// Last level (I = u = 1): every even l, from its original equation
		// (replace(i, 0) of Fig. 10 line 26).
		for l := 0; l < S; l += 2 {
			e := load(a, b, c, d, base+l)
			if tri.BadDivisor(e.b) {
				return pivotErr(base + l)
			}
			xs[l+1] = substitute(e, xs[l], xs[l+2])
		}
		// Write the slice's unknowns to global memory.
		for l := 0; l < S && base+l < n; l++ {
			x[base+l] = xs[l+1]
		}
	}
	return nil
}
