package npy

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/internal/memguard"
)

// buildNPY assembles a .npy file by hand: magic, version major.0, header
// length (2 bytes for version 1, 4 otherwise), the header text padded
// with spaces and a final '\n' to a multiple of 64 bytes, then data.
func buildNPY(major byte, headerText string, data []byte) []byte {
	lenSize := 4
	if major == 1 {
		lenSize = 2
	}
	hlen := len(headerText) + 1
	pad := (64 - (len(magic)+2+lenSize+hlen)%64) % 64
	text := headerText + strings.Repeat(" ", pad) + "\n"
	var b bytes.Buffer
	b.WriteString(magic)
	b.WriteByte(major)
	b.WriteByte(0)
	if lenSize == 2 {
		binary.Write(&b, binary.LittleEndian, uint16(len(text)))
	} else {
		binary.Write(&b, binary.LittleEndian, uint32(len(text)))
	}
	b.WriteString(text)
	b.Write(data)
	return b.Bytes()
}

// encodeF64 and encodeF32 return the values as bytes of the given order.
func encodeF64(bo binary.AppendByteOrder, vals ...float64) []byte {
	var out []byte
	for _, v := range vals {
		out = bo.AppendUint64(out, math.Float64bits(v))
	}
	return out
}

func encodeF32(bo binary.AppendByteOrder, vals ...float32) []byte {
	var out []byte
	for _, v := range vals {
		out = bo.AppendUint32(out, math.Float32bits(v))
	}
	return out
}

// onlyReader hides the concrete type of r, so that the package cannot
// learn how many bytes remain and must stream.
type onlyReader struct{ r io.Reader }

func (o onlyReader) Read(p []byte) (int, error) { return o.r.Read(p) }

func TestGoldenFloat64(t *testing.T) {
	// The exact bytes of np.save(f, np.array([1.0, 2.0])).
	var want bytes.Buffer
	want.WriteString("\x93NUMPY\x01\x00")
	want.Write([]byte{0x76, 0x00}) // header length 118
	h := "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }"
	want.WriteString(h + strings.Repeat(" ", 117-len(h)) + "\n")
	want.Write([]byte{0, 0, 0, 0, 0, 0, 0xf0, 0x3f}) // 1.0
	want.Write([]byte{0, 0, 0, 0, 0, 0, 0x00, 0x40}) // 2.0
	require.Equal(t, 128+16, want.Len())

	var got bytes.Buffer
	require.NoError(t, Write(&got, []int{2}, []float64{1, 2}))
	assert.Equal(t, want.Bytes(), got.Bytes())

	a, err := Read[float64](bytes.NewReader(want.Bytes()))
	require.NoError(t, err)
	assert.Equal(t, []int{2}, a.Shape)
	assert.Equal(t, []float64{1, 2}, a.Data)
}

func TestGoldenHeaders(t *testing.T) {
	// Header texts as NumPy writes them (before padding), including the
	// 21-digit spare room for the first axis.
	cases := []struct {
		shape []int
		descr string
		want  string
	}{
		{nil, "<f8", "{'descr': '<f8', 'fortran_order': False, 'shape': (), }"},
		{[]int{3, 4}, "<f4", "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }" + strings.Repeat(" ", 20)},
		{[]int{12345, 1, 7}, "<f8", "{'descr': '<f8', 'fortran_order': False, 'shape': (12345, 1, 7), }" + strings.Repeat(" ", 16)},
	}
	for _, c := range cases {
		pre := formatPreamble(c.descr, c.shape)
		text := strings.TrimRight(string(pre[10:]), " \n")
		assert.Equal(t, strings.TrimRight(c.want, " "), text)
		assert.Zero(t, len(pre)%64)
	}
}

func bitsEqual[T Float](t *testing.T, want, got []T) {
	t.Helper()
	require.Len(t, got, len(want))
	for i := range want {
		switch w := any(want[i]).(type) {
		case float32:
			assert.Equal(t, math.Float32bits(w), math.Float32bits(any(got[i]).(float32)), "element %d", i)
		case float64:
			assert.Equal(t, math.Float64bits(w), math.Float64bits(any(got[i]).(float64)), "element %d", i)
		}
	}
}

