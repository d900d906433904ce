//go:build cuda

// Package cuda is bandsolve's NVIDIA GPU runtime, built only with the cuda
// build tag (gorgonia.org/cu initialises the driver when the process
// starts and exits when there is no GPU, so the default build leaves it
// out). It knows devices, memory, streams and kernel launches; the
// solvers that run on it live in their own packages.
//
// Open a Device: it retains the device's primary context, the one the
// CUDA runtime and the libraries built on it (cuSPARSE, CuPy, PyTorch,
// JAX) use, so that memory and streams pass between bandsolve and other
// CUDA code in the process; it loads the kernels and reads the device's
// properties (Properties). Close releases the context.
//
// Driver calls of a device are serialised by its lock and made with its
// context current on the calling thread: Enqueue runs a function that way
// to queue work (kernels, copies), Do does the same after stopping the
// device's persistent work, for calls that wait for the device (other
// CUDA code shares the device through Do). The exported API is safe to
// call from any goroutine. LaunchSlots starts a kernel of the loaded
// modules inside Enqueue or Do, its parameters packed into 8-byte slots
// (the generated launchers of internal/gpu/kernels pack them from typed
// arguments); PrepareDirect and LaunchDirect launch a kernel
// resolved in advance without pinning a thread, setting the context in
// the same C call as the launch. Value attaches per-device state of other
// packages to the device.
//
// Buffer is an array in device memory (Alloc, Upload), a view of part of
// another (Buffer.Slice), or memory other code allocated in the primary
// context (Wrap). Stream is a queue of work: one made here
// (Device.NewStream) or one other code made (WrapStream, from its
// CUstream handle).
//
// AllocMapped gives page-locked host memory that kernels also see, for
// words the host polls without a driver round trip. Persistent work (a
// grid that keeps running and takes its work from mapped memory)
// registers with AddPersistent, so that calls that wait for the whole
// device stop it first.
//
// TimeEvents times work on a stream with CUDA events, optionally queued
// behind a Gate and released together, so that the events hold GPU work
// only; a Timer is such a timing, which the solvers' Time methods take.
package cuda
