package stability

import "fmt"

// Type identifies a matrix type of the suite. Types 1..16 are Table 9 of the
// TPR paper (after Chang et al.), 17..20 are the types Klein & Strzodka add,
// and 21 (TypeKS16) is the type 16 of the Klein & Strzodka 20-matrix set,
// tridiag(1, 1e-8, 1). See the package documentation for the full list.
type Type int

// NumClassic is the number of matrix types of the classic suite (types 1..16).
const NumClassic = 16

// NumExtended is the number of matrix types of the Klein & Strzodka suite
// (types 1..14, 16, 21, 17..20; see KleinStrzodka).
const NumExtended = 20

// TypeKS16 is the type 16 of the Klein & Strzodka 20-matrix set,
// tridiag(1, 1e-8, 1).
const TypeKS16 Type = 21

// NumTypes is the number of distinct types this package generates (1..21).
const NumTypes = 21

var typeNames = [...]string{
	1:  "U(-1,1)",
	2:  "diag 1e8",
	3:  "lesp",
	4:  "U(-1,1), a[n/2]*1e-50",
	5:  "U(-1,1), off-diag 50% zero",
	6:  "diag 64",
	7:  "inv kms(0.5)",
	8:  "randsvd mode 2",
	9:  "randsvd mode 3",
	10: "randsvd mode 1",
	11: "randsvd mode 4",
	12: "U(-1,1), sub*1e-50",
	13: "dorr(1e-4)",
	14: "diag 1e-8",
	15: "clement",
	16: "diag 0",
	17: "tridiag(1,1e8,1)",
	18: "tridiag(-1,4,-1)",
	19: "tridiag(-1,4,1)",
	20: "tridiag(-1,4,U(-1,1))",
	21: "ks16 tridiag(1,1e-8,1)",
}

// String returns a short description of the type, such as "U(-1,1)",
// "lesp", "dorr(1e-4)" or "randsvd mode 2".
func (t Type) String() string {
	if !t.Valid() {
		return fmt.Sprintf("Type(%d)", int(t))
	}
	return typeNames[t]
}

// Valid reports whether t is one of the types 1..NumTypes.
func (t Type) Valid() bool { return t >= 1 && t <= NumTypes }

// Random reports whether the matrix of type t depends on the seed.
func (t Type) Random() bool {
	switch t {
	case 3, 7, 13, 15, 17, 18, 19, TypeKS16:
		return false
	}
	return t.Valid()
}

// Types returns the classic types 1..16, or with extended set all types
// 1..21 (the classic ones, Klein & Strzodka's 17..20 and TypeKS16), in
// increasing order.
func Types(extended bool) []Type {
	n := NumClassic
	if extended {
		n = NumTypes
	}
	ts := make([]Type, n)
	for i := range ts {
		ts[i] = Type(i + 1)
	}
	return ts
}

// KleinStrzodka returns the 20-matrix set of Klein & Strzodka (ICPP 2021,
// Table 1) in their order, so that element k-1 is their type k: the classic
// types 1..14, the classic 16 (zero diagonal) as their 15, TypeKS16 as their
// 16, then 17..20. The clement matrix (classic 15) is not in their set.
func KleinStrzodka() []Type {
	ts := make([]Type, 0, NumExtended)
	for t := Type(1); t <= 14; t++ {
		ts = append(ts, t)
	}
	ts = append(ts, 16, TypeKS16, 17, 18, 19, 20)
	return ts
}