func testRoundTrip[T Float](t *testing.T) {
	shapes := [][]int{{}, {0}, {1}, {5}, {2, 3}, {3, 0, 2}, {2, 3, 4}, {1, 1, 1, 1}, {4, 1, 3, 2, 2}, {9000}}
	for _, shape := range shapes {
		n, _ := elementCount(shape)
		data := make([]T, n)
		for i := range data {
			data[i] = T(float64(i)*1.25 - 3)
		}
		if n >= 4 {
			data[0] = T(math.NaN())
			data[1] = T(math.Inf(-1))
			data[2] = T(math.Copysign(0, -1))
			data[3] = T(math.Inf(1))
		}
		var buf bytes.Buffer
		require.NoError(t, Write(&buf, shape, data))
		assert.Zero(t, (buf.Len()-n*int(unsafeSize[T]()))%64, "data must start at a multiple of 64")

		for _, r := range []io.Reader{bytes.NewReader(buf.Bytes()), onlyReader{bytes.NewReader(buf.Bytes())}} {
			a, err := Read[T](r)
			require.NoError(t, err, "shape %v", shape)
			assert.Equal(t, shape, a.Shape)
			assert.NotNil(t, a.Shape)
			assert.NotNil(t, a.Data)
			bitsEqual(t, data, a.Data)
		}

		gotShape, f64, descr, err := ReadAny(bytes.NewReader(buf.Bytes()))
		require.NoError(t, err)
		assert.Equal(t, shape, gotShape)
		require.Len(t, f64, n)
		for i := range data {
			w := float64(data[i])
			if math.IsNaN(w) {
				assert.True(t, math.IsNaN(f64[i]))
			} else {
				assert.Equal(t, w, f64[i])
			}
		}
		_, code := floatName[T]()
		assert.Equal(t, "<"+code, descr)
	}
}

func unsafeSize[T Float]() int64 {
	_, code := floatName[T]()
	return int64(code[1] - '0')
}

func TestRoundTripFloat64(t *testing.T) { testRoundTrip[float64](t) }
func TestRoundTripFloat32(t *testing.T) { testRoundTrip[float32](t) }

func TestScalarNilShape(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, Write(&buf, nil, []float64{42}))
	assert.Contains(t, buf.String(), "'shape': (), }")
	a, err := Read[float64](&buf)
	require.NoError(t, err)
	assert.Equal(t, []int{}, a.Shape)
	assert.Equal(t, []float64{42}, a.Data)
}

func TestHeaderPadding(t *testing.T) {
	shapes := [][]int{
		nil, {1}, {2, 3}, {123456789, 0},
		{math.MaxInt32, 0, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16},
	}
	// Shapes of every header length over more than a 64-byte period,
	// including the case where the unpadded preamble is already aligned.
	for i := range 80 {
		shape := make([]int, 0, i)
		for range i / 3 {
			shape = append(shape, 1)
		}
		shapes = append(shapes, append(shape, 0, int(math.Pow10(i%15))))
	}
	for _, shape := range shapes {
		pre := formatPreamble("<f8", shape)
		require.Zero(t, len(pre)%64, "shape %v", shape)
		assert.Equal(t, byte('\n'), pre[len(pre)-1])
		assert.Equal(t, magic+"\x01\x00", string(pre[:8]))
		hlen := int(binary.LittleEndian.Uint16(pre[8:10]))
		assert.Equal(t, len(pre)-10, hlen)
		text := string(pre[10 : len(pre)-1])
		assert.NotContains(t, text, "\n")
		// the padding is spaces only, after the closing brace
		closing := strings.LastIndexByte(text, '}')
		assert.Equal(t, strings.Repeat(" ", len(text)-closing-1), text[closing+1:])
		h, err := decodeHeader(pre[10:])
		require.NoError(t, err)
		assert.Equal(t, len(shape), len(h.shape))
	}
}

func TestHugeHeaderUsesVersion2(t *testing.T) {
	shape := make([]int, 30000) // header > 65535 bytes
	shape[0] = 0
	for i := 1; i < len(shape); i++ {
		shape[i] = 1
	}
	var buf bytes.Buffer
	require.NoError(t, Write(&buf, shape, []float32{}))
	b := buf.Bytes()
	assert.Equal(t, magic+"\x02\x00", string(b[:8]))
	assert.Zero(t, len(b)%64)
	a, err := Read[float32](bytes.NewReader(b))
	require.NoError(t, err)
	assert.Equal(t, shape, a.Shape)
}

