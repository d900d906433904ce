package suite

import (
	"fmt"

	"github.com/bandsolve/bandsolve/sparse"
)

// Triangle says whether a Case is a lower or an upper triangle. Its
// values are those of sptrsv.Triangle: sptrsv.Triangle(c.Triangle) is the
// triangle to analyze a case with.
type Triangle int

const (
	// Lower: row i depends on the rows j < i.
	Lower Triangle = iota
	// Upper: row i depends on the rows j > i.
	Upper
)

// String returns "lower" or "upper".
func (t Triangle) String() string {
	if t == Upper {
		return "upper"
	}
	return "lower"
}

// Case is a named matrix of a Set with the statistics its generator
// gives: N rows, NNZ stored entries (diagonal included) and Levels levels
// (see Levels) of its Triangle.
type Case struct {
	Name     string
	Desc     string // the structure, in words
	Build    func() *sparse.CSR
	N        int
	NNZ      int
	Levels   int
	Triangle Triangle // every generator gives Lower; Real gives both
}

// Set is a list of cases with distinct names.
type Set []Case

// Lookup returns the case of the given name.
func (s Set) Lookup(name string) (Case, error) {
	for _, c := range s {
		if c.Name == name {
			return c, nil
		}
	}
	return Case{}, fmt.Errorf("suite: no case %q in the set", name)
}

// Names returns the names of the cases in order.
func (s Set) Names() []string {
	names := make([]string, len(s))
	for i, c := range s {
		names[i] = c.Name
	}
	return names
}

// Seed is the seed of the random cases of Fixed and Small.
const Seed = 1

// Fixed returns the fixed benchmark set of the SpTRSV targets at full
// size (issue 25): the five generated matrices of cuSPARSE SpSV's table,
// a road-network-like matrix of 10⁷ rows and 60 levels, the 2-D Laplacian
// in RCM order and the 27-point 3-D factor of 10⁶ rows. Generating all of
// them takes a few seconds and about 1 GB at a time for the largest.
//
//	name               n           nnz         levels
//	lap2d-5pt-natural  1,000,000    2,998,000   1,999
//	lap3d-7pt-natural  1,000,000    3,970,000     298
//	dense-lower            2,000    2,001,000   2,000
//	power-law          1,000,000    3,899,870     492
//	two-level         10,000,000   30,000,000       2
//	road-like         10,000,000   22,217,823      60
//	lap2d-5pt-rcm      1,000,000    2,998,000   1,999
//	lap3d-27pt-natural 1,000,000   13,731,796     694
func Fixed() Set {
	return Set{
		{"lap2d-5pt-natural", "lower triangle of the 2-D 5-point Laplacian, 1000², natural order",
			func() *sparse.CSR { return Laplacian2D(1000, Natural) }, 1_000_000, 2_998_000, 1999, Lower},
		{"lap3d-7pt-natural", "lower triangle of the 3-D 7-point Laplacian, 100³, natural order",
			func() *sparse.CSR { return Laplacian3D(100, 7, Natural) }, 1_000_000, 3_970_000, 298, Lower},
		{"dense-lower", "dense lower triangle, n = 2000",
			func() *sparse.CSR { return DenseLower(2000) }, 2000, 2_001_000, 2000, Lower},
		{"power-law", "power-law dependencies, 2.9 off-diagonals a row, 10⁶ rows",
			func() *sparse.CSR { return PowerLaw(1_000_000, 2.9, Seed) }, 1_000_000, 3_899_870, 492, Lower},
		{"two-level", "two wide levels, 10⁷ rows",
			func() *sparse.CSR { return TwoLevel(10_000_000, Seed) }, 10_000_000, 30_000_000, 2, Lower},
		{"road-like", "road-network-like, 10⁷ rows, 60 levels",
			func() *sparse.CSR { return RoadLike(10_000_000, 60, Seed) }, 10_000_000, 22_217_823, 60, Lower},
		{"lap2d-5pt-rcm", "lower triangle of the 2-D 5-point Laplacian, 1000², RCM order",
			func() *sparse.CSR { return Laplacian2D(1000, RCM) }, 1_000_000, 2_998_000, 1999, Lower},
		{"lap3d-27pt-natural", "lower triangle of the 3-D 27-point Laplacian, 100³, natural order",
			func() *sparse.CSR { return Laplacian3D(100, 27, Natural) }, 1_000_000, 13_731_796, 694, Lower},
	}
}

