// bandsolve's sparse kernels: one translation unit, one PTX module
// (ptx/sparse.ptx): the sparse triangular solves and their analyses, and
// the incomplete factorizations.
#include "sptrsv.cuh"
#include "ilu.cuh"
