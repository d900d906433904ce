package bench

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/bandsolve/bandsolve/tridiag"
)

// Layout names used in cases and in the CSV.
const (
	Contiguous  = "contiguous"  // system g at g·N … g·N+N−1 (tridiag.Contiguous)
	Interleaved = "interleaved" // row i of system g at i·G + g (tridiag.Interleaved)
	// Strided is the layout of the columns of a row-major 2D array with a
	// one-cell halo on each side: row i of system g at i·(G+2) + g. It is
	// neither contiguous nor interleaved, so it takes the general path.
	Strided = "strided"
)

// stridedPad is the extra elements per row of the Strided layout.
const stridedPad = 2

// Precision names: the element type of a case. C64 and C128 are complex
// (complex64 and complex128, two float32 or float64 parts an element).
const (
	F32  = "f32"
	F64  = "f64"
	C64  = "c64"
	C128 = "c128"
)

// Precisions lists the precisions in the order cases of one size are run.
func Precisions() []string { return []string{F32, F64, C64, C128} }

// Case is one benchmark problem: G systems of N rows in a layout and a
// precision, with coefficient arrays or constant coefficients.
type Case struct {
	N, G      int
	Layout    string // Contiguous, Interleaved or Strided
	Precision string // F32, F64, C64 or C128
	Constant  bool   // one (a, b, c) for every row of every system
}

// String describes the case, e.g. "f32 contiguous N=1024 G=8" or "c128
// interleaved N=256 G=65536".
func (c Case) String() string {
	s := fmt.Sprintf("%s %s N=%d G=%d", c.Precision, c.Layout, c.N, c.G)
	if c.Constant {
		s += " const"
	}
	return s
}

// Rows is N·G.
func (c Case) Rows() int64 { return int64(c.N) * int64(c.G) }

// ElemSize is the bytes of one element: 4 for F32, 8 for F64 and C64, 16
// for C128.
func (c Case) ElemSize() int64 {
	switch c.Precision {
	case F32:
		return 4
	case C128:
		return 16
	}
	return 8
}

// Complex reports whether the case's elements are complex (C64, C128).
func (c Case) Complex() bool { return c.Precision == C64 || c.Precision == C128 }

// TridiagLayout returns the case's layout as a tridiag.Layout.
func (c Case) TridiagLayout() tridiag.Layout {
	switch c.Layout {
	case Interleaved:
		return tridiag.Interleaved(c.G)
	case Strided:
		return tridiag.Strided(c.G+stridedPad, 1)
	default:
		return tridiag.Contiguous(c.N)
	}
}

// systemsContiguous reports whether each system's rows are consecutive
// and the systems follow one another (what LAPACK and cuSPARSE's strided
// batch take).
func (c Case) systemsContiguous() bool {
	l := c.TridiagLayout()
	return l.ElemStride == 1 && (c.G == 1 || l.BatchStride == c.N)
}

// Shape returns the case's tridiag shape.
func (c Case) Shape() tridiag.Shape {
	return tridiag.Shape{N: c.N, G: c.G, Layout: c.TridiagLayout()}
}

// Len is the length of each array of the case (larger than N·G for the
// strided layout).
func (c Case) Len() int { return c.Shape().Len() }

// BytesPerRow is the least traffic per row: a, b, c and d read once and x
// written once (5 elements: 20 B in FP32, 40 in FP64 and complex64, 80 in
// complex128), or only d and x with constant coefficients.
func (c Case) BytesPerRow() int64 {
	if c.Constant {
		return 2 * c.ElemSize()
	}
	return 5 * c.ElemSize()
}

// BytesMoved is the least traffic of one solve, the numerator of the
// fraction of the physical limit: BytesPerRow·N·G.
func (c Case) BytesMoved() int64 { return c.BytesPerRow() * c.Rows() }

// Footprint is the memory the benchmark holds for the case on one side
// (device or host): a, b, c, d, x and the saved right-hand side, or d, x
// and the saved d with constant coefficients. Workspaces come on top.
func (c Case) Footprint() int64 {
	arrays := int64(6)
	if c.Constant {
		arrays = 3
	}
	return arrays * int64(c.Len()) * c.ElemSize()
}

// Grids lists the grid names Grid knows.
func Grids() []string {
	return []string{"paper", "batch", "contiguous", "large", "const", "layouts", "segments", "interleaved", "all", "quick"}
}

