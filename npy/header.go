package npy

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// This file holds the header dict parser, the dtype descriptor parser and
// the header formatter used by the writer.

// pyKind is the type of a parsed Python literal.
type pyKind int

const (
	pyStr pyKind = iota
	pyInt
	pyBool
	pyNone
	pyTuple
	pyList
)

func (k pyKind) String() string {
	switch k {
	case pyStr:
		return "string"
	case pyInt:
		return "integer"
	case pyBool:
		return "bool"
	case pyNone:
		return "None"
	case pyTuple:
		return "tuple"
	case pyList:
		return "list"
	}
	return "unknown"
}

// pyValue is a parsed Python literal.
type pyValue struct {
	kind  pyKind
	str   string    // pyStr
	num   int64     // pyInt
	bool  bool      // pyBool
	items []pyValue // pyTuple, pyList
}

// pyEntry is one key: value pair of the header dict.
type pyEntry struct {
	key string
	val pyValue
	pos int // byte offset of the key, for error messages
}

// maxNesting bounds the nesting depth of tuples and lists in a header.
const maxNesting = 16

// parser is a recursive-descent parser for the Python dict literal of a
// .npy header. It accepts only the literal forms NumPy can write.
type parser struct {
	s     []byte
	pos   int
	depth int
}

func (p *parser) errorf(format string, args ...any) error {
	return fmt.Errorf("%w: %s (at byte %d of header)", ErrHeader, fmt.Sprintf(format, args...), p.pos)
}

func (p *parser) eof() bool { return p.pos >= len(p.s) }

func (p *parser) skipSpace() {
	for p.pos < len(p.s) {
		switch p.s[p.pos] {
		case ' ', '\t', '\n', '\r', '\f', '\v':
			p.pos++
		default:
			return
		}
	}
}

// describe names the byte at the current position for error messages.
func (p *parser) describe() string {
	if p.eof() {
		return "end of header"
	}
	return strconv.QuoteRune(rune(p.s[p.pos]))
}

// parseDict parses the whole header: a dict literal followed only by
// white space.
func (p *parser) parseDict() ([]pyEntry, error) {
	p.skipSpace()
	if p.eof() || p.s[p.pos] != '{' {
		return nil, p.errorf("expected '{' to start the header dict, found %s", p.describe())
	}
	p.pos++
	var entries []pyEntry
	for {
		p.skipSpace()
		if p.eof() {
			return nil, p.errorf("unterminated dict: missing '}'")
		}
		if p.s[p.pos] == '}' {
			p.pos++
			break
		}
		keyPos := p.pos
		key, err := p.parseValue()
		if err != nil {
			return nil, err
		}
		if key.kind != pyStr {
			p.pos = keyPos
			return nil, p.errorf("dict key must be a string, found a value of type %s", key.kind)
		}
		p.skipSpace()
		if p.eof() || p.s[p.pos] != ':' {
			return nil, p.errorf("expected ':' after key %q, found %s", key.str, p.describe())
		}
		p.pos++
		val, err := p.parseValue()
		if err != nil {
			return nil, err
		}
		entries = append(entries, pyEntry{key: key.str, val: val, pos: keyPos})
		p.skipSpace()
		if p.eof() {
			return nil, p.errorf("unterminated dict: missing '}'")
		}
		switch p.s[p.pos] {
		case ',':
			p.pos++
		case '}':
			// handled at the top of the loop
		default:
			return nil, p.errorf("expected ',' or '}' after value of %q, found %s", key.str, p.describe())
		}
	}
	p.skipSpace()
	if !p.eof() {
		return nil, p.errorf("unexpected %s after the closing '}'", p.describe())
	}
	return entries, nil
}

