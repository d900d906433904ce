//go:build cuda

package tridiaggpu

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/tridiag"
)

// routeCase is one spec of the route grid: a shape, a precision,
// Options.SegmentRows, Auto or Partition.
type routeCase struct {
	n, g     int
	layout   string // contiguous, interleaved, strided (systems first, not adjacent)
	f64      bool
	segRows  int
	auto     bool
	constant bool
}

// routeLayouts are the layouts of the grid: rows first and contiguous,
// systems adjacent (batch stride 1), systems first two elements apart.
var routeLayouts = []string{"contiguous", "interleaved", "strided"}

func (c routeCase) shape() tridiag.Shape {
	var l tridiag.Layout
	switch c.layout {
	case "contiguous":
		l = tridiag.Contiguous(c.n)
	case "interleaved":
		l = tridiag.Interleaved(c.g)
	default:
		l = tridiag.Strided(2*c.g, 2)
	}
	return tridiag.Shape{N: c.n, G: c.g, Layout: l}.Normalize()
}

func (c routeCase) String() string {
	prec, alg, cst := "f32", "partition", "no"
	if c.f64 {
		prec = "f64"
	}
	if c.auto {
		alg = "auto"
	}
	if c.constant {
		cst = "yes"
	}
	return fmt.Sprintf("%s N=%d G=%d %s seg=%d %s const=%s", prec, c.n, c.g, c.layout, c.segRows, alg, cst)
}

// routeGrid is the grid of TestRouteGolden: every N of routeNs with the
// batch of 2^24 rows (at least one system) and G ∈ {1, 7, 132, 4096}
// where N·G ≤ 2^26; every layout, precision, SegmentRows 0 and 1024,
// Auto and Partition, general and constant solves. short keeps a few N.
func routeGrid(short bool) []routeCase {
	ns := []int{2, 3, 17, 64, 100, 256, 500, 512, 1000, 1024, 1025, 2048, 2049, 4096, 8192, 65536, 1 << 20, 1 << 24}
	if short {
		ns = []int{17, 1024, 4096, 65536}
	}
	var cases []routeCase
	for _, n := range ns {
		gs := []int{max(1, (1<<24)/n)}
		for _, g := range []int{1, 7, 132, 4096} {
			if int64(n)*int64(g) <= 1<<26 && !slices.Contains(gs, g) {
				gs = append(gs, g)
			}
		}
		for _, g := range gs {
			for _, layout := range routeLayouts {
				for _, f64 := range []bool{false, true} {
					for _, seg := range []int{0, 1024} {
						for _, auto := range []bool{true, false} {
							for _, constant := range []bool{false, true} {
								cases = append(cases, routeCase{n: n, g: g, layout: layout, f64: f64, segRows: seg, auto: auto, constant: constant})
							}
						}
					}
				}
			}
		}
	}
	return cases
}

// routeLaunch is one kernel launch a plan makes for a solve.
type routeLaunch struct {
	kernel               string
	grid, threads, shmem int
}

func (l routeLaunch) String() string {
	return fmt.Sprintf("%s %d×%d sh=%d", l.kernel, l.grid, l.threads, l.shmem)
}

