// Package splinegpu evaluates and integrates batches of fitted cubic
// splines on the GPU (tag cuda): Evaluator, one kernel launch per batch
// (ptx/src/spline.cuh) for the values, first and second derivatives of
// every curve at shared or per-curve points, with shared or per-curve
// knots, and one for the definite integral of every curve. Its results
// are package spline's CPU evaluator's bit for bit: the kernels do the
// CPU's operations in the CPU's order, and the results the CPU computes
// with its careful evaluation (spans too small for the weights, overflow,
// NaN or infinite points) are flagged per curve by the kernel and finished
// on the host with package spline's own functions.
//
// Register makes Evaluator the backend of spline.NewEvaluator for a
// *cuda.Device (host slices: copied in, evaluated, copied out); EvalDevice
// and IntegrateDevice take curves, points and results already in device
// buffers.
package splinegpu