// Small returns a variant of each case of Fixed, in the same order and
// under the same name, with at most 10⁵ rows (and nnz), for tests.
func Small() Set {
	return Set{
		{"lap2d-5pt-natural", "lower triangle of the 2-D 5-point Laplacian, 300², natural order",
			func() *sparse.CSR { return Laplacian2D(300, Natural) }, 90_000, 269_400, 599, Lower},
		{"lap3d-7pt-natural", "lower triangle of the 3-D 7-point Laplacian, 30³, natural order",
			func() *sparse.CSR { return Laplacian3D(30, 7, Natural) }, 27_000, 105_300, 88, Lower},
		{"dense-lower", "dense lower triangle, n = 300",
			func() *sparse.CSR { return DenseLower(300) }, 300, 45_150, 300, Lower},
		{"power-law", "power-law dependencies, 2.9 off-diagonals a row, 2·10⁴ rows",
			func() *sparse.CSR { return PowerLaw(20_000, 2.9, Seed) }, 20_000, 78_002, 441, Lower},
		{"two-level", "two wide levels, 3·10⁴ rows",
			func() *sparse.CSR { return TwoLevel(30_000, Seed) }, 30_000, 90_000, 2, Lower},
		{"road-like", "road-network-like, 6·10⁴ rows, 20 levels",
			func() *sparse.CSR { return RoadLike(60_000, 20, Seed) }, 60_000, 130_941, 20, Lower},
		{"lap2d-5pt-rcm", "lower triangle of the 2-D 5-point Laplacian, 300², RCM order",
			func() *sparse.CSR { return Laplacian2D(300, RCM) }, 90_000, 269_400, 599, Lower},
		{"lap3d-27pt-natural", "lower triangle of the 3-D 27-point Laplacian, 20³, natural order",
			func() *sparse.CSR { return Laplacian3D(20, 27, Natural) }, 8000, 101_556, 134, Lower},
	}
}

// Structures returns Small followed by small instances of the other
// structures of the suite: a banded triangle, the FEM-like triangulation,
// the 3-D factors in RCM order and a sparser power-law graph (all at most
// 10⁵ rows), for tests that cover every generator.
func Structures() Set {
	return append(Small(),
		Case{"banded-8", "lower band with 8 subdiagonals, 5000 rows",
			func() *sparse.CSR { return Banded(5000, 8) }, 5000, 44_964, 5000, Lower},
		Case{"fem-like", "FEM-like P1 triangulation of a 250² grid, random diagonals",
			func() *sparse.CSR { return FEMLike(250, Seed) }, 62_500, 249_001, 748, Lower},
		Case{"lap3d-7pt-rcm", "lower triangle of the 3-D 7-point Laplacian, 30³, RCM order",
			func() *sparse.CSR { return Laplacian3D(30, 7, RCM) }, 27_000, 105_300, 88, Lower},
		Case{"lap3d-27pt-rcm", "lower triangle of the 3-D 27-point Laplacian, 20³, RCM order",
			func() *sparse.CSR { return Laplacian3D(20, 27, RCM) }, 8000, 101_556, 259, Lower},
		Case{"power-law-sparse", "power-law dependencies, 1.5 off-diagonals a row, 5·10⁴ rows",
			func() *sparse.CSR { return PowerLaw(50_000, 1.5, Seed) }, 50_000, 125_003, 439, Lower},
	)
}
