// Package spikeemu runs the truncated SPIKE GPU pipeline on the CPU for
// testing (build tag cudaemu; see spikeemu.go). Without the tag it is
// empty.
package spikeemu
