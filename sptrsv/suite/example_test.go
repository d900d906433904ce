package suite_test

import (
	"fmt"

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
