package suite_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/bandsolve/bandsolve/sptrsv/suite"
)

func ExampleLevels() {
	// The lower triangle of the 5-point Laplacian on a 30×30 grid: the
	// anti-diagonals of the grid are its 2·30−1 levels.
	a := suite.Laplacian2D(30, suite.Natural)
	fmt.Println(a.N, a.NNZ(), suite.Levels(a))
	// Output: 900 2640 59
}

func ExampleSmall() {
	for _, c := range suite.Small() {
		fmt.Printf("%-20s %6d %7d %4d\n", c.Name, c.N, c.NNZ, c.Levels)
	}
	// Output:
	// lap2d-5pt-natural     90000  269400  599
	// lap3d-7pt-natural     27000  105300   88
	// dense-lower             300   45150  300
	// power-law             20000   78002  441
	// two-level             30000   90000    2
	// road-like             60000  130941   20
	// lap2d-5pt-rcm         90000  269400  599
	// lap3d-27pt-natural     8000  101556  134
}

func ExampleReal() {
	// scripts/fetch-suitesparse.sh DIR puts the matrices in DIR; a folder
	// without them gives no case and lists every matrix as absent.
	dir, err := os.MkdirTemp("", "suitesparse")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	s, absent, err := suite.Real(dir)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(s), "cases of", len(suite.RealNames()), "matrices; absent:")
	for _, a := range absent {
		fmt.Println(a)
	}
	// Each present matrix gives "<name>/lower" and "<name>/upper":
	for _, c := range s {
		fmt.Println(c.Name, c.Triangle, c.N, c.NNZ, c.Levels)
	}
	// Output:
	// 0 cases of 7 matrices; absent:
	// add32 (big.rua or add32.rua or add32.mtx)
	// g20 (g20.rua)
	// g4 (g4.rua)
	// jgl009 (jgl009.mtx or jgl009.rua or jgl009.pua)
	// lund_a (lund_a.rsa or lund_a.mtx)
	// pores_1 (pores_1.mtx or pores_1.rua)
	// utm300 (utm300.rua or utm300.mtx)
}

func ExampleReadReal() {
	// A 3×3 stand-in for pores_1.mtx whose second diagonal entry is
	// missing.
	dir, err := os.MkdirTemp("", "suitesparse")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	const mtx = "%%MatrixMarket matrix coordinate real general\n3 3 4\n1 1 2\n2 3 1\n3 1 -1\n3 3 4\n"
	if err := os.WriteFile(filepath.Join(dir, "pores_1.mtx"), []byte(mtx), 0o644); err != nil {
		log.Fatal(err)
	}
	ms, absent, err := suite.ReadReal(dir)
	if err != nil {
		log.Fatal(err)
	}
	for _, m := range ms {
		fmt.Println(m.Name, m.File, m.A.N, m.A.NNZ(), "zero or missing diagonal in rows", m.ZeroDiagonal)
	}
	fmt.Println(len(absent), "absent")
	// Output:
	// pores_1 pores_1.mtx 3 4 zero or missing diagonal in rows [1]
	// 6 absent
}
