// bandsolve's sparse kernels: one translation unit, one PTX module
// (ptx/sparse.ptx): the sparse triangular solves and their analyses.
#include "sptrsv.cuh"
