package sparse

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/internal/memguard"
)

// hbBase is a 4×4 unsymmetric matrix with 6 entries:
//
//	1.5  0    4.25   0
//	0    3    0      0
//	-2   0    0      0
//	0    0    1e-3  -7
var hbBase = []string{
	"Small unsymmetric test matrix                                           SMALL4  ",
	"             5             1             2             2             0",
	"RUA                        4             4             6             0",
	"(5I3)           (4I2)           (3E12.4)            ",
	"  1  3  4  6  7",
	" 1 3 2 1",
	" 4 4",
	"  1.5000E+00 -2.0000E+00  3.0000E+00",
	"  4.2500E+00  1.0000E-03 -7.0000E+00",
}

var hbBaseDense = [][]float64{
	{1.5, 0, 4.25, 0},
	{0, 3, 0, 0},
	{-2, 0, 0, 0},
	{0, 0, 1e-3, -7},
}

func hbJoin(lines []string) string { return strings.Join(lines, "\n") + "\n" }

// hbWith returns hbBase with line k (1-based) replaced by s, or removed
// when s is "-".
func hbWith(k int, s string) string {
	lines := append([]string(nil), hbBase...)
	if s == "-" {
		lines = append(lines[:k-1], lines[k:]...)
	} else {
		lines[k-1] = s
	}
	return hbJoin(lines)
}

func readHB(t *testing.T, s string) (*COO, error) {
	t.Helper()
	return ReadHarwellBoeing(strings.NewReader(s))
}

func requireDense(t *testing.T, c *COO, want [][]float64) {
	t.Helper()
	require.NoError(t, c.Check())
	a := mustCSR(t, c)
	require.Equal(t, len(want), a.N)
	require.Equal(t, len(want[0]), a.M)
	for i, row := range want {
		for j, v := range row {
			assert.Equal(t, v, a.At(i, j), "(%d, %d)", i, j)
		}
	}
}

func TestReadHarwellBoeing(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want [][]float64
	}{
		{"unsymmetric", hbJoin(hbBase), hbBaseDense},
		{"symmetric, D exponents, right-hand side skipped", `1SYMMETRIC 3x3                                                          SYM3
             6             1             1             2             2
RSA                        3             3             4             0
(4I3)           (4I3)           (1P,2D15.7)         (1P,2D15.7)
F                          1             0
  1  3  4  5
  1  3  2  3
  4.0000000D+00 -1.0000000D+00
  2.5000000D-01  6.0000000D+00
  1.0000000D+00  2.0000000D+00
  3.0000000D+00
`, [][]float64{{4, 0, -1}, {0, 0.25, 0}, {-1, 0, 6}}},
		{"skew-symmetric, exponents without a letter", `skew
4 1 1 1
RZA 3 3 2
(4I2) (2I2) (2E11.3)
 1 3 3 3
 2 3
  1.000+000 -2.000-001
`, [][]float64{{0, -1, 0.2}, {1, 0, 0}, {-0.2, 0, 0}}},
		{"pattern unsymmetric, no right-hand-side count", `pattern
3 1 2 0
PUA 2 3 3
(4I2) (2I2)
 1 2 3 4
 2 1
 2
`, [][]float64{{0, 1, 0}, {1, 0, 1}}},
		{"pattern symmetric, lower case, CRLF", "title\r\n3 1 1 0 0\r\npsa 3 3 3 0\r\n(4i2) (3i2)\r\n 1 3 4 4\r\n 1 3 2\r\n",
			[][]float64{{1, 0, 1}, {0, 1, 0}, {1, 0, 0}}},
		{"rectangular, grouped format with blanks", `rectangular 2x3
4 1 1 2
RRA 2 3 3
( 4 I 2 ) (3I2) (2(1X,E24.16))
 1 2 3 4
 1 2 1
   1.0000000000000000E+00  -3.3333333333333331E-01
   1.0000000000000000E+10
`, [][]float64{{1, 0, 1e10}, {0, -1.0 / 3, 0}}},
		{"fixed-point values, implied decimals", `fixed
4 1 1 2
RUA 2 2 3
(3I2) (3I2) (2X,2F6.2) (2F6.2)
 1 3 4
 1 2 2
     1.5 -1250
     2.5
`, [][]float64{{1.5, 0}, {-12.5, 2.5}}},
		{"empty", "empty\n1 1 0 0\nRUA 0 0 0\n(1I2) (1I2) (1E10.3)\n 1\n", [][]float64{{}}},
		{"neltvl left out, an explicit zero kept", `zero
3 1 1 1
RUA 1 1 1
(2I2) (1I2) (1E10.3)
 1 2
 1
 0.000E+00
`, [][]float64{{0}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := readHB(t, c.in)
			require.NoError(t, err)
			if len(c.want[0]) == 0 {
				assert.Equal(t, 0, m.N)
				assert.Equal(t, 0, m.NNZ())
				return
			}
			requireDense(t, m, c.want)
		})
	}
	// The explicit zero is stored.
	m, err := readHB(t, cases[len(cases)-1].in)
	require.NoError(t, err)
	assert.Equal(t, 1, m.NNZ())
	// The mirrored entries follow their twins.
	m, err = readHB(t, cases[1].in)
	require.NoError(t, err)
	assert.Equal(t, []int{0, 2, 0, 1, 2}, m.Row)
	assert.Equal(t, []int{0, 0, 2, 1, 2}, m.Col)
	assert.Equal(t, []float64{4, -1, -1, 0.25, 6}, m.Val)
}

