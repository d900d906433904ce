//go:build cuda

// Package cuda is bandsolve's NVIDIA GPU backend, built only with the cuda
// build tag (gorgonia.org/cu initialises the driver when the process starts
// and exits when there is no GPU, so the default build leaves it out).
//
// Open a Device, then either pass it to tridiag.NewPlan (host slices are
// copied in and out for each solve) or make a Plan here and solve arrays
// that stay in device memory (Buffer) across solves, as a time-stepper does.
//
// Every driver call of a device is made by one goroutine locked to its OS
// thread, which owns the CUDA context; the exported API is safe to call
// from any goroutine.
package cuda
