// The C entry point of the complex pivoting band batch kernel's emulation
// (band.cc): f64 selects complex128 (double parts), else complex64 (float
// parts); k is the half-bandwidth (1 … 8); the other arguments are the
// kernel's (ptx/src/band_cpivot.cuh), pointers to interleaved real and
// imaginary parts.
#pragma once
#ifdef __cplusplus
extern "C" {
#endif
int emu_band_cpivot(int f64, int k, const void *a, const void *d, void *x, void *w, int *piv, int n, int G, int Gp,
                    long long aes, long long abs_, long long des, long long dbs, int flags, int *status);
#ifdef __cplusplus
}
#endif
