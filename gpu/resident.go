//go:build cuda

package gpu

import (
	"context"

	"github.com/bandsolve/bandsolve/banded"
	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/internal/gpu/bandedgpu"
	"github.com/bandsolve/bandsolve/internal/gpu/groupgpu"
	"github.com/bandsolve/bandsolve/internal/gpu/krylovgpu"
	"github.com/bandsolve/bandsolve/internal/gpu/spikegpu"
	"github.com/bandsolve/bandsolve/internal/gpu/splinegpu"
	"github.com/bandsolve/bandsolve/internal/gpu/sptrsvgpu"
	"github.com/bandsolve/bandsolve/internal/gpu/tridiaggpu"
	"github.com/bandsolve/bandsolve/sparse"
	"github.com/bandsolve/bandsolve/spike"
	"github.com/bandsolve/bandsolve/sptrsv"
	"github.com/bandsolve/bandsolve/tridiag"
)

// TridiagPlan solves batches of tridiagonal systems held in device
// buffers: SolveDevice and SolveDeviceConst in place or not, Start for a
// solve that overlaps host work, SetResident for a persistent grid that
// saves the launch of small solves, SetStream to queue on a caller's
// stream, MulDevice for the products of a time-stepper.
type TridiagPlan[T tridiag.Float] = tridiaggpu.Plan[T]

// Pending is a solve started by TridiagPlan.Start.
type Pending = tridiaggpu.Pending

// NewTridiagPlan makes a device-resident tridiagonal plan on dev.
func NewTridiagPlan[T tridiag.Float](dev *cuda.Device, shape tridiag.Shape, opts tridiag.Options) (*TridiagPlan[T], error) {
	return tridiaggpu.NewPlan[T](dev, shape, opts)
}

// GroupPlan solves batches of tridiagonal systems split across the GPUs
// of a cuda.Group, each GPU's share of the systems held in its memory:
// SolveDevice and SolveDeviceConst take one buffer a share (Shares), and
// start every GPU's solve before waiting for any; Scatter, Gather and
// Alloc move a batch's host arrays to and from the shares; Solve and
// SolveConst take host slices.
type GroupPlan[T tridiag.Float] = groupgpu.Plan[T]

// GroupShare is one GPU's part of a GroupPlan's batch: its systems and
// the layout its GPU holds them in.
type GroupShare = groupgpu.Share

// NewGroupPlan makes a plan for batches of shape split across group.
func NewGroupPlan[T tridiag.Float](group *cuda.Group, shape tridiag.Shape, opts tridiag.Options) (*GroupPlan[T], error) {
	return groupgpu.NewPlan[T](group, shape, opts)
}

// SplitPlan solves batches of tridiagonal systems whose rows are split
// across the GPUs of a cuda.Group (a grid decomposed along the systems'
// axis, or one system too long for one GPU): part k holds rows
// Start(k) … of every system on GPU k, in its own layout. Each part is
// reduced on its GPU, the reduced system of all parts is solved on the
// first GPU after peer copies, each part is then finished on its GPU
// (the partition method across GPUs). SolveDevice takes one buffer a
// part.
type SplitPlan[T tridiag.Float] = groupgpu.SplitPlan[T]

// NewSplitPlan makes a plan for batches split by rows across group, part
// k of shape parts[k] (its rows of every system) on GPU k.
func NewSplitPlan[T tridiag.Float](group *cuda.Group, parts []tridiag.Shape) (*SplitPlan[T], error) {
	return groupgpu.NewSplitPlan[T](group, parts)
}

// ComplexTridiagPlan solves batches of complex tridiagonal systems
// (complex64, complex128) held in device buffers: SolveDevice and
// SolveDeviceConst, in place or not, with Thomas, GTSV (pivoting by
// |re| + |im|), Partition or Auto, bit for bit the results of their CPU
// twins (tridiaggpu.ComplexPlan).
type ComplexTridiagPlan[T tridiag.Complex] = tridiaggpu.ComplexPlan[T]

// NewComplexTridiagPlan makes a device-resident complex tridiagonal plan
// on dev.
func NewComplexTridiagPlan[T tridiag.Complex](dev *cuda.Device, shape tridiag.Shape, opts tridiag.Options) (*ComplexTridiagPlan[T], error) {
	return tridiaggpu.NewComplexPlan[T](dev, shape, opts)
}

// AutoAlgorithm is the algorithm a plan with opts.Algorithm = Auto runs
// on dev for shape.
func AutoAlgorithm[T tridiag.Float](dev *cuda.Device, shape tridiag.Shape, opts tridiag.Options) (tridiag.Algorithm, error) {
	return tridiaggpu.AutoAlgorithm[T](dev, shape, opts)
}

// BandBatchPlan solves batches of small banded systems (K ≤ MaxBatchK)
// held in device buffers, one thread per system: real (float32,
// float64) or, with BandBatchOptions.Pivot, complex (complex64,
// complex128) systems.
type BandBatchPlan[T banded.Scalar] = bandedgpu.BatchPlan[T]

// BandBatchOptions are a BandBatchPlan's options.
type BandBatchOptions = bandedgpu.Options

// MaxBatchK is the largest half-bandwidth of a BandBatchPlan.
const MaxBatchK = bandedgpu.MaxBatchK

// NewBandBatchPlan makes a device-resident plan for g banded systems of
// order n and half-bandwidth k stored in layout (a complex T needs
// opts.Pivot).
func NewBandBatchPlan[T banded.Scalar](dev *cuda.Device, n, k, g int, layout banded.Layout, opts BandBatchOptions) (*BandBatchPlan[T], error) {
	return bandedgpu.NewBatchPlan[T](dev, n, k, g, layout, opts)
}