func TestFortranOrder2D(t *testing.T) {
	// C-order matrix [[1 2 3] [4 5 6]] stored column by column.
	data := encodeF64(binary.LittleEndian, 1, 4, 2, 5, 3, 6)
	file := buildNPY(1, "{'descr': '<f8', 'fortran_order': True, 'shape': (2, 3), }", data)
	a, err := Read[float64](bytes.NewReader(file))
	require.NoError(t, err)
	assert.Equal(t, []int{2, 3}, a.Shape)
	assert.Equal(t, []float64{1, 2, 3, 4, 5, 6}, a.Data)
}

func TestFortranOrderND(t *testing.T) {
	shape := []int{2, 3, 4, 5}
	// value(i,j,k,l) = 1000i + 100j + 10k + l
	var fdata []float32 // Fortran order: i fastest
	for l := range shape[3] {
		for k := range shape[2] {
			for j := range shape[1] {
				for i := range shape[0] {
					fdata = append(fdata, float32(1000*i+100*j+10*k+l))
				}
			}
		}
	}
	var want []float32 // C order: l fastest
	for i := range shape[0] {
		for j := range shape[1] {
			for k := range shape[2] {
				for l := range shape[3] {
					want = append(want, float32(1000*i+100*j+10*k+l))
				}
			}
		}
	}
	file := buildNPY(1, "{'descr': '>f4', 'fortran_order': True, 'shape': (2, 3, 4, 5), }",
		encodeF32(binary.BigEndian, fdata...))
	a, err := Read[float32](onlyReader{bytes.NewReader(file)})
	require.NoError(t, err)
	assert.Equal(t, shape, a.Shape)
	assert.Equal(t, want, a.Data)

	// ReadAny transposes too.
	_, f64, _, err := ReadAny(bytes.NewReader(file))
	require.NoError(t, err)
	for i := range want {
		assert.Equal(t, float64(want[i]), f64[i])
	}
}

func TestFortranOrderTrivialShapes(t *testing.T) {
	for _, c := range []struct {
		shape string
		n     int
	}{{"()", 1}, {"(4,)", 4}, {"(0, 3)", 0}, {"(1, 4)", 4}, {"(4, 1)", 4}} {
		vals := []float64{7, 8, 9, 10}[:c.n]
		file := buildNPY(1, "{'descr': '<f8', 'fortran_order': True, 'shape': "+c.shape+"}",
			encodeF64(binary.LittleEndian, vals...))
		a, err := Read[float64](bytes.NewReader(file))
		require.NoError(t, err, c.shape)
		assert.Equal(t, vals, a.Data, c.shape)
	}
}

func TestBigEndian(t *testing.T) {
	file := buildNPY(1, "{'descr': '>f8', 'fortran_order': False, 'shape': (3,), }",
		encodeF64(binary.BigEndian, 1.5, -2, math.Inf(1)))
	a, err := Read[float64](bytes.NewReader(file))
	require.NoError(t, err)
	assert.Equal(t, []float64{1.5, -2, math.Inf(1)}, a.Data)

	file = buildNPY(1, "{'descr': '>f4', 'fortran_order': False, 'shape': (2, 1), }",
		encodeF32(binary.BigEndian, 0.25, 3))
	b, err := Read[float32](bytes.NewReader(file))
	require.NoError(t, err)
	assert.Equal(t, []int{2, 1}, b.Shape)
	assert.Equal(t, []float32{0.25, 3}, b.Data)
}

func TestVersions2And3(t *testing.T) {
	data := encodeF64(binary.LittleEndian, 1, 2, 3, 4)
	hdr := "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), }"
	for _, major := range []byte{2, 3} {
		file := buildNPY(major, hdr, data)
		assert.Equal(t, []byte{major, 0}, file[6:8])
		assert.Zero(t, (len(file)-len(data))%64)
		a, err := Read[float64](bytes.NewReader(file))
		require.NoError(t, err, "version %d", major)
		assert.Equal(t, []int{2, 2}, a.Shape)
		assert.Equal(t, []float64{1, 2, 3, 4}, a.Data)
	}

	// A version 2.0 header longer than a uint16 can count.
	long := buildNPY(2, hdr+strings.Repeat(" ", 70000), data)
	assert.Greater(t, binary.LittleEndian.Uint32(long[8:12]), uint32(math.MaxUint16))
	a, err := Read[float64](bytes.NewReader(long))
	require.NoError(t, err)
	assert.Equal(t, []float64{1, 2, 3, 4}, a.Data)

	// Version 3.0 headers must be UTF-8; version 1.0 ones are latin-1.
	bad := buildNPY(3, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), '\xff': 1}", data)
	_, err = Read[float64](bytes.NewReader(bad))
	require.ErrorIs(t, err, ErrHeader)
	assert.Contains(t, err.Error(), "UTF-8")
	latin := buildNPY(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), '\xff': 1}", data)
	_, err = Read[float64](bytes.NewReader(latin))
	require.ErrorIs(t, err, ErrHeader)
	assert.Contains(t, err.Error(), "unexpected key")
}

