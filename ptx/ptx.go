// Package ptx holds the CUDA C sources of bandsolve's kernels (src/) and the
// PTX built from them, committed and embedded so that a Go program needs no
// CUDA compiler at run time. The PTX is loaded by package cuda.
//
// Rebuild the PTX with the pinned toolkit (CUDA 11.8 from Debian's
// non-free nvidia-cuda-toolkit, installed by scripts/install-cuda-toolkit.sh):
//
//	go generate ./ptx
//
// CI checks that the committed PTX is exactly what the sources produce and
// assembles it with ptxas for sm_80 and sm_90 (scripts/check-ptx.sh).
package ptx

import (
	_ "embed"
)

//go:generate bash ../scripts/gen-ptx.sh

// Tridiag is the PTX of the tridiagonal kernels (src/tridiag.cu).
//
//go:embed tridiag.ptx
var Tridiag string

// Banded is the PTX of the banded kernels (src/banded.cu): batched solves
// with one thread per system and the window-sliding LU/UL of partitions.
// Package cuda loads it on the first banded launch.
//
//go:embed banded.ptx
var Banded string

// Cluster is the PTX of the kernels that use Hopper's thread-block
// clusters (src/cluster.cu, built for compute_90): package cuda loads it
// on first use on devices of compute capability ≥ 9.0.
//
//go:embed cluster.ptx
var Cluster string
