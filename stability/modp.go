package stability

import (
	"math"
	"math/bits"
)

// Exact singularity test. Every finite float64 is a dyadic rational m·2^e,
// and Z[1/2] maps homomorphically onto GF(p) for every odd prime p. The
// determinant of a tridiagonal matrix with dyadic entries is a dyadic
// rational N/2^K, so its image in GF(p), computed by the continuant
// recurrence, is zero for every p when the matrix is singular, and is
// nonzero unless p divides N when it is not. Testing a few large primes
// therefore decides singularity exactly in one direction and up to a
// negligible chance (p dividing N for every prime) in the other.

// detPrimes are primes below 2^63, so that sums of two residues fit in a
// uint64: 2^61-1, 2^62-57 and 2^63-25.
var detPrimes = [...]uint64{1<<61 - 1, 1<<62 - 57, 1<<63 - 25}

func mulMod(a, b, p uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	_, r := bits.Div64(hi, lo, p)
	return r
}

func powMod(b, e, p uint64) uint64 {
	r := uint64(1)
	for e > 0 {
		if e&1 != 0 {
			r = mulMod(r, b, p)
		}
		b = mulMod(b, b, p)
		e >>= 1
	}
	return r
}

// dyadicMod maps the finite float64 v to GF(p).
func dyadicMod(v float64, p uint64) uint64 {
	if v == 0 {
		return 0
	}
	fr, exp := math.Frexp(math.Abs(v)) // |v| = fr·2^exp, fr in [0.5, 1)
	m := uint64(fr * (1 << 53))        // exact: 53-bit integer
	e := exp - 53
	r := m % p
	if e >= 0 {
		r = mulMod(r, powMod(2, uint64(e), p), p)
	} else {
		inv2 := (p + 1) / 2
		r = mulMod(r, powMod(inv2, uint64(-e), p), p)
	}
	if v < 0 && r != 0 {
		r = p - r
	}
	return r
}

// detMod returns det(A) mod p for the tridiagonal matrix with sub-diagonal
// a, diagonal b and super-diagonal c (a[0] and c[n-1] unused), through the
// continuant f_{k+1} = b_k·f_k - a_k·c_{k-1}·f_{k-1}.
func detMod(a, b, c []float64, p uint64) uint64 {
	fPrev, f := uint64(1), dyadicMod(b[0], p)
	for k := 1; k < len(b); k++ {
		t1 := mulMod(dyadicMod(b[k], p), f, p)
		t2 := mulMod(mulMod(dyadicMod(a[k], p), dyadicMod(c[k-1], p), p), fPrev, p)
		fPrev, f = f, (t1+p-t2)%p
	}
	return f
}

// exactlySingular reports whether the tridiagonal matrix (finite entries)
// is singular in exact arithmetic; see the comment at the top of the file.
func exactlySingular(a, b, c []float64) bool {
	for _, p := range detPrimes {
		if detMod(a, b, c, p) != 0 {
			return false
		}
	}
	return true
}
