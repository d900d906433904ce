//go:build cuda

package cuda

// #cgo LDFLAGS: -lcuda
// #include <cuda.h>
//
// // bs_launch launches f with n kernel parameters whose values sit in
// // 8-byte slots (4-byte values in the low half): the array of pointers
// // cuLaunchKernel wants is built here, on the C stack, instead of in
// // C.malloc'd memory per launch.
// static CUresult bs_launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
//                           unsigned bx, unsigned by, unsigned bz, unsigned shmem,
//                           CUstream s, unsigned long long *slots, int n) {
//     void *ptrs[40];
//     if (n > 40) return CUDA_ERROR_INVALID_VALUE;
//     for (int i = 0; i < n; i++) ptrs[i] = &slots[i];
//     return cuLaunchKernel(f, gx, gy, gz, bx, by, bz, shmem, s, ptrs, NULL);
// }
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
	// Every value sits in its own 8-byte slot (4-byte values in the low
	// half), which is what cuLaunchKernel reads through each parameter
	// pointer for the kernel's 4- and 8-byte parameters.
	var slotArr [40]uint64
	if len(args) > len(slotArr) {
		return fmt.Errorf("cuda: kernel %s has %d arguments, at most %d supported", name, len(args), len(slotArr))
	}
	slots := slotArr[:len(args)]
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
	}
	grid.Y, grid.Z, block.Y, block.Z = max(grid.Y, 1), max(grid.Z, 1), max(block.Y, 1), max(block.Z, 1)
	cf := *(*C.CUfunction)(unsafe.Pointer(&fn))
	cs := *(*C.CUstream)(unsafe.Pointer(&s))
	var sp *C.ulonglong
	if len(slots) > 0 {
		sp = (*C.ulonglong)(unsafe.Pointer(&slots[0]))
	}
	if r := C.bs_launch(cf, C.uint(grid.X), C.uint(grid.Y), C.uint(grid.Z), C.uint(block.X), C.uint(block.Y), C.uint(block.Z),
		C.uint(shmem), cs, sp, C.int(len(slots))); r != C.CUDA_SUCCESS {
		return fmt.Errorf("cuda: launching %s grid %v block %v shared %d B: %w", name, grid, block, shmem, driverError(r))
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
