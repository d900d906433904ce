// Package partition solves a tridiagonal system by the partition method
// (H. H. Wang, "A parallel method for tridiagonal equations", ACM TOMS,
// 1981; in the form of the partition solvers of Sun, Zhang and Ni, 1989,
// close to the "SPIKE" family): the system is cut into chunks of p
// consecutive rows, every chunk is eliminated on its own, the chunks'
// first and last unknowns are found from a small reduced tridiagonal
// system, and every chunk's interior is then recovered from its two
// boundary values.
//
// It is the step-faithful CPU twin of the GPU kernels partition_p*_f32/_f64
// (ptx/src/partition.cuh), in which one thread owns one chunk: every stage
// is written as "for every chunk (or reduced row), in parallel", the same
// floating-point operations are done in the same order, and every product
// is rounded on its own (T(...) around it, so Go never fuses a
// multiply-add; the PTX is built with -fmad=false). The results agree bit
// for bit.
//
// # Notation
//
// Rows are 0-based; row i reads a_i·x_{i−1} + b_i·x_i + c_i·x_{i+1} = d_i,
// with a_0 and c_{n−1} read as 0. Chunk k holds rows s = k·p … e =
// min(s+p, n) − 1, m = e − s + 1 rows (only the last chunk can be short);
// there are T = ⌈n/p⌉ chunks. Inside a chunk, local index j = i − s.
//
// # Stage 1: eliminating a chunk (one thread per chunk)
//
// Downward sweep (rows j = 1 … m−1, eliminating the sub-diagonal). Row j
// is brought to the form
//
//	x_j + α_j·x_s + γ_j·x_{j+1} = δ_j                                  (1)
//
// where x_s is the chunk's first unknown (the eliminated sub-diagonal
// becomes a "spike" in the column of x_s). With the start values γ_0 = 0,
// α_0 = −1, δ_0 = 0 (row 0 read as the identity x_0 = x_s), for j = 1 …
// m−1:
//
//	piv = b_j − a_j·γ_{j−1}           (a divisor: must be finite, ≠ 0)
//	r   = 1/piv
//	γ_j = c_j·r
//	α_j = −((a_j·α_{j−1})·r)
//	δ_j = (d_j − a_j·δ_{j−1})·r
//
// (for j = 1 this is exactly γ_1 = c_1/b_1, α_1 = a_1/b_1, δ_1 = d_1/b_1
// up to the rounding of r). Equation (1) for j = m−1 is the chunk's last
// reduced equation, in x_s, x_e and x_{e+1} (the next chunk's first
// unknown):
//
//	L_k:  α_{m−1}·x_s + 1·x_e + γ_{m−1}·x_{e+1} = δ_{m−1}
//
// Upward sweep (rows j = m−2 … 1, eliminating the super-diagonal of the
// interior): every interior unknown is written as
//
//	x_j = y_j − v_j·x_s − w_j·x_e
//
// starting from x_{m−1} = x_e, i.e. (y, v, w) = (0, 0, −1), and by (1)
//
//	y_j = δ_j − γ_j·y_{j+1},  v_j = α_j − γ_j·v_{j+1},  w_j = −(γ_j·w_{j+1})
//
// Only (y_1, v_1, w_1) is kept: substituting x_1 into the chunk's original
// first row a_0·x_{s−1} + b_0·x_s + c_0·x_1 = d_0 gives the chunk's first
// reduced equation, in x_{s−1} (the previous chunk's last unknown), x_s and
// x_e:
//
//	F_k:  a_0·x_{s−1} + (b_0 − c_0·v_1)·x_s + (−(c_0·w_1))·x_e = d_0 − c_0·y_1
//
// A chunk of two rows has no interior: the start values make F_k its first
// row unchanged (b_0 − c_0·0, −(c_0·(−1)) = c_0, d_0 − c_0·0). A chunk of
// one row (only the last chunk can have one, or every chunk when p = 1)
// contributes its original row as its only reduced equation.
//
// # Stage 2: the reduced system
//
// The reduced unknowns are the chunks' first and last unknowns in the
// order x_{s_0}, x_{e_0}, x_{s_1}, x_{e_1}, …: reduced row 2k is F_k, row
// 2k+1 is L_k (when p = 1 reduced row k is original row k). F_k couples
// x_{e_{k−1}}, x_{s_k}, x_{e_k} and L_k couples x_{s_k}, x_{e_k},
// x_{s_{k+1}}: neighbours in this order, so the reduced system of
//
//	R = 2T, or 2T − 1 when the last chunk has one row (R = n when p = 1)
//
// rows is tridiagonal. (It is the Schur complement of the chunks'
// interiors, each L row scaled by its last pivot: diagonally dominant when
// the matrix is.) Solve solves it by cyclic reduction, each divisor
// entering as a reciprocal q_j = 1/B_j. Level k = 1 … K, K = ⌊log2 R⌋
// (Levels), stride u = 2^(k−1): the rows j ≡ u−1 (mod 2u) are eliminated
// into the rows i ≡ 2u−1 (mod 2u), which change in place, for every such
// i in parallel (a missing neighbour i+u ≥ R read as the identity
// equation a = c = d = 0, q = 1):
//
//	s1 = A_i·q_{i−u},  s2 = C_i·q_{i+u}
//	A'_i = −(A_{i−u}·s1),  C'_i = −(C_{i+u}·s2)
//	B'_i = (B_i − C_{i−u}·s1) − A_{i+u}·s2
//	D'_i = (D_i − D_{i−u}·s1) − D_{i+u}·s2
//
// The last row standing, 2^K − 1, gives x = D/B; then level K … 1
// substitutes back, for every row j it eliminated, from that level's
// equation of j and its neighbours (a missing one's x read as 0):
//
//	x_j = ((D_j − A_j·x_{j−u}) − C_j·x_{j+u})·q_j
//
// On the GPU each thread holds its chunk's two reduced rows F = 2t and L =
// 2t+1: level 1 eliminates every F row (the L row of thread t takes the F
// rows of threads t and t+1), level k ≥ 2 the L rows of the threads with
// (t+1) mod 2^(k−1) = 2^(k−2) into those with (t+1) mod 2^(k−1) = 0,
// threads t ± 2^(k−2) apart; by warp shuffles when a system's threads fit
// in one warp, through shared memory otherwise (each row written once,
// one barrier a level). SolvePCR solves the reduced system by parallel
// cyclic reduction instead, as package pcr does it (⌈log2 R⌉ steps, the
// same update for every row at every step, then x = d/b).
//
// # Stability
//
// Cyclic reduction finds each eliminated unknown from its neighbours, like
// the back substitution of Thomas's algorithm, so the computed unknowns
// satisfy the reduced equations to rounding; PCR finds every unknown on
// its own, and on weakly diagonally dominant matrices (condition ~n²)
// their errors do not fit together. Normwise backward error
// ‖d − A·x‖/(‖|A|·|x|‖ + ‖d‖) in FP32 (unit roundoff 6.0e-8; logged by
// go test -run TestBackwardStable -v): on the Poisson matrix
// (−1, 2, −1), n = 4096, Solve 1.7e-8 (Thomas 1.7e-8), SolvePCR 1.6e-4;
// n = 2^20 1.8e-8 against 1.7e-1; with a variable diffusion coefficient
// in [0.5, 1.5], n = 2^20, 1.9e-8 against 1.5e-1 (and plain PCR on the
// whole system, pcr.Solve, 1.0).
//
// # Stage 3: recovering the interiors (one thread per chunk)
//
// With x_s and x_e known, the interior is substituted back by (1), from
// the bottom: x_{m−1} = x_e and for j = m−2 … 1
//
//	x_j = (δ_j − α_j·x_s) − γ_j·x_{j+1}
//
// so the chunk keeps γ_j, α_j, δ_j of its interior rows (3(p−2) values)
// between Stage 1 and Stage 3; the input is read exactly once.
//
// # Work
//
// Stages 1 and 3 do about 18 flops and one division per row, sequentially
// inside a chunk and in parallel across chunks; the reduced system has
// about 2n/p rows, which cyclic reduction solves with about 16 flops and
// one division per reduced row in ⌊log2(2n/p)⌋ levels down and as many
// up. With one chunk per thread a kernel needs ⌈n/p⌉ threads per system
// and 2⌊log2(2n/p)⌋ exchanges, and touches global
// memory once: a, b, c, d read, x written. The devices use p =
// DefaultChunk(n).
//
// # Segments (SolveSegmented)
//
// A GPU block holds a system of up to about 14 500 rows (FP32; 7 200 in
// FP64) in shared memory. A longer system is cut into Q = ⌈n/m⌉ segments
// of m rows (m a multiple of p; no segment of a single row), one block
// each, and the method is applied twice: inside every segment, and to a
// reduced system of the segments.
//
// Inside segment σ (rows s_σ … e_σ), Stage 1 runs on its chunks as above
// (its first chunk's F row keeps its coupling a·x_{s_σ−1} to the previous
// segment, its last chunk's L row its coupling to x_{e_σ+1}). Its reduced
// rows r = 0 … RR−1 are then solved by the cyclic reduction of Stage 2
// with three right-hand sides (y, v, w), after the first and last rows are
// put aside and replaced by identities whose right-hand sides are
// (0, 1, 0) and (0, 0, 1): the substitution, done on each of y, v, w,
// makes every reduced unknown
//
//	x_r = (y_r + v_r·x_first) + w_r·x_last
//
// with x_first = x_{s_σ} and x_last = x_{e_σ}. Substituting row 1 into
// the saved first row (A_0, B_0, C_0, D_0) and row RR−2 into the saved
// last row (A_e, B_e, C_e, D_e) gives the segment's two rows of the
// reduced system of the segments:
//
//	F_σ:  A_0·x_{e_{σ−1}} + (B_0 + C_0·v_1)·x_first + (C_0·w_1)·x_last = D_0 − C_0·y_1
//	L_σ:  (A_e·v_{RR−2})·x_first + (B_e + A_e·w_{RR−2})·x_last + C_e·x_{s_{σ+1}} = D_e − A_e·y_{RR−2}
//
// In the order x_first(0), x_last(0), x_first(1), … these 2Q rows are
// tridiagonal, like the chunks' reduced system. They are solved by a
// given ReducedSolver (the GPU's one-pass kernels use cyclic reduction in
// one warp, ReducedCR; its three-pass path the partition method, possibly
// segmented again), and every segment finishes with x_r from its two
// values and Stage 3 on its chunks. No division by a spike is needed, and
// the reduced rows are again a Schur complement.
//
// Breakdowns of SolveSegmented are reported at the first (stage, row) in
// the order: chunk pivots (stage 1), the rows level k of a segment's
// cyclic reduction eliminates (1 + k), the divisor of its last row
// standing (17), the reduced system of the segments
// (18, at the original row of the reduced row its solver names), a
// non-finite x (19); within a stage the smallest original row.
//
// # Breakdown
//
// The method does not pivot. The divisors are the pivots piv of Stage 1
// (row s+j), every reduced row's B at the level that eliminates it, and
// the last row's B (SolvePCR: the reduced rows' B at every PCR step where
// the row is the neighbour of another row, as in package pcr, and in the
// final division). When one is zero or not finite Solve returns a
// *tri.PivotError wrapping tri.ErrZeroPivot whose Row is the original row:
// the smallest such row of the first stage (Stage 1, then each level or
// step, then the last division) where one occurs; a reduced row stands for its chunk's
// first (F) or last (L) row. A solution that overflows without a bad
// divisor is returned as it is, as package pcr does (the tridiag CPU
// device reports it as tridiag.ErrNonFiniteResult; the GPU kernels report
// the smallest non-finite row as a breakdown).
package partition
