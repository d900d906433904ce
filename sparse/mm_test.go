package sparse

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/bandsolve/bandsolve/internal/memguard"
)

func readString(t *testing.T, s string) (*COO, error) {
	t.Helper()
	return ReadMatrixMarket(strings.NewReader(s))
}

func TestReadMatrixMarket(t *testing.T) {
	cases := []struct {
		name, in string
		want     [][]float64
	}{
		{"general", `%%MatrixMarket matrix coordinate real general
% a comment

3 4 4
1 1 1.5
3 4 -2e1
2 2 3
1 1 0.5
`, [][]float64{{2, 0, 0, 0}, {0, 3, 0, 0}, {0, 0, 0, -20}}},
		{"symmetric", `%%MatrixMarket matrix coordinate real symmetric
3 3 3
1 1 4
2 1 -1
3 2 2.5
`, [][]float64{{4, -1, 0}, {-1, 0, 2.5}, {0, 2.5, 0}}},
		{"skew", `%%MatrixMarket matrix coordinate real skew-symmetric
3 3 2
2 1 1
3 1 -2
`, [][]float64{{0, -1, 2}, {1, 0, 0}, {-2, 0, 0}}},
		{"pattern symmetric, upper case, CRLF", "%%MatrixMarket MATRIX Coordinate PATTERN Symmetric\r\n2 2 2\r\n1 1\r\n2 1\r\n",
			[][]float64{{1, 1}, {1, 0}}},
		{"integer", `%%MatrixMarket matrix coordinate integer general
2 2 2
1 2 -7
2 1 3
`, [][]float64{{0, -7}, {3, 0}}},
		{"array", `%%MatrixMarket matrix array real general
% column-major
2 3
1
4

2
0
3
6.5
`, [][]float64{{1, 2, 3}, {4, 0, 6.5}}},
		{"array integer", "%%MatrixMarket matrix array integer general\n1 2\n5\n-1\n", [][]float64{{5, -1}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := readString(t, c.in)
			require.NoError(t, err)
			require.NoError(t, m.Check())
			a := mustCSR(t, m)
			require.Equal(t, len(c.want), a.N)
			require.Equal(t, len(c.want[0]), a.M)
			for i, row := range c.want {
				for j, v := range row {
					assert.Equal(t, v, a.At(i, j), "(%d, %d)", i, j)
				}
			}
		})
	}
	// An empty matrix.
	m, err := readString(t, "%%MatrixMarket matrix coordinate real general\n0 0 0\n")
	require.NoError(t, err)
	assert.Equal(t, 0, m.N)
}