func TestUnsupportedVersion(t *testing.T) {
	for _, v := range [][2]byte{{0, 0}, {1, 1}, {4, 0}, {2, 5}} {
		file := buildNPY(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (0,), }", nil)
		file[6], file[7] = v[0], v[1]
		_, err := Read[float64](bytes.NewReader(file))
		require.ErrorIs(t, err, ErrHeader, "version %v", v)
		assert.Contains(t, err.Error(), "version")
	}
}

func TestHeaderSyntaxVariants(t *testing.T) {
	data := encodeF64(binary.LittleEndian, 1, 2, 3)
	for _, hdr := range []string{
		"{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }",
		"{'descr': '<f8', 'fortran_order': False, 'shape': (3,)}",
		`{"shape": (3,), "descr": "<f8", "fortran_order": False}`,
		"{'fortran_order':False,'shape':(3,),'descr':'<f8',}",
		"  {\n 'shape' : ( 3 , ) ,\t'fortran_order' : False , 'descr' : '<f8' }",
		"{'descr': '<f8', 'fortran_order': False, 'shape': (3L,), }", // Python 2
		"{'descr': '<f8', 'fortran_order': False, 'shape': (1, 3,), }",
		"{'descr': \"<f8\", 'fortran_order': False, 'shape': (3, 1)}",
	} {
		a, err := Read[float64](bytes.NewReader(buildNPY(1, hdr, data)))
		require.NoError(t, err, hdr)
		assert.Equal(t, []float64{1, 2, 3}, a.Data, hdr)
		n, _ := elementCount(a.Shape)
		assert.Equal(t, 3, n, hdr)
	}
}

