// Package tuning chooses launch parameters for bandsolve's GPU kernels from
// the device's properties: threads per block, systems per block, slice
// sizes and the algorithm that Auto picks. It is pure Go and deterministic,
// so every choice can be unit-tested without a GPU against recorded
// property sets (see the Known* variables).
package tuning

import (
	"github.com/bandsolve/bandsolve/cuda/props"
	"github.com/bandsolve/bandsolve/internal/gpu/kernels"
)

// Device holds the properties of a GPU that the choices depend on, as the
// CUDA driver reports them (props.Device, which package cuda fills).
type Device = props.Device

// Known property sets, recorded from the vendors' published specifications
// and the CUDA programming guide's table of compute-capability limits, for
// testing choices without a GPU.
var (
	// H200 is an NVIDIA H200 (SXM, 141 GB), compute capability 9.0.
	H200 = Device{Name: "NVIDIA H200", Major: 9, Minor: 0, SMs: 132, TotalMem: 150754820096,
		MaxThreadsPerBlock: 1024, MaxThreadsPerSM: 2048, MaxBlocksPerSM: 32,
		SharedPerBlock: 48 << 10, SharedPerBlockOptin: 227 << 10, SharedPerSM: 228 << 10,
		RegsPerSM: 65536, RegsPerBlock: 65536, WarpSize: 32, L2Bytes: 60 << 20, MemBusWidth: 6144, MemClockKHz: 3201000}
	// H100 is an NVIDIA H100 SXM 80 GB, compute capability 9.0.
	H100 = Device{Name: "NVIDIA H100 80GB HBM3", Major: 9, Minor: 0, SMs: 132, TotalMem: 85520809984,
		MaxThreadsPerBlock: 1024, MaxThreadsPerSM: 2048, MaxBlocksPerSM: 32,
		SharedPerBlock: 48 << 10, SharedPerBlockOptin: 227 << 10, SharedPerSM: 228 << 10,
		RegsPerSM: 65536, RegsPerBlock: 65536, WarpSize: 32, L2Bytes: 50 << 20, MemBusWidth: 5120, MemClockKHz: 2619000}
	// A100 is an NVIDIA A100 SXM4 40 GB, compute capability 8.0.
	A100 = Device{Name: "NVIDIA A100-SXM4-40GB", Major: 8, Minor: 0, SMs: 108, TotalMem: 42505273344,
		MaxThreadsPerBlock: 1024, MaxThreadsPerSM: 2048, MaxBlocksPerSM: 32,
		SharedPerBlock: 48 << 10, SharedPerBlockOptin: 163 << 10, SharedPerSM: 164 << 10,
		RegsPerSM: 65536, RegsPerBlock: 65536, WarpSize: 32, L2Bytes: 40 << 20, MemBusWidth: 5120, MemClockKHz: 1215000}
	// GTX980 is a Maxwell NVIDIA GeForce GTX 980 (compute capability 5.2),
	// close to the Maxwell card of the TPR paper's experiments.
	GTX980 = Device{Name: "NVIDIA GeForce GTX 980", Major: 5, Minor: 2, SMs: 16, TotalMem: 4294967296,
		MaxThreadsPerBlock: 1024, MaxThreadsPerSM: 2048, MaxBlocksPerSM: 32,
		SharedPerBlock: 48 << 10, SharedPerBlockOptin: 48 << 10, SharedPerSM: 96 << 10,
		RegsPerSM: 65536, RegsPerBlock: 65536, WarpSize: 32, L2Bytes: 2 << 20, MemBusWidth: 256, MemClockKHz: 3505000}
)

// bound returns the launch bound (.maxntid of its __launch_bounds__) of a
// kernel of the generated table, or 0 where the family has no kernel for
// the asked template values: the bounds are stated once, in the kernels'
// sources.
func bound[K interface{ Kernel() kernels.Kernel }](k K, err error) int {
	if err != nil {
		return 0
	}
	return k.Kernel().Info().MaxThreads
}

// condDeviceMinSystems is the smallest batch whose check (Options.Check on
// a GPU plan's device-buffer solves) estimates κ̂ on the device, one
// thread a system; fewer, longer systems are checked on the host, where a
// core walks a system faster than a device thread. Measured on an H100
// with 16 host cores, FP64, 2^24 rows (`./tridiaggpu.test -test.run '^$'
// -test.bench Check`): device against host 474 ms / 369 ms at G = 256,
// 31 ms / 396 ms at G = 4096, 7 ms / 380 ms at G = 65536.
const condDeviceMinSystems = 1024

// CondOnDevice reports whether the check of a batch of G systems
// estimates their condition numbers on the device.
func CondOnDevice(G int) bool { return G >= condDeviceMinSystems }
