// Package splineemu runs bandsolve's spline kernels (ptx/src/spline.cuh)
// on the CPU for testing against package spline (build tag cudaemu; see
// splineemu.go). Without the tag it is empty.
package splineemu
