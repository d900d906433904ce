package problems_test

import (
	"fmt"

	"github.com/bandsolve/bandsolve/krylov/problems"
)

// The suite at m = 30: the SPD problems for CG and the non-symmetric ones
// for BiCGStab.
func ExampleSuite() {
	for _, p := range problems.Suite(30) {
		fmt.Printf("%-20s n=%4d nnz=%5d spd=%v\n", p.Name, p.A.N, p.A.NNZ(), p.SPD)
	}
	// Output:
	// poisson2d-30         n= 900 nnz= 4380 spd=true
	// poisson3d-10         n=1000 nnz= 6400 spd=true
	// aniso2d-30           n= 900 nnz= 4380 spd=true
	// circuit-900          n= 900 nnz= 4534 spd=true
	// convdiff2d-30-pe100  n= 900 nnz= 4380 spd=false
	// convdiff2d-30-pe1000 n= 900 nnz= 4380 spd=false
}
