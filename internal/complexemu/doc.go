// Package complexemu runs bandsolve's complex tridiagonal kernels
// (ptx/src/complex.cuh) and the complex pivoting band batch kernel
// (ptx/src/band_cpivot.cuh) on the CPU for testing against packages
// tridiag and banded bit for bit (build tag cudaemu; see complexemu.go
// and band.go).
// Without the tag it is empty.
package complexemu