// parseValue parses one literal, skipping leading white space.
func (p *parser) parseValue() (pyValue, error) {
	p.skipSpace()
	if p.eof() {
		return pyValue{}, p.errorf("unexpected end of header, expected a value")
	}
	c := p.s[p.pos]
	switch {
	case c == '\'' || c == '"':
		s, err := p.parseString()
		return pyValue{kind: pyStr, str: s}, err
	case c == '(':
		return p.parseSequence('(', ')')
	case c == '[':
		return p.parseSequence('[', ']')
	case c == '-' || isDigit(c):
		n, err := p.parseInt()
		return pyValue{kind: pyInt, num: n}, err
	case isIdentStart(c):
		start := p.pos
		for p.pos < len(p.s) && isIdentChar(p.s[p.pos]) {
			p.pos++
		}
		switch word := string(p.s[start:p.pos]); word {
		case "True":
			return pyValue{kind: pyBool, bool: true}, nil
		case "False":
			return pyValue{kind: pyBool, bool: false}, nil
		case "None":
			return pyValue{kind: pyNone}, nil
		default:
			p.pos = start
			return pyValue{}, p.errorf("unexpected name %q, expected a literal", word)
		}
	default:
		return pyValue{}, p.errorf("unexpected %s, expected a value", p.describe())
	}
}

// parseString parses a quoted string. Only the escapes \\, \' and \" are
// understood; NumPy never writes others.
func (p *parser) parseString() (string, error) {
	start := p.pos
	quote := p.s[p.pos]
	p.pos++
	var b strings.Builder
	for {
		if p.eof() {
			p.pos = start
			return "", p.errorf("unterminated string")
		}
		c := p.s[p.pos]
		switch c {
		case quote:
			p.pos++
			return b.String(), nil
		case '\n', '\r':
			p.pos = start
			return "", p.errorf("unterminated string")
		case '\\':
			if p.pos+1 >= len(p.s) {
				p.pos = start
				return "", p.errorf("unterminated string")
			}
			e := p.s[p.pos+1]
			if e != '\\' && e != '\'' && e != '"' {
				return "", p.errorf("unsupported escape sequence \\%c in string", e)
			}
			b.WriteByte(e)
			p.pos += 2
		default:
			b.WriteByte(c)
			p.pos++
		}
	}
}

// parseInt parses an optionally negative decimal integer, with the
// optional 'L' suffix of Python 2 longs that old NumPy versions wrote.
func (p *parser) parseInt() (int64, error) {
	start := p.pos
	neg := false
	if p.s[p.pos] == '-' {
		neg = true
		p.pos++
		p.skipSpace()
	}
	digits := p.pos
	for p.pos < len(p.s) && isDigit(p.s[p.pos]) {
		p.pos++
	}
	text := string(p.s[digits:p.pos])
	if text == "" {
		return 0, p.errorf("expected digits after '-', found %s", p.describe())
	}
	if len(text) > 1 && text[0] == '0' {
		p.pos = start
		return 0, p.errorf("integer %q has a leading zero", text)
	}
	if p.pos < len(p.s) && (p.s[p.pos] == 'L' || p.s[p.pos] == 'l') {
		p.pos++
	}
	if p.pos < len(p.s) && isIdentChar(p.s[p.pos]) {
		return 0, p.errorf("unexpected %s in integer", p.describe())
	}
	u, err := strconv.ParseUint(text, 10, 63)
	if err != nil {
		p.pos = start
		return 0, p.errorf("integer %s is too large", text)
	}
	n := int64(u)
	if neg {
		n = -n
	}
	return n, nil
}

// parseSequence parses a tuple or a list. A parenthesised single value
// without a comma, such as (3), is that value and not a tuple, as in
// Python.
func (p *parser) parseSequence(open, close byte) (pyValue, error) {
	if p.depth >= maxNesting {
		return pyValue{}, p.errorf("values nested more than %d deep", maxNesting)
	}
	p.depth++
	defer func() { p.depth-- }()

	kind := pyList
	if open == '(' {
		kind = pyTuple
	}
	p.pos++ // the opening bracket
	v := pyValue{kind: kind, items: []pyValue{}}
	sawComma := false
	for {
		p.skipSpace()
		if p.eof() {
			return pyValue{}, p.errorf("unterminated %s: missing '%c'", kind, close)
		}
		if p.s[p.pos] == close {
			p.pos++
			break
		}
		item, err := p.parseValue()
		if err != nil {
			return pyValue{}, err
		}
		v.items = append(v.items, item)
		p.skipSpace()
		if p.eof() {
			return pyValue{}, p.errorf("unterminated %s: missing '%c'", kind, close)
		}
		switch p.s[p.pos] {
		case ',':
			p.pos++
			sawComma = true
		case close:
			// handled at the top of the loop
		default:
			return pyValue{}, p.errorf("expected ',' or '%c' in %s, found %s", close, kind, p.describe())
		}
	}
	if kind == pyTuple && len(v.items) == 1 && !sawComma {
		return v.items[0], nil
	}
	return v, nil
}

