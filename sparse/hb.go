package sparse

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/bandsolve/bandsolve/internal/memguard"
)

// ErrHarwellBoeing is wrapped by every error of ReadHarwellBoeing about the
// content of the input (errors of the underlying reader are returned as
// they are).
var ErrHarwellBoeing = errors.New("sparse: bad Harwell-Boeing input")

// HarwellBoeingError is a Harwell–Boeing input error at a line (1-based;
// for a short file, the line after the last one). It wraps
// ErrHarwellBoeing.
type HarwellBoeingError struct {
	Line   int
	Reason string
}

// Error returns "sparse: Harwell-Boeing line N: reason".
func (e *HarwellBoeingError) Error() string {
	return fmt.Sprintf("sparse: Harwell-Boeing line %d: %s", e.Line, e.Reason)
}

// Unwrap returns ErrHarwellBoeing.
func (e *HarwellBoeingError) Unwrap() error { return ErrHarwellBoeing }

func hbErr(line int, format string, args ...any) error {
	return &HarwellBoeingError{Line: line, Reason: fmt.Sprintf(format, args...)}
}

// ReadHarwellBoeing reads an assembled real or pattern matrix in the
// Harwell–Boeing format (Duff, Grimes and Lewis, "Users' guide for the
// Harwell-Boeing sparse matrix collection", 1992), the format of the
// .rua/.rsa files of the Harwell–Boeing and SuiteSparse collections:
//
//   - line 1: title and key (not interpreted);
//   - line 2: the numbers of lines of the whole data (not checked), of
//     the column pointers, of the row indices, of the values and of the
//     right-hand sides (the last may be left out when there are none);
//   - line 3: the type, nrow, ncol, nnzero and neltvl (the last may be
//     left out; it is ignored for an assembled matrix);
//   - line 4: the Fortran formats of the pointers, the indices, the values
//     and the right-hand sides, each in parentheses;
//   - line 5, present when there are right-hand-side lines: their
//     description (skipped, as are the right-hand sides);
//   - then the ncol+1 column pointers (1-based, the first 1 and the last
//     nnzero+1), the nnzero row indices (1-based) and, unless the matrix
//     is a pattern, the nnzero values, each section starting on a new line
//     and taking the number of lines line 2 declares for it.
//
// The type has three letters: R (real) or P (pattern: every value reads
// as 1); U (unsymmetric), S (symmetric), Z (skew-symmetric) or R
// (rectangular); A (assembled). A symmetric matrix stores one triangle and
// the other is mirrored (a_ji = a_ij); a skew-symmetric one mirrors with
// the opposite sign (a_ji = −a_ij) and may not store diagonal entries.
// Complex matrices and elemental (unassembled, E) matrices are refused.
// Lines 2 and 3 are read as blank-separated fields; the types, formats
// and exponent letters are case-insensitive.
//
// The data are read field by field in the fixed columns of their Fortran
// formats, as Fortran reads them: a format is a list of repeated edit
// descriptors Iw (integers), Ew.d, Dw.d, Fw.d and Gw.d (reals; an
// exponent width such as E24.16E3 is allowed), with nX (skip n columns),
// a scale factor kP and parenthesized groups with a repeat count, e.g.
// (16I5), (5E16.8), (1P,4D20.12) or (3(1X,E24.16)); any other descriptor
// is refused with a message that names it. One line holds the fields of
// the whole format (the last line of a section holds the rest). Inside a
// field blanks are ignored; a real may have a D or E exponent ("1.0D+01")
// or a signed exponent without a letter ("1.0-01"); a real without a
// decimal point has d implied decimal digits, and without an exponent it
// is divided by 10ᵏ under a scale factor kP. Values must be finite. A
// line may end early only on the last field of its section; columns
// beyond the format's fields are ignored.
//
// Every error about the content is a *HarwellBoeingError that names the
// line and the reason and wraps ErrHarwellBoeing: a bad count, type or
// format, a missing or blank field, an unparsable or non-finite number, a
// column pointer that is not 1 first, decreases or does not end at
// nnzero+1, a row index outside [1, nrow], a diagonal entry of a
// skew-symmetric matrix, a section that ends on another line than line 2
// declares, or an input that ends inside a section. A declared size whose
// column pointers and entries cannot fit in the memory the process can
// have is refused at line 3 with an error wrapping ErrMemory. The entries
// are returned column by column as stored, the mirrored entry of a
// symmetric or skew-symmetric matrix right after its twin.
func ReadHarwellBoeing(r io.Reader) (*COO, error) {
	hb := &hbReader{sc: bufio.NewScanner(r)}
	hb.sc.Buffer(make([]byte, 0, 64*1024), maxLine)
	return hb.read()
}

