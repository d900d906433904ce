//go:build cuda

package cuda

// #cgo LDFLAGS: -lcuda
// #include <cuda.h>
import "C"

import (
	"fmt"
	"math"
	"unsafe"

	"gorgonia.org/cu"
)

// dim3 is a grid or block size.
type dim3 struct{ X, Y, Z int }

// launch starts kernel name on stream s; it must run on the device thread
// (inside d.do). Arguments are passed by value and must have the kernel's
// C types: cu.DevicePtr for pointers, int32 for int, int64 for long long,
// float32 and float64. Shared memory above the default 48 KiB is opted
// into once per kernel.
func (d *Device) launch(name string, grid, block dim3, shmem int, s cu.Stream, args ...any) error {
	fn, err := d.function(name)
	if err != nil {
		return err
	}
	if shmem > d.props.SharedPerBlock && d.attr[name] < shmem {
		if shmem > d.props.MaxShared() {
			return fmt.Errorf("cuda: kernel %s needs %d B of shared memory, the device allows %d", name, shmem, d.props.MaxShared())
		}
		cf := *(*C.CUfunction)(unsafe.Pointer(&fn))
		if r := C.cuFuncSetAttribute(cf, C.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, C.int(shmem)); r != C.CUDA_SUCCESS {
			return fmt.Errorf("cuda: raising kernel %s's shared memory to %d B: %w", name, shmem, driverError(r))
		}
		d.attr[name] = shmem
	}
	// cu copies 8 bytes from each parameter pointer, so every value sits
	// in its own 8-byte slot (4-byte values in the low half).
	slots := make([]uint64, len(args))
	ptrs := make([]unsafe.Pointer, len(args))
	for i, a := range args {
		switch v := a.(type) {
		case cu.DevicePtr:
			slots[i] = uint64(v)
		case int32:
			slots[i] = uint64(uint32(v))
		case int64:
			slots[i] = uint64(v)
		case float32:
			slots[i] = uint64(math.Float32bits(v))
		case float64:
			slots[i] = math.Float64bits(v)
		default:
			return fmt.Errorf("cuda: kernel %s argument %d has unsupported type %T", name, i, a)
		}
		ptrs[i] = unsafe.Pointer(&slots[i])
	}
	if grid.Y == 0 {
		grid.Y = 1
	}
	if grid.Z == 0 {
		grid.Z = 1
	}
	if block.Y == 0 {
		block.Y = 1
	}
	if block.Z == 0 {
		block.Z = 1
	}
	if err := fn.Launch(grid.X, grid.Y, grid.Z, block.X, block.Y, block.Z, shmem, s, ptrs); err != nil {
		return fmt.Errorf("cuda: launching %s grid %v block %v shared %d B: %w", name, grid, block, shmem, err)
	}
	return nil
}

// kernelAttr reads an attribute of a kernel (device thread).
func (d *Device) kernelAttr(name string, a cu.FunctionAttribute) (int, error) {
	fn, err := d.function(name)
	if err != nil {
		return 0, err
	}
	return fn.Attribute(a)
}

// driverError describes a CUresult returned by a direct driver call.
type driverError C.CUresult

func (e driverError) Error() string {
	var s *C.char
	if C.cuGetErrorName(C.CUresult(e), &s) == C.CUDA_SUCCESS && s != nil {
		return C.GoString(s)
	}
	return fmt.Sprintf("CUresult %d", int(e))
}

// Device attributes newer than gorgonia.org/cu's list.
const (
	attrSharedPerBlockOptin = cu.DeviceAttribute(C.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)
	attrMaxBlocksPerSM      = cu.DeviceAttribute(C.CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR)
)

// memAllocHost allocates page-locked host memory (device thread).
func memAllocHost(bytes int) (unsafe.Pointer, error) {
	var p unsafe.Pointer
	if r := C.cuMemAllocHost(&p, C.size_t(bytes)); r != C.CUDA_SUCCESS {
		return nil, fmt.Errorf("cuda: allocating %d B of pinned host memory: %w", bytes, driverError(r))
	}
	return p, nil
}
