// The C entry points of the complex kernels' emulation (emu.cc): alg 0
// Thomas, 1 gtsv, 2 Auto; f64 selects complex128 (double parts), else
// complex64 (float parts). Pointers are to interleaved real and imaginary
// parts; ca, cb, cc hold the constant coefficients' two parts each.
#pragma once
#ifdef __cplusplus
extern "C" {
#endif
void emu_complex_solve(int alg, int f64, const void *a, const void *b, const void *c, const void *d, void *x,
                       void *work, int n, int G, long long es, long long bs, const double *ca, const double *cb,
                       const double *cc, int isConst, int bounded, int cyclic, int *status);
// emu_cpart_solve launches cpart_p16 (ptx/src/cpart.cuh) with spb systems a
// block and a thread a chunk of 16 rows; redo may be null.
void emu_cpart_solve(int f64, const void *a, const void *b, const void *c, const void *d, void *x, int n, int G,
                     long long es, long long bs, const double *ca, const double *cb, const double *cc, int isConst,
                     int bounded, int *redo, int *status, int spb);
#ifdef __cplusplus
}
#endif
