// bandsolve's banded kernels: one translation unit, one PTX module
// (ptx/banded.ptx), apart from the tridiagonal one. Kernel names start with
// "band_" (package cuda looks them up in this module by that prefix).
#include "band_batch.cuh"
#include "band_pivot.cuh"
// The complex pivoting batch (complex64/complex128 as float2/double2); the
// real kernels' CPU emulation (internal/bandemu) leaves it out, the
// complex one (internal/complexemu) runs it.
#ifndef BAND_EMU
#include "band_cpivot.cuh"
#endif
#include "band_window.cuh"
#include "band_spike.cuh"
#include "band_blocked.cuh"
