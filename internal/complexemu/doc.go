// Package complexemu runs bandsolve's complex tridiagonal kernels
// (ptx/src/complex.cuh) on the CPU for testing against package tridiag's
// complex solver bit for bit (build tag cudaemu; see complexemu.go).
// Without the tag it is empty.
package complexemu