func TestReadMatrixMarketErrors(t *testing.T) {
	const ban = "%%MatrixMarket matrix coordinate real general\n"
	cases := []struct {
		name, in string
		line     int
		reason   string
	}{
		{"empty", "", 1, "empty input"},
		{"bad banner", "%%MatrixMarkt matrix coordinate real general\n1 1 0\n", 1, "bad banner"},
		{"short banner", "%%MatrixMarket matrix coordinate real\n", 1, "bad banner"},
		{"object", "%%MatrixMarket vector coordinate real general\n", 1, "unsupported object"},
		{"format", "%%MatrixMarket matrix sparse real general\n", 1, "unsupported format"},
		{"complex", "%%MatrixMarket matrix coordinate complex general\n", 1, "unsupported field"},
		{"hermitian", "%%MatrixMarket matrix coordinate real hermitian\n", 1, "unsupported symmetry"},
		{"array symmetric", "%%MatrixMarket matrix array real symmetric\n", 1, "unsupported symmetry"},
		{"array pattern", "%%MatrixMarket matrix array pattern general\n", 1, "pattern"},
		{"no size", ban + "% only comments\n\n", 4, "missing size line"},
		{"size count", ban + "% c\n3 3\n", 3, "size line has 2 values"},
		{"size number", ban + "3 x 1\n", 2, "bad size"},
		{"negative size", ban + "-3 3 1\n", 2, "bad size"},
		{"huge size", ban + "3000000000 3 1\n", 2, "bad size"},
		{"symmetric rectangular", "%%MatrixMarket matrix coordinate real symmetric\n2 3 1\n", 2, "must be square"},
		{"entries in empty", ban + "0 3 1\n", 2, "empty"},
		{"too few values", ban + "2 2 1\n1 1\n", 3, "has 2 values, want 3"},
		{"too many values", ban + "2 2 1\n1 1 1 1\n", 3, "has 4 values, want 3"},
		{"pattern with value", "%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 1 1\n", 3, "has 3 values, want 2"},
		{"index zero", ban + "2 2 1\n0 1 1\n", 3, "out of range"},
		{"index large", ban + "2 2 2\n1 1 1\n\n1 3 1\n", 5, "out of range"},
		{"bad index", ban + "2 2 1\n1 a 1\n", 3, "unparsable index"},
		{"bad number", ban + "2 2 1\n1 1 1.2.3\n", 3, "unparsable number"},
		{"nan", ban + "2 2 1\n1 1 NaN\n", 3, "non-finite"},
		{"inf", ban + "2 2 1\n1 1 -Inf\n", 3, "non-finite"},
		{"bad integer", "%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 1 1.5\n", 3, "unparsable integer"},
		{"too many entries", ban + "2 2 1\n1 1 1\n2 2 1\n", 4, "more entries than the 1 declared"},
		{"too few entries", ban + "2 2 3\n1 1 1\n2 2 1\n% end\n", 6, "found 2 entries at end of input, 3 declared"},
		{"skew diagonal", "%%MatrixMarket matrix coordinate real skew-symmetric\n2 2 1\n1 1 1\n", 3, "diagonal entry"},
		{"array count", "%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n", 6, "found 3 entries"},
		{"array two values", "%%MatrixMarket matrix array real general\n2 2\n1 2\n", 3, "array entry has 2 values"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := readString(t, c.in)
			require.Error(t, err)
			require.ErrorIs(t, err, ErrMatrixMarket)
			var me *MatrixMarketError
			require.True(t, errors.As(err, &me))
			assert.Equal(t, c.line, me.Line, "%v", err)
			assert.Contains(t, me.Reason, c.reason)
			assert.Contains(t, err.Error(), "line ")
		})
	}
	// A line longer than the limit.
	_, err := readString(t, "%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 "+strings.Repeat("1", maxLine+10)+"\n")
	require.ErrorIs(t, err, ErrMatrixMarket)
}

// errReader fails after its data.
type errReader struct{ data []byte }

var errBoom = errors.New("boom")

func (r *errReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, errBoom
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}

func TestReadMatrixMarketReaderError(t *testing.T) {
	_, err := ReadMatrixMarket(&errReader{[]byte("%%MatrixMarket matrix coordinate real general\n2 2 1\n")})
	require.ErrorIs(t, err, errBoom)
	require.NotErrorIs(t, err, ErrMatrixMarket)
}

func TestWriteReadRoundTrip(t *testing.T) {
	rng := newRNG(7)
	for _, sz := range [][3]int{{1, 1, 1}, {17, 23, 90}, {0, 0, 0}} {
		c := NewCOO(sz[0], sz[1], 0)
		if sz[2] > 0 {
			c = randomCOO(sz[0], sz[1], sz[2], rng)
		}
		c.Val = append(c.Val[:0:0], c.Val...)
		for e := range c.Val {
			c.Val[e] *= 1e-7 // values that need all 17 digits
		}
		path := filepath.Join(t.TempDir(), "m.mtx")
		f, err := os.Create(path)
		require.NoError(t, err)
		require.NoError(t, WriteMatrixMarket(f, c))
		require.NoError(t, f.Close())
		f, err = os.Open(path)
		require.NoError(t, err)
		got, err := ReadMatrixMarket(f)
		require.NoError(t, f.Close())
		require.NoError(t, err)
		assert.Equal(t, c.N, got.N)
		assert.Equal(t, c.M, got.M)
		assert.Equal(t, c.Row, got.Row)
		assert.Equal(t, c.Col, got.Col)
		assert.Equal(t, c.Val, got.Val) // exact
	}
	// Symmetric input comes back expanded and equal as a matrix.
	sym := "%%MatrixMarket matrix coordinate real symmetric\n3 3 2\n2 1 0.25\n3 3 1\n"
	c, err := readString(t, sym)
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, WriteMatrixMarket(&buf, c))
	assert.Contains(t, buf.String(), "general")
	back, err := ReadMatrixMarket(&buf)
	require.NoError(t, err)
	requireDenseEqual(t, denseOf(c), denseOf(back), 0)
	require.ErrorIs(t, WriteMatrixMarket(&buf, &COO{N: 1, M: 1, Row: []int{1}, Col: []int{0}, Val: []float64{1}}), ErrShape)
}