func TestFortranFormats(t *testing.T) {
	type field struct{ start, width, digits, scale int }
	cases := []struct {
		text   string
		kind   byte
		fields []field
	}{
		{"(4I5)", 'I', []field{{0, 5, 0, 0}, {5, 5, 0, 0}, {10, 5, 0, 0}, {15, 5, 0, 0}}},
		{"(13i6)", 'I', nil},
		{"(1P,3D20.12)", 'D', []field{{0, 20, 12, 1}, {20, 20, 12, 1}, {40, 20, 12, 1}}},
		{"(1P2E16.8)", 'E', []field{{0, 16, 8, 1}, {16, 16, 8, 1}}},
		{"(2(1X,E24.16))", 'E', []field{{1, 24, 16, 0}, {26, 24, 16, 0}}},
		{"(2X,2I4)", 'I', []field{{2, 4, 0, 0}, {6, 4, 0, 0}}},
		{"(2E15.8E3)", 'E', []field{{0, 15, 8, 0}, {15, 15, 8, 0}}},
		{"(2I8.4)", 'I', []field{{0, 8, 0, 0}, {8, 8, 0, 0}}},
		{"( 2 G 12 . 5 )", 'G', []field{{0, 12, 5, 0}, {12, 12, 5, 0}}},
		{"(2(2(I3),1X))", 'I', []field{{0, 3, 0, 0}, {3, 3, 0, 0}, {7, 3, 0, 0}, {10, 3, 0, 0}}},
		{"(-1P,F8.3)", 'F', []field{{0, 8, 3, -1}}},
	}
	for _, c := range cases {
		t.Run(c.text, func(t *testing.T) {
			f, err := parseFortranFormat(c.text)
			require.NoError(t, err)
			if c.fields == nil {
				assert.Len(t, f.fields, 13)
				assert.Equal(t, 78, f.fields[12].start+f.fields[12].width)
				return
			}
			got := make([]field, len(f.fields))
			for k, d := range f.fields {
				assert.Equal(t, c.kind, d.kind)
				got[k] = field{d.start, d.width, d.digits, d.scale}
			}
			assert.Equal(t, c.fields, got)
			assert.Equal(t, c.kind == 'I', f.integer())
		})
	}
	bad := []struct{ text, reason string }{
		{"(16A5)", `unsupported edit descriptor 'A'`},
		{"(T10,I5)", `unsupported edit descriptor 'T'`},
		{"(5I5/)", `unsupported edit descriptor '/'`},
		{"16I5", "does not start with '('"},
		{"(16I5", "missing ')'"},
		{"(2(I5)", "missing ')'"},
		{"(E16)", "a real field without its digits"},
		{"(E16.)", "'.' without the digits"},
		{"(I)", "a field without its width"},
		{"(I0)", "a field without its width"},
		{"(0I5)", "repeat count 0"},
		{"(0(I5))", "repeat count 0"},
		{"(1X)", "has no data field"},
		{"(1(1(1(1(I5)))))", "nested too deep"},
		{"(1000000I1000000)", "more than 4096 fields"},
		{"(100(100(I1)))", "more than 4096 fields"},
		{"(99999999999999999999I5)", "too large"},
		{"(16I5)X", "unexpected \"X\" after the closing ')'"},
		{"(P,E16.8)", "scale factor P without its value"},
		{"(-2I5)", "a sign before a descriptor other than P"},
		{"(1P", "missing ')'"},
		{"()", "has no data field"},
	}
	for _, c := range bad {
		t.Run("bad "+c.text, func(t *testing.T) {
			_, err := parseFortranFormat(c.text)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.reason)
			assert.Contains(t, err.Error(), "format ")
		})
	}
}