// hbReader reads the lines of a Harwell–Boeing input.
type hbReader struct {
	sc   *bufio.Scanner
	line int // the number of the last line read
}

// next returns the next line; ok is false at the end of the input.
func (hb *hbReader) next() (s string, ok bool, err error) {
	if hb.sc.Scan() {
		hb.line++
		return hb.sc.Text(), true, nil
	}
	if err := hb.sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return "", false, hbErr(hb.line+1, "line longer than %d bytes", maxLine)
		}
		return "", false, err
	}
	return "", false, nil
}

// must returns the next line, or an error naming what is missing.
func (hb *hbReader) must(what string) (string, error) {
	s, ok, err := hb.next()
	if err != nil {
		return "", err
	}
	if !ok {
		return "", hbErr(hb.line+1, "input ends before %s", what)
	}
	return s, nil
}

// hbCounts are the line counts of header line 2.
type hbCounts struct {
	total, ptr, ind, val, rhs int
}

// hbType is the matrix type of header line 3.
type hbType struct {
	pattern bool
	symm    byte // 'U', 'S', 'Z' or 'R'
}

func (hb *hbReader) read() (*COO, error) {
	// Line 1: title and key.
	if _, ok, err := hb.next(); err != nil {
		return nil, err
	} else if !ok {
		return nil, hbErr(1, "empty input, want a title line")
	}

	// Line 2: line counts.
	s, err := hb.must("the line counts (line 2)")
	if err != nil {
		return nil, err
	}
	f := strings.Fields(s)
	if len(f) != 4 && len(f) != 5 {
		return nil, hbErr(hb.line, "line counts: %d values, want 4 or 5 (total, pointer, index, value and right-hand-side lines)", len(f))
	}
	cnt := make([]int, 5)
	for k, v := range f {
		if cnt[k], err = hbCount(v); err != nil {
			return nil, hbErr(hb.line, "line counts: %v", err)
		}
	}
	counts := hbCounts{cnt[0], cnt[1], cnt[2], cnt[3], cnt[4]}
	countsLine := hb.line

	// Line 3: type and sizes.
	if s, err = hb.must("the type and sizes (line 3)"); err != nil {
		return nil, err
	}
	f = strings.Fields(s)
	if len(f) != 4 && len(f) != 5 {
		return nil, hbErr(hb.line, "type line: %d values, want 4 or 5 (type, rows, columns, entries and elemental entries)", len(f))
	}
	typ, err := hbParseType(f[0])
	if err != nil {
		return nil, hbErr(hb.line, "%v", err)
	}
	dims := make([]int, 3)
	for k, v := range f[1:4] {
		if dims[k], err = hbCount(v); err != nil {
			return nil, hbErr(hb.line, "type line: %v", err)
		}
	}
	if len(f) == 5 {
		if _, err := hbCount(f[4]); err != nil {
			return nil, hbErr(hb.line, "type line: %v", err)
		}
	}
	n, m, nnz := dims[0], dims[1], dims[2]
	if typ.symm != 'U' && typ.symm != 'R' && n != m {
		return nil, hbErr(hb.line, "%s matrix must be square, got %d×%d", hbSymmName(typ.symm), n, m)
	}
	if (n == 0 || m == 0) && nnz != 0 {
		return nil, hbErr(hb.line, "%d entries declared for an empty %d×%d matrix", nnz, n, m)
	}
	stored := nnz
	if typ.symm == 'S' || typ.symm == 'Z' {
		stored = 2 * nnz // the mirrored triangle
	}
	// The arrays grow with the input, never with the header, but a
	// declared size that cannot fit in memory is refused here rather than
	// after reading gigabytes.
	if err := memguard.Check(fmt.Sprintf("storing the %d column pointers and %d declared entries of a %d×%d matrix", m+1, nnz, n, m),
		memguard.Add(memguard.Bytes(8, m+1), memguard.Bytes(4, nnz), memguard.Bytes(cooEntryBytes, stored))); err != nil {
		return nil, fmt.Errorf("sparse: Harwell-Boeing line %d: %w", hb.line, err)
	}

	// Line 4: formats.
	if s, err = hb.must("the formats (line 4)"); err != nil {
		return nil, err
	}
	fmts, err := hbSplitFormats(s)
	if err != nil {
		return nil, hbErr(hb.line, "%v", err)
	}
	if len(fmts) < 2 {
		return nil, hbErr(hb.line, "%d formats, want at least the pointer and index formats", len(fmts))
	}
	ptrFmt, err := parseFortranFormat(fmts[0])
	if err == nil && !ptrFmt.integer() {
		err = fmt.Errorf("%q has real fields, want integer fields (I)", fmts[0])
	}
	if err != nil {
		return nil, hbErr(hb.line, "pointer format: %v", err)
	}
	indFmt, err := parseFortranFormat(fmts[1])
	if err == nil && !indFmt.integer() {
		err = fmt.Errorf("%q has real fields, want integer fields (I)", fmts[1])
	}
	if err != nil {
		return nil, hbErr(hb.line, "index format: %v", err)
	}
	var valFmt *fortranFormat
	if !typ.pattern && nnz > 0 {
		if len(fmts) < 3 {
			return nil, hbErr(hb.line, "no value format for a real matrix")
		}
		if valFmt, err = parseFortranFormat(fmts[2]); err != nil {
			return nil, hbErr(hb.line, "value format: %v", err)
		}
	}

	// Line 5: the right-hand sides' description, skipped.
	if counts.rhs > 0 {
		if _, err := hb.must("the right-hand-side line (line 5)"); err != nil {
			return nil, err
		}
	}

	// Column pointers.
	ptr := make([]int, 0, min(m+1, 1<<16))
	if err := hb.section("column pointers", m+1, counts.ptr, countsLine, ptrFmt, func(v fortranField, line int) error {
		p, err := v.int()
		if err != nil {
			return hbErr(line, "column pointer %d: %v", len(ptr)+1, err)
		}
		switch {
		case len(ptr) == 0 && p != 1:
			return hbErr(line, "first column pointer is %d, want 1", p)
		case p < 1 || p > int64(nnz)+1:
			return hbErr(line, "column pointer %d is %d, outside [1, %d]", len(ptr)+1, p, nnz+1)
		case len(ptr) > 0 && int(p) < ptr[len(ptr)-1]:
			return hbErr(line, "column pointer %d is %d, less than the one before (%d)", len(ptr)+1, p, ptr[len(ptr)-1])
		case len(ptr) == m && int(p) != nnz+1:
			return hbErr(line, "last column pointer is %d, want nnzero+1 = %d", p, nnz+1)
		}
		ptr = append(ptr, int(p))
		return nil
	}); err != nil {
		return nil, err
	}

	// Row indices.
	rows := make([]int32, 0, min(nnz, 1<<16))
	col := 0
	if err := hb.section("row indices", nnz, counts.ind, countsLine, indFmt, func(v fortranField, line int) error {
		i, err := v.int()
		if err != nil {
			return hbErr(line, "row index %d: %v", len(rows)+1, err)
		}
		for len(rows)+1 >= ptr[col+1] {
			col++
		}
		if i < 1 || i > int64(n) {
			return hbErr(line, "row index %d of column %d out of range [1, %d]", i, col+1, n)
		}
		if typ.symm == 'Z' && int(i) == col+1 {
			return hbErr(line, "diagonal entry (%d, %d) in a skew-symmetric matrix", i, i)
		}
		rows = append(rows, int32(i-1))
		return nil
	}); err != nil {
		return nil, err
	}

	// Values, added column by column with their mirrored twins.
	c := NewCOO(n, m, min(stored, 1<<16))
	e, col := 0, 0 // the entry of the file and its column
	add := func(v float64) {
		for e+1 >= ptr[col+1] {
			col++
		}
		i := int(rows[e])
		e++
		c.Add(i, col, v)
		if i != col {
			switch typ.symm {
			case 'S':
				c.Add(col, i, v)
			case 'Z':
				c.Add(col, i, -v)
			}
		}
	}
	if typ.pattern || nnz == 0 {
		for range nnz {
			add(1)
		}
		return c, nil
	}
	if err := hb.section("values", nnz, counts.val, countsLine, valFmt, func(v fortranField, line int) error {
		x, err := v.real()
		if err != nil {
			return hbErr(line, "value %d: %v", e+1, err)
		}
		add(x)
		return nil
	}); err != nil {
		return nil, err
	}
	return c, nil
}

