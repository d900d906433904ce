// Package bandemu runs bandsolve's banded CUDA kernels (and the
// tridiagonal module's layout kernels) on the CPU for testing (build tag
// cudaemu; see bandemu.go). Without the tag it is empty.
package bandemu
