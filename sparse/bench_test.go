package sparse

import (
	"testing"
)

// benchN is the order of the benchmark matrix: 10^5 rows, about 10
// entries per row.
const benchN = 100_000

func benchMatrix(b *testing.B) *CSR {
	b.Helper()
	a := RandomSparse(benchN, 10, newRNG(100))
	b.ReportMetric(float64(a.NNZ()), "nnz")
	return a
}

func BenchmarkMaxProductMatching(b *testing.B) {
	a := benchMatrix(b)
	for b.Loop() {
		if _, _, _, err := MaxProductMatching(a); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRCM(b *testing.B) {
	a := benchMatrix(b)
	for b.Loop() {
		if _, err := RCM(a); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMatchingRCM is the first stage of Reorder: matching, the row
// permutation, and RCM on QA + (QA)ᵀ.
func BenchmarkMatchingRCM(b *testing.B) {
	a := benchMatrix(b)
	for b.Loop() {
		q, _, _, err := MaxProductMatching(a)
		if err != nil {
			b.Fatal(err)
		}
		qa, err := a.Permute(q, nil)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := RCM(qa); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkReorder(b *testing.B) {
	a := benchMatrix(b)
	for b.Loop() {
		if _, err := Reorder(a, ReorderOptions{Matching: true, RCM: true, Delta: 0.9, Partitions: 16, SecondRCM: true}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMulVec(b *testing.B) {
	a := benchMatrix(b)
	x := make([]float64, a.N)
	y := make([]float64, a.N)
	for i := range x {
		x[i] = 1
	}
	for b.Loop() {
		if err := a.MulVec(x, y); err != nil {
			b.Fatal(err)
		}
	}
}