// section reads count fields of format fm, starting on a new line, and
// checks that they take the declared number of lines.
func (hb *hbReader) section(what string, count, lines, countsLine int, fm *fortranFormat, use func(v fortranField, line int) error) error {
	first := hb.line + 1
	read := 0
	for read < count {
		s, ok, err := hb.next()
		if err != nil {
			return err
		}
		if !ok {
			return hbErr(hb.line+1, "input ends after %d of the %d %s", read, count, what)
		}
		want := min(len(fm.fields), count-read)
		end := len(strings.TrimRight(s, " \t"))
		for k := range want {
			fd := fm.fields[k]
			if fd.start >= end {
				return hbErr(hb.line, "%s: the line ends after %d fields, format %s puts %d on it", what, k, fm.text, want)
			}
			text := s[fd.start:min(fd.start+fd.width, len(s))]
			if strings.TrimSpace(text) == "" {
				return hbErr(hb.line, "%s: field %d (columns %d–%d) is blank", what, k+1, fd.start+1, fd.start+fd.width)
			}
			if err := use(fortranField{text: text, desc: fd}, hb.line); err != nil {
				return err
			}
			read++
		}
	}
	got := 0
	if count > 0 {
		got = hb.line - first + 1
	}
	if got != lines {
		return hbErr(hb.line, "the %s take %d lines, line %d declares %d", what, got, countsLine, lines)
	}
	return nil
}

