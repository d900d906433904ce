// Package kernels is the table of bandsolve's GPU kernels, generated from
// their extern "C" declarations in ptx/src and checked against the
// committed PTX (go generate runs ./gen): every kernel's name, module,
// parameters with their C types, and launch bounds; and, with the cuda
// build tag, a typed launcher per family of kernels (the kernels that
// differ only in precision and template parameters, such as
// partition_p{4,8,16,32}_{f32,f64}), whose arguments are a struct with a
// field per parameter. A changed kernel signature changes the generated
// code and fails the build where the arguments are filled in; no kernel
// name is spelled anywhere else on the Go side.
package kernels

import (
	"errors"
	"math"
)

//go:generate go run ./gen

// Kernel identifies one kernel (the constants of table.go).
type Kernel uint16

// Info describes a kernel.
type Info struct {
	Name       string  // its name in the PTX
	Module     int     // its module's index in ptx.Modules
	Family     string  // its family: the name without precision and template values
	MaxThreads int     // .maxntid of its __launch_bounds__ (0: none)
	MinBlocks  int     // .minnctapersm of its __launch_bounds__ (0: none)
	Params     []Param // its parameters, in order
}

// Param is a kernel parameter.
type Param struct {
	Name  string // as declared in C
	CType string // its C type: "const float*", "int", "i64", ...
}

// ErrNoKernel is wrapped when a family has no kernel for the asked
// template parameters or precision.
var ErrNoKernel = errors.New("kernels: no such kernel")

// Info returns what the table says of k.
func (k Kernel) Info() Info { return table[k] }

// Name returns k's name in the PTX.
func (k Kernel) Name() string { return table[k].Name }

// String is k's name.
func (k Kernel) String() string { return k.Name() }

// All returns every kernel, in the order of the modules.
func All() []Kernel {
	ks := make([]Kernel, len(table))
	for i := range ks {
		ks[i] = Kernel(i)
	}
	return ks
}

// packFloat puts v in an 8-byte launch slot as the C type ct: a float
// (rounded to float32) or a double.
func packFloat(ct string, v float64) uint64 {
	if ct == "float" {
		return uint64(math.Float32bits(float32(v)))
	}
	return math.Float64bits(v)
}
