//go:build cuda

package cuda

import (
	"errors"
	"fmt"
	"unsafe"

	"gorgonia.org/cu"
)

// ErrRange is wrapped by the errors of Slice and Wrap: a view outside its
// buffer, a freed buffer, a null or misaligned address, a length below 1.
var ErrRange = errors.New("cuda: outside the buffer")

// Elem is an element type of device arrays.
type Elem interface {
	~float32 | ~float64 | ~complex64 | ~complex128 | ~int32 | ~uint32 | ~int64 | ~uint64
}

// Buffer is an array of n elements in device memory, kept across solves.
// Free it when done; the device does not track it. A Buffer may also be a
// view of part of another (Slice), or wrap memory that other code
// allocated (Wrap).
type Buffer[T Elem] struct {
	dev     *Device
	ptr     cu.DevicePtr
	n       int
	view    bool // a view or a wrapped pointer: Free does not release it
	wrapped bool // Wrap made it
}

// Wrap returns a buffer of n elements at device address ptr, memory that
// other CUDA code in the process allocated in the device's primary
// context (a CuPy or PyTorch array, cudaMalloc'd memory). Solves read
// and write it in place; Free does nothing, the memory stays its owner's.
func Wrap[T Elem](d *Device, ptr cu.DevicePtr, n int) (*Buffer[T], error) {
	if ptr == 0 {
		return nil, fmt.Errorf("%w: wrapping a null device pointer", ErrRange)
	}
	if n < 1 {
		return nil, fmt.Errorf("%w: wrapping %d elements", ErrRange, n)
	}
	if uint64(ptr)%uint64(elemSize[T]()) != 0 {
		return nil, fmt.Errorf("%w: device address %#x is not aligned to the %d-byte element", ErrRange, uint64(ptr), elemSize[T]())
	}
	return &Buffer[T]{dev: d, ptr: ptr, n: n, view: true, wrapped: true}, nil
}

// Device returns the device the buffer's memory is on.
func (b *Buffer[T]) Device() *Device { return b.dev }

// ErrView is returned by Free on a view made by Slice: free the buffer it
// was cut from instead. (Free of a wrapped buffer does nothing and
// returns nil.)
var ErrView = errors.New("cuda: a view cannot be freed")

// Slice returns a view of elements [off, off+n) of b. It shares b's
// memory: solves, products and copies through the view read and write b.
// Views let one plan work on part of a larger array, e.g. one slab of a
// 3-D field. A view is valid until b is freed and must not be freed
// itself.
func (b *Buffer[T]) Slice(off, n int) (*Buffer[T], error) {
	if b.ptr == 0 {
		return nil, fmt.Errorf("%w: slicing a freed buffer", ErrRange)
	}
	if off < 0 || n < 1 || off+n > b.n {
		return nil, fmt.Errorf("%w: view [%d, %d) of a buffer of %d elements", ErrRange, off, off+n, b.n)
	}
	return &Buffer[T]{dev: b.dev, ptr: b.ptr + cu.DevicePtr(int64(off)*elemSize[T]()), n: n, view: true}, nil
}

func elemSize[T Elem]() int64 {
	var v T
	return int64(unsafe.Sizeof(v))
}

// Alloc allocates n elements of device memory (contents undefined).
func Alloc[T Elem](d *Device, n int) (*Buffer[T], error) {
	if n < 1 {
		return nil, fmt.Errorf("cuda: cannot allocate %d elements", n)
	}
	p, err := d.AllocBytes(int64(n) * elemSize[T]())
	if err != nil {
		return nil, err
	}
	return &Buffer[T]{dev: d, ptr: p, n: n}, nil
}

// Upload allocates a buffer holding a copy of host.
func Upload[T Elem](d *Device, host []T) (*Buffer[T], error) {
	b, err := Alloc[T](d, len(host))
	if err != nil {
		return nil, err
	}
	if err := b.CopyFrom(host); err != nil {
		_ = b.Free()
		return nil, err
	}
	return b, nil
}

// alloc allocates bytes of device memory with plain cuMemAlloc; running out
// gives an error saying how much was asked for and how much was free.
func (d *Device) AllocBytes(bytes int64) (cu.DevicePtr, error) {
	var p cu.DevicePtr
	err := d.Enqueue(func() error {
		var e error
		p, e = cu.MemAlloc(bytes)
		if e != nil {
			free, total, ie := cu.MemInfo()
			if ie == nil && bytes > free {
				return fmt.Errorf("%w: asked for %d B, %d B of %d B free: %v", ErrOutOfMemory, bytes, free, total, e)
			}
			return fmt.Errorf("cuda: allocating %d B: %w", bytes, e)
		}
		return nil
	})
	return p, err
}

// Len returns the number of elements.
func (b *Buffer[T]) Len() int { return b.n }

// Ptr returns the device address, for use with other CUDA code.
func (b *Buffer[T]) Ptr() cu.DevicePtr { return b.ptr }

// CopyFrom copies host into the start of the buffer.
func (b *Buffer[T]) CopyFrom(host []T) error {
	if len(host) > b.n {
		return fmt.Errorf("cuda: copying %d elements into a buffer of %d", len(host), b.n)
	}
	if len(host) == 0 {
		return nil
	}
	return b.dev.Enqueue(func() error {
		if err := cu.MemcpyHtoD(b.ptr, unsafe.Pointer(&host[0]), int64(len(host))*elemSize[T]()); err != nil {
			return err
		}
		return b.dev.SyncLegacyStream()
	})
}

// CopyTo copies the start of the buffer into host.
func (b *Buffer[T]) CopyTo(host []T) error {
	if len(host) > b.n {
		return fmt.Errorf("cuda: copying %d elements out of a buffer of %d", len(host), b.n)
	}
	if len(host) == 0 {
		return nil
	}
	return b.dev.Enqueue(func() error {
		return cu.MemcpyDtoH(unsafe.Pointer(&host[0]), b.ptr, int64(len(host))*elemSize[T]())
	})
}

// CopyFromBuffer copies src into b on the device (lengths must match).
func (b *Buffer[T]) CopyFromBuffer(src *Buffer[T]) error {
	if src.n != b.n {
		return fmt.Errorf("cuda: copying a buffer of %d elements into one of %d", src.n, b.n)
	}
	return b.dev.Enqueue(func() error {
		if err := cu.MemcpyDtoD(b.ptr, src.ptr, int64(b.n)*elemSize[T]()); err != nil {
			return err
		}
		return b.dev.SyncLegacyStream()
	})
}

// Free releases the memory. The buffer cannot be used afterwards.
func (b *Buffer[T]) Free() error {
	if b.view {
		if b.wrapped {
			return nil
		}
		return ErrView
	}
	if b.ptr == 0 {
		return nil
	}
	b.dev.StopPersistent() // cuMemFree may wait for the device's work
	err := b.dev.Enqueue(func() error { return cu.MemFree(b.ptr) })
	b.ptr, b.n = 0, 0
	return err
}
