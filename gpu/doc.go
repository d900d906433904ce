// Package gpu brings bandsolve's GPU solvers into a program built with the
// cuda build tag. Importing it registers them with the domain packages, so
// that tridiag.NewPlan, banded.NewBatchPlan, spike.NewPlan,
// krylov.NewSpace, krylov.NewCSROperator, sptrsv.NewPlan and
// spline.NewEvaluator run on a *cuda.Device as they
// do on the CPU: moving to the GPU is changing the device argument.
//
//	dev, err := gpu.Open(0)
//	...
//	plan, err := tridiag.NewPlan[float32](dev, tridiag.Shape{N: n, G: g}, tridiag.Options{})
//
// Those calls copy host slices to the device and back for every solve.
// Programs that keep their data on the GPU across solves (a time-stepper,
// an iterative method) use the device-resident types named here, which
// solve cuda.Buffers in place: TridiagPlan, BandBatchPlan, BandPartitions,
// SpikePlan, TrsvPlan (sparse triangular solves), SplineEvaluator
// (spline evaluation and integrals), and the Krylov vector
// space Space with its sparse operator CSR and the MixedPrecision
// preconditioner adapter. Memory and streams made
// by other CUDA code in the process (CuPy, PyTorch, a user's kernels) come
// in through cuda.Wrap and cuda.WrapStream.
//
// The default build (no cuda tag) leaves this package empty: the driver's
// Go binding ends a process that has no GPU when it starts.
package gpu
