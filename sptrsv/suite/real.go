package suite

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/bandsolve/bandsolve/sparse"
)

// RealMatrix is a matrix of the SuiteSparse collection read by ReadReal.
type RealMatrix struct {
	Name string // the SuiteSparse name, e.g. "add32"
	Desc string // where it comes from, in words
	File string // the file it was read from, in the folder given to ReadReal
	// A is the whole matrix, a symmetric one with both triangles, repeated
	// entries summed.
	A *sparse.CSR
	// ZeroDiagonal lists the rows (0-based) whose diagonal entry is zero
	// or not stored: a triangle of A with a stored diagonal is singular
	// there.
	ZeroDiagonal []int
}

// realSource is a matrix of ReadReal and the files that may hold it, in
// the order they are tried.
type realSource struct {
	name, desc string
	files      []string
}

// realSources are the matrices of ReadReal: those that Debian packages
// ship (scripts/fetch-suitesparse.sh), in alphabetical order.
var realSources = []realSource{
	{"add32", "32-bit adder circuit (Hamm, Motorola), SuiteSparse Hamm/add32; big.rua of SuperLU_DIST's examples", []string{"big.rua", "add32.rua", "add32.mtx"}},
	{"g20", "g20, a 20×20 grid problem permuted by SYMMMD; SuperLU_DIST's examples", []string{"g20.rua"}},
	{"g4", "g4, a 4×4 grid problem permuted by SYMMMD; SuperLU_DIST's examples", []string{"g4.rua"}},
	{"jgl009", "jgl009 (pattern, values 1), SuiteSparse HB/jgl009; R Matrix package", []string{"jgl009.mtx", "jgl009.rua", "jgl009.pua"}},
	{"lund_a", "lund_a, symmetric, of the Lund eigenvalue problem, SuiteSparse HB/lund_a; R Matrix package", []string{"lund_a.rsa", "lund_a.mtx"}},
	{"pores_1", "pores_1, oil reservoir simulation, SuiteSparse HB/pores_1; R Matrix package", []string{"pores_1.mtx", "pores_1.rua"}},
	{"utm300", "utm300, a uniform Tokamak model, SuiteSparse TOKAMAK/utm300; R Matrix package", []string{"utm300.rua", "utm300.mtx"}},
}

// RealNames returns the names of the matrices ReadReal looks for, in the
// order it returns them.
func RealNames() []string {
	names := make([]string, len(realSources))
	for k, s := range realSources {
		names[k] = s.name
	}
	return names
}

// ReadReal reads from dir the SuiteSparse matrices that Debian packages
// ship, which scripts/fetch-suitesparse.sh fetches: add32 (big.rua), g20,
// g4, jgl009, lund_a, pores_1 and utm300. A file ending in .mtx is read
// as Matrix Market, any other as Harwell–Boeing; where a matrix may come
// in several files (lund_a.rsa or lund_a.mtx) the first present is read.
// The matrices none of whose files is present are skipped and listed in
// absent, each as its name and the files looked for, e.g. "g4 (g4.rua)".
// A file that cannot be read or parsed, or a matrix that is not square,
// is an error that names the file.
func ReadReal(dir string) (ms []RealMatrix, absent []string, err error) {
	for _, src := range realSources {
		m, found, err := readRealSource(dir, src)
		if err != nil {
			return nil, nil, err
		}
		if !found {
			absent = append(absent, fmt.Sprintf("%s (%s)", src.name, strings.Join(src.files, " or ")))
			continue
		}
		ms = append(ms, m)
	}
	return ms, absent, nil
}

// readRealSource reads the first present file of src.
func readRealSource(dir string, src realSource) (RealMatrix, bool, error) {
	for _, name := range src.files {
		path := filepath.Join(dir, name)
		f, err := os.Open(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return RealMatrix{}, false, fmt.Errorf("suite: %s: %w", src.name, err)
		}
		var c *sparse.COO
		if strings.EqualFold(filepath.Ext(name), ".mtx") {
			c, err = sparse.ReadMatrixMarket(f)
		} else {
			c, err = sparse.ReadHarwellBoeing(f)
		}
		f.Close()
		if err != nil {
			return RealMatrix{}, false, fmt.Errorf("suite: %s: %s: %w", src.name, path, err)
		}
		a, err := c.ToCSR()
		if err != nil {
			return RealMatrix{}, false, fmt.Errorf("suite: %s: %s: %w", src.name, path, err)
		}
		if a.N != a.M {
			return RealMatrix{}, false, fmt.Errorf("suite: %s: %s: %w: the matrix is %d×%d, want a square one", src.name, path, sparse.ErrShape, a.N, a.M)
		}
		m := RealMatrix{Name: src.name, Desc: src.desc, File: name, A: a}
		for i := range a.N {
			if a.At(i, i) == 0 {
				m.ZeroDiagonal = append(m.ZeroDiagonal, i)
			}
		}
		return m, true, nil
	}
	return RealMatrix{}, false, nil
}

// Real returns the triangles of the matrices of ReadReal(dir), two cases
// per matrix in ReadReal's order: "<name>/lower", the lower triangle with
// the diagonal (tril(A)), and "<name>/upper", the upper triangle with the
// diagonal (triu(A)), of Triangle Upper. Their values are the matrix's,
// not made dominant: a triangle may be ill-conditioned, and where the
// matrix has a zero or missing diagonal entry (RealMatrix.ZeroDiagonal,
// also named in Desc) a solve with the stored diagonal is singular and
// sptrsv.Analyze refuses it. absent and the errors are those of ReadReal.
func Real(dir string) (s Set, absent []string, err error) {
	ms, absent, err := ReadReal(dir)
	if err != nil {
		return nil, nil, err
	}
	for _, m := range ms {
		for _, t := range []Triangle{Lower, Upper} {
			tri := triangle(m.A, t)
			desc := fmt.Sprintf("%s triangle of %s (diagonal included): %s", t, m.Name, m.Desc)
			if z := len(m.ZeroDiagonal); z > 0 {
				desc += fmt.Sprintf("; %d zero or missing diagonal %s, the first in row %d", z, plural(z, "entry", "entries"), m.ZeroDiagonal[0])
			}
			s = append(s, Case{
				Name:     m.Name + "/" + t.String(),
				Desc:     desc,
				Build:    tri.Clone,
				N:        tri.N,
				NNZ:      tri.NNZ(),
				Levels:   len(levelSizes(tri, t)),
				Triangle: t,
			})
		}
	}
	return s, absent, nil
}

// triangle returns the lower or upper triangle of a, diagonal included.
func triangle(a *sparse.CSR, t Triangle) *sparse.CSR {
	if t == Lower {
		return lower(a)
	}
	b := &sparse.CSR{N: a.N, M: a.M, RowPtr: make([]int32, a.N+1)}
	for i := range a.N {
		for p := a.RowPtr[i]; p < a.RowPtr[i+1]; p++ {
			if int(a.Col[p]) >= i {
				b.Col = append(b.Col, a.Col[p])
				b.Val = append(b.Val, a.Val[p])
			}
		}
		b.RowPtr[i+1] = int32(len(b.Col))
	}
	return b
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