func TestBadHeaders(t *testing.T) {
	cases := []struct {
		name   string
		header string
		is     error
		msg    string
	}{
		{"missing shape", "{'descr': '<f8', 'fortran_order': False}", ErrHeader, "missing key 'shape'"},
		{"missing all", "{}", ErrHeader, "missing key 'descr', 'fortran_order', 'shape'"},
		{"missing descr", "{'fortran_order': False, 'shape': (2,)}", ErrHeader, "missing key 'descr'"},
		{"unknown key", "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), 'extra': 1}", ErrHeader, "unexpected key \"extra\""},
		{"duplicate key", "{'descr': '<f8', 'descr': '<f8', 'fortran_order': False, 'shape': (2,)}", ErrHeader, "duplicate key"},
		{"unterminated dict", "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), ", ErrHeader, "unterminated dict"},
		{"unterminated dict 2", "{'descr': '<f8', 'fortran_order': False, 'shape': (2,)", ErrHeader, "unterminated dict"},
		{"unterminated string", "{'descr: '<f8'}", ErrHeader, ""},
		{"unterminated string 2", "{'descr': '<f8", ErrHeader, "unterminated string"},
		{"unterminated tuple", "{'descr': '<f8', 'fortran_order': False, 'shape': (2, ", ErrHeader, "unterminated tuple"},
		{"not a dict", "['descr', '<f8']", ErrHeader, "expected '{'"},
		{"empty", "", ErrHeader, "expected '{'"},
		{"garbage after dict", "{'descr': '<f8', 'fortran_order': False, 'shape': (2,)} x", ErrHeader, "after the closing"},
		{"double comma", "{'descr': '<f8',, 'fortran_order': False, 'shape': (2,)}", ErrHeader, "unexpected ','"},
		{"missing colon", "{'descr' '<f8', 'fortran_order': False, 'shape': (2,)}", ErrHeader, "expected ':'"},
		{"missing comma", "{'descr': '<f8' 'fortran_order': False, 'shape': (2,)}", ErrHeader, "expected ',' or '}'"},
		{"non-string key", "{1: '<f8', 'fortran_order': False, 'shape': (2,)}", ErrHeader, "dict key must be a string"},
		{"fortran as string", "{'descr': '<f8', 'fortran_order': 'False', 'shape': (2,)}", ErrHeader, "'fortran_order' must be True or False"},
		{"fortran as int", "{'descr': '<f8', 'fortran_order': 0, 'shape': (2,)}", ErrHeader, "'fortran_order'"},
		{"lowercase false", "{'descr': '<f8', 'fortran_order': false, 'shape': (2,)}", ErrHeader, "unexpected name \"false\""},
		{"shape not tuple", "{'descr': '<f8', 'fortran_order': False, 'shape': (2)}", ErrHeader, "'shape' must be a tuple"},
		{"shape list", "{'descr': '<f8', 'fortran_order': False, 'shape': [2]}", ErrHeader, "'shape' must be a tuple"},
		{"shape negative", "{'descr': '<f8', 'fortran_order': False, 'shape': (-2,)}", ErrHeader, "negative"},
		{"shape string", "{'descr': '<f8', 'fortran_order': False, 'shape': ('2',)}", ErrHeader, "element 0 has type string"},
		{"shape float", "{'descr': '<f8', 'fortran_order': False, 'shape': (2.0,)}", ErrHeader, ""},
		{"shape leading zero", "{'descr': '<f8', 'fortran_order': False, 'shape': (02,)}", ErrHeader, "leading zero"},
		{"shape huge int", "{'descr': '<f8', 'fortran_order': False, 'shape': (99999999999999999999999,)}", ErrHeader, "too large"},
		{"shape overflow", "{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296)}", ErrHeader, "too many elements"},
		{"shape bytes overflow", "{'descr': '<f8', 'fortran_order': False, 'shape': (2305843009213693952,)}", ErrHeader, "too many elements"},
		{"tuple lone comma", "{'descr': '<f8', 'fortran_order': False, 'shape': (,)}", ErrHeader, "unexpected ','"},
		{"deep nesting", "{'descr': '<f8', 'fortran_order': False, 'shape': " + strings.Repeat("(", 100) + "}", ErrHeader, "nested"},
		{"bad escape", "{'descr': '<f\\x38', 'fortran_order': False, 'shape': (2,)}", ErrHeader, "escape"},
		{"descr not string", "{'descr': 8, 'fortran_order': False, 'shape': (2,)}", ErrHeader, "'descr' must be a string"},
		{"complex256", "{'descr': '<c32', 'fortran_order': False, 'shape': (2,)}", ErrDType, "\"<c32\""},
		{"int16 bytes", "{'descr': '<i16', 'fortran_order': False, 'shape': (2,)}", ErrDType, "<i16"},
		{"float16", "{'descr': '<f2', 'fortran_order': False, 'shape': (2,)}", ErrDType, "<f2"},
		{"object dtype", "{'descr': '|O', 'fortran_order': False, 'shape': (2,)}", ErrDType, "|O"},
		{"native order", "{'descr': '=f8', 'fortran_order': False, 'shape': (2,)}", ErrDType, "native byte order"},
		{"no order", "{'descr': 'f8', 'fortran_order': False, 'shape': (2,)}", ErrDType, "byte-order"},
		{"pipe multibyte", "{'descr': '|f8', 'fortran_order': False, 'shape': (2,)}", ErrDType, "byte order"},
		{"structured", "{'descr': [('x', '<f8')], 'fortran_order': False, 'shape': (2,)}", ErrDType, "structured"},
	}
	data := encodeF64(binary.LittleEndian, 1, 2)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Read[float64](bytes.NewReader(buildNPY(1, c.header, data)))
			require.Error(t, err)
			assert.ErrorIs(t, err, c.is)
			assert.Contains(t, err.Error(), c.msg)
			_, _, _, err = ReadAny(bytes.NewReader(buildNPY(1, c.header, data)))
			assert.ErrorIs(t, err, c.is)
		})
	}
}

func TestHeaderTooLong(t *testing.T) {
	var b bytes.Buffer
	b.WriteString(magic + "\x02\x00")
	binary.Write(&b, binary.LittleEndian, uint32(math.MaxUint32))
	_, err := Read[float64](onlyReader{&b})
	require.ErrorIs(t, err, ErrHeader)
	assert.Contains(t, err.Error(), "exceeds the limit")
}

func TestDTypeMismatch(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, Write(&buf, []int{2}, []float64{1, 2}))
	_, err := Read[float32](bytes.NewReader(buf.Bytes()))
	require.ErrorIs(t, err, ErrDType)
	assert.Contains(t, err.Error(), `"<f8"`)
	assert.Contains(t, err.Error(), "float32")

	buf.Reset()
	require.NoError(t, Write(&buf, []int{2}, []float32{1, 2}))
	_, err = Read[float64](bytes.NewReader(buf.Bytes()))
	require.ErrorIs(t, err, ErrDType)
	assert.Contains(t, err.Error(), `"<f4"`)
	assert.Contains(t, err.Error(), "float64")

	ints := buildNPY(1, "{'descr': '<i8', 'fortran_order': False, 'shape': (1,)}", make([]byte, 8))
	_, err = Read[float64](bytes.NewReader(ints))
	require.ErrorIs(t, err, ErrDType)
	assert.Contains(t, err.Error(), `"<i8"`)
}