func TestFortranReals(t *testing.T) {
	e16 := fortranDesc{width: 16, kind: 'E', digits: 8}
	f10 := fortranDesc{width: 10, kind: 'F', digits: 3}
	scaled := fortranDesc{width: 10, kind: 'F', digits: 3, scale: 1}
	cases := []struct {
		text string
		desc fortranDesc
		want float64
	}{
		{"  1.0D+01", e16, 10},
		{"1.0d-3", e16, 1e-3},
		{"1.0E+01", e16, 10},
		{"1.0e1", e16, 10},
		{"1.0Q2", e16, 100},
		{"1.0-01", e16, 0.1},
		{"-2.5+101", e16, -2.5e101},
		{"  1 .5E 1", e16, 15},
		{".5", e16, 0.5},
		{"-5.", e16, -5},
		{"+3", e16, 3e-8},        // implied decimal digits: E16.8
		{"12345", f10, 12.345},   // F10.3
		{"12345E2", f10, 1234.5}, // implied decimals with an exponent
		{"2.5", scaled, 0.25},    // 1P without an exponent: ×10⁻¹
		{"2.5E0", scaled, 2.5},   // an exponent cancels the scale factor
		{"-0.0", e16, 0},
		{"1E-400", e16, 0},
		{"0.1", e16, 0.1},
		{"0.30000000000000004", e16, 0.30000000000000004},
		{"42", fortranDesc{width: 4, kind: 'I'}, 42},
	}
	for _, c := range cases {
		got, err := fortranField{text: c.text, desc: c.desc}.real()
		require.NoError(t, err, c.text)
		assert.Equal(t, c.want, got, c.text)
	}
	assert.True(t, math.Signbit(must(fortranField{text: "-0.0", desc: e16}.real())), "negative zero")
	bad := []struct{ text, reason string }{
		{"1.0E", "unparsable"},
		{"abc", "unparsable"},
		{"1..2", "unparsable"},
		{"--1", "unparsable"},
		{"1.0E+1x", "unparsable"},
		{"1.0+-2", "unparsable"},
		{"NaN", "unparsable"},
		{"Inf", "unparsable"},
		{".", "unparsable"},
		{"1E400", "non-finite"},
		{"-9.9+999", "non-finite"},
		{"1E99999999", "exponent out of range"},
	}
	for _, c := range bad {
		_, err := fortranField{text: c.text, desc: e16}.real()
		require.Error(t, err, c.text)
		assert.Contains(t, err.Error(), c.reason, c.text)
	}
	_, err := fortranField{text: "1.5", desc: fortranDesc{width: 4, kind: 'I'}}.real()
	assert.ErrorContains(t, err, "unparsable integer")
	_, err = fortranField{text: "15", desc: e16}.int()
	assert.ErrorContains(t, err, "integer wanted in a E field")
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func TestReadHarwellBoeingErrors(t *testing.T) {
	cases := []struct {
		name, in string
		line     int
		reason   string
	}{
		{"empty", "", 1, "empty input"},
		{"title only", "title\n", 2, "input ends before the line counts"},
		{"no type line", hbJoin(hbBase[:2]), 3, "input ends before the type"},
		{"no formats", hbJoin(hbBase[:3]), 4, "input ends before the formats"},
		{"counts: three", hbWith(2, "5 1 2"), 2, "3 values, want 4 or 5"},
		{"counts: not a number", hbWith(2, "5 1 2 x 0"), 2, `bad number "x"`},
		{"counts: negative", hbWith(2, "5 1 -2 2 0"), 2, `bad number "-2"`},
		{"complex", hbWith(3, "CUA 4 4 6 0"), 3, "complex matrices are not supported"},
		{"elemental", hbWith(3, "RUE 4 4 6 6"), 3, "elemental (unassembled) matrices are not supported"},
		{"Hermitian", hbWith(3, "RHA 4 4 6"), 3, "Hermitian"},
		{"value type", hbWith(3, "XUA 4 4 6"), 3, "unknown value type 'X'"},
		{"structure", hbWith(3, "RQA 4 4 6"), 3, "unknown structure 'Q'"},
		{"storage", hbWith(3, "RUB 4 4 6"), 3, "unknown storage 'B'"},
		{"short type", hbWith(3, "RU 4 4 6"), 3, "bad type"},
		{"type line values", hbWith(3, "RUA 4 4"), 3, "3 values, want 4 or 5"},
		{"size too large", hbWith(3, "RUA 3000000000 4 6"), 3, "bad number"},
		{"neltvl", hbWith(3, "RUA 4 4 6 -1"), 3, "bad number"},
		{"symmetric rectangular", hbWith(3, "RSA 4 5 6"), 3, "symmetric matrix must be square, got 4×5"},
		{"skew rectangular", hbWith(3, "RZA 4 5 6"), 3, "skew-symmetric matrix must be square"},
		{"entries in empty", hbWith(3, "RUA 0 4 6"), 3, "6 entries declared for an empty 0×4 matrix"},
		{"pointer format", hbWith(4, "(5A3) (4I2) (3E12.4)"), 4, "pointer format: format \"(5A3)\": unsupported edit descriptor 'A'"},
		{"real pointers", hbWith(4, "(5E3.1) (4I2) (3E12.4)"), 4, "pointer format: \"(5E3.1)\" has real fields"},
		{"real indices", hbWith(4, "(5I3) (4F2.0) (3E12.4)"), 4, "index format: \"(4F2.0)\" has real fields"},
		{"bad index format", hbWith(4, "(5I3) (4I) (3E12.4)"), 4, "index format: format \"(4I)\""},
		{"one format", hbWith(4, "(5I3)"), 4, "1 formats, want at least"},
		{"no value format", hbWith(4, "(5I3) (4I2)"), 4, "no value format for a real matrix"},
		{"bad value format", hbWith(4, "(5I3) (4I2) (3E12)"), 4, "value format: format \"(3E12)\": a real field without its digits"},
		{"text between formats", hbWith(4, "(5I3) x (4I2) (3E12.4)"), 4, "'x' in column 7 is outside parentheses"},
		{"unbalanced )", hbWith(4, "(5I3)) (4I2) (3E12.4)"), 4, "unbalanced ')' in column 6"},
		{"unbalanced (", hbWith(4, "(5I3) ((4I2) (3E12.4)"), 4, "unbalanced '('"},
		{"first pointer", hbWith(5, "  2  3  4  6  7"), 5, "first column pointer is 2, want 1"},
		{"pointer decreases", hbWith(5, "  1  3  2  6  7"), 5, "column pointer 3 is 2, less than the one before (3)"},
		{"pointer too large", hbWith(5, "  1  3  4  8  7"), 5, "column pointer 4 is 8, outside [1, 7]"},
		{"last pointer", hbWith(5, "  1  3  4  6  6"), 5, "last column pointer is 6, want nnzero+1 = 7"},
		{"short pointer line", hbWith(5, "  1  3  4  6"), 5, "column pointers: the line ends after 4 fields, format (5I3) puts 5 on it"},
		{"blank pointer", hbWith(5, "  1  3     6  7"), 5, "column pointers: field 3 (columns 7–9) is blank"},
		{"bad pointer", hbWith(5, "  1  3  x  6  7"), 5, `column pointer 3: unparsable integer "  x"`},
		{"row index too large", hbWith(6, " 1 5 2 1"), 6, "row index 5 of column 1 out of range [1, 4]"},
		{"row index zero", hbWith(7, " 4 0"), 7, "row index 0 of column 4 out of range [1, 4]"},
		{"bad value", hbWith(8, "  1.5000E+00 -2.0000E+00  3.0000Z+00"), 8, `value 3: unparsable number "  3.0000Z+00"`},
		{"infinite value", hbWith(9, "  4.2500E+00  1.0000+999 -7.0000E+00"), 9, `value 5: non-finite value "  1.0000+999"`},
		{"short value line", hbWith(8, "  1.5000E+00 -2.0000E+00"), 8, "values: the line ends after 2 fields, format (3E12.4) puts 3 on it"},
		{"pointer lines", hbWith(2, "5 2 2 2 0"), 5, "the column pointers take 1 lines, line 2 declares 2"},
		{"index lines", hbWith(2, "5 1 1 2 0"), 7, "the row indices take 2 lines, line 2 declares 1"},
		{"value lines", hbWith(2, "5 1 2 3 0"), 9, "the values take 2 lines, line 2 declares 3"},
		{"no value lines", hbWith(2, "3 1 2 0 0"), 9, "the values take 2 lines, line 2 declares 0"},
		{"ends in the values", hbJoin(hbBase[:8]), 9, "input ends after 3 of the 6 values"},
		{"ends in the pointers", hbJoin(hbBase[:4]), 5, "input ends after 0 of the 5 column pointers"},
		{"no right-hand-side line", hbJoin([]string{hbBase[0], "3 1 0 0 1", "RUA 0 0 0", "(1I2) (1I2)"}), 5, "input ends before the right-hand-side line"},
		{"skew diagonal", hbWith(3, "RZA 4 4 6"), 6, "diagonal entry (1, 1) in a skew-symmetric matrix"},
		{"index lines for no entries", "t\n2 1 1 0\nPUA 2 2 0\n(3I2) (1I2)\n 1 1 1\n", 5, "the row indices take 0 lines, line 2 declares 1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := readHB(t, c.in)
			require.Error(t, err)
			require.ErrorIs(t, err, ErrHarwellBoeing)
			var he *HarwellBoeingError
			require.True(t, errors.As(err, &he))
			assert.Equal(t, c.line, he.Line, "%v", err)
			assert.Contains(t, he.Reason, c.reason)
			assert.Equal(t, fmt.Sprintf("sparse: Harwell-Boeing line %d: %s", he.Line, he.Reason), err.Error())
		})
	}
	// A line longer than the limit.
	_, err := readHB(t, hbWith(9, strings.Repeat(" ", maxLine+10)))
	var he *HarwellBoeingError
	require.ErrorAs(t, err, &he)
	assert.Equal(t, 9, he.Line)
	assert.Contains(t, he.Reason, "line longer than")
}