func isDigit(c byte) bool      { return '0' <= c && c <= '9' }
func isIdentStart(c byte) bool { return c == '_' || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') }
func isIdentChar(c byte) bool  { return isIdentStart(c) || isDigit(c) }

// dtype is a supported element type of a .npy file.
type dtype struct {
	descr string           // as written in the header, e.g. "<f8"
	order binary.ByteOrder // nil only for one-byte types
	kind  byte             // 'f', 'c', 'i' or 'u'
	size  int              // bytes per element: 1, 2, 4, 8 or 16
}

// parseDescr parses a dtype descriptor such as '<f8'.
func parseDescr(s string) (dtype, error) {
	unsupported := func(why string) (dtype, error) {
		return dtype{}, fmt.Errorf("%w: %q: %s", ErrDType, s, why)
	}
	if len(s) < 2 {
		return unsupported("not a simple numeric dtype")
	}
	d := dtype{descr: s}
	switch s[0] {
	case '<':
		d.order = binary.LittleEndian
	case '>':
		d.order = binary.BigEndian
	case '|':
		// only meaningful for one-byte types, checked below
	case '=':
		return unsupported("native byte order '=' is ambiguous in a file")
	default:
		return unsupported("missing byte-order character '<', '>' or '|'")
	}
	const supported = "supported are f4, f8, c8, c16, i1, i2, i4, i8, u1, u2, u4 and u8"
	d.kind = s[1]
	switch s[2:] {
	case "1":
		d.size = 1
	case "2":
		d.size = 2
	case "4":
		d.size = 4
	case "8":
		d.size = 8
	case "16":
		d.size = 16
	default:
		return unsupported(supported)
	}
	switch d.kind {
	case 'f':
		if d.size != 4 && d.size != 8 {
			return unsupported("only 4- and 8-byte floats are supported")
		}
	case 'c':
		if d.size != 8 && d.size != 16 {
			return unsupported("only 8- and 16-byte complex numbers are supported")
		}
	case 'i', 'u':
		if d.size > 8 {
			return unsupported(supported)
		}
	default:
		return unsupported(supported)
	}
	if d.order == nil && d.size != 1 {
		return unsupported("multi-byte types need byte order '<' or '>'")
	}
	if d.order == nil {
		d.order = binary.LittleEndian // irrelevant for one byte
	}
	return d, nil
}

// header is the decoded content of a .npy header.
type header struct {
	major   int
	dt      dtype
	fortran bool
	shape   []int
	count   int   // number of elements
	nbytes  int64 // bytes of data
}

// decodeHeader parses and validates the header dict text.
func decodeHeader(text []byte) (header, error) {
	p := &parser{s: text}
	entries, err := p.parseDict()
	if err != nil {
		return header{}, err
	}
	var descr, fortran, shape *pyValue
	for i := range entries {
		e := &entries[i]
		var slot **pyValue
		switch e.key {
		case "descr":
			slot = &descr
		case "fortran_order":
			slot = &fortran
		case "shape":
			slot = &shape
		default:
			return header{}, fmt.Errorf("%w: unexpected key %q (allowed are 'descr', 'fortran_order' and 'shape')", ErrHeader, e.key)
		}
		if *slot != nil {
			return header{}, fmt.Errorf("%w: duplicate key %q", ErrHeader, e.key)
		}
		*slot = &e.val
	}
	var missing []string
	if descr == nil {
		missing = append(missing, "'descr'")
	}
	if fortran == nil {
		missing = append(missing, "'fortran_order'")
	}
	if shape == nil {
		missing = append(missing, "'shape'")
	}
	if len(missing) > 0 {
		return header{}, fmt.Errorf("%w: missing key %s", ErrHeader, strings.Join(missing, ", "))
	}

	var h header
	if fortran.kind != pyBool {
		return header{}, fmt.Errorf("%w: 'fortran_order' must be True or False, found a value of type %s", ErrHeader, fortran.kind)
	}
	h.fortran = fortran.bool

	if shape.kind != pyTuple {
		return header{}, fmt.Errorf("%w: 'shape' must be a tuple, found a value of type %s", ErrHeader, shape.kind)
	}
	h.shape = make([]int, len(shape.items))
	for i, it := range shape.items {
		if it.kind != pyInt {
			return header{}, fmt.Errorf("%w: 'shape' element %d has type %s, want integer", ErrHeader, i, it.kind)
		}
		if it.num < 0 {
			return header{}, fmt.Errorf("%w: 'shape' element %d is negative (%d)", ErrHeader, i, it.num)
		}
		if uint64(it.num) > uint64(math.MaxInt) {
			return header{}, fmt.Errorf("%w: 'shape' element %d (%d) is too large", ErrHeader, i, it.num)
		}
		h.shape[i] = int(it.num)
	}

	switch descr.kind {
	case pyStr:
	case pyList:
		return header{}, fmt.Errorf("%w: structured dtypes are not supported", ErrDType)
	default:
		return header{}, fmt.Errorf("%w: 'descr' must be a string, found a value of type %s", ErrHeader, descr.kind)
	}
	if h.dt, err = parseDescr(descr.str); err != nil {
		return header{}, err
	}

	count, ok := elementCount(h.shape)
	if !ok || int64(count) > math.MaxInt64/int64(h.dt.size) {
		return header{}, fmt.Errorf("%w: shape %s has too many elements", ErrHeader, shapeRepr(h.shape))
	}
	h.count = count
	h.nbytes = int64(count) * int64(h.dt.size)
	return h, nil
}

// elementCount returns the product of the non-negative dimensions, and
// false if it overflows an int.
func elementCount(shape []int) (int, bool) {
	for _, d := range shape {
		if d == 0 {
			return 0, true
		}
	}
	n := 1
	for _, d := range shape {
		if n > math.MaxInt/d {
			return 0, false
		}
		n *= d
	}
	return n, true
}

// shapeRepr formats a shape the way Python formats a tuple: (), (3,),
// (2, 3).
func shapeRepr(shape []int) string {
	var b strings.Builder
	b.WriteByte('(')
	for i, d := range shape {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(d))
	}
	if len(shape) == 1 {
		b.WriteByte(',')
	}
	b.WriteByte(')')
	return b.String()
}

