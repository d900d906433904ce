// Package nccl joins GPUs into NCCL communicators for the project's GPU
// code: ranks that each drive one GPU, in one process or in several
// (on one host or several), exchange device arrays with NCCL's
// collectives (all-gather, all-reduce) and point-to-point calls (send,
// receive).
//
// The package has two halves:
//
//   - Untagged, pure Go: the TCP bootstrap that hands NCCL's 128-byte
//     unique id from rank 0 to the other ranks (Bootstrap, Serve, Join),
//     the ranks' settings from the environment (FromEnv), and the types
//     shared with the library (UniqueID, DataType, RedOp, Result, Error,
//     Version). These build and are tested everywhere.
//   - Built with the cuda tag: Load opens libnccl with dlopen at run time
//     (no link-time dependency, no NCCL headers needed to build) and
//     returns a Lib, whose methods make communicators (CommInitRank for
//     one rank of a job, CommInitAll for several GPUs of one process) and
//     group calls; a Comm queues collectives on a stream of its device.
//
// A rank's communicator is made with its device's CUDA context current:
// the calls that need it run through the device's thread
// (cuda.Device.Do and Enqueue), so NCCL, which uses the CUDA runtime,
// works in the same primary context as the rest of the project.
//
// NCCL's group calls keep their state per OS thread; Lib.Group locks the
// calling goroutine to its thread between ncclGroupStart and
// ncclGroupEnd. One goroutine that drives several GPUs (CommInitAll)
// must queue their collectives inside a group, and a send and receive
// between two ranks of one goroutine (a rank and itself included) must
// be in one group.
package nccl
