// Package partemu runs the segmented partition CUDA kernel on the CPU for
// testing (build tag cudaemu; see partemu.go). Without the tag it is
// empty.
package partemu
