//go:build cuda

package ilugpu

import (
	"math"

	"github.com/bandsolve/bandsolve/ilu"
)

// program is the factorization's schedule in level order, as
// ptx/src/ilu.cuh's programmed kernels read it: every row's operations as
// int32 words over the values in level order, a level's words and values
// contiguous.
type program struct {
	progPtr   []int32 // words of row position q: prog[progPtr[q]:progPtr[q+1]]
	prog      []int32
	progLevel []int32 // words of level l: prog[progLevel[l]:progLevel[l+1]]
	valPtr    []int32 // values of level l: valL[valPtr[l]:valPtr[l+1]]
	perm      []int32 // valL index → position in the factors' pattern
	srcL      []int32 // valL index → position in A's values
	diagL     []int32 // row position → valL index of its diagonal entry
}

// maxProgramWords bounds a program, in words an entry of the pattern:
// rows that share many columns (dense blocks) make the pairs grow as the
// square of the row length, and the merge-walk kernels serve them.
const maxProgramWords = 24

// newProgram writes the program of the pattern, or returns false when it
// would exceed maxProgramWords a stored entry.
func newProgram(pat *ilu.Pattern) (*program, bool) {
	n, nnz := pat.N, len(pat.Col)
	pr := &program{progPtr: make([]int32, n+1), valPtr: make([]int32, len(pat.LevelPtr)),
		perm: make([]int32, nnz), srcL: make([]int32, nnz), diagL: make([]int32, n)}
	posL := make([]int32, nnz)
	k := int32(0)
	for l := range len(pat.LevelPtr) - 1 {
		pr.valPtr[l] = k
		for _, i := range pat.Order[pat.LevelPtr[l]:pat.LevelPtr[l+1]] {
			for p := pat.RowPtr[i]; p < pat.RowPtr[i+1]; p++ {
				pr.perm[k], posL[p] = p, k
				pr.srcL[k] = p
				if pat.Src != nil {
					pr.srcL[k] = pat.Src[p]
				}
				k++
			}
		}
	}
	pr.valPtr[len(pat.LevelPtr)-1] = k
	limit := maxProgramWords * max(nnz, 1)
	prog := make([]int32, 0, 4*nnz)
	for q, i := range pat.Order {
		lo, hi, d := pat.RowPtr[i], pat.RowPtr[i+1], pat.DiagPos[i]
		pr.diagL[q] = posL[d]
		prog = append(prog, posL[d], d-lo)
		for p := lo; p < d; p++ {
			k := pat.Col[p]
			piv := pat.DiagPos[k]
			// The pairs: ILU(0) the columns j > k of rows i and k
			// (row k's from its pivot on, row i's after p); IC(0) the
			// columns below j = k of both rows.
			qa, qb, ta, tb := piv+1, pat.RowPtr[k+1], p+1, hi
			if pat.Kind == ilu.KindIC0 {
				qa, qb, ta, tb = pat.RowPtr[k], piv, lo, p
			}
			at := len(prog)
			prog = append(prog, posL[p], posL[piv], 0)
			t := ta
			for u := qa; u < qb; u++ {
				j := pat.Col[u]
				for t < tb && pat.Col[t] < j {
					t++
				}
				if t < tb && pat.Col[t] == j {
					prog = append(prog, posL[t], posL[u])
				}
			}
			prog[at+2] = int32((len(prog) - at - 3) / 2)
			if len(prog) > limit || len(prog) >= math.MaxInt32 {
				return nil, false
			}
		}
		pr.progPtr[q+1] = int32(len(prog))
	}
	pr.prog = prog
	pr.progLevel = make([]int32, len(pat.LevelPtr))
	for l, q := range pat.LevelPtr {
		pr.progLevel[l] = pr.progPtr[q]
	}
	return pr, true
}
