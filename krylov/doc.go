// Package krylov holds the outer Krylov iteration of the solver stack:
// BiCGStab(ℓ) with ℓ = 2 (Sleijpen and Fokkema, "BiCGstab(ℓ) for linear
// equations involving unsymmetric matrices with complex spectrum", ETNA 1,
// 1993) with left preconditioning, the method that Li et al. wrap around
// the truncated SPIKE preconditioner (SPIKE::GPU, §3–4 of
// spike-gpu-li2014). The iteration runs in float64; the preconditioner may
// run in float32 (MixedPrecision), as in the paper's mixed-precision
// strategy.
//
// The solver is generic over where the vectors live. A Space[V] supplies
// the few vector operations the iteration needs (allocation, copy, zero,
// y = αx + βy and batched inner products) for a vector handle type V:
// HostSpace does it for []float64 in plain Go; a device buffer type with
// its own Space can run the same BiCGStab2 code with every vector resident
// on a GPU. The inner products are requested in batches (Space.Dots) so that
// a device implementation can return all the scalars one step needs in a
// single host round trip: a BiCGStab(2) cycle asks for five batches.
//
// The operator A and the preconditioner M are supplied through the
// Operator and Preconditioner interfaces (OperatorFunc and
// PreconditionerFunc adapt plain functions).
package krylov