// hbCount parses a count or size of the header: an integer in [0, 2³¹−1].
func hbCount(s string) (int, error) {
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < 0 || v > maxIndex {
		return 0, fmt.Errorf("bad number %q, want an integer in [0, %d]", truncate(s), maxIndex)
	}
	return int(v), nil
}

// hbParseType reads the three letters of the matrix type.
func hbParseType(s string) (hbType, error) {
	u := strings.ToUpper(s)
	if len(u) != 3 {
		return hbType{}, fmt.Errorf("bad type %q, want three letters such as RUA or PSA", truncate(s))
	}
	var t hbType
	switch u[0] {
	case 'R':
	case 'P':
		t.pattern = true
	case 'C':
		return t, fmt.Errorf("type %q: complex matrices are not supported, want R (real) or P (pattern)", s)
	default:
		return t, fmt.Errorf("type %q: unknown value type %q, want R (real) or P (pattern)", s, u[0])
	}
	switch u[1] {
	case 'U', 'S', 'Z', 'R':
		t.symm = u[1]
	case 'H':
		return t, fmt.Errorf("type %q: Hermitian matrices are complex, want U, S, Z or R", s)
	default:
		return t, fmt.Errorf("type %q: unknown structure %q, want U (unsymmetric), S (symmetric), Z (skew-symmetric) or R (rectangular)", s, u[1])
	}
	switch u[2] {
	case 'A':
	case 'E':
		return t, fmt.Errorf("type %q: elemental (unassembled) matrices are not supported, want A (assembled)", s)
	default:
		return t, fmt.Errorf("type %q: unknown storage %q, want A (assembled)", s, u[2])
	}
	return t, nil
}