func TestTruncated(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, Write(&buf, []int{2, 3}, []float64{1, 2, 3, 4, 5, 6}))
	full := buf.Bytes()
	short := full[:len(full)-8] // 40 of 48 data bytes

	for name, r := range map[string]io.Reader{
		"sized":    bytes.NewReader(short),
		"streamed": onlyReader{bytes.NewReader(short)},
	} {
		_, err := Read[float64](r)
		require.ErrorIs(t, err, ErrTruncated, name)
		assert.Contains(t, err.Error(), "needs 48 data bytes, got 40", name)
	}
	_, _, _, err := ReadAny(onlyReader{bytes.NewReader(short)})
	require.ErrorIs(t, err, ErrTruncated)

	// Every proper prefix of the file fails cleanly.
	for n := 0; n < len(full); n++ {
		_, err := Read[float64](onlyReader{bytes.NewReader(full[:n])})
		require.Error(t, err, "prefix %d", n)
		if n == 0 {
			assert.ErrorIs(t, err, ErrNotNPY)
		} else {
			assert.ErrorIs(t, err, ErrTruncated, "prefix %d: %v", n, err)
		}
	}
	_, err = Read[float64](bytes.NewReader(full[:50]))
	assert.Contains(t, err.Error(), "expected 118 header bytes, got 40")
}

func TestTrailingDataIsNotConsumed(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, Write(&buf, []int{1}, []float64{1}))
	require.NoError(t, Write(&buf, []int{2}, []float32{2, 3}))
	a, err := Read[float64](&buf)
	require.NoError(t, err)
	assert.Equal(t, []float64{1}, a.Data)
	b, err := Read[float32](&buf)
	require.NoError(t, err)
	assert.Equal(t, []float32{2, 3}, b.Data)
	assert.Zero(t, buf.Len())
}

func TestHugeShapeDoesNotAllocate(t *testing.T) {
	hdr := "{'descr': '<f8', 'fortran_order': False, 'shape': (1099511627776,), }" // 8 TiB
	file := buildNPY(1, hdr, encodeF64(binary.LittleEndian, 1, 2))
	for name, c := range map[string]struct {
		r    func() io.Reader
		want error
		msg  string
	}{
		// The input's length is known: the shape is checked against it.
		"sized": {func() io.Reader { return bytes.NewReader(file) }, ErrTruncated, "needs 8796093022208 data bytes, got 16"},
		// A stream: the shape is checked against the memory there is.
		"streamed": {func() io.Reader { return onlyReader{bytes.NewReader(file)} }, ErrMemory, "the float64 array of shape (1099511627776,) needs 8 TiB, more than the"},
	} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := Read[float64](c.r())
		runtime.ReadMemStats(&after)
		require.ErrorIs(t, err, c.want, name)
		assert.Contains(t, err.Error(), c.msg, name)
		assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(4<<20), name)
	}
}

// A file that really holds the data its header declares is still refused
// when the array does not fit the memory the process can have, before
// anything is allocated. The file is sparse (a hole), so it takes no disk.
func TestDeclaredShapeBeyondMemory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.npy")
	pre := formatPreamble("<f4", []int{1 << 16, 1 << 10}) // 256 MiB of float32
	require.NoError(t, os.WriteFile(path, pre, 0o644))
	require.NoError(t, os.Truncate(path, int64(len(pre))+1<<28))
	defer memguard.SetLimit(memguard.SetLimit(64 << 20))

	h, err := ReadFileHeader(path)
	require.NoError(t, err, "the header is consistent with the file")
	assert.Equal(t, []int{1 << 16, 1 << 10}, h.Shape)
	assert.True(t, h.IsFloat32())
	assert.Equal(t, 1<<26, h.Count())

	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err = ReadFile[float32](path)
	runtime.ReadMemStats(&after)
	require.ErrorIs(t, err, ErrMemory)
	assert.Contains(t, err.Error(), path+": npy: the float32 array of shape (65536, 1024) needs 256 MiB, more than the 56 MiB this process can have")
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(4<<20))

	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	_, _, _, err = ReadAny(f) // float64: twice the memory
	require.ErrorIs(t, err, ErrMemory)
	assert.Contains(t, err.Error(), "the float64 array of shape (65536, 1024) needs 512 MiB")
}

