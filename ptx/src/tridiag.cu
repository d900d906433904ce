// bandsolve's tridiagonal kernels: one translation unit, one PTX module
// (ptx/tridiag.ptx). Each algorithm is in its own header.
#include "thomas.cuh"
#include "cyclic.cuh"
#include "gtsv.cuh"
#include "matvec.cuh"
#include "pcr.cuh"
#include "cr.cuh"
#include "tpr.cuh"
#include "wangmou.cuh"
#include "partition.cuh"
#include "segment.cuh"
#include "signal.cuh"
#include "vector.cuh"
