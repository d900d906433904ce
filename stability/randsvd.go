package stability

import (
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// randsvdSigma returns the singular values of gallery('randsvd', n, kappa,
// mode), largest first, with condition number kappa:
//
//	mode 1: one large:  1, 1/kappa, ..., 1/kappa
//	mode 2: one small:  1, ..., 1, 1/kappa
//	mode 3: geometric:  kappa^(-i/(n-1)), i = 0..n-1
//	mode 4: arithmetic: 1 - (1 - 1/kappa)·i/(n-1), i = 0..n-1
func randsvdSigma(n int, kappa float64, mode int) []float64 {
	s := make([]float64, n)
	for i := range s {
		switch mode {
		case 1:
			s[i] = 1 / kappa
		case 2:
			s[i] = 1
		case 3:
			s[i] = math.Pow(kappa, -float64(i)/float64(n-1))
		case 4:
			s[i] = 1 - (1-1/kappa)*float64(i)/float64(n-1)
		default:
			panic("stability: bad randsvd mode")
		}
	}
	switch mode {
	case 1:
		s[0] = 1
	case 2:
		s[n-1] = 1 / kappa
	case 3, 4:
		s[n-1] = 1 / kappa // exact end point
	}
	return s
}

// haar returns a Haar-distributed random orthogonal n×n matrix: the Q factor
// of the QR factorization of a matrix of standard normal entries, with the
// signs of its columns fixed so that R has a positive diagonal.
func haar(n int, rng *rand.Rand) *mat.Dense {
	g := mat.NewDense(n, n, nil)
	raw := g.RawMatrix()
	for i := range n {
		row := raw.Data[i*raw.Stride : i*raw.Stride+n]
		for j := range row {
			row[j] = rng.NormFloat64()
		}
	}
	var qr mat.QR
	qr.Factorize(g)
	var q, r mat.Dense
	qr.QTo(&q)
	qr.RTo(&r)
	qraw := q.RawMatrix()
	for j := range n {
		if r.At(j, j) < 0 {
			for i := range n {
				qraw.Data[i*qraw.Stride+j] = -qraw.Data[i*qraw.Stride+j]
			}
		}
	}
	return &q
}

// randsvdTridiag returns gallery('randsvd', n, kappa, mode, 1, 1): the matrix
// U·diag(sigma)·Vᵀ with Haar-random orthogonal U and V, reduced to
// tridiagonal form by orthogonal two-sided Householder transformations,
// which keep the singular values.
func randsvdTridiag(n int, kappa float64, mode int, rng *rand.Rand) Matrix {
	sigma := randsvdSigma(n, kappa, mode)
	u := haar(n, rng)
	v := haar(n, rng)
	uraw := u.RawMatrix()
	for i := range n {
		row := uraw.Data[i*uraw.Stride : i*uraw.Stride+n]
		for j := range row {
			row[j] *= sigma[j]
		}
	}
	var a mat.Dense
	a.Mul(u, v.T())
	araw := a.RawMatrix()
	d := make([]float64, n*n)
	for i := range n {
		copy(d[i*n:(i+1)*n], araw.Data[i*araw.Stride:i*araw.Stride+n])
	}
	return reduceTridiag(d, n)
}

// householder computes a reflector H = I - tau·v·vᵀ with v[0] = 1 such that
// H·x = beta·e1. It writes v into v (len(v) == len(x)) and returns tau and
// beta; tau = 0 (H = I) when x[1:] is already zero.
func householder(x, v []float64) (tau, beta float64) {
	alpha := x[0]
	xnorm := floats.Norm(x[1:], 2)
	v[0] = 1
	if xnorm == 0 {
		for i := 1; i < len(v); i++ {
			v[i] = 0
		}
		return 0, alpha
	}
	beta = -math.Copysign(math.Hypot(alpha, xnorm), alpha)
	tau = (beta - alpha) / beta
	scale := 1 / (alpha - beta)
	for i := 1; i < len(v); i++ {
		v[i] = x[i] * scale
	}
	return tau, beta
}

// reduceTridiag reduces the dense row-major n×n matrix d to tridiagonal form
// by orthogonal transformations from both sides and returns the result. At
// step k a reflector from the left zeros rows k+2..n-1 of column k (it
// mixes rows k+1..n-1 only, leaving row k and the finished columns alone),
// then a reflector from the right zeros columns k+2..n-1 of row k (it mixes
// columns k+1..n-1 only, leaving column k and the finished rows alone).
// Both are orthogonal, so Q₁ᵀ·A·Q₂ keeps the singular values of A.
func reduceTridiag(d []float64, n int) Matrix {
	x := make([]float64, n)
	v := make([]float64, n)
	w := make([]float64, n)
	for k := 0; k+2 < n; k++ {
		// Left: column k, rows k+1..n-1.
		m := n - k - 1
		for i := range m {
			x[i] = d[(k+1+i)*n+k]
		}
		tau, beta := householder(x[:m], v[:m])
		if tau != 0 {
			// w = vᵀ·A[k+1:, k+1:]; A[k+1:, k+1:] -= tau·v·wᵀ.
			ww := w[:m]
			clear(ww)
			for i := range m {
				row := d[(k+1+i)*n+k+1 : (k+2+i)*n]
				floats.AddScaled(ww, v[i], row)
			}
			for i := range m {
				row := d[(k+1+i)*n+k+1 : (k+2+i)*n]
				floats.AddScaled(row, -tau*v[i], ww)
			}
		}
		d[(k+1)*n+k] = beta
		for i := k + 2; i < n; i++ {
			d[i*n+k] = 0
		}

		// Right: row k, columns k+1..n-1.
		row := d[k*n+k+1 : (k+1)*n]
		tau, beta = householder(row, v[:m])
		if tau != 0 {
			vv := v[:m]
			for i := k + 1; i < n; i++ {
				r := d[i*n+k+1 : (i+1)*n]
				s := floats.Dot(r, vv)
				floats.AddScaled(r, -tau*s, vv)
			}
		}
		row[0] = beta
		clear(row[1:])
	}
	t := Matrix{A: make([]float64, n), B: make([]float64, n), C: make([]float64, n)}
	for i := range n {
		t.B[i] = d[i*n+i]
		if i > 0 {
			t.A[i] = d[i*n+i-1]
		}
		if i < n-1 {
			t.C[i] = d[i*n+i+1]
		}
	}
	return t
}
