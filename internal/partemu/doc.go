// Package partemu runs the partition CUDA kernels (segments, and those
// that solve whole systems) on the CPU for testing (build tag cudaemu; see
// partemu.go). Without the tag it is empty.
package partemu
