//go:build cuda

package cuda_test

import (
	"fmt"
	"unsafe"

	"gorgonia.org/cu"

	"github.com/bandsolve/bandsolve/cuda"
)

// Arrays go to the device and back; a view shares its parent's memory.
func ExampleUpload() {
	dev, err := cuda.Open(0)
	if err != nil {
		panic(err)
	}
	defer dev.Close()
	buf, err := cuda.Upload(dev, []float64{1, 2, 3, 4, 5})
	if err != nil {
		panic(err)
	}
	defer buf.Free()
	tail, err := buf.Slice(3, 2)
	if err != nil {
		panic(err)
	}
	if err := tail.CopyFrom([]float64{40, 50}); err != nil {
		panic(err)
	}
	out := make([]float64, buf.Len())
	if err := buf.CopyTo(out); err != nil {
		panic(err)
	}
	fmt.Println(out)
	// Output: [1 2 3 40 50]
}

// Memory and a stream that other CUDA code made in the device's primary
// context (here with the driver API directly, as CuPy or PyTorch would)
// are wrapped, not copied: bandsolve reads and writes them in place and
// never frees them.
func ExampleWrap() {
	dev, err := cuda.Open(0)
	if err != nil {
		panic(err)
	}
	defer dev.Close()
	const n = 4
	var ptr cu.DevicePtr
	var st cu.Stream
	if err := dev.Do(func() error {
		var err error
		if ptr, err = cu.MemAlloc(n * 4); err != nil {
			return err
		}
		if st, err = cu.MakeStream(cu.NonBlocking); err != nil {
			return err
		}
		host := []float32{1, 2, 3, 4}
		return cu.MemcpyHtoD(ptr, unsafe.Pointer(&host[0]), n*4)
	}); err != nil {
		panic(err)
	}
	buf, err := cuda.Wrap[float32](dev, ptr, n)
	if err != nil {
		panic(err)
	}
	stream := cuda.WrapStream(dev, *(*uintptr)(unsafe.Pointer(&st)))
	if err := stream.Synchronize(); err != nil {
		panic(err)
	}
	out := make([]float32, n)
	if err := buf.CopyTo(out); err != nil {
		panic(err)
	}
	fmt.Println(out, buf.Free() == nil, stream.Close() == nil)
	_ = dev.Do(func() error {
		_ = st.Destroy()
		return cu.MemFree(ptr)
	})
	// Output: [1 2 3 4] true true
}
