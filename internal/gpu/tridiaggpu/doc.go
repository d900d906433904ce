//go:build cuda

// Package tridiaggpu solves batches of tridiagonal systems on an NVIDIA GPU
// (a cuda.Device), built only with the cuda build tag.
//
// Register adds the solvers to tridiag, so that tridiag.NewPlan solves on a
// *cuda.Device (host slices are copied in and out for each solve). A Plan
// made here solves arrays that stay in device memory (cuda.Buffer) across
// solves, as a time-stepper does, on the plan's own stream or on one the
// caller gives it (Plan.SetStream: a stream of another CUDA library,
// wrapped with cuda.WrapStream, or one of Device.NewStream). A plan's
// methods are safe to call from any goroutine; its solves run one at a
// time.
//
// Auto takes the partition method for most shapes. A system longer than
// one block's shared memory (or one that would leave one block per SM) is
// cut into segments of several blocks, one cluster of blocks per system
// on devices with thread-block clusters (compute capability 9.0) when it
// has at most 8 segments; its results are partition.SolveSegmented's bit
// for bit. Options.SegmentRows chooses the segment size, and a value of
// at least N keeps one block per system; Plan.Describe says what a plan
// runs. Small batches stored rows first (N ≤ 2048 in FP32, 4096 in FP64,
// and about 1000 to 8000 rows an SM in all; interleaved ones of up to 128
// or of 1024 to 2048 (FP32: 4096) rows, and one system for every two SMs)
// are latency-bound: Auto gives them chunks of 4 or 8 rows instead of 16
// (tuning.LatencyChunk), a shorter critical path, one block a system (an
// interleaved batch then leaves the lanes kernels); their results are
// partition.Solve's with that chunk, resident (Plan.SetResident) or
// launched.
//
// Plan.Time times solves with a cuda.Timer: CUDA events around each
// solve (cuda.EventTimer(nil)), or with the timed repetitions queued
// behind a gate and released together (cuda.EventTimer with a gate), so
// that the events hold GPU work only.
//
// Batches of adjacent systems (interleaved: Layout.BatchStride = 1) run
// kernels that put several systems across the lanes of a warp, so that a
// warp's loads cover rows of adjacent systems: up to 1024 rows (FP32;
// 512 FP64) one block holds 8 to 32 systems whole (the lanes kernel;
// large FP64 batches of more than 256 rows stream through the batch,
// each block copying its next 8 systems while it solves the current
// ones); longer systems are cut into segments of 512 rows (128 beyond 32
// segments), a block taking one segment of 16 (FP32) or 8 (FP64) systems
// (tuning.LanesSegmentMinN; results partition.SolveSegmented's). Other
// batches stored systems first (Layout.BatchStride < Layout.ElemStride,
// not adjacent) of more than 2048 rows are gathered into contiguous
// systems in the plan's workspace, solved as such and x scattered back
// (tuning.GatherMinN): the workspace then holds five arrays of the
// batch's size, and the bytes of a, b, c, d and x move three times. The
// constant solves of interleaved batches beyond 1024 rows do not take the
// lanes segments (they move two arrays, not five, and are slower there):
// one block a system up to 2048 rows, gathered beyond. Options.SegmentRows
// ≥ N keeps a batch in place, one block a system, where a block holds it.
//
// A small solve's latency is mostly fixed costs: on an H100 (through a
// virtual machine) cuLaunchKernel alone takes about 3.5 µs of host time
// and a one-thread kernel launched and waited for about 7.5 µs. A solve
// that one kernel does is launched without pinning a thread
// (cuda.Device.LaunchDirect) and signals its completion through a word of
// mapped host memory that the host polls (internal/gpu/done). A plan made
// resident (Plan.SetResident) keeps a persistent grid on the GPU that
// takes solves from mapped host memory, which saves the launch: go test
// -tags cuda -run '^$' -bench 'SmallCall|SmallResident'
// ./internal/gpu/tridiaggpu compares them.
package tridiaggpu
