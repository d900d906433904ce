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
//
// // bs_launch_ctx makes ctx current on the calling thread and launches f
// // on a 1-D grid, in one C call: a goroutine cannot change threads in
// // the middle of it, so the caller needs no pinned thread.
// static CUresult bs_launch_ctx(CUcontext ctx, CUfunction f, unsigned gx, unsigned bx, unsigned shmem,
//                               CUstream s, unsigned long long *slots, int n) {
//     CUresult r = cuCtxSetCurrent(ctx);
//     if (r != CUDA_SUCCESS) return r;
//     return bs_launch(f, gx, 1, 1, bx, 1, 1, shmem, s, slots, n);
// }
import "C"

import (
	"fmt"
	"unsafe"

	"gorgonia.org/cu"
)

// Dim3 is a grid or block size.
type Dim3 struct{ X, Y, Z int }

// LaunchSlots launches kernel name on stream s with its parameters'
// values in slots, one 8-byte slot each (4-byte values in the low half),
// as the generated launchers of package internal/gpu/kernels fill them;
// it must run on the device thread (inside Enqueue or Do). Shared memory
// above the default 48 KiB is opted into once per kernel.
func (d *Device) LaunchSlots(name string, grid, block Dim3, shmem int, s cu.Stream, slots []uint64) error {
	fn, err := d.Kernel(name, shmem)
	if err != nil {
		return err
	}
	return d.launchSlots(fn, name, grid, block, shmem, s, slots)
}

func (d *Device) launchSlots(fn cu.Function, name string, grid, block Dim3, shmem int, s cu.Stream, slots []uint64) error {
	if len(slots) > 40 {
		return fmt.Errorf("cuda: kernel %s has %d parameters, at most 40 supported", name, len(slots))
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
		return fmt.Errorf("cuda: launching %s grid %v block %v shared %d B: %w", name, grid, block, shmem, DriverError(r))
	}
	return nil
}

// Kernel returns kernel name with its dynamic shared memory limit
// raised to shmem bytes where that is above the default 48 KiB (device
// thread).
func (d *Device) Kernel(name string, shmem int) (cu.Function, error) {
	fn, err := d.function(name)
	if err != nil {
		return fn, err
	}
	if shmem > d.props.SharedPerBlock && d.attr[name] < shmem {
		if shmem > d.props.MaxShared() {
			return fn, fmt.Errorf("cuda: kernel %s needs %d B of shared memory, the device allows %d", name, shmem, d.props.MaxShared())
		}
		cf := *(*C.CUfunction)(unsafe.Pointer(&fn))
		if r := C.cuFuncSetAttribute(cf, C.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, C.int(shmem)); r != C.CUDA_SUCCESS {
			return fn, fmt.Errorf("cuda: raising kernel %s's shared memory to %d B: %w", name, shmem, DriverError(r))
		}
		d.attr[name] = shmem
	}
	return fn, nil
}

// DirectKernel is one launch of a kernel resolved in advance (1-D grid
// and block), for LaunchDirect.
type DirectKernel struct {
	name               string
	fn                 cu.Function
	grid, block, shmem int
}

// PrepareDirect resolves kernel name for launches of grid × block threads
// with shmem bytes of dynamic shared memory (device thread).
func (d *Device) PrepareDirect(name string, grid, block, shmem int) (*DirectKernel, error) {
	fn, err := d.Kernel(name, shmem)
	if err != nil {
		return nil, err
	}
	return &DirectKernel{name: name, fn: fn, grid: grid, block: block, shmem: shmem}, nil
}

// LaunchDirect launches k on stream s with its parameters' values in
// slots (one 8-byte slot each, as launch fills them), from any goroutine:
// it holds the device's lock and makes the context current in the same C
// call as the launch, so it pins no thread, resolves nothing and
// allocates nothing. It is the launch of small solves, where the host's
// share of the latency counts.
func (d *Device) LaunchDirect(k *DirectKernel, s cu.Stream, slots []uint64) error {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return ErrClosed
	}
	r := C.bs_launch_ctx(*(*C.CUcontext)(unsafe.Pointer(&d.ctx)), *(*C.CUfunction)(unsafe.Pointer(&k.fn)),
		C.uint(k.grid), C.uint(k.block), C.uint(k.shmem), *(*C.CUstream)(unsafe.Pointer(&s)),
		(*C.ulonglong)(unsafe.Pointer(&slots[0])), C.int(len(slots)))
	d.mu.Unlock()
	if r != C.CUDA_SUCCESS {
		return fmt.Errorf("cuda: launching %s grid %d block %d shared %d B: %w", k.name, k.grid, k.block, k.shmem, DriverError(r))
	}
	return nil
}

// KernelAttr reads an attribute of a kernel (device thread).
func (d *Device) KernelAttr(name string, a cu.FunctionAttribute) (int, error) {
	fn, err := d.function(name)
	if err != nil {
		return 0, err
	}
	return fn.Attribute(a)
}

// KernelRegs is the registers per thread of kernel name, from any
// goroutine (it runs on the device thread).
func (d *Device) KernelRegs(name string) (int, error) {
	var regs int
	err := d.Enqueue(func() error {
		var err error
		regs, err = d.KernelAttr(name, cu.NumRegs)
		return err
	})
	return regs, err
}

// DriverError describes a CUresult returned by a direct driver call.
type DriverError C.CUresult

func (e DriverError) Error() string {
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

// AllocMapped allocates bytes of page-locked host memory mapped into the
// device's address space (device thread): the host's pointer and the
// kernels'. what names the memory in errors.
func AllocMapped(bytes int, what string) (unsafe.Pointer, cu.DevicePtr, error) {
	var p unsafe.Pointer
	if r := C.cuMemHostAlloc(&p, C.size_t(bytes), C.CU_MEMHOSTALLOC_DEVICEMAP|C.CU_MEMHOSTALLOC_PORTABLE); r != C.CUDA_SUCCESS {
		return nil, 0, fmt.Errorf("cuda: allocating %s (mapped host memory): %w", what, DriverError(r))
	}
	var dp C.CUdeviceptr
	if r := C.cuMemHostGetDevicePointer(&dp, p, 0); r != C.CUDA_SUCCESS {
		C.cuMemFreeHost(p)
		return nil, 0, fmt.Errorf("cuda: mapping %s into the device: %w", what, DriverError(r))
	}
	return p, cu.DevicePtr(dp), nil
}

// AllocHost allocates page-locked host memory (device thread).
func AllocHost(bytes int) (unsafe.Pointer, error) {
	var p unsafe.Pointer
	if r := C.cuMemAllocHost(&p, C.size_t(bytes)); r != C.CUDA_SUCCESS {
		return nil, fmt.Errorf("cuda: allocating %d B of pinned host memory: %w", bytes, DriverError(r))
	}
	return p, nil
}

// SyncLegacyStream waits for the work of the legacy default stream while
// persistent work runs (AddPersistent): a copy there may return before
// its data lands, and a persistent grid on a non-blocking stream is not
// ordered after it. It returns at once when nothing persistent runs.
// Call it on the device thread (inside Enqueue).
func (d *Device) SyncLegacyStream() error {
	if d.running.Load() == 0 {
		return nil
	}
	if rc := C.cuStreamSynchronize(nil); rc != C.CUDA_SUCCESS {
		return fmt.Errorf("cuda: synchronising the default stream: %w", DriverError(rc))
	}
	return nil
}
