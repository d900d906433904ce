// Package groupgpu splits batches of tridiagonal systems across the GPUs
// of one host (a cuda.Group, built with the cuda tag).
//
// Split cuts a batch of G systems into contiguous shares, one a GPU, and
// chooses how each GPU holds its share (Share): systems-first layouts
// keep their layout, each share a sub-array of the batch's arrays;
// interleaved layouts become blocks of columns, Interleaved(G_k) on GPU
// k; others are gathered into Contiguous(N). Pack and Unpack move a
// share's rows between the batch's arrays and the share's.
//
// With the cuda tag, Plan solves a batch on a group: one single-GPU plan
// (package tridiaggpu) a share, all solving at once, the systems a
// *tridiag.BatchError lists numbered in the whole batch. Its host solves
// copy each share in and out on its own goroutine; its device solves
// (SolveDevice) take one buffer a share, each on its GPU, and start every
// GPU's solve before waiting for any. Register adds the group to
// tridiag.NewPlan's devices. Each system is solved by its GPU's plan of
// the share's shape: bit for bit the single-GPU plan of that share, and
// the single-GPU plan of the whole batch wherever the per-system
// arithmetic does not depend on the batch (Thomas, GTSV, and whatever
// route Auto takes alike for the whole batch and the share).
package groupgpu