// BandPartitions factors and solves the diagonal blocks of a band
// partitioned into row ranges, one block per partition, the band in a
// device buffer: the building block of SPIKE and of block-Jacobi.
type BandPartitions[T tridiag.Float] = bandedgpu.Partitions[T]

// NewBandPartitions makes the partitions bounds of a band of order n and
// half-bandwidth k (K ≤ bandedgpu's window limit) on dev.
func NewBandPartitions[T tridiag.Float](dev *cuda.Device, n, k int, bounds []int) (*BandPartitions[T], error) {
	return bandedgpu.NewPartitions[T](dev, n, k, bounds)
}

// SpikePlan is truncated SPIKE on the GPU with the band and vectors in
// device buffers: Factor once, then Solve (or Apply, as a preconditioner)
// many times.
type SpikePlan[T tridiag.Float] = spikegpu.Plan[T]

// NewSpikePlan makes a SPIKE plan for a band of order n and
// half-bandwidth k on dev.
func NewSpikePlan[T tridiag.Float](dev *cuda.Device, n, k int, opts spike.Options) (*SpikePlan[T], error) {
	return spikegpu.NewPlan[T](dev, n, k, opts)
}

// Space is the vector space of krylov.BiCGStab2 on the GPU: float64
// vectors in device buffers, with fused inner products.
type Space = krylovgpu.Space

// NewSpace makes a space of vectors of length n on dev.
func NewSpace(dev *cuda.Device, n int) (*Space, error) { return krylovgpu.NewSpace(dev, n) }

// CSR is a sparse matrix in device memory, the operator of a Krylov
// solve on the GPU.
type CSR = krylovgpu.CSR

// UploadCSR copies a CSR matrix given by its arrays to dev.
func UploadCSR(dev *cuda.Device, rowPtr, col []int32, val []float64) (*CSR, error) {
	return krylovgpu.UploadCSR(dev, rowPtr, col, val)
}

// UploadSparse copies a sparse.CSR matrix to dev.
func UploadSparse(dev *cuda.Device, a *sparse.CSR) (*CSR, error) {
	return krylovgpu.UploadSparse(dev, a)
}

// MixedPrecision applies a float32 preconditioner (a SpikePlan[float32],
// say) to the float64 vectors of a Space.
type MixedPrecision = krylovgpu.MixedPrecision

// NewMixedPrecision wraps apply, which sets z ≈ M⁻¹·r in float32, as a
// preconditioner of sp's float64 vectors.
func NewMixedPrecision(sp *Space, apply func(ctx context.Context, r, z *cuda.Buffer[float32]) error) (*MixedPrecision, error) {
	return krylovgpu.NewMixedPrecision(sp, apply)
}

// TrsvPlan solves sparse triangular systems with vectors in device
// buffers (SolveDevice; Enqueue on a stream for a caller that times or
// chains its work), the triangle analysed on the device; UpdateValues
// takes new values of the same structure.
type TrsvPlan[T sptrsvgpu.Float] = sptrsvgpu.Plan[T]

// TrsvOptions are a TrsvPlan's choices: the algorithm (Auto by default)
// and its launch parameters.
type TrsvOptions = sptrsvgpu.Options

// NewTrsvPlan uploads the triangle of a to dev and analyses it there.
func NewTrsvPlan[T sptrsvgpu.Float](dev *cuda.Device, a *sparse.CSR, tri sptrsv.Options, opts TrsvOptions) (*TrsvPlan[T], error) {
	return sptrsvgpu.NewPlan[T](dev, a, tri, opts)
}

// SplineEvaluator evaluates and integrates batches of fitted cubic
// splines held in device buffers: EvalDevice (values, first and second
// derivatives at shared or per-curve points, one launch) and
// IntegrateDevice, with results bit for bit those of spline.Evaluator on
// the CPU. spline.NewEvaluator on a *cuda.Device is the same evaluator
// for host slices.
type SplineEvaluator[T tridiag.Float] = splinegpu.Evaluator[T]

// SplineCurves is a batch of fitted curves in device buffers, laid out as
// spline.Curves.
type SplineCurves[T tridiag.Float] = splinegpu.Curves[T]

// SplinePoints are the evaluation points of SplineEvaluator.EvalDevice in
// a device buffer.
type SplinePoints[T tridiag.Float] = splinegpu.Points[T]

// SplineOut names the device buffers SplineEvaluator.EvalDevice writes.
type SplineOut[T tridiag.Float] = splinegpu.Out[T]

// NewSplineEvaluator makes a spline evaluator on dev.
func NewSplineEvaluator[T tridiag.Float](dev *cuda.Device) (*SplineEvaluator[T], error) {
	return splinegpu.NewEvaluator[T](dev)
}

// SplineFitter fits batches of cubic splines whose knots and values are
// in device buffers, writing the moments to a device buffer
// (FitDevice, FitDeviceInto): the curves it returns go to
// SplineEvaluator.EvalDevice with no copy to the host. With
// tridiag.Options{Algorithm: tridiag.Thomas} the moments are
// spline.FitBatch's bit for bit.
type SplineFitter[T tridiag.Float] = splinegpu.Fitter[T]

// NewSplineFitter makes a fitter on dev for batches of count curves of n
// knots, whose moment systems are solved with opts.
func NewSplineFitter[T tridiag.Float](dev *cuda.Device, n, count int, opts tridiag.Options) (*SplineFitter[T], error) {
	return splinegpu.NewFitter[T](dev, n, count, opts)
}