// hbSymmName names a structure letter for an error.
func hbSymmName(s byte) string {
	switch s {
	case 'S':
		return "symmetric"
	case 'Z':
		return "skew-symmetric"
	}
	return "unsymmetric"
}

// hbSplitFormats returns the parenthesized formats of line 4, in order.
// Anything between them other than blanks is an error.
func hbSplitFormats(s string) ([]string, error) {
	var out []string
	depth, start := 0, 0
	for k, r := range s {
		switch {
		case r == '(':
			if depth == 0 {
				start = k
			}
			depth++
		case r == ')':
			if depth == 0 {
				return nil, fmt.Errorf("formats: unbalanced ')' in column %d", k+1)
			}
			depth--
			if depth == 0 {
				out = append(out, s[start:k+1])
			}
		case depth == 0 && r != ' ' && r != '\t':
			return nil, fmt.Errorf("formats: %q in column %d is outside parentheses", r, k+1)
		}
	}
	if depth != 0 {
		return nil, fmt.Errorf("formats: unbalanced '(' in %q", truncate(strings.TrimSpace(s)))
	}
	return out, nil
}

// fortranDesc is the place and meaning of one field in a line.
type fortranDesc struct {
	start, width int  // columns [start, start+width), 0-based
	kind         byte // 'I', 'E', 'D', 'F' or 'G'
	digits       int  // d of Ew.d: implied decimal digits
	scale        int  // the scale factor kP in force
}

// fortranFormat is a Fortran format expanded to the fields of one line.
type fortranFormat struct {
	text   string
	fields []fortranDesc
}

// integer reports whether every field is an integer (I) field.
func (f *fortranFormat) integer() bool {
	for _, d := range f.fields {
		if d.kind != 'I' {
			return false
		}
	}
	return true
}

// Limits on a format: the fields of one line and the nesting of groups.
const (
	maxFormatFields = 1 << 12
	maxFormatDepth  = 4
)

// parseFortranFormat parses a format such as (16I5), (1P,4D20.12) or
// (3(1X,E24.16)) and expands it to the fields of one line.
func parseFortranFormat(text string) (*fortranFormat, error) {
	p := &formatParser{s: strings.ToUpper(strings.Join(strings.Fields(text), "")), text: text}
	if len(p.s) < 2 || p.s[0] != '(' {
		return nil, fmt.Errorf("format %q does not start with '('", truncate(text))
	}
	p.pos = 1
	f := &fortranFormat{text: strings.TrimSpace(text)}
	if err := p.list(f, 0); err != nil {
		return nil, err
	}
	if p.pos != len(p.s) {
		return nil, fmt.Errorf("format %q: unexpected %q after the closing ')'", truncate(text), p.s[p.pos:])
	}
	if len(f.fields) == 0 {
		return nil, fmt.Errorf("format %q has no data field", truncate(text))
	}
	return f, nil
}

// formatParser is the state of parseFortranFormat: the format without
// blanks, in upper case, and the position in it.
type formatParser struct {
	s, text string
	pos     int
	col     int // the column the next field starts at
	scale   int // the scale factor in force
}