// planLaunches lists the kernels, in order, that kp launches for a solve
// of spec (constant: with constant coefficients), with their grids,
// blocks and dynamic shared memory.
func planLaunches(kp kernelPlan, spec tridiag.Spec, f64, constant bool) []routeLaunch {
	G := spec.G
	switch p := kp.(type) {
	case *partitionPlan:
		if k, dk, _, _, ok := p.constLaunch(); constant && ok {
			return []routeLaunch{{k.Kernel().Name(), dk.grid, dk.block, dk.shmem}}
		}
		return []routeLaunch{{p.kernel.Kernel().Name(), p.cfg.Blocks(G), p.cfg.Threads, p.cfg.SharedBytes}}
	case *streamPlan:
		if constant {
			return planLaunches(p.other, spec, f64, constant)
		}
		return []routeLaunch{{p.kernel.Kernel().Name(), p.cfg.Grid, p.cfg.Threads, p.cfg.SharedBytes}}
	case *lanesStreamPlan:
		if constant {
			return planLaunches(p.lanes, spec, f64, constant)
		}
		return []routeLaunch{{p.kernel.Kernel().Name(), p.cfg.Grid, p.cfg.Threads, p.cfg.SharedBytes}}
	case *segmentPlan:
		if constant && p.constWhole != nil {
			return planLaunches(p.constWhole, spec, f64, constant)
		}
		if p.cfg.Cluster {
			return []routeLaunch{{p.cluster.Kernel().Name(), p.cfg.Blocks(G), p.cfg.Threads, p.cfg.SharedBytes}}
		}
		seg := routeLaunch{p.kernel.Kernel().Name(), p.cfg.Blocks(G), p.cfg.Threads, p.cfg.SharedBytes}
		if p.cfg.OnePass {
			return []routeLaunch{seg}
		}
		out := []routeLaunch{seg}
		out = append(out, planLaunches(p.nested, p.nspec, f64, false)...)
		return append(out, seg)
	case *lanesSegPlan:
		if constant && p.constPlan != nil {
			return planLaunches(p.constPlan, spec, f64, constant)
		}
		seg := routeLaunch{p.kernel.Kernel().Name(), p.cfg.Blocks(), p.cfg.Threads, p.cfg.SharedBytes}
		if p.cfg.OnePass {
			return []routeLaunch{seg}
		}
		out := []routeLaunch{seg}
		out = append(out, planLaunches(p.nested, p.nspec, f64, false)...)
		return append(out, seg)
	case *transposePlan:
		z := 4
		if constant {
			z = 1
		}
		out := []routeLaunch{{p.gather.Kernel().Name(), p.grid * z, 256, 0}}
		out = append(out, planLaunches(p.inner, p.ispec, f64, constant)...)
		return append(out, routeLaunch{p.scatter.Kernel().Name(), p.grid, 256, 0})
	case *pcrPlan:
		name := p.pcr.Kernel().Name()
		if p.hybrid {
			name = p.hyb.Kernel().Name()
		}
		return []routeLaunch{{name, p.cfg.Blocks(G), p.cfg.Threads, p.cfg.SharedBytes}}
	case *crPlan:
		return []routeLaunch{{p.kernel.Kernel().Name(), p.cfg.Blocks(G), p.cfg.Threads, p.cfg.SharedBytes}}
	case *perSystemPlan:
		name := p.thomas.Kernel().Name()
		if p.pivot {
			name = p.gtsv.Kernel().Name()
		}
		return []routeLaunch{{name, (G + perSystemBlock - 1) / perSystemBlock, perSystemBlock, 0}}
	case *tprPlan:
		return []routeLaunch{{fmt.Sprintf("tpr %+v", p.cfg), 0, 0, 0}}
	}
	return []routeLaunch{{fmt.Sprintf("%T", kp), 0, 0, 0}}
}

// routeLine is the dump line of case c: the spec, then the algorithm, the
// plan's description and its launches, or the kind of error.
func routeLine(d *gpu, c routeCase) (string, []routeLaunch) {
	opts := tridiag.Options{Algorithm: tridiag.Partition, SegmentRows: c.segRows}
	if c.auto {
		opts.Algorithm = tridiag.Auto
	}
	spec := tridiag.Spec{Shape: c.shape(), Options: opts}
	alg, kp, err := buildKernelPlan(d, spec, c.f64)
	if err != nil {
		kind := "other"
		switch {
		case errors.Is(err, tridiag.ErrShape):
			kind = "shape"
		case errors.Is(err, tridiag.ErrOptions):
			kind = "options"
		}
		return fmt.Sprintf("%s -> error (%s)", c, kind), nil
	}
	desc := alg.String()
	if ds, ok := kp.(describer); ok {
		desc = ds.describe()
	}
	spec.Algorithm = alg
	ls := planLaunches(kp, spec, c.f64, c.constant)
	parts := make([]string, len(ls))
	for i, l := range ls {
		parts[i] = l.String()
	}
	return fmt.Sprintf("%s -> %s | %s | %s", c, alg, desc, strings.Join(parts, "; ")), ls
}

// TestRouteGolden builds the plan of every spec of routeGrid on the GPU
// and checks its launches against the kernels' bounds and the device's
// limits; where BANDSOLVE_ROUTE_DUMP names a file it writes one line per
// spec there (routeLine), for comparing the choices of two builds:
//
//	BANDSOLVE_ROUTE_DUMP=/tmp/routes.txt go test -tags cuda -run TestRouteGolden ./internal/gpu/tridiaggpu
func TestRouteGolden(t *testing.T) {
	path := os.Getenv("BANDSOLVE_ROUTE_DUMP")
	cases := routeGrid(path == "")
	var w *bufio.Writer
	if path != "" {
		f, err := os.Create(path)
		require.NoError(t, err)
		defer func() { require.NoError(t, f.Close()) }()
		w = bufio.NewWriter(f)
		defer func() { require.NoError(t, w.Flush()) }()
		fmt.Fprintf(w, "# %s\n", dev.Name())
	}
	props := gdev.props
	for _, c := range cases {
		line, ls := routeLine(gdev, c)
		if w != nil {
			fmt.Fprintln(w, line)
		}
		for _, l := range ls {
			if l.threads == 0 {
				continue // a plan listed by its launch parameters
			}
			require.Positive(t, l.grid, line)
			require.LessOrEqual(t, l.threads, props.MaxThreadsPerBlock, line)
			require.LessOrEqual(t, l.shmem, props.MaxShared(), line)
		}
	}
}
