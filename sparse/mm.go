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

// ErrMatrixMarket is wrapped by every error of ReadMatrixMarket about the
// content of the input (errors of the underlying reader are returned as
// they are).
var ErrMatrixMarket = errors.New("sparse: bad Matrix Market input")

// MatrixMarketError is a Matrix Market input error at a line (1-based; for
// a short file, the line after the last one). It wraps ErrMatrixMarket.
type MatrixMarketError struct {
	Line   int
	Reason string
}

// Error returns "sparse: Matrix Market line N: reason".
func (e *MatrixMarketError) Error() string {
	return fmt.Sprintf("sparse: Matrix Market line %d: %s", e.Line, e.Reason)
}

// Unwrap returns ErrMatrixMarket.
func (e *MatrixMarketError) Unwrap() error { return ErrMatrixMarket }

func mmErr(line int, format string, args ...any) error {
	return &MatrixMarketError{Line: line, Reason: fmt.Sprintf(format, args...)}
}

// maxLine bounds one line of input (a banner, a comment or an entry).
const maxLine = 1 << 20

// cooEntryBytes is the memory of one COO entry (row, column, value).
const cooEntryBytes = 8 + 8 + 8

// ReadMatrixMarket reads a matrix in the Matrix Market exchange format:
//
//   - "coordinate" with field real, integer or pattern (pattern entries
//     read as 1) and symmetry general, symmetric or skew-symmetric (the
//     stored triangle is mirrored: a_ji = a_ij, or −a_ij; a skew-symmetric
//     matrix may not store diagonal entries);
//   - "array" with field real or integer and symmetry general (column-major
//     values; exact zeros are not stored in the result).
//
// Keywords are case-insensitive; comment lines (starting with %) and blank
// lines are skipped anywhere after the banner. Values must be finite.
// Entries of a coordinate file are kept as they come (repeats are summed
// by ToCSR). Every error about the content is a *MatrixMarketError that
// names the line and the reason and wraps ErrMatrixMarket: a bad banner,
// an unsupported format, field or symmetry, a bad size line, an entry line
// with the wrong number of values, an index out of range, an unparsable or
// non-finite number, more or fewer entries than the size line declares.
// A declared entry count whose entries cannot fit in the memory the
// process can have is refused at the size line with an error wrapping
// ErrMemory. The dimensions alone allocate nothing: a matrix that must
// be nonsingular should pass (*COO).CheckSolvable before ToCSR, which
// allocates O(N + M).
func ReadMatrixMarket(r io.Reader) (*COO, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), maxLine)
	line := 0
	// next returns the next line that is not blank or a comment.
	next := func() (string, bool, error) {
		for sc.Scan() {
			line++
			s := strings.TrimSpace(sc.Text())
			if s == "" || s[0] == '%' {
				continue
			}
			return s, true, nil
		}
		if err := sc.Err(); err != nil {
			if errors.Is(err, bufio.ErrTooLong) {
				return "", false, mmErr(line+1, "line longer than %d bytes", maxLine)
			}
			return "", false, err
		}
		return "", false, nil
	}

	// Banner.
	if !sc.Scan() {
		if err := sc.Err(); err != nil {
			if errors.Is(err, bufio.ErrTooLong) {
				return nil, mmErr(1, "line longer than %d bytes", maxLine)
			}
			return nil, err
		}
		return nil, mmErr(1, "empty input, want a %%%%MatrixMarket banner")
	}
	line = 1
	ban := strings.Fields(sc.Text())
	if len(ban) != 5 || !strings.EqualFold(ban[0], "%%MatrixMarket") {
		return nil, mmErr(1, "bad banner %q, want %%%%MatrixMarket matrix <format> <field> <symmetry>", truncate(sc.Text()))
	}
	object, format, field, symm := strings.ToLower(ban[1]), strings.ToLower(ban[2]), strings.ToLower(ban[3]), strings.ToLower(ban[4])
	if object != "matrix" {
		return nil, mmErr(1, "unsupported object %q, want matrix", truncate(ban[1]))
	}
	switch format {
	case "coordinate", "array":
	default:
		return nil, mmErr(1, "unsupported format %q, want coordinate or array", truncate(ban[2]))
	}
	switch field {
	case "real", "integer":
	case "pattern":
		if format == "array" {
			return nil, mmErr(1, "field pattern is not allowed with format array")
		}
	default:
		return nil, mmErr(1, "unsupported field %q, want real, integer or pattern", truncate(ban[3]))
	}
	switch symm {
	case "general":
	case "symmetric", "skew-symmetric":
		if format == "array" {
			return nil, mmErr(1, "unsupported symmetry %q for format array, want general", truncate(ban[4]))
		}
	default:
		return nil, mmErr(1, "unsupported symmetry %q, want general, symmetric or skew-symmetric", truncate(ban[4]))
	}

	// Size line.
	s, ok, err := next()
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, mmErr(line+1, "missing size line")
	}
	sizes := strings.Fields(s)
	want := 3
	if format == "array" {
		want = 2
	}
	if len(sizes) != want {
		return nil, mmErr(line, "size line has %d values, want %d", len(sizes), want)
	}
	dims := make([]int, want)
	for k, f := range sizes {
		v, err := strconv.ParseInt(f, 10, 64)
		if err != nil || v < 0 || v > maxIndex {
			return nil, mmErr(line, "bad size %q, want an integer in [0, %d]", truncate(f), maxIndex)
		}
		dims[k] = int(v)
	}
	n, m := dims[0], dims[1]
	if symm != "general" && n != m {
		return nil, mmErr(line, "%s matrix must be square, got %d×%d", symm, n, m)
	}
	var count int
	if format == "array" {
		count = n * m // both < 2^31: no overflow in int64
	} else {
		count = dims[2]
		if n == 0 || m == 0 {
			if count != 0 {
				return nil, mmErr(line, "%d entries declared for an empty %d×%d matrix", count, n, m)
			}
		}
	}
	// The entries are stored as they arrive (the COO grows with the input,
	// never with the header), but a declared count whose entries cannot
	// fit in memory is refused here rather than after reading gigabytes.
	stored := count
	if symm != "general" {
		stored = 2 * count // the mirrored triangle
	}
	if err := memguard.Check(fmt.Sprintf("storing the %d declared entries of a %d×%d matrix", count, n, m),
		memguard.Bytes(cooEntryBytes, stored)); err != nil {
		return nil, fmt.Errorf("sparse: Matrix Market line %d: %w", line, err)
	}
	c := NewCOO(n, m, min(count, 1<<16))

	parse := func(f string) (float64, error) {
		if field == "integer" {
			v, err := strconv.ParseInt(f, 10, 64)
			if err != nil {
				return 0, mmErr(line, "unparsable integer %q", truncate(f))
			}
			return float64(v), nil
		}
		v, err := strconv.ParseFloat(f, 64)
		if err != nil {
			return 0, mmErr(line, "unparsable number %q", truncate(f))
		}
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return 0, mmErr(line, "non-finite value %q", truncate(f))
		}
		return v, nil
	}

	read := 0
	for {
		s, ok, err := next()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		if read == count {
			return nil, mmErr(line, "more entries than the %d declared", count)
		}
		f := strings.Fields(s)
		if format == "array" {
			if len(f) != 1 {
				return nil, mmErr(line, "array entry has %d values, want 1", len(f))
			}
			v, err := parse(f[0])
			if err != nil {
				return nil, err
			}
			if v != 0 {
				c.Add(read%n, read/n, v)
			}
			read++
			continue
		}
		want := 3
		if field == "pattern" {
			want = 2
		}
		if len(f) != want {
			return nil, mmErr(line, "%s entry has %d values, want %d", field, len(f), want)
		}
		i, err1 := strconv.ParseInt(f[0], 10, 64)
		j, err2 := strconv.ParseInt(f[1], 10, 64)
		if err1 != nil || err2 != nil {
			return nil, mmErr(line, "unparsable index in %q", truncate(s))
		}
		if i < 1 || i > int64(n) || j < 1 || j > int64(m) {
			return nil, mmErr(line, "index (%d, %d) out of range for a %d×%d matrix", i, j, n, m)
		}
		v := 1.0
		if field != "pattern" {
			if v, err = parse(f[2]); err != nil {
				return nil, err
			}
		}
		ii, jj := int(i-1), int(j-1)
		c.Add(ii, jj, v)
		if ii != jj {
			switch symm {
			case "symmetric":
				c.Add(jj, ii, v)
			case "skew-symmetric":
				c.Add(jj, ii, -v)
			}
		} else if symm == "skew-symmetric" {
			return nil, mmErr(line, "diagonal entry (%d, %d) in a skew-symmetric matrix", i, j)
		}
		read++
	}
	if read != count {
		return nil, mmErr(line+1, "found %d entries at end of input, %d declared", read, count)
	}
	return c, nil
}

