package npy

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/bandsolve/bandsolve/internal/atomicfile"
	"github.com/bandsolve/bandsolve/internal/memguard"
)

// Sentinel errors. Errors returned by this package wrap one of them where
// applicable; test with errors.Is.
var (
	// ErrNotNPY means the input does not start with the .npy magic string.
	ErrNotNPY = errors.New("npy: not a .npy file")
	// ErrHeader means the version or the header dict is malformed.
	ErrHeader = errors.New("npy: malformed header")
	// ErrDType means the file's dtype is not supported, or is not the one
	// requested.
	ErrDType = errors.New("npy: unsupported dtype")
	// ErrTruncated means the input ends before the header or the data
	// that the header announces is complete.
	ErrTruncated = errors.New("npy: truncated file")
	// ErrMemory means the array the header declares does not fit in the
	// memory the process can have (physical memory, cgroup limit,
	// RLIMIT_AS). It is the same value in every package of the module
	// that checks memory before allocating (tridiag, banded, sparse,
	// spike).
	ErrMemory = memguard.ErrTooLarge
)

// Float is the set of real element types that Read and Write handle.
type Float interface {
	float32 | float64
}

// Complex is the set of complex element types: complex64 (dtype c8) and
// complex128 (dtype c16).
type Complex interface {
	complex64 | complex128
}

// Element is every element type that Read and Write handle: Float or
// Complex.
type Element interface {
	float32 | float64 | complex64 | complex128
}

// Array is a decoded .npy array of float32, float64, complex64 or
// complex128 values in C (row-major) order. len(Data) is the product of
// Shape; a scalar has an empty Shape and one element.
type Array[T Element] struct {
	Shape []int
	Data  []T
}

// chunkBytes is the size of the buffer data is read and written through.
// It is a multiple of every element size.
const chunkBytes = 64 << 10

// Read decodes a .npy array from r. The file's dtype must be '<f4' or
// '>f4' for T = float32, '<f8' or '>f8' for T = float64, '<c8' or '>c8'
// for T = complex64 and '<c16' or '>c16' for T = complex128; otherwise the
// error wraps ErrDType and names both the file's dtype and the wanted
// one (use ReadAny to convert). Arrays in Fortran order are transposed
// into C order. Read consumes exactly the preamble and the data from r.
func Read[T Element](r io.Reader) (Array[T], error) {
	h, err := readPreamble(r)
	if err != nil {
		return Array[T]{}, err
	}
	name, code := floatName[T]()
	if h.dt.kind != code[0] || h.dt.size != int(sizeOfFloat(*new(T))) {
		return Array[T]{}, fmt.Errorf("%w: file has dtype %q but %s was requested (want '<%s' or '>%s'; ReadAny converts)",
			ErrDType, h.dt.descr, name, code, code)
	}
	data, err := readData[T](r, h, remaining(r))
	if err != nil {
		return Array[T]{}, err
	}
	return Array[T]{Shape: h.shape, Data: data}, nil
}

// ReadFile reads the .npy file at path with Read.
func ReadFile[T Element](path string) (Array[T], error) {
	f, err := os.Open(path)
	if err != nil {
		return Array[T]{}, err
	}
	defer f.Close()
	a, err := Read[T](f)
	if err != nil {
		return Array[T]{}, fmt.Errorf("%s: %w", path, err)
	}
	return a, nil
}

// ReadAny decodes a .npy array of any supported dtype from r and converts
// its values to float64: little- or big-endian f4 and f8, signed integers
// i1, i2, i4, i8 and unsigned integers u1, u2, u4, u8. It returns the
// shape, the data in C order and the file's dtype descriptor, such as
// "<i8". Integers beyond ±2^53 are rounded to the nearest float64. If
// the header was valid but the data is not, dtype is still returned
// alongside the error.
func ReadAny(r io.Reader) (shape []int, f64 []float64, dtype string, err error) {
	return ReadAs[float64](r)
}

