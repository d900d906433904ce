//go:build cuda

// Package cuda is bandsolve's NVIDIA GPU backend, built only with the cuda
// build tag (gorgonia.org/cu initialises the driver when the process starts
// and exits when there is no GPU, so the default build leaves it out).
//
// Open a Device, then either pass it to tridiag.NewPlan (host slices are
// copied in and out for each solve) or make a Plan here and solve arrays
// that stay in device memory (Buffer) across solves, as a time-stepper does.
//
// Driver calls of a device are serialised by its lock and made with its
// context current on the calling thread (Device.do pins the goroutine for
// the call; the launch of a small solve sets the context in the same C
// call as the launch instead); the exported API is safe to call from any
// goroutine.
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
// Plan.Time times solves with CUDA events (TimeEvents, or the Timer given
// to the device with SetPlanTimer: a benchmark's clock queues the timed
// repetitions behind a gate kernel and releases them together, so that
// the events hold GPU work only).
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
// and a one-thread kernel launched and waited for about 7.5 µs. A plan
// made resident (Plan.SetResident) keeps a persistent grid on the GPU that
// takes solves from mapped host memory, which saves the launch: go test
// -tags cuda -run '^$' -bench 'SmallCall|SmallResident' ./cuda compares
// them.
package cuda