// ReadFileHeader checks the declared data against the file's size.
func TestReadFileHeaderTruncated(t *testing.T) {
	path := filepath.Join(t.TempDir(), "short.npy")
	require.NoError(t, os.WriteFile(path, buildNPY(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1000000000,), }", make([]byte, 16)), 0o644))
	_, err := ReadFileHeader(path)
	require.ErrorIs(t, err, ErrTruncated)
	assert.Contains(t, err.Error(), path+": npy: truncated file: shape (1000000000,) of <f8 needs 8000000000 data bytes, got 16")
}

func TestReadAs(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, Write(&buf, []int{3}, []float64{1.5, 1 + 1e-12, -2}))
	raw := bytes.Clone(buf.Bytes())
	shape, x32, dtype, err := ReadAs[float32](bytes.NewReader(raw))
	require.NoError(t, err)
	assert.Equal(t, []int{3}, shape)
	assert.Equal(t, "<f8", dtype)
	assert.Equal(t, []float32{1.5, 1, -2}, x32, "f8 rounds to float32")

	h, err := ReadHeader(bytes.NewReader(raw))
	require.NoError(t, err)
	assert.Equal(t, Header{Shape: []int{3}, DType: "<f8"}, h)
	assert.False(t, h.IsFloat32())
}

func TestReadAnyIntegers(t *testing.T) {
	le, be := binary.LittleEndian, binary.BigEndian
	var i4 []byte
	for _, v := range []int32{-3, 0, 7, math.MaxInt32, math.MinInt32} {
		i4 = le.AppendUint32(i4, uint32(v))
	}
	var i8 []byte
	for _, v := range []int64{-3, 0, 7, 1 << 53, -(1 << 40)} {
		i8 = le.AppendUint64(i8, uint64(v))
	}
	var i8be []byte
	for _, v := range []int64{-3, 0, 7, 1 << 53, -(1 << 40)} {
		i8be = be.AppendUint64(i8be, uint64(v))
	}
	var u2 []byte
	for _, v := range []uint16{0, 1, 65535, 300, 2} {
		u2 = be.AppendUint16(u2, v)
	}
	var u8 []byte
	for _, v := range []uint64{0, 1, math.MaxUint64, 300, 2} {
		u8 = le.AppendUint64(u8, v)
	}
	cases := []struct {
		descr string
		data  []byte
		want  []float64
	}{
		{"<i4", i4, []float64{-3, 0, 7, math.MaxInt32, math.MinInt32}},
		{"<i8", i8, []float64{-3, 0, 7, 1 << 53, -(1 << 40)}},
		{">i8", i8be, []float64{-3, 0, 7, 1 << 53, -(1 << 40)}},
		{"|i1", []byte{0xfd, 0, 7, 0x7f, 0x80}, []float64{-3, 0, 7, 127, -128}},
		{"|u1", []byte{0xfd, 0, 7, 0x7f, 0x80}, []float64{253, 0, 7, 127, 128}},
		{">u2", u2, []float64{0, 1, 65535, 300, 2}},
		{"<i2", []byte{0xfd, 0xff, 0, 0, 7, 0, 0xff, 0x7f, 0, 0x80}, []float64{-3, 0, 7, 32767, -32768}},
		{"<u4", encodeF32(le, 0)[:0], nil},
		{"<u8", u8, []float64{0, 1, math.MaxUint64, 300, 2}},
		{"<f4", encodeF32(le, 1.5, -2, 0, 8, 1e-3), []float64{1.5, -2, 0, 8, float64(float32(1e-3))}},
		{">f8", encodeF64(be, 1.5, -2, 0, 8, 1e-3), []float64{1.5, -2, 0, 8, 1e-3}},
	}
	for _, c := range cases {
		shape := "(5,)"
		if c.want == nil {
			shape = "(0,)"
		}
		file := buildNPY(1, "{'descr': '"+c.descr+"', 'fortran_order': False, 'shape': "+shape+", }", c.data)
		s, f64, descr, err := ReadAny(onlyReader{bytes.NewReader(file)})
		require.NoError(t, err, c.descr)
		assert.Equal(t, c.descr, descr)
		assert.Equal(t, []int{len(c.want)}, s)
		if c.want == nil {
			assert.Empty(t, f64)
		} else {
			assert.Equal(t, c.want, f64, c.descr)
		}
	}

	// 2-D integers in Fortran order.
	file := buildNPY(1, "{'descr': '<i4', 'fortran_order': True, 'shape': (2, 2), }",
		le.AppendUint32(le.AppendUint32(le.AppendUint32(le.AppendUint32(nil, 1), 3), 2), 4))
	s, f64, _, err := ReadAny(bytes.NewReader(file))
	require.NoError(t, err)
	assert.Equal(t, []int{2, 2}, s)
	assert.Equal(t, []float64{1, 2, 3, 4}, f64)
}

