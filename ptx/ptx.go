// Package ptx holds the CUDA C sources of bandsolve's kernels (src/) and the
// PTX built from them, committed and embedded so that a Go program needs no
// CUDA compiler at run time. The PTX is loaded by package cuda, each
// module on the first launch of one of its kernels (ModuleOf).
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
	"strings"
	"sync"
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

// Sparse is the PTX of the sparse kernels (src/sparse.cu): the sparse
// triangular solves and their analyses.
//
//go:embed sparse.ptx
var Sparse string

// Spline is the PTX of the spline kernels (src/spline.cu): batched
// evaluation and integration of fitted cubic splines.
//
//go:embed spline.ptx
var Spline string

// Module is one PTX module: its name, its text and the compute capability
// its kernels need.
type Module struct {
	Name     string
	PTX      string
	MinMajor int // the compute capability's major version it needs
}

// Modules are the PTX modules, the tridiagonal one first.
var Modules = []Module{
	{Name: "tridiag", PTX: Tridiag, MinMajor: 8},
	{Name: "banded", PTX: Banded, MinMajor: 8},
	{Name: "cluster", PTX: Cluster, MinMajor: 9},
	{Name: "sparse", PTX: Sparse, MinMajor: 8},
	{Name: "spline", PTX: Spline, MinMajor: 8},
}

// entries maps each kernel's name to its module's index in Modules, from
// the modules' .entry directives.
var entries = sync.OnceValue(func() map[string]int {
	m := map[string]int{}
	for i, mod := range Modules {
		for _, name := range Entries(mod.PTX) {
			m[name] = i
		}
	}
	return m
})

// ModuleOf returns the index in Modules of the module that holds kernel.
func ModuleOf(kernel string) (int, bool) {
	i, ok := entries()[kernel]
	return i, ok
}

// Entries lists the kernels (.entry directives) of a PTX text, in order.
func Entries(text string) []string {
	var names []string
	for _, line := range strings.Split(text, "\n") {
		_, rest, ok := strings.Cut(line, ".entry ")
		if !ok {
			continue
		}
		name, _, _ := strings.Cut(rest, "(")
		names = append(names, strings.TrimSpace(name))
	}
	return names
}