// ReadAs is ReadAny converting to T: float64 holds every f4 and f8 value
// exactly, float32 rounds f8 values (and integers beyond ±2^24) to
// nearest. Reading a float32 file as float32 needs half the memory of
// ReadAny. A complex T takes every dtype, real values getting a zero
// imaginary part (complex64 rounds as float32 does); a complex file (c8,
// c16) read as a real T is an error wrapping ErrDType.
func ReadAs[T Element](r io.Reader) (shape []int, data []T, dtype string, err error) {
	h, err := readPreamble(r)
	if err != nil {
		return nil, nil, "", err
	}
	data, err = readData[T](r, h, remaining(r))
	if err != nil {
		return nil, nil, h.dt.descr, err
	}
	return h.shape, data, h.dt.descr, nil
}

// Header is what the preamble of a .npy file declares.
type Header struct {
	Shape   []int  // dimensions; empty for a scalar
	DType   string // the descriptor, such as "<f4" or "|u1"
	Fortran bool   // data in Fortran (column-major) order
}

// Count is the number of elements, the product of Shape.
func (h Header) Count() int {
	n, _ := elementCount(h.Shape) // validated by ReadHeader
	return n
}

// IsComplex reports whether the dtype is complex ('c8' or 'c16', either
// byte order).
func (h Header) IsComplex() bool {
	d, err := parseDescr(h.DType)
	return err == nil && d.kind == 'c'
}

// IsFloat32 reports whether the dtype is a 4-byte float ('<f4' or '>f4').
func (h Header) IsFloat32() bool {
	d, err := parseDescr(h.DType)
	return err == nil && d.kind == 'f' && d.size == 4
}

// ReadHeader reads and validates the preamble of a .npy file (magic,
// version, header dict and dtype) without reading the data, so that a
// caller can choose the element type or check sizes first.
func ReadHeader(r io.Reader) (Header, error) {
	h, err := readPreamble(r)
	if err != nil {
		return Header{}, err
	}
	return Header{Shape: h.shape, DType: h.dt.descr, Fortran: h.fortran}, nil
}

// ReadFileHeader reads the header of the .npy file at path with
// ReadHeader and checks that the file holds the data it declares; errors
// name the path.
func ReadFileHeader(path string) (Header, error) {
	f, err := os.Open(path)
	if err != nil {
		return Header{}, err
	}
	defer f.Close()
	h, err := readPreamble(f)
	if err != nil {
		return Header{}, fmt.Errorf("%s: %w", path, err)
	}
	if avail := remaining(f); avail >= 0 && avail < h.nbytes {
		return Header{}, fmt.Errorf("%s: %w", path, truncated(h, avail))
	}
	return Header{Shape: h.shape, DType: h.dt.descr, Fortran: h.fortran}, nil
}

func floatTypeName[T Element](T) string {
	name, _ := floatName[T]()
	return name
}

// sizeOfFloat is the bytes of one element of type T.
func sizeOfFloat[T Element](T) uintptr {
	switch any(*new(T)).(type) {
	case float32:
		return 4
	case complex128:
		return 16
	}
	return 8
}

// floatName returns the Go name and the dtype code of T.
func floatName[T Element]() (name, code string) {
	switch any(*new(T)).(type) {
	case float32:
		return "float32", "f4"
	case complex64:
		return "complex64", "c8"
	case complex128:
		return "complex128", "c16"
	}
	return "float64", "f8"
}

// remaining returns how many unread bytes r holds, or -1 if that is not
// known. It is only used as a hint to fail early and to size allocations.
func remaining(r io.Reader) int64 {
	switch r := r.(type) {
	case *bytes.Reader:
		return int64(r.Len())
	case *bytes.Buffer:
		return int64(r.Len())
	case *strings.Reader:
		return int64(r.Len())
	case *os.File:
		fi, err := r.Stat()
		if err != nil || !fi.Mode().IsRegular() {
			return -1
		}
		pos, err := r.Seek(0, io.SeekCurrent)
		if err != nil || pos > fi.Size() {
			return -1
		}
		return fi.Size() - pos
	}
	return -1
}