// Layout constants of the preamble.
const (
	magic        = "\x93NUMPY"
	arrayAlign   = 64 // the preamble is padded to a multiple of this
	growthDigits = 21 // NumPy's spare header room for the growth axis
	maxHeaderLen = 1 << 20
)

// formatPreamble returns the complete preamble (magic, version, header
// length, padded header) that numpy.save writes for an array with the
// given dtype descriptor and shape in C order. It uses version 1.0 unless
// the header does not fit, then 2.0.
func formatPreamble(descr string, shape []int) []byte {
	var b strings.Builder
	b.WriteString("{'descr': '")
	b.WriteString(descr)
	b.WriteString("', 'fortran_order': False, 'shape': ")
	b.WriteString(shapeRepr(shape))
	b.WriteString(", }")
	// NumPy leaves room so that the header can be rewritten in place
	// when the first axis grows.
	if len(shape) > 0 {
		if pad := growthDigits - len(strconv.Itoa(shape[0])); pad > 0 {
			b.WriteString(strings.Repeat(" ", pad))
		}
	}
	text := b.String()

	major, lenSize := byte(1), 2
	hlen := len(text) + 1 // with the final '\n'
	padlen := arrayAlign - (len(magic)+2+lenSize+hlen)%arrayAlign
	if hlen+padlen > math.MaxUint16 {
		major, lenSize = 2, 4
		padlen = arrayAlign - (len(magic)+2+lenSize+hlen)%arrayAlign
	}

	out := make([]byte, 0, len(magic)+2+lenSize+hlen+padlen)
	out = append(out, magic...)
	out = append(out, major, 0)
	if lenSize == 2 {
		out = binary.LittleEndian.AppendUint16(out, uint16(hlen+padlen))
	} else {
		out = binary.LittleEndian.AppendUint32(out, uint32(hlen+padlen))
	}
	out = append(out, text...)
	for range padlen {
		out = append(out, ' ')
	}
	return append(out, '\n')
}