// TestTestdata checks the committed example files against the generator
// that wrote them (rewrite with SPARSE_UPDATE_TESTDATA=1).
func TestTestdata(t *testing.T) {
	for _, f := range testdataFiles() {
		var buf bytes.Buffer
		require.NoError(t, writeMatrixMarket(&buf, f.a.ToCOO(), f.comments))
		path := filepath.Join("testdata", f.name)
		if os.Getenv("SPARSE_UPDATE_TESTDATA") != "" {
			require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o644))
		}
		disk, err := os.ReadFile(path)
		require.NoError(t, err)
		require.Equal(t, buf.String(), string(disk), "%s differs from its generator", f.name)
		c, err := ReadMatrixMarket(bytes.NewReader(disk))
		require.NoError(t, err)
		a := mustCSR(t, c)
		assert.Equal(t, f.a, a)
	}
}

type testdataFile struct {
	name     string
	comments []string
	a        *CSR
}

func testdataFiles() []testdataFile {
	cd := ConvectionDiffusion2D(20, 30, -15)
	scr, _ := ScrambleSymmetric(cd, newRNG(400))
	return []testdataFile{
		{"convdiff20.mtx", []string{
			"2-D convection-diffusion -Δu + 30 ∂u/∂x - 15 ∂u/∂y on a 20×20 grid, 5-point, scaled by h²",
			"natural ordering: half-bandwidth 20; written by sparse.ConvectionDiffusion2D(20, 30, -15)",
		}, cd},
		{"convdiff20-scrambled.mtx", []string{
			"convdiff20.mtx under a random symmetric permutation (ScrambleSymmetric, PCG seed 400)",
			"the band is scattered; sparse.Reorder with RCM brings it back to about 20",
		}, scr},
	}
}

// fuzzMemory caps what the fuzz targets may allocate, so that a declared
// size the memory guard lets through cannot take the machine.
const fuzzMemory = 256 << 20

// FuzzReadMatrixMarket reads any input and builds the CSR matrix of
// whatever it accepts, whatever the declared size: the memory guard must
// refuse what does not fit (ErrMemory), never end in a Go fatal error.
func FuzzReadMatrixMarket(f *testing.F) {
	f.Add("%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1\n3 2 -1e3\n")
	f.Add("%%MatrixMarket matrix coordinate pattern symmetric\n% c\n\n2 2 2\n1 1\n2 1\n")
	f.Add("%%MatrixMarket matrix coordinate integer skew-symmetric\n2 2 1\n2 1 4\n")
	f.Add("%%MatrixMarket matrix array real general\n2 2\n1\n0\n0\n1\n")
	f.Add("%%MatrixMarket matrix array real general\n0 5\n")
	f.Add("%%MatrixMarket matrix coordinate real general\n2147483647 2147483647 1\n2147483647 1 1\n")
	f.Add("%%MatrixMarket matrix coordinate real general\n1000000000 1000000000 1\n1 1 1\n") // the 76-byte bomb
	f.Add("%%MatrixMarket matrix coordinate real general\n3000000 1 1\n1 1 1\n")
	f.Add("%%MatrixMarket matrix coordinate real symmetric\n5 5 2000000000\n1 1 1\n")
	f.Add("%%MatrixMarket matrix array real general\n2147483647 2147483647\n1\n")
	f.Add("")
	defer memguard.SetLimit(memguard.SetLimit(fuzzMemory))
	f.Fuzz(func(t *testing.T, in string) {
		c, err := ReadMatrixMarket(strings.NewReader(in))
		if err != nil {
			if !errors.Is(err, ErrMemory) {
				require.ErrorIs(t, err, ErrMatrixMarket)
			}
			return
		}
		require.NoError(t, c.Check())
		if err := c.CheckSolvable(); err == nil {
			require.Equal(t, c.N, c.M)
			require.GreaterOrEqual(t, c.NNZ(), c.N)
		} else if c.N == c.M {
			require.ErrorIs(t, err, ErrStructurallySingular)
		}
		a, err := c.ToCSR()
		if err != nil {
			require.ErrorIs(t, err, ErrMemory)
			require.Greater(t, csrBuildBytes(c.N, c.M, c.NNZ()), uint64(fuzzMemory/8*7), "refused although it fits")
			return
		}
		require.NoError(t, a.Check())
		var buf bytes.Buffer
		require.NoError(t, WriteMatrixMarket(&buf, c))
		back, err := ReadMatrixMarket(&buf)
		require.NoError(t, err)
		b, err := back.ToCSR()
		require.NoError(t, err)
		require.Equal(t, a.RowPtr, b.RowPtr)
		require.Equal(t, a.Col, b.Col)
		require.Equal(t, a.Val, b.Val)
	})
}

