package bench

import (
	"context"

	"github.com/bandsolve/bandsolve/tridiag"
)

// gpuBackend is the GPU side of a run: this module's GPU plans and the
// cuSPARSE peers (gpu_cuda.go), or a stub when the cuda tag is off
// (gpu_nocuda.go).
type gpuBackend interface {
	// Name describes the device.
	Name() string
	// Bandwidth is the device-to-device copy bandwidth, bytes read plus
	// written per second, measured when the backend was opened.
	Bandwidth() float64
	// FreeBytes is the free device memory now.
	FreeBytes() int64
	// Notes describe the peers (library found, version, or why not).
	Notes() []string
	// Driver is the NVIDIA driver and the CUDA version it supports.
	Driver() string
	// Library names the cuSPARSE peer and its version, or "".
	Library() string
	// SetHostPaced switches the timing of this module's plans and of the
	// cuSPARSE peers from gated (false, the default: the timed
	// repetitions are queued behind a gate kernel and released together,
	// so that their events bracket GPU work only) to host-paced (each
	// solve launched while the GPU waits for it).
	SetHostPaced(on bool)
	Run32(ctx context.Context, h *hostData[float32], gr gpuRun) []Result
	Run64(ctx context.Context, h *hostData[float64], gr gpuRun) []Result
	// RunC64 and RunC128 run the complex cases: this module's complex
	// plans (Auto, Thomas, GTSV) and cuSPARSE's c/z routines.
	RunC64(ctx context.Context, h *hostData[complex64], gr gpuRun) []Result
	RunC128(ctx context.Context, h *hostData[complex128], gr gpuRun) []Result
	Close()
}

// gpuRun says what to run on the GPU for one case.
type gpuRun struct {
	algos        []tridiag.Algorithm
	segRows      []int // partition with these Options.SegmentRows, besides algos
	cusparse     bool
	warmup, reps int
	check        bool
	progress     func(solver string)
}

// cusparseNames lists the cuSPARSE peers that apply to a case: the
// strided batch for the contiguous layout (cyclic and parallel cyclic
// reduction, no pivoting), the interleaved batch's three algorithms for
// the interleaved layout (0: Thomas without pivoting, 1: LU with partial
// pivoting, 2: QR), and gtsv2 (partial pivoting) for single systems. The
// names are those of every precision: S, D, C or Z is the case's
// precision (cusparseCgtsv2StridedBatch for a C64 case).
func cusparseNames(c Case) []string {
	var out []string
	if c.N < 3 {
		return nil
	}
	if c.Layout == Contiguous {
		out = append(out, "cusparse:gtsv2StridedBatch")
	}
	if c.Layout == Interleaved {
		out = append(out, "cusparse:gtsvInterleavedBatch/algo0",
			"cusparse:gtsvInterleavedBatch/algo1", "cusparse:gtsvInterleavedBatch/algo2")
	}
	if c.G == 1 && c.systemsContiguous() {
		out = append(out, "cusparse:gtsv2")
	}
	return out
}
