//go:build cuda

package gpu

import (
	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/internal/gpu/bandedgpu"
	"github.com/bandsolve/bandsolve/internal/gpu/groupgpu"
	"github.com/bandsolve/bandsolve/internal/gpu/krylovgpu"
	"github.com/bandsolve/bandsolve/internal/gpu/spikegpu"
	"github.com/bandsolve/bandsolve/internal/gpu/splinegpu"
	"github.com/bandsolve/bandsolve/internal/gpu/sptrsvgpu"
	"github.com/bandsolve/bandsolve/internal/gpu/tridiaggpu"
)

func init() {
	tridiaggpu.Register()
	bandedgpu.Register()
	spikegpu.Register()
	krylovgpu.Register()
	sptrsvgpu.Register()
	splinegpu.Register()
	groupgpu.Register()
}

// Open opens GPU ordinal (0 is the first) with its primary context: it is
// cuda.Open, named here so that a program that solves only host slices
// needs no other import.
func Open(ordinal int) (*cuda.Device, error) { return cuda.Open(ordinal) }

// OpenGroup opens GPUs ordinals as a group (cuda.OpenGroup): a
// tridiag.Device on which tridiag.NewPlan splits each batch into shares
// of systems, one a GPU, solved at once.
func OpenGroup(ordinals ...int) (*cuda.Group, error) { return cuda.OpenGroup(ordinals...) }