// number reads an unsigned integer; ok is false when there is none.
func (p *formatParser) number() (v int, ok bool, err error) {
	start := p.pos
	for p.pos < len(p.s) && p.s[p.pos] >= '0' && p.s[p.pos] <= '9' {
		p.pos++
	}
	if p.pos == start {
		return 0, false, nil
	}
	v, err = strconv.Atoi(p.s[start:p.pos])
	if err != nil || v > maxFormatFields*maxLine {
		return 0, false, fmt.Errorf("format %q: number %s too large", truncate(p.text), p.s[start:p.pos])
	}
	return v, true, nil
}

func (p *formatParser) bad(what string) error {
	return fmt.Errorf("format %q: %s at %q; supported: Iw, Ew.d, Dw.d, Fw.d, Gw.d with repeat counts, nX, kP and repeated groups", truncate(p.text), what, truncate(p.s[min(p.pos, len(p.s)):]))
}

// list parses items up to the closing parenthesis of the current group and
// appends their fields to f.
func (p *formatParser) list(f *fortranFormat, depth int) error {
	for {
		if p.pos >= len(p.s) {
			return fmt.Errorf("format %q: missing ')'", truncate(p.text))
		}
		switch p.s[p.pos] {
		case ')':
			p.pos++
			return nil
		case ',':
			p.pos++
			continue
		}
		neg := false
		if p.s[p.pos] == '-' || p.s[p.pos] == '+' {
			neg = p.s[p.pos] == '-'
			p.pos++
		}
		r, hasR, err := p.number()
		if err != nil {
			return err
		}
		if p.pos >= len(p.s) {
			return fmt.Errorf("format %q: missing ')'", truncate(p.text))
		}
		c := p.s[p.pos]
		if neg && c != 'P' {
			return p.bad("a sign before a descriptor other than P")
		}
		switch {
		case c == 'P':
			if !hasR {
				return p.bad("scale factor P without its value")
			}
			p.pos++
			p.scale = r
			if neg {
				p.scale = -r
			}
		case c == 'X':
			p.pos++
			if !hasR {
				r = 1
			}
			p.col += r
			if p.col > maxLine {
				return fmt.Errorf("format %q describes a line longer than %d bytes", truncate(p.text), maxLine)
			}
		case c == '(':
			if depth+1 >= maxFormatDepth {
				return p.bad("groups nested too deep")
			}
			if !hasR {
				r = 1
			}
			if r == 0 {
				return p.bad("repeat count 0")
			}
			p.pos++
			first, startCol := len(f.fields), p.col
			if err := p.list(f, depth+1); err != nil {
				return err
			}
			// The group's fields again, r−1 more times, each shifted by
			// the group's width.
			n, width := len(f.fields)-first, p.col-startCol
			if len(f.fields)+(r-1)*n > maxFormatFields || p.col+(r-1)*width > maxLine {
				return fmt.Errorf("format %q describes more than %d fields or %d bytes in a line", truncate(p.text), maxFormatFields, maxLine)
			}
			for k := 1; k < r; k++ {
				for g := range n {
					d := f.fields[first+g]
					d.start += k * width
					f.fields = append(f.fields, d)
				}
			}
			p.col += (r - 1) * width
		case c == 'I' || c == 'E' || c == 'D' || c == 'F' || c == 'G':
			p.pos++
			if !hasR {
				r = 1
			}
			if r == 0 {
				return p.bad("repeat count 0")
			}
			w, ok, err := p.number()
			if err != nil {
				return err
			}
			if !ok || w == 0 {
				return p.bad("a field without its width")
			}
			d := 0
			if p.pos < len(p.s) && p.s[p.pos] == '.' {
				p.pos++
				if d, ok, err = p.number(); err != nil {
					return err
				} else if !ok {
					return p.bad("'.' without the digits")
				}
			} else if c != 'I' {
				return p.bad("a real field without its digits (w.d)")
			}
			if c == 'I' {
				d = 0 // Iw.m: m is a minimum of digits on output
			} else if p.pos+1 < len(p.s) && p.s[p.pos] == 'E' && p.s[p.pos+1] >= '0' && p.s[p.pos+1] <= '9' {
				p.pos++ // Ew.dEe: the exponent's width, no matter on input
				if _, _, err := p.number(); err != nil {
					return err
				}
			}
			if len(f.fields)+r > maxFormatFields || p.col+r*w > maxLine {
				return fmt.Errorf("format %q describes more than %d fields or %d bytes in a line", truncate(p.text), maxFormatFields, maxLine)
			}
			for range r {
				f.fields = append(f.fields, fortranDesc{start: p.col, width: w, kind: c, digits: d, scale: p.scale})
				p.col += w
			}
		default:
			return p.bad(fmt.Sprintf("unsupported edit descriptor %q", c))
		}
	}
}