// Grid returns the cases of a named grid, in both real precisions (F32
// then F64 for each size; GridCases puts them in other precisions):
//
//   - paper: the TPR paper's Fig. 12–13, N = 2^7 … 2^19, G = 1, 8, 64,
//     contiguous;
//   - batch: large batches, N·G = 2^24, 2^25, 2^26 rows with N = 2^6 …
//     2^16, contiguous and interleaved;
//   - contiguous: contiguous batches of N·G = 2^24 rows, N = 2^6 … 2^17;
//   - large: single systems, N = 2^20 … 2^24;
//   - const: constant-coefficient batches, N·G = 2^24 with N = 2^6 … 2^16,
//     contiguous and interleaved;
//   - layouts: the three layouts side by side, N·G = 2^20 and 2^24 with
//     N = 64, 256, 1024, 4096;
//   - segments: where systems outgrow one block: contiguous batches of
//     N·G = 2^24 rows with N = 2^11 … 2^17, and single systems of 2^20 …
//     2^24 rows;
//   - interleaved: interleaved batches of N·G = 2^24 rows, N = 2^6 …
//     2^16 (the lanes kernel, one block a few systems, and beyond 2048
//     rows systems gathered into contiguous ones);
//   - all: the union of the above;
//   - quick: a few small cases for a smoke test;
//   - NxG (e.g. 2048x8192): that one contiguous case; NxG:interleaved,
//     NxG:strided and a further :const (e.g. 16384x1024:interleaved:const)
//     choose the layout and constant coefficients.
//
// Several names may be joined with commas. An unknown name gives nil.
func Grid(name string) []Case {
	if strings.Contains(name, ",") {
		var out []Case
		for _, n := range strings.Split(name, ",") {
			g := Grid(strings.TrimSpace(n))
			if g == nil {
				return nil
			}
			out = append(out, g...)
		}
		return dedupe(out)
	}
	var cs []Case
	add := func(c Case) {
		for _, p := range []string{F32, F64} {
			c.Precision = p
			cs = append(cs, c)
		}
	}
	switch name {
	case "paper":
		for _, g := range []int{1, 8, 64} {
			for k := 7; k <= 19; k++ {
				add(Case{N: 1 << k, G: g, Layout: Contiguous})
			}
		}
	case "batch":
		for _, total := range []int{24, 25, 26} {
			for _, layout := range []string{Contiguous, Interleaved} {
				for k := 6; k <= 16; k++ {
					add(Case{N: 1 << k, G: 1 << (total - k), Layout: layout})
				}
			}
		}
	case "contiguous":
		for k := 6; k <= 17; k++ {
			add(Case{N: 1 << k, G: 1 << (24 - k), Layout: Contiguous})
		}
	case "large":
		for k := 20; k <= 24; k++ {
			add(Case{N: 1 << k, G: 1, Layout: Contiguous})
		}
	case "const":
		for _, layout := range []string{Contiguous, Interleaved} {
			for k := 6; k <= 16; k += 2 {
				add(Case{N: 1 << k, G: 1 << (24 - k), Layout: layout, Constant: true})
			}
		}
	case "layouts":
		for _, total := range []int{20, 24} {
			for _, k := range []int{6, 8, 10, 12} {
				for _, layout := range []string{Contiguous, Interleaved, Strided} {
					add(Case{N: 1 << k, G: 1 << (total - k), Layout: layout})
				}
			}
		}
	case "segments":
		for k := 11; k <= 17; k++ {
			add(Case{N: 1 << k, G: 1 << (24 - k), Layout: Contiguous})
		}
		return append(cs, Grid("large")...)
	case "interleaved":
		for k := 6; k <= 16; k++ {
			add(Case{N: 1 << k, G: 1 << (24 - k), Layout: Interleaved})
		}
	case "all":
		return Grid("paper,batch,large,const,layouts")
	case "quick":
		add(Case{N: 128, G: 1, Layout: Contiguous})
		add(Case{N: 1024, G: 1, Layout: Contiguous})
		add(Case{N: 128, G: 64, Layout: Contiguous})
		add(Case{N: 1024, G: 64, Layout: Contiguous})
		add(Case{N: 256, G: 256, Layout: Interleaved})
		add(Case{N: 256, G: 64, Layout: Strided})
		add(Case{N: 256, G: 256, Layout: Contiguous, Constant: true})
	default:
		dims, opts, _ := strings.Cut(name, ":")
		ns, gs, ok := strings.Cut(dims, "x")
		n, err1 := strconv.Atoi(ns)
		g, err2 := strconv.Atoi(gs)
		if !ok || err1 != nil || err2 != nil || n < 1 || g < 1 {
			return nil
		}
		c := Case{N: n, G: g, Layout: Contiguous}
		if opts != "" {
			for _, o := range strings.Split(opts, ":") {
				switch o {
				case Contiguous, Interleaved, Strided:
					c.Layout = o
				case "const":
					c.Constant = true
				default:
					return nil
				}
			}
		}
		add(c)
	}
	return cs
}

// GridCases returns the cases of a named grid in the precisions of precs
// (F32, F64, C64, C128): every size of Grid(name), in each precision of
// precs in the order of Precisions. The complex cases are the grid's real
// ones with complex elements: the same N, G, layouts and constant cases.
// An unknown name gives nil.
func GridCases(name string, precs map[string]bool) []Case {
	var out []Case
	for _, c := range Grid(name) {
		if c.Precision != F32 {
			continue // Grid lists every size in F32 and then in F64
		}
		for _, p := range Precisions() {
			if precs[p] {
				c.Precision = p
				out = append(out, c)
			}
		}
	}
	return out
}

// dedupe drops repeated cases, keeping the first.
func dedupe(cs []Case) []Case {
	seen := map[Case]bool{}
	out := cs[:0:0]
	for _, c := range cs {
		if !seen[c] {
			seen[c] = true
			out = append(out, c)
		}
	}
	return out
}

// parsePrecision reads f32/f64/c64/c128 (also fp32, float32, single, s;
// complex64, c; complex128, z; …).
func parsePrecision(s string) (string, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "f32", "fp32", "float32", "single", "s":
		return F32, nil
	case "f64", "fp64", "float64", "double", "d":
		return F64, nil
	case "c64", "complex64", "c":
		return C64, nil
	case "c128", "complex128", "z":
		return C128, nil
	}
	return "", fmt.Errorf("unknown precision %q (want f32, f64, c64 or c128)", s)
}

// parsePrecisions reads the -precision list: precisions (parsePrecision)
// and the groups real (f32, f64), complex (c64, c128) and all.
func parsePrecisions(s string) (map[string]bool, error) {
	out := map[string]bool{}
	for _, p := range splitList(s) {
		switch p {
		case "all":
			for _, q := range Precisions() {
				out[q] = true
			}
		case "real":
			out[F32], out[F64] = true, true
		case "complex":
			out[C64], out[C128] = true, true
		default:
			q, err := parsePrecision(p)
			if err != nil {
				return nil, err
			}
			out[q] = true
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no precision")
	}
	return out, nil
}
