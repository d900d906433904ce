//go:build cuda

package bandedgpu

// #cgo LDFLAGS: -lcuda
// #include <cuda.h>
import "C"

import (
	"fmt"
	"unsafe"

	"gorgonia.org/cu"

	"github.com/bandsolve/bandsolve/banded"
	"github.com/bandsolve/bandsolve/cuda"
)

// maxPitch bounds the pitches of one cuMemcpy2D (the driver refuses
// pitches above CU_DEVICE_ATTRIBUTE_MAX_PITCH, 2³¹ − 1 bytes on the GPUs
// the library runs on); wider blocks are copied one system at a time.
const maxPitch = 1<<31 - 1

// padMatrices copies the matrices ab of bandwidths (kl, ku) into rows
// K − ku … K + kl of the plan's padded buffer, whose other rows are zero,
// on the plan's stream (device thread, p.mu held). The zero rows are
// written when the bandwidths differ from those of the last copy.
func (p *BatchPlan[T]) padMatrices(ab *cuda.Buffer[T], kl, ku int) error {
	e := elemBytes[T]()
	n, g := int64(p.n), int64(p.g)
	rows := int64(kl + ku + 1)
	dst := p.padded.Ptr()
	if kl != p.padKL || ku != p.padKU {
		p.padKL, p.padKU = -1, -1
		if err := cu.MemsetD32Async(dst, 0, p.coef()*e/4, p.stream); err != nil {
			return fmt.Errorf("cuda: clearing the padded matrices: %w", err)
		}
	}
	top := int64(p.k - ku) // the first row of the band in the padded block
	var err error
	if p.layout == banded.Interleaved {
		// Element e of a block at e·G + g: the band is one range.
		err = cu.MemcpyDtoDAsync(dst+cu.DevicePtr(top*n*g*e), ab.Ptr(), rows*n*g*e, p.stream)
	} else {
		src, dpitch := rows*n*e, int64(2*p.k+1)*n*e
		if dpitch <= maxPitch {
			err = copyRows(dst+cu.DevicePtr(top*n*e), dpitch, ab.Ptr(), src, src, g, p.stream)
		} else {
			for s := range g {
				if err = cu.MemcpyDtoDAsync(dst+cu.DevicePtr(s*dpitch+top*n*e), ab.Ptr()+cu.DevicePtr(s*src), src, p.stream); err != nil {
					break
				}
			}
		}
	}
	if err != nil {
		return fmt.Errorf("cuda: copying the matrices of KL=%d KU=%d into K=%d storage: %w", kl, ku, p.k, err)
	}
	p.padKL, p.padKU = kl, ku
	return nil
}

// copyRows queues the copy of h rows of w bytes from src (rows sp bytes
// apart) to dst (dp bytes apart), device memory both, on s.
func copyRows(dst cu.DevicePtr, dp int64, src cu.DevicePtr, sp, w, h int64, s cu.Stream) error {
	var c C.CUDA_MEMCPY2D
	c.srcMemoryType = C.CU_MEMORYTYPE_DEVICE
	c.srcDevice = C.CUdeviceptr(src)
	c.srcPitch = C.size_t(sp)
	c.dstMemoryType = C.CU_MEMORYTYPE_DEVICE
	c.dstDevice = C.CUdeviceptr(dst)
	c.dstPitch = C.size_t(dp)
	c.WidthInBytes = C.size_t(w)
	c.Height = C.size_t(h)
	if rc := C.cuMemcpy2DAsync(&c, *(*C.CUstream)(unsafe.Pointer(&s))); rc != C.CUDA_SUCCESS {
		return cuda.DriverError(rc)
	}
	return nil
}