var _ mat.Matrix = (*mat.Dense)(nil)

// The 76-byte file that declares a 10⁹×10⁹ matrix with one entry: reading
// it allocates nothing large, CheckSolvable refuses it at once, and ToCSR
// refuses the O(N) arrays it would need under a cap.
func TestMatrixMarketBomb(t *testing.T) {
	const bomb = "%%MatrixMarket matrix coordinate real general\n1000000000 1000000000 1\n1 1 1\n"
	c, err := readString(t, bomb)
	require.NoError(t, err, "a valid file")
	err = c.CheckSolvable()
	require.ErrorIs(t, err, ErrStructurallySingular)
	assert.EqualError(t, err, "sparse: matrix is structurally singular: a 1000000000×1000000000 matrix with 1 stored entry has an empty row (a nonsingular matrix has an entry in each of its 1000000000 rows)")

	defer memguard.SetLimit(memguard.SetLimit(1 << 30))
	_, err = c.ToCSR()
	require.ErrorIs(t, err, ErrMemory)
	assert.Contains(t, err.Error(), "sparse: converting a 1000000000×1000000000 matrix with 1 entries to CSR needs 33.5 GiB, more than the 896 MiB this process can have")
}

func TestMatrixMarketDeclaredCountBeyondMemory(t *testing.T) {
	defer memguard.SetLimit(memguard.SetLimit(1 << 30))
	_, err := readString(t, "%%MatrixMarket matrix coordinate real symmetric\n% big\n100000000 100000000 100000000\n1 1 1\n")
	require.ErrorIs(t, err, ErrMemory)
	assert.EqualError(t, err, "sparse: Matrix Market line 3: storing the 100000000 declared entries of a 100000000×100000000 matrix needs 4.47 GiB, more than the 896 MiB this process can have (memory cap of BANDSOLVE_MEMORY_LIMIT or memguard.SetLimit)")
	// Declared more than present, within memory: counted at the end.
	_, err = readString(t, "%%MatrixMarket matrix coordinate real general\n10 10 5\n1 1 1\n")
	assert.EqualError(t, err, "sparse: Matrix Market line 4: found 1 entries at end of input, 5 declared")
}

func TestCheckSolvable(t *testing.T) {
	c := NewCOO(3, 3, 0)
	c.Add(0, 0, 1)
	c.Add(1, 2, 1)
	c.Add(2, 1, 1)
	require.NoError(t, c.CheckSolvable())
	c.Row[2] = 0 // row 3 empty, 3 entries
	err := c.CheckSolvable()
	require.ErrorIs(t, err, ErrStructurallySingular)
	assert.EqualError(t, err, "sparse: matrix is structurally singular: row 3 of the 3×3 matrix has no stored entry")
	c.Row[2], c.Col[2] = 2, 2 // column 2 empty
	assert.EqualError(t, c.CheckSolvable(), "sparse: matrix is structurally singular: column 2 of the 3×3 matrix has no stored entry")
	r := NewCOO(3, 4, 0)
	assert.ErrorIs(t, r.CheckSolvable(), ErrShape)
}