// readPreamble reads and validates the magic string, version, header
// length and header.
func readPreamble(r io.Reader) (header, error) {
	var pre [8]byte
	n, err := io.ReadFull(r, pre[:])
	switch {
	case n == 0 && err == io.EOF:
		return header{}, fmt.Errorf("%w: input is empty", ErrNotNPY)
	case err != nil && err != io.ErrUnexpectedEOF:
		return header{}, fmt.Errorf("npy: reading preamble: %w", err)
	}
	m := min(n, len(magic))
	if string(pre[:m]) != magic[:m] {
		return header{}, fmt.Errorf("%w: bad magic string %q, want %q", ErrNotNPY, pre[:m], magic)
	}
	if n < len(pre) {
		return header{}, fmt.Errorf("%w: input ends inside the preamble after %d bytes", ErrTruncated, n)
	}
	major, minor := pre[6], pre[7]
	var lenSize int
	switch {
	case major == 1 && minor == 0:
		lenSize = 2
	case (major == 2 || major == 3) && minor == 0:
		lenSize = 4
	default:
		return header{}, fmt.Errorf("%w: unsupported format version %d.%d (supported are 1.0, 2.0 and 3.0)", ErrHeader, major, minor)
	}
	var lb [4]byte
	if n, err := io.ReadFull(r, lb[:lenSize]); err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return header{}, fmt.Errorf("%w: input ends inside the header length after %d of %d bytes", ErrTruncated, n, lenSize)
		}
		return header{}, fmt.Errorf("npy: reading header length: %w", err)
	}
	var hlen uint64
	if lenSize == 2 {
		hlen = uint64(binary.LittleEndian.Uint16(lb[:]))
	} else {
		hlen = uint64(binary.LittleEndian.Uint32(lb[:]))
	}
	if hlen > maxHeaderLen {
		return header{}, fmt.Errorf("%w: header length %d exceeds the limit of %d bytes", ErrHeader, hlen, maxHeaderLen)
	}
	// Grow the buffer only as header bytes actually arrive.
	var buf bytes.Buffer
	got, err := io.CopyN(&buf, r, int64(hlen))
	if err != nil {
		if err == io.EOF {
			return header{}, fmt.Errorf("%w: input ends inside the header: expected %d header bytes, got %d", ErrTruncated, hlen, got)
		}
		return header{}, fmt.Errorf("npy: reading header: %w", err)
	}
	text := buf.Bytes()
	if major == 3 && !utf8.Valid(text) {
		return header{}, fmt.Errorf("%w: version 3.0 header is not valid UTF-8", ErrHeader)
	}
	h, err := decodeHeader(text)
	if err != nil {
		return header{}, err
	}
	h.major = int(major)
	return h, nil
}

// readData reads the h.nbytes data bytes announced by h from r, decodes
// them into T and returns them in C order. avail is the number of bytes
// known to remain in r, or -1 if unknown. A declared size beyond the
// input (when its length is known) or beyond the memory the process can
// have is refused before anything is allocated; otherwise memory grows
// in proportion to what is actually read.
func readData[T Element](r io.Reader, h header, avail int64) ([]T, error) {
	if avail >= 0 && avail < h.nbytes {
		return nil, truncated(h, avail)
	}
	var zero T
	if _, code := floatName[T](); h.dt.kind == 'c' && code[0] != 'c' {
		return nil, fmt.Errorf("%w: file has complex dtype %q but %s was requested (read it as complex64 or complex128)", ErrDType, h.dt.descr, floatTypeName(zero))
	}
	copies := 1
	if h.fortran {
		copies = 2 // the transposition into C order needs a second array
	}
	if err := memguard.Check(fmt.Sprintf("the %s array of shape %s", floatTypeName(zero), shapeRepr(h.shape)),
		memguard.Bytes(int(sizeOfFloat(zero)), h.count, copies)); err != nil {
		return nil, fmt.Errorf("npy: %w", err)
	}
	capacity := h.count
	if avail < 0 {
		capacity = min(capacity, chunkBytes/h.dt.size)
	}
	data := make([]T, 0, capacity)
	buf := make([]byte, min(int64(chunkBytes), h.nbytes))
	var got int64
	for got < h.nbytes {
		want := min(int64(len(buf)), h.nbytes-got)
		n, err := io.ReadFull(r, buf[:want])
		got += int64(n)
		if err != nil {
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				return nil, truncated(h, got)
			}
			return nil, fmt.Errorf("npy: reading data: %w", err)
		}
		data = decode(data, buf[:n], h.dt)
	}
	if h.fortran {
		data = fortranToC(h.shape, data)
	}
	return data, nil
}

