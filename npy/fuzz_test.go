package npy

import (
	"bytes"
	"encoding/binary"
	"math"
	"testing"
)

// FuzzRead checks that arbitrary input never makes the readers panic or
// return inconsistent results, and that whatever Read accepts survives a
// Write/Read round trip.
func FuzzRead(f *testing.F) {
	var buf bytes.Buffer
	_ = Write(&buf, []int{2, 3}, []float64{1, 2, 3, 4, 5, 6})
	f.Add(bytes.Clone(buf.Bytes()))
	buf.Reset()
	_ = Write(&buf, nil, []float32{7})
	f.Add(bytes.Clone(buf.Bytes()))
	f.Add(buildNPY(1, "{'descr': '>f8', 'fortran_order': True, 'shape': (2, 2), }",
		encodeF64(binary.BigEndian, 1, 2, 3, 4)))
	f.Add(buildNPY(2, `{"descr": "<i8", "fortran_order": False, "shape": (1,)}`, make([]byte, 8)))
	f.Add(buildNPY(3, "{'descr': '|u1', 'fortran_order': True, 'shape': (2, 1, 2,), }", []byte{1, 2, 3, 4}))
	f.Add(buildNPY(1, "{'descr': [('a', '<f8')], 'fortran_order': False, 'shape': ((1,),)}", nil))
	f.Add(buildNPY(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776,), }", nil))
	f.Add([]byte("\x93NUMPY\x02\x00\xff\xff\xff\xff"))
	f.Add([]byte{})

	f.Fuzz(func(t *testing.T, in []byte) {
		shape, f64, descr, errAny := ReadAny(bytes.NewReader(in))
		if errAny == nil {
			checkLen(t, shape, len(f64))
		}
		a64, err64 := Read[float64](bytes.NewReader(in))
		a32, err32 := Read[float32](onlyReader{bytes.NewReader(in)})
		if err64 == nil {
			checkLen(t, a64.Shape, len(a64.Data))
			if errAny != nil || len(f64) != len(a64.Data) {
				t.Fatalf("Read[float64] accepted what ReadAny rejected: %v", errAny)
			}
			for i := range f64 {
				if math.Float64bits(f64[i]) != math.Float64bits(a64.Data[i]) {
					t.Fatalf("ReadAny and Read[float64] differ at %d", i)
				}
			}
			roundTrip(t, a64)
		}
		if err32 == nil {
			checkLen(t, a32.Shape, len(a32.Data))
			if errAny != nil || descr[1:] != "f4" {
				t.Fatalf("Read[float32] accepted dtype %q, ReadAny error %v", descr, errAny)
			}
			roundTrip(t, a32)
		}
		if err64 == nil && err32 == nil {
			t.Fatal("both Read[float64] and Read[float32] accepted the input")
		}
	})
}

func checkLen(t *testing.T, shape []int, n int) {
	t.Helper()
	want, ok := elementCount(shape)
	if !ok || want != n {
		t.Fatalf("shape %v but %d elements", shape, n)
	}
}

func roundTrip[T Float](t *testing.T, a Array[T]) {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, a.Shape, a.Data); err != nil {
		t.Fatalf("Write of a decoded array: %v", err)
	}
	b, err := Read[T](&buf)
	if err != nil {
		t.Fatalf("Read of a written array: %v", err)
	}
	if len(b.Shape) != len(a.Shape) || len(b.Data) != len(a.Data) {
		t.Fatalf("round trip changed shape %v to %v", a.Shape, b.Shape)
	}
	for i := range a.Shape {
		if a.Shape[i] != b.Shape[i] {
			t.Fatalf("round trip changed shape %v to %v", a.Shape, b.Shape)
		}
	}
	for i := range a.Data {
		if !sameBits(a.Data[i], b.Data[i]) {
			t.Fatalf("round trip changed element %d", i)
		}
	}
}

func sameBits[T Float](x, y T) bool {
	switch x := any(x).(type) {
	case float32:
		return math.Float32bits(x) == math.Float32bits(any(y).(float32))
	default:
		return math.Float64bits(any(x).(float64)) == math.Float64bits(any(y).(float64))
	}
}
