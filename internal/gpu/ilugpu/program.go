//go:build cuda

package ilugpu

import (
	"math"
	"runtime"
	"sync"

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
	// Two passes over the rows, each on every core: the words of each
	// row (their count, then after a prefix sum the words themselves).
	parallel(n, func(lo, hi int) {
		for q := lo; q < hi; q++ {
			pr.progPtr[q+1] = int32(min(rowWords(pat, posL, q, nil), math.MaxInt32))
		}
	})
	total := int64(0)
	for q := range n {
		total += int64(pr.progPtr[q+1])
		if total > int64(maxProgramWords)*int64(max(nnz, 1)) || total >= math.MaxInt32 {
			return nil, false
		}
		pr.progPtr[q+1] = int32(total)
	}
	pr.prog = make([]int32, total)
	parallel(n, func(lo, hi int) {
		for q := lo; q < hi; q++ {
			rowWords(pat, posL, q, pr.prog[pr.progPtr[q]:pr.progPtr[q+1]])
		}
	})
	for q, i := range pat.Order {
		pr.diagL[q] = posL[pat.DiagPos[i]]
	}
	pr.progLevel = make([]int32, len(pat.LevelPtr))
	for l, q := range pat.LevelPtr {
		pr.progLevel[l] = pr.progPtr[q]
	}
	return pr, true
}

// rowWords writes the program of the row at position q into out (when
// not nil; it has the room) and returns its length in words.
func rowWords(pat *ilu.Pattern, posL []int32, q int, out []int32) int {
	i := pat.Order[q]
	lo, hi, d := pat.RowPtr[i], pat.RowPtr[i+1], pat.DiagPos[i]
	w := 0
	put := func(v int32) {
		if out != nil {
			out[w] = v
		}
		w++
	}
	put(posL[d])
	put(d - lo)
	for p := lo; p < d; p++ {
		k := pat.Col[p]
		piv := pat.DiagPos[k]
		// The pairs: ILU(0) the columns j > k of rows i and k (row k's
		// from its pivot on, row i's after p); IC(0) the columns below
		// j = k of both rows.
		qa, qb, ta, tb := piv+1, pat.RowPtr[k+1], p+1, hi
		if pat.Kind == ilu.KindIC0 {
			qa, qb, ta, tb = pat.RowPtr[k], piv, lo, p
		}
		put(posL[p])
		put(posL[piv])
		at := w
		put(0)
		t := ta
		for u := qa; u < qb; u++ {
			j := pat.Col[u]
			for t < tb && pat.Col[t] < j {
				t++
			}
			if t < tb && pat.Col[t] == j {
				put(posL[t])
				put(posL[u])
			}
		}
		if out != nil {
			out[at] = int32((w - at - 1) / 2)
		}
	}
	return w
}

// parallel runs work over [0, n) in contiguous ranges, one goroutine a
// core.
func parallel(n int, work func(lo, hi int)) {
	workers := min(runtime.GOMAXPROCS(0), max(1, n/4096))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			work(w*n/workers, (w+1)*n/workers)
		}()
	}
	wg.Wait()
}
