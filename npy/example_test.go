package npy_test

import (
	"bytes"
	"fmt"

	"github.com/bandsolve/bandsolve/npy"
)

func Example() {
	// Write a 2×3 float64 matrix, as numpy.save would.
	var buf bytes.Buffer
	if err := npy.Write(&buf, []int{2, 3}, []float64{1, 2, 3, 4, 5, 6}); err != nil {
		panic(err)
	}
	fmt.Printf("%d bytes, header %q...\n", buf.Len(), buf.Bytes()[10:58])

	// Read it back.
	a, err := npy.Read[float64](bytes.NewReader(buf.Bytes()))
	if err != nil {
		panic(err)
	}
	fmt.Println(a.Shape, a.Data)

	// Asking for the wrong element type is an error; ReadAny converts.
	if _, err := npy.Read[float32](bytes.NewReader(buf.Bytes())); err != nil {
		fmt.Println(err)
	}
	shape, values, dtype, err := npy.ReadAny(bytes.NewReader(buf.Bytes()))
	fmt.Println(shape, values, dtype, err)
	// Output:
	// 176 bytes, header "{'descr': '<f8', 'fortran_order': False, 'shape'"...
	// [2 3] [1 2 3 4 5 6]
	// npy: unsupported dtype: file has dtype "<f8" but float32 was requested (want '<f4' or '>f4'; ReadAny converts)
	// [2 3] [1 2 3 4 5 6] <f8 <nil>
}

// Complex arrays are written with dtype '<c16' (complex128) or '<c8'
// (complex64), as numpy.save writes them, and read back with Read.
func ExampleWrite_complex() {
	var buf bytes.Buffer
	if err := npy.Write(&buf, []int{2}, []complex128{1 + 2i, -0.5i}); err != nil {
		panic(err)
	}
	h, err := npy.ReadHeader(bytes.NewReader(buf.Bytes()))
	if err != nil {
		panic(err)
	}
	fmt.Println(h.DType, h.IsComplex())
	a, err := npy.Read[complex128](bytes.NewReader(buf.Bytes()))
	if err != nil {
		panic(err)
	}
	fmt.Println(a.Data)
	// Output:
	// <c16 true
	// [(1+2i) (0-0.5i)]
}
