// Package spline fits interpolating cubic splines through many curves at
// once, with natural, clamped or periodic ends, by solving one batch of
// tridiagonal systems (package tridiag) for all the curves, and evaluates,
// differentiates and integrates them in batches.
//
// # Fitting
//
// A batch holds Count curves of N knots each. Curve k's values are
// y[k·N … k·N+N−1]; its knots are either shared by every curve (x has N
// entries) or its own (x has N·Count entries, laid out like y). Knots must
// be strictly increasing.
//
// The spline is stored by its second derivatives M at the knots (the
// "moments"): on [x_i, x_{i+1}], with h = x_{i+1} − x_i, A = (x_{i+1} − t)/h
// and B = (t − x_i)/h,
//
//	S(t) = A·y_i + B·y_{i+1} + ((A³ − A)·M_i + (B³ − B)·M_{i+1})·h²/6.
//
// Continuity of S′ at the interior knots gives, for each i,
//
//	h_{i−1}·M_{i−1} + 2(h_{i−1} + h_i)·M_i + h_i·M_{i+1} = 6(Δ_i − Δ_{i−1}),
//	Δ_i = (y_{i+1} − y_i)/h_i,
//
// a symmetric, strictly diagonally dominant tridiagonal system. The ends
// close it:
//
//   - Natural: M_0 = M_{N−1} = 0; the N−2 interior moments are solved for.
//     With N = 2 the spline is the straight line through the two points.
//   - Clamped(d0, dn): S′(x_0) = d0 and S′(x_{N−1}) = dn add the rows
//     2h_0·M_0 + h_0·M_1 = 6(Δ_0 − d0) and
//     h_{N−2}·M_{N−2} + 2h_{N−2}·M_{N−1} = 6(dn − Δ_{N−2}).
//     A clamped spline reproduces any cubic exactly.
//   - Periodic: the curve repeats with period x_{N−1} − x_0, so y_{N−1} must
//     equal y_0 (to 64·ε·max(1, max|y|)); M_{N−1} = M_0
//     and the N−1 moments M_0 … M_{N−2} satisfy a cyclic system
//     (tridiag.Options{Cyclic: true}). With N = 2 the spline is constant.
//
// The systems are written straight into the moment array through a
// strided layout (system k, row i at k·N + i; a natural curve's end rows
// say M_0 = 0 and M_{N−1} = 0), so no copy is made. On the CPU, curves
// that share their knots share one factorization of the moment matrix
// (Thomas's pivots and multipliers, and the Sherman–Morrison correction
// of a periodic fit): each curve then costs its right-hand side and one
// forward and one backward substitution, run back to back on its row of M
// in parallel over the curves, with tridiag's Thomas arithmetic, so that
// the moments are bit for bit those of the same knots given per curve.
// Fitters with options other than Auto or Thomas, or with Check, solve
// through tridiag plans.
//
// Every fit checks its data first and refuses bad input with an error
// wrapping ErrInput that names the curve and the index into x or y (or
// into the clamped derivatives): NaN or infinite values, knots or end
// derivatives; knots that do not increase strictly (unsorted or
// repeated); fewer than two knots; a periodic curve whose ends differ;
// knots spanning more than half the largest finite value of the element
// type, since the diagonal 2(h_{i−1} + h_i) of the moment system would
// overflow (a span beyond 8.99e307 in float64, 1.7e38 in float32: knots
// at ±9e307 are refused). Values so large that
// the differences of slopes overflow are fitted by scaling the curve by a
// power of two; a curve whose moments themselves overflow (values that
// change too fast for the knot spacing) is refused, naming the knot.
//
// # Evaluation
//
// Curves.Eval, Deriv, Deriv2 and Integral evaluate one curve at one point.
// An Evaluator evaluates a whole batch in one call: the values, first and
// second derivatives (Out) at points shared by every curve or given per
// curve (Points), and definite integrals per curve (Integrate), in
// parallel on the CPU's workers, writing into slices the caller owns.
//
// Shared points are located once when the knots are shared too: the
// interval and the weights of each point are computed once, and each
// curve is then four multiply-adds per point. With knots per curve,
// shared points that are not ascending are sorted once and every curve
// walks its knots in that order; ascending points (found in one O(P)
// pass) are always located by that walk instead of a binary search per
// point. Periodic curves wrap the points into the period first.
//
// Semantics, as SciPy's CubicSpline with extrapolate=True (or "periodic")
// except at ±Inf:
//
//   - At a knot, the end knots included, the value is the data value
//     exactly.
//   - Beyond the knots a natural or clamped curve continues the cubic of
//     its end interval; a periodic curve repeats.
//   - At NaN every quantity is NaN. At ±Inf a natural or clamped curve
//     gives the limit of its end cubic (±Inf, or the constant where the
//     quantity is constant there, e.g. the value of a constant end); a
//     periodic curve gives NaN. SciPy gives NaN for most of these.
//   - Integrals run from a to b (negative when b < a), continuing the end
//     cubics or repeating the period; an infinite bound gives ±Inf (NaN
//     when both ends diverge with opposite signs, 0 when the end
//     polynomial is zero) and NaN for a periodic curve.
//   - Nothing overflows where the exact answer is finite: the h² factor
//     meets the moments after it has been folded into the weights, and any
//     result that still comes out NaN or ±Inf is evaluated again with
//     every term carried as a mantissa and a binary exponent, so that ±Inf
//     means the answer is beyond the range of the element type.
//   - Nothing underflows where the answer is a normal number: on knots so
//     close that h²/6 (or h/6) is below the smallest normal number of the
//     element type, the values, slopes and integrals of those intervals
//     are evaluated the same careful way, and at the knots the value is
//     still the data exactly.
//
// # Speed
//
// On the CPU, batched evaluation of 10⁴ curves with 10³ shared knots at
// 10⁴ shared, unsorted points (10⁸ values, FP64) must be at least as fast
// as SciPy's CubicSpline evaluating the same batch on the same machine,
// and a fit at least twice as fast as SciPy's. scripts/spline-scipy.py
// times SciPy, and
//
//	go test ./spline -run '^$' -bench 'Eval|Fit|Integrate' -benchtime 3x
//
// times this package: on a 2-core AMD EPYC, 0.18–0.21 s for the values
// (SciPy 1.10: 0.53–0.58 s), 0.16–0.17 s for the first derivatives (0.86–
// 0.88 s), 0.08–0.11 s for a fit (0.59–0.75 s). docs/splines.md lists
// every figure.
package spline