// truncate shortens s for an error message.
func truncate(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// WriteMatrixMarket writes c as "coordinate real general", one line per
// stored entry in the order stored, with 1-based indices and values in the
// shortest form that reads back exactly. It fails with ErrShape when
// c.Check does, and with the writer's error.
func WriteMatrixMarket(w io.Writer, c *COO) error {
	return writeMatrixMarket(w, c, nil)
}

// writeMatrixMarket writes c with extra comment lines after the banner.
func writeMatrixMarket(w io.Writer, c *COO, comments []string) error {
	if err := c.Check(); err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, "%%MatrixMarket matrix coordinate real general")
	for _, s := range comments {
		fmt.Fprintf(bw, "%% %s\n", s)
	}
	fmt.Fprintf(bw, "%d %d %d\n", c.N, c.M, c.NNZ())
	buf := make([]byte, 0, 64)
	for e, v := range c.Val {
		buf = strconv.AppendInt(buf[:0], int64(c.Row[e]+1), 10)
		buf = append(buf, ' ')
		buf = strconv.AppendInt(buf, int64(c.Col[e]+1), 10)
		buf = append(buf, ' ')
		buf = strconv.AppendFloat(buf, v, 'g', -1, 64)
		buf = append(buf, '\n')
		if _, err := bw.Write(buf); err != nil {
			return err
		}
	}
	return bw.Flush()
}
