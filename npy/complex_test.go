package npy

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/cmplx"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The bytes of a complex128 file: numpy.save's header with '<c16', then
// each value's real and imaginary parts as little-endian float64.
func TestWriteComplex128Bytes(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, Write(&buf, []int{2}, []complex128{1 + 2i, -3.5}))
	want := buildNPY(1, "{'descr': '<c16', 'fortran_order': False, 'shape': (2,), }", encodeF64(binary.LittleEndian, 1, 2, -3.5, 0))
	assert.Equal(t, want, buf.Bytes())
}

func TestWriteComplex64Bytes(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, Write(&buf, []int{1, 2}, []complex64{0.5 - 1i, complex(float32(math.Inf(1)), 3)}))
	want := buildNPY(1, "{'descr': '<c8', 'fortran_order': False, 'shape': (1, 2), }", encodeF32(binary.LittleEndian, 0.5, -1, float32(math.Inf(1)), 3))
	assert.Equal(t, want, buf.Bytes())
}

func testRoundTripComplex[T Complex](t *testing.T) {
	data := []T{1 + 2i, -3, 4i, T(complex(math.NaN(), -0.0)), 1e-30 - 1e30i, 7}
	dir := t.TempDir()
	path := filepath.Join(dir, "z.npy")
	require.NoError(t, WriteFile(path, []int{2, 3}, data))
	a, err := ReadFile[T](path)
	require.NoError(t, err)
	assert.Equal(t, []int{2, 3}, a.Shape)
	require.Len(t, a.Data, len(data))
	for i := range data {
		got, want := complex128(a.Data[i]), complex128(data[i])
		if cmplx.IsNaN(want) {
			assert.True(t, math.IsNaN(real(got)))
			assert.Equal(t, math.Signbit(imag(want)), math.Signbit(imag(got)))
			continue
		}
		assert.Equal(t, want, got, "element %d", i)
	}
	h, err := ReadFileHeader(path)
	require.NoError(t, err)
	assert.True(t, h.IsComplex())
	assert.False(t, h.IsFloat32())
}

func TestRoundTripComplex64(t *testing.T)  { testRoundTripComplex[complex64](t) }
func TestRoundTripComplex128(t *testing.T) { testRoundTripComplex[complex128](t) }

func TestReadComplexBigEndianFortran(t *testing.T) {
	// A 2×2 array [[1+1i, 2], [3i, 4−4i]] stored column-major, big-endian.
	data := encodeF32(binary.BigEndian, 1, 1, 0, 3, 2, 0, 4, -4)
	raw := buildNPY(1, "{'descr': '>c8', 'fortran_order': True, 'shape': (2, 2)}", data)
	a, err := Read[complex64](bytes.NewReader(raw))
	require.NoError(t, err)
	assert.Equal(t, []complex64{1 + 1i, 2, 3i, 4 - 4i}, a.Data)
	_, z, dtype, err := ReadAs[complex128](bytes.NewReader(raw))
	require.NoError(t, err)
	assert.Equal(t, ">c8", dtype)
	assert.Equal(t, []complex128{1 + 1i, 2, 3i, 4 - 4i}, z)
}

func TestComplexDTypeMismatch(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, Write(&buf, []int{2}, []complex64{1, 2i}))
	raw := bytes.Clone(buf.Bytes())
	_, err := Read[complex128](bytes.NewReader(raw))
	require.ErrorIs(t, err, ErrDType)
	assert.Contains(t, err.Error(), `"<c8"`)
	assert.Contains(t, err.Error(), "complex128")
	for _, read := range []func() error{
		func() error { _, err := Read[float64](bytes.NewReader(raw)); return err },
		func() error { _, _, _, err := ReadAny(bytes.NewReader(raw)); return err },
		func() error { _, _, _, err := ReadAs[float32](bytes.NewReader(raw)); return err },
	} {
		err := read()
		require.ErrorIs(t, err, ErrDType)
		assert.Contains(t, err.Error(), "<c8")
	}
}

// Real files read as complex get a zero imaginary part.
func TestReadAsComplexFromReal(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, Write(&buf, []int{3}, []float64{1.5, 1 + 1e-12, -2}))
	_, z64, dtype, err := ReadAs[complex64](bytes.NewReader(buf.Bytes()))
	require.NoError(t, err)
	assert.Equal(t, "<f8", dtype)
	assert.Equal(t, []complex64{1.5, 1, -2}, z64)
	_, z128, _, err := ReadAs[complex128](bytes.NewReader(buf.Bytes()))
	require.NoError(t, err)
	assert.Equal(t, []complex128{1.5, 1 + 1e-12, -2}, z128)

	ints := buildNPY(1, "{'descr': '<i2', 'fortran_order': False, 'shape': (2,)}", []byte{0xff, 0xff, 7, 0})
	_, z, _, err := ReadAs[complex128](onlyReader{bytes.NewReader(ints)})
	require.NoError(t, err)
	assert.Equal(t, []complex128{-1, 7}, z)
}