func TestReadHarwellBoeingReaderError(t *testing.T) {
	_, err := ReadHarwellBoeing(&errReader{[]byte(hbJoin(hbBase[:6]))})
	require.ErrorIs(t, err, errBoom)
	require.NotErrorIs(t, err, ErrHarwellBoeing)
}

func TestHarwellBoeingDeclaredSizeBeyondMemory(t *testing.T) {
	defer memguard.SetLimit(memguard.SetLimit(1 << 30))
	_, err := readHB(t, hbWith(3, "RSA 100000000 100000000 100000000"))
	require.ErrorIs(t, err, ErrMemory)
	require.NotErrorIs(t, err, ErrHarwellBoeing)
	assert.EqualError(t, err, "sparse: Harwell-Boeing line 3: storing the 100000001 column pointers and 100000000 declared entries of a 100000000×100000000 matrix needs 5.59 GiB, more than the 896 MiB this process can have (memory cap of BANDSOLVE_MEMORY_LIMIT or memguard.SetLimit)")
	// Columns alone: the pointers.
	_, err = readHB(t, hbWith(3, "RUA 1 2000000000 0"))
	require.ErrorIs(t, err, ErrMemory)
	// Declared more than present, within memory: the input ends early.
	_, err = readHB(t, "t\n1 1 0 0\nPUA 5 1000 0\n(5I3) (1I2)\n  1  1  1  1  1\n")
	require.ErrorIs(t, err, ErrHarwellBoeing)
	assert.EqualError(t, err, "sparse: Harwell-Boeing line 6: input ends after 5 of the 1001 column pointers")
}