// fortranField is the text of one field and its descriptor.
type fortranField struct {
	text string
	desc fortranDesc
}

// digitsOnly strips the blanks of a field (Fortran ignores them).
func digitsOnly(s string) string {
	if !strings.ContainsAny(s, " \t") {
		return s
	}
	return strings.Map(func(r rune) rune {
		if r == ' ' || r == '\t' {
			return -1
		}
		return r
	}, s)
}

// int reads an integer field.
func (v fortranField) int() (int64, error) {
	s := digitsOnly(v.text)
	if v.desc.kind != 'I' {
		return 0, fmt.Errorf("integer wanted in a %c field", v.desc.kind)
	}
	x, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("unparsable integer %q", truncate(v.text))
	}
	return x, nil
}

// real reads a real field: an integer for an I field; else a mantissa
// with an optional decimal point and an optional exponent (E, D, Q, e or
// d, or a sign alone), with the implied decimal digits and the scale
// factor of Fortran input.
func (v fortranField) real() (float64, error) {
	if v.desc.kind == 'I' {
		x, err := v.int()
		return float64(x), err
	}
	s := digitsOnly(v.text)
	bad := func() (float64, error) { return 0, fmt.Errorf("unparsable number %q", truncate(v.text)) }
	k := 0
	sign := ""
	if k < len(s) && (s[k] == '+' || s[k] == '-') {
		sign = s[k : k+1]
		k++
	}
	intStart := k
	for k < len(s) && s[k] >= '0' && s[k] <= '9' {
		k++
	}
	intPart := s[intStart:k]
	fracPart, dot := "", false
	if k < len(s) && s[k] == '.' {
		dot = true
		k++
		fs := k
		for k < len(s) && s[k] >= '0' && s[k] <= '9' {
			k++
		}
		fracPart = s[fs:k]
	}
	if intPart == "" && fracPart == "" {
		return bad()
	}
	exp, hasExp := 0, false
	if k < len(s) {
		switch s[k] {
		case 'E', 'e', 'D', 'd', 'Q', 'q':
			k++
		case '+', '-':
		default:
			return bad()
		}
		es := k
		if k < len(s) && (s[k] == '+' || s[k] == '-') {
			k++
		}
		ds := k
		for k < len(s) && s[k] >= '0' && s[k] <= '9' {
			k++
		}
		if k == ds || k != len(s) {
			return bad()
		}
		e, err := strconv.Atoi(s[es:k])
		if err != nil || e > 1<<20 || e < -(1<<20) {
			return 0, fmt.Errorf("exponent out of range in %q", truncate(v.text))
		}
		exp, hasExp = e, true
	}
	if !dot {
		exp -= v.desc.digits
	}
	if !hasExp {
		exp -= v.desc.scale
	}
	if intPart == "" {
		intPart = "0"
	}
	x, err := strconv.ParseFloat(sign+intPart+"."+fracPart+"e"+strconv.Itoa(exp), 64)
	if err != nil && !math.IsInf(x, 0) {
		return bad()
	}
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return 0, fmt.Errorf("non-finite value %q", truncate(v.text))
	}
	return x, nil
}
