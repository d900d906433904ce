// Package bandedgpu is the GPU's banded solvers (tag cuda): BatchPlan,
// batches of banded systems with one thread per system (LU without
// pivoting with boosting, or LU with partial pivoting, real or complex,
// bit for bit banded.SolveBatch's factor and solve), and Partitions, the
// window-sliding LU and UL factorizations and sweeps of the partitions of
// one band matrix (truncated SPIKE's blocks, bit for bit
// banded.FactorLURange and FactorULRange). Register adds BatchPlan as the
// backend of banded.NewBatchPlan for a *cuda.Device (real and complex
// batches). The helpers shared with package spikegpu (ElemSize, BoostTol,
// CheckBand) are exported.
package bandedgpu