// hbIntFormat writes integers: per on a line, each width wide after lead
// blanks, described by text.
type hbIntFormat struct {
	text       string
	per, width int
	lead       int
}

// hbValFormat writes reals, per on a line, each with write.
type hbValFormat struct {
	text  string
	per   int
	write func(v float64) string
}

// hbLines lays out items per on a line.
func hbLines(items []string, per int) []string {
	var lines []string
	for k := 0; k < len(items); k += per {
		lines = append(lines, strings.Join(items[k:min(k+per, len(items))], ""))
	}
	return lines
}

func (f hbIntFormat) lines(v []int) []string {
	items := make([]string, len(v))
	for k, x := range v {
		items[k] = strings.Repeat(" ", f.lead) + fmt.Sprintf("%*d", f.width, x)
	}
	return hbLines(items, f.per)
}

func (f hbValFormat) lines(v []float64) []string {
	items := make([]string, len(v))
	for k, x := range v {
		items[k] = f.write(x)
	}
	return hbLines(items, f.per)
}

// writeHB writes the columns of c (entries in column order; for a
// symmetric type the stored triangle only) as a Harwell–Boeing file with
// nRHS right-hand-side lines after the values.
func writeHB(typ string, c *COO, pf, inf hbIntFormat, vf hbValFormat, nRHS int) string {
	ptr := make([]int, c.M+1)
	for _, j := range c.Col {
		ptr[j+1]++
	}
	for j := range c.M {
		ptr[j+1] += ptr[j]
	}
	rows, vals := make([]int, c.NNZ()), make([]float64, c.NNZ())
	next := append([]int(nil), ptr[:c.M]...)
	for e, j := range c.Col {
		rows[next[j]] = c.Row[e] + 1
		vals[next[j]] = c.Val[e]
		next[j]++
	}
	for j := range ptr {
		ptr[j]++
	}
	pl, il := pf.lines(ptr), inf.lines(rows)
	var vl []string
	if typ[0] != 'P' {
		vl = vf.lines(vals)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%-72s%-8s\n", "random "+typ, "KEY")
	fmt.Fprintf(&b, "%14d%14d%14d%14d%14d\n", len(pl)+len(il)+len(vl)+nRHS, len(pl), len(il), len(vl), nRHS)
	fmt.Fprintf(&b, "%-3s%11s%14d%14d%14d%14d\n", typ, "", c.N, c.M, c.NNZ(), 0)
	fmt.Fprintf(&b, "%-16s%-16s%-20s%-20s\n", pf.text, inf.text, vf.text, vf.text)
	if nRHS > 0 {
		fmt.Fprintf(&b, "%-3s%11s%14d%14d\n", "F", "", 1, 0)
	}
	for _, l := range [][]string{pl, il, vl} {
		for _, s := range l {
			b.WriteString(s + "\n")
		}
	}
	for range nRHS {
		b.WriteString(vf.write(1) + "\n")
	}
	return b.String()
}

// sortedByColumn returns c's entries sorted by column, then row.
func sortedByColumn(c *COO) *COO {
	a := mustCSRNoTest(c.ToCSR())
	t := a.Transpose()
	out := NewCOO(c.N, c.M, c.NNZ())
	for j := range t.N {
		for p := t.RowPtr[j]; p < t.RowPtr[j+1]; p++ {
			out.Add(int(t.Col[p]), j, t.Val[p])
		}
	}
	return out
}

func mustCSRNoTest(a *CSR, err error) *CSR {
	if err != nil {
		panic(err)
	}
	return a
}

// TestHarwellBoeingRoundTrip writes random matrices of every type in
// several formats and reads them back: exactly with 17 significant
// digits, to the digits written otherwise.
func TestHarwellBoeingRoundTrip(t *testing.T) {
	ints := []hbIntFormat{
		{text: "(8I6)", per: 8, width: 6},
		{text: "(16I5)", per: 16, width: 5},
		{text: "(3(1X,I9))", per: 3, width: 9, lead: 1},
	}
	exactE := func(letter string, width int) func(float64) string {
		return func(v float64) string {
			return fmt.Sprintf("%*s", width, strings.Replace(strconv.FormatFloat(v, 'E', 16, 64), "E", letter, 1))
		}
	}
	// The values read back lie within abs + rel·|v| of the values
	// written; exact (both 0) with 17 significant digits.
	vals := []struct {
		f        hbValFormat
		abs, rel float64
	}{
		{hbValFormat{"(3E26.16)", 3, exactE("E", 26)}, 0, 0},
		{hbValFormat{"(1P,4D25.16)", 4, exactE("D", 25)}, 0, 0},
		{hbValFormat{"(2(1X,E24.16))", 2, func(v float64) string { return " " + exactE("E", 24)(v) }}, 0, 0},
		{hbValFormat{"(4E24.16)", 4, exactE("", 24)}, 0, 0}, // "1.2345678901234567-05"
		{hbValFormat{"(5E16.8)", 5, func(v float64) string { return fmt.Sprintf("%16.8E", v) }}, 0, 1e-8},
		{hbValFormat{"(5F20.8)", 5, func(v float64) string { return fmt.Sprintf("%20.8f", v) }}, 1e-8, 0},
	}
	rng := newRNG(11)
	for _, typ := range []string{"RUA", "RSA", "RZA", "RRA", "PUA", "PSA"} {
		for k, vf := range vals {
			pf, inf := ints[k%len(ints)], ints[(k+1)%len(ints)]
			name := fmt.Sprintf("%s/%s/%s/%s", typ, pf.text, inf.text, vf.f.text)
			t.Run(name, func(t *testing.T) {
				n, m := 30+rng.IntN(40), 0
				m = n
				if typ[1] == 'R' {
					m = n + 1 + rng.IntN(20)
				}
				full := randomCOO(n, m, 4*n, rng)
				for e := range full.Val {
					full.Val[e] *= math.Pow(10, float64(rng.IntN(9)-4))
					if typ[0] == 'P' {
						full.Val[e] = 1
					}
				}
				// The stored part and the matrix it stands for.
				stored, want := NewCOO(n, m, 0), NewCOO(n, m, 0)
				seen := map[[2]int]bool{}
				for e, v := range full.Val {
					i, j := full.Row[e], full.Col[e]
					if seen[[2]int{i, j}] {
						continue
					}
					seen[[2]int{i, j}] = true
					switch {
					case typ[1] == 'S' && i >= j:
						stored.Add(i, j, v)
						want.Add(i, j, v)
						if i != j {
							want.Add(j, i, v)
						}
					case typ[1] == 'Z' && i > j:
						stored.Add(i, j, v)
						want.Add(i, j, v)
						want.Add(j, i, -v)
					case typ[1] == 'U' || typ[1] == 'R':
						stored.Add(i, j, v)
						want.Add(i, j, v)
					}
				}
				in := writeHB(typ, sortedByColumn(stored), pf, inf, vf.f, k%2)
				got, err := readHB(t, in)
				require.NoError(t, err, "%s", in[:min(len(in), 400)])
				require.NoError(t, got.Check())
				require.Equal(t, want.NNZ(), got.NNZ())
				wa, ga := mustCSR(t, want), mustCSR(t, got)
				require.Equal(t, wa.RowPtr, ga.RowPtr)
				require.Equal(t, wa.Col, ga.Col)
				if vf.abs == 0 && vf.rel == 0 {
					assert.Equal(t, wa.Val, ga.Val, "bit for bit")
					return
				}
				for k, v := range wa.Val {
					require.InDelta(t, v, ga.Val[k], vf.abs+vf.rel*math.Abs(v), "entry %d", k)
				}
			})
		}
	}
}

// fuzzHBSeeds are the seed corpus of FuzzReadHarwellBoeing.
var fuzzHBSeeds = []string{
	hbJoin(hbBase),
	"t\n5 1 1 2 1\nRSA 3 3 4 0\n(4I3) (4I3) (1P,2D15.7) (1P,2D15.7)\nF 1 0\n  1  3  4  5\n  1  3  2  3\n  4.0000000D+00 -1.0000000D+00\n  2.5000000D-01  6.0000000D+00\n  1.0D+00\n",
	"skew\n4 1 1 1\nRZA 3 3 2\n(4I2) (2I2) (2E11.3)\n 1 3 3 3\n 2 3\n  1.000+000 -2.000-001\n",
	"p\n3 1 1 0 0\npsa 3 3 3 0\n(4i2) (3i2)\n 1 3 4 4\n 1 3 2\n",
	"r\n4 1 1 2\nRRA 2 3 3\n(4I2) (3I2) (2(1X,E24.16))\n 1 2 3 4\n 1 2 1\n   1.0000000000000000E+00  -3.3333333333333331E-01\n   1.0000000000000000E+10\n",
	"f\n4 1 1 2\nRUA 2 2 3\n(3I2) (3I2) (2X,2F6.2)\n 1 3 4\n 1 2 2\n     1.5 -1250\n     2.5\n",
	hbWith(3, "RUA 2147483647 2147483647 2147483647"),
	hbWith(3, "RSA 1000000000 1000000000 1"),
	hbWith(4, "(1000(1000(I1))) (4I2) (3E12.4)"),
	"",
}

// FuzzReadHarwellBoeing reads any input and builds the CSR matrix of
// whatever it accepts: errors wrap ErrHarwellBoeing or ErrMemory (the
// memory guard must refuse what does not fit, never a Go fatal error),
// and an accepted matrix is a valid COO with finite values.
func FuzzReadHarwellBoeing(f *testing.F) {
	for _, s := range fuzzHBSeeds {
		f.Add(s)
	}
	defer memguard.SetLimit(memguard.SetLimit(fuzzMemory))
	f.Fuzz(func(t *testing.T, in string) {
		c, err := ReadHarwellBoeing(strings.NewReader(in))
		if err != nil {
			if !errors.Is(err, ErrMemory) {
				require.ErrorIs(t, err, ErrHarwellBoeing)
			}
			return
		}
		require.NoError(t, c.Check())
		for _, v := range c.Val {
			require.False(t, math.IsInf(v, 0) || math.IsNaN(v), "value %v", v)
		}
		a, err := c.ToCSR()
		if err != nil {
			require.ErrorIs(t, err, ErrMemory)
			return
		}
		require.NoError(t, a.Check())
		require.LessOrEqual(t, a.NNZ(), c.NNZ())
	})
}
