//go:build cuda

// Package gpuclock holds the benchmark's GPU instruments, built with the
// cuda build tag: a Clock, whose Timer times work queued on a stream with
// CUDA events behind a gate kernel (gate_wait) so that the events bracket
// the GPU's work and not the host's launch calls, or host-paced when asked
// (SetHostPaced); the device's copy bandwidth (CopyBandwidth), the
// yardstick of the bench's bandwidth figures; and latency probes, C loops
// that measure the floors under a small solve without Go on the path
// (BenchmarkLatencyFloor).
//
// The gate and probe kernels are in the tridiagonal PTX module that
// cuda.Open loads; they are launched through the device (cuda.Device.Launch
// inside Enqueue, or the kernel from cuda.Device.Kernel for the C loops).
package gpuclock