func truncated(h header, got int64) error {
	return fmt.Errorf("%w: shape %s of %s needs %d data bytes, got %d",
		ErrTruncated, shapeRepr(h.shape), h.dt.descr, h.nbytes, got)
}

// decode appends the elements encoded in b (a whole number of elements
// of type dt) to dst, converted to T. A complex dt needs a complex T
// (readData refuses the others).
func decode[T Element](dst []T, b []byte, dt dtype) []T {
	switch d := any(dst).(type) {
	case []float32:
		return any(decodeReal(d, b, dt)).([]T)
	case []float64:
		return any(decodeReal(d, b, dt)).([]T)
	case []complex64:
		return any(decodeComplex(d, b, dt)).([]T)
	case []complex128:
		return any(decodeComplex(d, b, dt)).([]T)
	}
	panic("npy: unknown element type")
}

// decodeComplex is decode for a complex T: pairs of floats for a complex
// dt, real values with a zero imaginary part for the others.
func decodeComplex[T Complex](dst []T, b []byte, dt dtype) []T {
	bo := dt.order
	n := len(b) / dt.size
	switch {
	case dt.kind == 'c' && dt.size == 8:
		for i := range n {
			re, im := math.Float32frombits(bo.Uint32(b[8*i:])), math.Float32frombits(bo.Uint32(b[8*i+4:]))
			dst = append(dst, T(complex(re, im)))
		}
	case dt.kind == 'c' && dt.size == 16:
		for i := range n {
			re, im := math.Float64frombits(bo.Uint64(b[16*i:])), math.Float64frombits(bo.Uint64(b[16*i+8:]))
			dst = append(dst, T(complex(re, im)))
		}
	default:
		_, f32 := any(*new(T)).(complex64)
		for _, v := range decodeReal(make([]float64, 0, n), b, dt) {
			if f32 {
				dst = append(dst, T(complex(float32(v), 0)))
			} else {
				dst = append(dst, T(complex(v, 0)))
			}
		}
	}
	return dst
}

// decodeReal is decode for a real T and a real dt.
func decodeReal[T Float](dst []T, b []byte, dt dtype) []T {
	bo := dt.order
	n := len(b) / dt.size
	switch {
	case dt.kind == 'f' && dt.size == 4:
		for i := range n {
			dst = append(dst, T(math.Float32frombits(bo.Uint32(b[4*i:]))))
		}
	case dt.kind == 'f' && dt.size == 8:
		for i := range n {
			dst = append(dst, T(math.Float64frombits(bo.Uint64(b[8*i:]))))
		}
	case dt.kind == 'i' && dt.size == 1:
		for i := range n {
			dst = append(dst, T(int8(b[i])))
		}
	case dt.kind == 'i' && dt.size == 2:
		for i := range n {
			dst = append(dst, T(int16(bo.Uint16(b[2*i:]))))
		}
	case dt.kind == 'i' && dt.size == 4:
		for i := range n {
			dst = append(dst, T(int32(bo.Uint32(b[4*i:]))))
		}
	case dt.kind == 'i' && dt.size == 8:
		for i := range n {
			dst = append(dst, T(int64(bo.Uint64(b[8*i:]))))
		}
	case dt.kind == 'u' && dt.size == 1:
		for i := range n {
			dst = append(dst, T(b[i]))
		}
	case dt.kind == 'u' && dt.size == 2:
		for i := range n {
			dst = append(dst, T(bo.Uint16(b[2*i:])))
		}
	case dt.kind == 'u' && dt.size == 4:
		for i := range n {
			dst = append(dst, T(bo.Uint32(b[4*i:])))
		}
	case dt.kind == 'u' && dt.size == 8:
		for i := range n {
			dst = append(dst, T(bo.Uint64(b[8*i:])))
		}
	default:
		panic("npy: decode called with unsupported dtype " + dt.descr)
	}
	return dst
}

