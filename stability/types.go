package stability

import (
	"fmt"
	"strconv"
	"strings"
)

// Type identifies a matrix type of the suite. Types 1..16 are Table 9 of the
// TPR paper (after Chang et al.), 17..20 are the types Klein & Strzodka add,
// 21 (TypeKS16) is the type 16 of the Klein & Strzodka 20-matrix set,
// tridiag(1, 1e-8, 1), and Type2T, Type6T, Type14T and Type16T are the
// Toeplitz readings of types 2, 6, 14 and 16 (named 2T, 6T, 14T and 16T).
// See the package documentation for the full list. Name gives the name a
// type is listed and parsed by; String describes the matrix.
type Type int

// NumClassic is the number of matrix types of the classic suite (types 1..16).
const NumClassic = 16

// NumExtended is the number of matrix types of the Klein & Strzodka suite
// (types 1..14, 16, 21, 17..20; see KleinStrzodka).
const NumExtended = 20

// TypeKS16 is the type 16 of the Klein & Strzodka 20-matrix set,
// tridiag(1, 1e-8, 1).
const TypeKS16 Type = 21

// The Toeplitz readings of the classic types 2, 6, 14 and 16: the same
// diagonal, and one value from U(-1,1) for the whole sub-diagonal and one
// for the whole super-diagonal. Their Name is the classic number with a
// "T" (2T, 6T, 14T, 16T); their numeric values are identifiers only.
const (
	Type2T  Type = 22 // tridiag(a, 1e8, c), a and c from U(-1,1)
	Type6T  Type = 23 // tridiag(a, 64, c), a and c from U(-1,1)
	Type14T Type = 24 // tridiag(a, 1e-8, c), a and c from U(-1,1)
	Type16T Type = 25 // tridiag(a, 0, c), a and c from U(-1,1)
)

// NumToeplitz is the number of Toeplitz readings (2T, 6T, 14T, 16T).
const NumToeplitz = 4

// NumTypes is the number of distinct types this package generates
// (1..21 and the four Toeplitz readings).
const NumTypes = 25

var typeNames = [...]string{
	1:       "U(-1,1)",
	2:       "diag 1e8",
	3:       "lesp",
	4:       "U(-1,1), a[n/2]*1e-50",
	5:       "U(-1,1), off-diag 50% zero",
	6:       "diag 64",
	7:       "inv kms(0.5)",
	8:       "randsvd mode 2",
	9:       "randsvd mode 3",
	10:      "randsvd mode 1",
	11:      "randsvd mode 4",
	12:      "U(-1,1), sub*1e-50",
	13:      "dorr(1e-4)",
	14:      "diag 1e-8",
	15:      "clement",
	16:      "diag 0",
	17:      "tridiag(1,1e8,1)",
	18:      "tridiag(-1,4,-1)",
	19:      "tridiag(-1,4,1)",
	20:      "tridiag(-1,4,U(-1,1))",
	21:      "ks16 tridiag(1,1e-8,1)",
	Type2T:  "Toeplitz diag 1e8",
	Type6T:  "Toeplitz diag 64",
	Type14T: "Toeplitz diag 1e-8",
	Type16T: "Toeplitz diag 0",
}

// toeplitzOf maps each Toeplitz reading to the classic type it reads.
var toeplitzOf = map[Type]Type{Type2T: 2, Type6T: 6, Type14T: 14, Type16T: 16}

// String returns a short description of the type, such as "U(-1,1)",
// "lesp", "dorr(1e-4)", "randsvd mode 2" or "Toeplitz diag 1e-8".
func (t Type) String() string {
	if !t.Valid() {
		return fmt.Sprintf("Type(%d)", int(t))
	}
	return typeNames[t]
}

// Name returns the name the type is listed under: its number ("1" ..
// "21"), or for a Toeplitz reading the classic number followed by "T"
// ("2T", "6T", "14T", "16T"). ParseType reads it back. An invalid type is
// named "Type(N)".
func (t Type) Name() string {
	if c, ok := toeplitzOf[t]; ok {
		return strconv.Itoa(int(c)) + "T"
	}
	if !t.Valid() {
		return fmt.Sprintf("Type(%d)", int(t))
	}
	return strconv.Itoa(int(t))
}

// ParseType returns the type named s, as Name writes it: "1" .. "21", or
// "2T", "6T", "14T", "16T" (the "T" in either case; spaces around s are
// ignored). The error wraps ErrInvalid.
func ParseType(s string) (Type, error) {
	name := strings.ToUpper(strings.TrimSpace(s))
	for _, t := range Types(true) {
		if t.Name() == name {
			return t, nil
		}
	}
	return 0, fmt.Errorf("%w: unknown matrix type %q (want 1..%d, 2T, 6T, 14T or 16T)", ErrInvalid, s, int(TypeKS16))
}

// Valid reports whether t is one of the NumTypes types of the package.
func (t Type) Valid() bool { return t >= 1 && t <= NumTypes }

// Random reports whether the matrix of type t depends on the seed.
func (t Type) Random() bool {
	switch t {
	case 3, 7, 13, 15, 17, 18, 19, TypeKS16:
		return false
	}
	return t.Valid()
}

// IsToeplitz reports whether t is one of the Toeplitz readings 2T, 6T,
// 14T, 16T. (Types 17..21 have constant diagonals too, but are no reading
// of a classic type.)
func (t Type) IsToeplitz() bool {
	_, ok := toeplitzOf[t]
	return ok
}

// Toeplitz returns the Toeplitz readings of the classic types 2, 6, 14
// and 16, in that order: Type2T, Type6T, Type14T, Type16T.
func Toeplitz() []Type { return []Type{Type2T, Type6T, Type14T, Type16T} }

// Types returns the classic types 1..16, or with extended set types 1..21
// (the classic ones, Klein & Strzodka's 17..20 and TypeKS16), in
// increasing order, followed in both cases by the Toeplitz readings
// 2T, 6T, 14T, 16T (see Toeplitz).
func Types(extended bool) []Type {
	n := NumClassic
	if extended {
		n = int(TypeKS16)
	}
	ts := make([]Type, n, n+NumToeplitz)
	for i := range ts {
		ts[i] = Type(i + 1)
	}
	return append(ts, Toeplitz()...)
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