func TestBadMagic(t *testing.T) {
	for _, in := range []string{
		"",
		"x",
		"\x93NUMPX\x01\x00",
		"PK\x03\x04 this is a zip",
		"\x93numpy\x01\x00\x76\x00",
	} {
		_, err := Read[float64](strings.NewReader(in))
		require.ErrorIs(t, err, ErrNotNPY, "%q", in)
		_, _, _, err = ReadAny(strings.NewReader(in))
		require.ErrorIs(t, err, ErrNotNPY, "%q", in)
	}
	_, err := Read[float64](strings.NewReader("PK\x03\x04"))
	assert.Contains(t, err.Error(), "bad magic")
}

type failingWriter struct{ after int }

func (f *failingWriter) Write(p []byte) (int, error) {
	if f.after <= 0 {
		return 0, errors.New("disk full")
	}
	f.after--
	return len(p), nil
}

func TestWriteErrors(t *testing.T) {
	var buf bytes.Buffer
	err := Write(&buf, []int{2, 2}, []float64{1, 2, 3})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "needs 4 elements, data has 3")
	assert.Zero(t, buf.Len())

	err = Write(&buf, []int{-1, 2}, []float64{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "negative")

	err = Write(&buf, nil, []float64{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "needs 1 elements")

	err = Write(&buf, []int{math.MaxInt / 2, 4}, []float64{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "too many elements")

	err = Write(&failingWriter{0}, []int{1}, []float64{1})
	assert.ErrorContains(t, err, "disk full")
	err = Write(&failingWriter{1}, []int{1}, []float64{1})
	assert.ErrorContains(t, err, "writing data: disk full")
}

func TestFiles(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.npy")
	data := []float32{1, 2, 3, 4, 5, 6}
	require.NoError(t, WriteFile(path, []int{3, 2}, data))
	a, err := ReadFile[float32](path)
	require.NoError(t, err)
	assert.Equal(t, []int{3, 2}, a.Shape)
	assert.Equal(t, data, a.Data)

	_, err = ReadFile[float64](path)
	require.ErrorIs(t, err, ErrDType)
	assert.Contains(t, err.Error(), path)

	// Truncated on disk: detected from the file size before reading.
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, raw[:len(raw)-3], 0o644))
	_, err = ReadFile[float32](path)
	require.ErrorIs(t, err, ErrTruncated)
	assert.Contains(t, err.Error(), "needs 24 data bytes, got 21")

	_, err = ReadFile[float32](filepath.Join(dir, "missing.npy"))
	require.ErrorIs(t, err, os.ErrNotExist)

	err = WriteFile(filepath.Join(dir, "bad.npy"), []int{2}, []float64{1})
	require.Error(t, err)
	_, statErr := os.Stat(filepath.Join(dir, "bad.npy"))
	assert.ErrorIs(t, statErr, os.ErrNotExist, "partial file is removed")

	err = WriteFile(filepath.Join(dir, "no", "such", "dir.npy"), []int{1}, []float64{1})
	assert.Error(t, err)
}

func TestFortranToC(t *testing.T) {
	// Compare against a direct index computation for several shapes.
	for _, shape := range [][]int{{3, 2}, {2, 3, 4}, {1, 5, 1, 2}, {2, 2, 2, 2, 2}} {
		n, _ := elementCount(shape)
		src := make([]int, n)
		for i := range src {
			src[i] = i
		}
		got := fortranToC(shape, src)
		for c := range n {
			// decompose the C index, recompose as a Fortran index
			rem, f, fs := c, 0, 1
			idx := make([]int, len(shape))
			for k := len(shape) - 1; k >= 0; k-- {
				idx[k] = rem % shape[k]
				rem /= shape[k]
			}
			for k := range shape {
				f += idx[k] * fs
				fs *= shape[k]
			}
			assert.Equal(t, f, got[c], "shape %v C index %d", shape, c)
		}
	}
}