// fortranToC reorders src, the elements of an array of the given shape in
// Fortran (column-major) order, into C (row-major) order.
func fortranToC[T any](shape []int, src []T) []T {
	rank := len(shape)
	if rank < 2 || len(src) == 0 {
		return src
	}
	// cstride[k] is the distance in C order between neighbours along k.
	cstride := make([]int, rank)
	s := 1
	for k := rank - 1; k >= 0; k-- {
		cstride[k] = s
		s *= shape[k]
	}
	dst := make([]T, len(src))
	idx := make([]int, rank)
	off := 0
	// Walk src in Fortran order (axis 0 fastest), tracking the C offset.
	for _, v := range src {
		dst[off] = v
		for k := 0; k < rank; k++ {
			idx[k]++
			off += cstride[k]
			if idx[k] < shape[k] {
				break
			}
			off -= idx[k] * cstride[k]
			idx[k] = 0
		}
	}
	return dst
}

// Write encodes data, an array of the given shape in C (row-major) order,
// to w in .npy format version 1.0 with dtype '<f4', '<f8', '<c8' or
// '<c16' (by T) and
// fortran_order False, exactly as numpy.save does. A nil or empty shape
// denotes a scalar and needs exactly one element. len(data) must equal
// the product of shape.
func Write[T Element](w io.Writer, shape []int, data []T) error {
	for i, d := range shape {
		if d < 0 {
			return fmt.Errorf("npy: shape %v has negative dimension %d at index %d", shape, d, i)
		}
	}
	count, ok := elementCount(shape)
	if !ok {
		return fmt.Errorf("npy: shape %v has too many elements", shape)
	}
	if count != len(data) {
		return fmt.Errorf("npy: shape %v needs %d elements, data has %d", shape, count, len(data))
	}
	_, code := floatName[T]()
	if _, err := w.Write(formatPreamble("<"+code, shape)); err != nil {
		return fmt.Errorf("npy: writing header: %w", err)
	}
	size := int(sizeOfFloat(*new(T)))
	buf := make([]byte, 0, min(chunkBytes, len(data)*size))
	for len(data) > 0 {
		n := min(len(data), chunkBytes/size)
		buf = appendLE(buf[:0], data[:n])
		if _, err := w.Write(buf); err != nil {
			return fmt.Errorf("npy: writing data: %w", err)
		}
		data = data[n:]
	}
	return nil
}

// appendLE appends the little-endian encoding of data to buf: a complex
// value as its real part, then its imaginary part.
func appendLE[T Element](buf []byte, data []T) []byte {
	le := binary.LittleEndian
	switch d := any(data).(type) {
	case []float32:
		for _, v := range d {
			buf = le.AppendUint32(buf, math.Float32bits(v))
		}
	case []float64:
		for _, v := range d {
			buf = le.AppendUint64(buf, math.Float64bits(v))
		}
	case []complex64:
		for _, v := range d {
			buf = le.AppendUint32(buf, math.Float32bits(real(v)))
			buf = le.AppendUint32(buf, math.Float32bits(imag(v)))
		}
	case []complex128:
		for _, v := range d {
			buf = le.AppendUint64(buf, math.Float64bits(real(v)))
			buf = le.AppendUint64(buf, math.Float64bits(imag(v)))
		}
	}
	return buf
}

// WriteFile writes the array to the file at path with Write, atomically:
// the data goes to a temporary file in the same directory, is flushed to
// disk and renamed over path only when the whole write succeeded. If
// anything fails (a full disk, a bad shape) the temporary file is removed
// and a file already at path is left unchanged.
func WriteFile[T Element](path string, shape []int, data []T) error {
	return atomicfile.WriteFile(path, func(w io.Writer) error { return Write(w, shape, data) })
}
