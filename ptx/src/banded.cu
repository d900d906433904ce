// bandsolve's banded kernels: one translation unit, one PTX module
// (ptx/banded.ptx), apart from the tridiagonal one. Kernel names start with
// "band_" (package cuda looks them up in this module by that prefix).
#include "band_batch.cuh"
#include "band_pivot.cuh"
#include "band_cpivot.cuh"
#include "band_window.cuh"
#include "band_spike.cuh"
#include "band_blocked.cuh"
