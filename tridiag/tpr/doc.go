// Package tpr solves a tridiagonal system by the Tree Partitioning Reduction
// method (TPR) of Diéguez, Amor and Doallo, "Tree Partitioning Reduction: A
// New Parallel Partition Method for Solving Tridiagonal Systems" (ACM TOMS,
// 2019): the forward reduction of §3.1 (Fig. 8, Eq. 5), the backward
// substitution of §3.2 (Fig. 10, Eqs. 6–7), cut into the three CUDA stages
// of §4.3 (Fig. 11), with the slice sizes of §4.4 (Tables 3–4) and §5.2.
//
// The code is the step-faithful CPU twin of the GPU kernels: every step is
// written as "for every active equation, in parallel: read the previous
// level, write the new level" (the reads of a step go to per-thread
// registers first and are written back afterwards, as a kernel does with
// shared memory and __syncthreads), and every floating-point operation is
// rounded separately in a fixed order (products are converted explicitly, so
// Go never contracts a*b+c into a fused multiply-add). A kernel doing the
// same operations in the same order, compiled with -fmad=false (or with
// __fmul_rn/__fadd_rn), reproduces the results bit for bit.
//
// # Notation
//
// Rows are 0-based here (the paper counts from 1). A system of N rows is cut
// into M slices of S rows (S a power of two); slice j holds rows
// jS … jS+S−1 and local index l = i − jS. An equation E_i reads
// a·x_left + b·x_i + c·x_right = d; which unknowns "left" and "right" are
// changes from step to step (the paper's {i−u, i, i+u} labels).
//
// # Stage 1: sliced forward reduction (Fig. 8 lines 3–24)
//
// Each slice is reduced on its own (one thread block per slice). Step
// k = 1 … log2 S uses u = 2^(k−1) and applies Eq. 5
//
//	s1 = a_i/b_{i−u},  s2 = c_i/b_{i+u}
//	a' = −a_{i−u}·s1,  b' = b_i − c_{i−u}·s1 − a_{i+u}·s2
//	c' = −c_{i+u}·s2,  d' = d_i − d_{i−u}·s1 − d_{i+u}·s2
//
// to the two sub-systems of the slice: the "odd" one (the paper's red,
// 1-based odd rows) updates l = 0, 2^k, 2·2^k, …; the "even" one (blue)
// updates l = 2^k−1, 2·2^k−1, …, so at step 1 every row of the slice is
// updated and afterwards the two trees are disjoint. A neighbour outside the
// slice (l−u < 0 for the odd tree's first row, l+u ≥ S for the even tree's
// last row) is not available to the thread block; it is replaced by a
// virtual pass-through equation, x_virtual − x_outside = 0 (a = −1, b = 1,
// c = 0, d = 0 on the left; a = 0, b = 1, c = −1, d = 0 on the right),
// with which Eq. 5 keeps the coupling to the unknown just outside the slice
// unchanged (it is the paper's "identity equation assigned to the third
// element", written so that the coupling survives). After log2 S steps
//
//	first row (odd tree):  E_{jS}     in x_{jS−1}, x_{jS},     x_{jS+S}
//	last row (even tree):  E_{jS+S−1} in x_{jS−1}, x_{jS+S−1}, x_{jS+S}
//
// Step log2 S + 1 (Fig. 8 lines 18–24, update(p, +(u−1))) updates the first
// row with the last one. Both carry the unknown x_{jS+S} of the next slice;
// eliminating it leaves the first row in x_{jS−1}, x_{jS}, x_{jS+S−1}:
//
//	r = c_first/c_last (r = 0 when c_last = 0: then c_first = 0 too)
//	first' = first − r·last
//
// This is the one step that is not of the form of Eq. 5 (the unknown
// eliminated is not the centre of the other equation, so the multiplier
// divides by c_last, not by a diagonal); see "Deviations" below.
//
// # Stage 2: the reduced system (Fig. 8 lines 26–39, Fig. 10 lines 1–20)
//
// Stage 1 leaves two equations per slice, first'_j and last_j: 2M equations
// in the 2M unknowns x_{jS} and x_{jS+S−1}. The intermediate stage
// (Fig. 8 lines 27–28, update(i, +1)) updates last_j with first'_{j+1},
// eliminating x_{(j+1)S}; this leaves M equations R_j in the M unknowns
// X_j = x_{jS+S−1} (the last row of every slice), a tridiagonal system
// that is reduced by cyclic reduction (Eq. 5, stride doubling, log2 M − 1
// steps over j = 1, 3, 5, … then 3, 7, 11, …), solved at the top by the
// two-by-two formula Eq. 6 and substituted back down (Eq. 7, log2 M − 1
// steps). Stage 2 writes the M values X_j.
//
// # Stage 3: sliced substitution (Fig. 10 lines 22–40)
//
// Each slice, knowing X_{j−1} (the last unknown of the slice above) and X_j,
// solves its other unknowns by Eq. 7 with the equations of the "replace"
// loop of Fig. 10: a row with odd l uses the equation the even tree left for
// it in Stage 1 (its last level), a row with even l its original equation.
// The levels run l = S/2−1 (stride S/2), then S/4−1, 3S/4−1 (stride S/4), …,
// then every odd l (stride 2), then every even l (stride 1, originals).
//
// # Any N
//
// The paper writes everything for N and S powers of two and, for other N
// (end of §3.1), splits N = 2^n + N' and pads N' with copies of its last
// equation. This implementation pads instead with virtual identity rows
// a = c = 0, b = 1, d = 0 (solution 0) after row N−1, up to M·S rows with
// M = ⌈N/S⌉, and the reduced system with identity equations up to MPad, the
// next power of two ≥ M. a[0] and c[N−1] are read as 0, so no real row
// couples to a virtual one and the padded system is block-diagonal
// diag(A, I): the identity rows stay exactly identity through every Eq. 5
// update (their multipliers are exactly 0) and never change a real row
// (subtracting 0·s is exact), whatever S is. Virtual rows are never stored:
// Stage 1 keeps them in its scratch only, Stage 3 reads them as identity.
// A slice size S larger than the next power of two ≥ N would only add
// identity rows, so it is clamped to that size (and to 2 at least).
//
// # Data between the stages ("global memory")
//
//	Stage 1 writes  eq   (N rows):  for every row with odd l, its last-level
//	                                equation (on the GPU these overwrite the
//	                                input arrays in place, Fig. 11 line 38;
//	                                rows with even l keep the original
//	                                equation, which Stage 3 reads from a,b,c,d)
//	                bnd  (2M rows): bnd[2j] = first'_j, bnd[2j+1] = last_j
//	                                (the auxiliary buffer of Fig. 11 line 36;
//	                                first'_0 is written but never read)
//	Stage 2 reads   bnd, writes xb (M values): xb[j] = X_j = x_{jS+S−1}
//	                (0 for a virtual last row)
//	Stage 3 reads   a, b, c, d, eq, xb; writes x (all N values)
//
// # Deviations from the paper
//
//   - Step log2 S + 1 (first row updated with the last row of the slice) is
//     written by the paper as an Eq. 5 update, which cannot eliminate the
//     unknown that both rows share; it is done as the elimination above,
//     with the multiplier c_first/c_last (c_last is the original c of the
//     slice's last row; when it is zero, no elimination is needed).
//   - Arbitrary N is padded with identity rows, not with copies of the last
//     equation; the reduced system is padded to a power of two the same way.
//   - A single slice (M = 1) has a one-equation reduced system, solved as
//     x = d/b (Eq. 4) instead of Eq. 6.
//   - The paper's kernels store the Stage 1 results over their inputs; here
//     the inputs are never modified and Stage 1 writes into separate buffers.
//
// # Stability
//
// TPR does not pivot. When a divisor (a diagonal coefficient b, or the
// determinant of Eq. 6) is zero or not finite, Solve returns a
// *tri.PivotError wrapping tri.ErrZeroPivot whose Row is the original row
// of the equation whose divisor went bad. §5.2 of the paper finds the error
// to grow as S shrinks (Fig. 14, Table 6): larger slices let more equations
// take part in the sliced reduction. DefaultSliceSize and StableSliceSize
// give the paper's "fastest" and "stable" choices.
package tpr
