package sparse_test

import (
	"fmt"
	"log"
	"os"
	"strings"

	"github.com/bandsolve/bandsolve/sparse"
)

// A tridiagonal matrix whose unknowns were numbered out of order: the path
// 1–4–6–2–5–3. RCM numbers it along the path again.
const scrambledPath = `%%MatrixMarket matrix coordinate real symmetric
% a path 1-4-6-2-5-3, numbered out of order
6 6 11
1 1 4
2 2 4
3 3 4
4 4 4
5 5 4
6 6 4
4 1 -1
6 4 -1
6 2 -1
5 2 -1
5 3 -1
`

func ExampleReadMatrixMarket() {
	c, err := sparse.ReadMatrixMarket(strings.NewReader(scrambledPath))
	if err != nil {
		log.Fatal(err)
	}
	a, err := c.ToCSR()
	if err != nil {
		log.Fatal(err)
	}
	perm, err := sparse.RCM(a)
	if err != nil {
		log.Fatal(err)
	}
	b, err := a.Permute(perm, perm)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("size", a.N, "nonzeros", a.NNZ())
	fmt.Println("half-bandwidth before", a.Bandwidth(), "after RCM", b.Bandwidth())
	// Output:
	// size 6 nonzeros 16
	// half-bandwidth before 4 after RCM 1
}

func ExampleReorder() {
	f, err := os.Open("testdata/convdiff20-scrambled.mtx")
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	c, err := sparse.ReadMatrixMarket(f)
	if err != nil {
		log.Fatal(err)
	}
	a, err := c.ToCSR()
	if err != nil {
		log.Fatal(err)
	}
	r, err := sparse.Reorder(a, sparse.ReorderOptions{Matching: true, RCM: true, Delta: 0.99, Partitions: 4, SecondRCM: true})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("original", r.KOriginal)
	fmt.Println("after matching", r.KMatching)
	fmt.Println("after RCM", r.KRCM)
	fmt.Printf("after drop-off %d (%.1f%% of ‖A‖²_F dropped)\n", r.KDropOff, 100*r.DroppedFraction)
	fmt.Println("per block after the second RCM", r.BlockK)
	// The second stage narrows the blocks but moves coupling entries away
	// from the corners.
	fmt.Println("coupling", r.CouplingK, "whole matrix", r.KFinal)

	// The band a banded preconditioner stores; a solve permutes b with
	// r.PermuteVector and maps the solution back with r.UnpermuteVector.
	band, dropped, err := sparse.ToBand[float64](r.Kept, r.KFinal)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("banded storage", band.N, "×", band.Width(), "dropped", dropped)
	// Output:
	// original 399
	// after matching 399
	// after RCM 20
	// after drop-off 20 (0.0% of ‖A‖²_F dropped)
	// per block after the second RCM [12 10 10 8]
	// coupling 148 whole matrix 148
	// banded storage 400 × 297 dropped 0
}

// A symmetric 3×3 matrix in the Harwell–Boeing format: its lower triangle
// stored by columns, values with Fortran D exponents.
const symmetricHB = `A 3x3 symmetric example                                                 EX3
             3             1             1             1             0
RSA                        3             3             4             0
(4I3)           (4I3)           (1P,4D15.7)
  1  3  4  5
  1  2  2  3
  4.0000000D+00 -1.0000000D+00  4.0000000D+00  2.5000000D-01
`

func ExampleReadHarwellBoeing() {
	c, err := sparse.ReadHarwellBoeing(strings.NewReader(symmetricHB))
	if err != nil {
		log.Fatal(err)
	}
	a, err := c.ToCSR()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("stored", c.NNZ(), "entries")
	for i := range a.N {
		fmt.Println(a.At(i, 0), a.At(i, 1), a.At(i, 2))
	}
	_, err = sparse.ReadHarwellBoeing(strings.NewReader(strings.Replace(symmetricHB, "RSA", "CSA", 1)))
	fmt.Println(err)
	// Output:
	// stored 5 entries
	// 4 -1 0
	// -1 4 0
	// 0 0 0.25
	// sparse: Harwell-Boeing line 3: type "CSA": complex matrices are not supported, want R (real) or P (pattern)
}
