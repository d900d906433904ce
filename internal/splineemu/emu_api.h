// The C entry points of the spline kernels' emulation (emu.cc).
#pragma once
#ifdef __cplusplus
extern "C" {
#endif
void emu_spline_eval_f32(unsigned gx, unsigned gy, unsigned bd, const float *x, long long xs, const float *y, const float *m,
                         const float *t, long long ts, int n, int count, int P, int periodic, int cpk, float *val,
                         float *der, float *der2, unsigned *flags);
void emu_spline_eval_f64(unsigned gx, unsigned gy, unsigned bd, const double *x, long long xs, const double *y, const double *m,
                         const double *t, long long ts, int n, int count, int P, int periodic, int cpk, double *val,
                         double *der, double *der2, unsigned *flags);
void emu_spline_integrate_f32(unsigned gx, const float *x, long long xs, const float *y, const float *m, int n,
                              int count, int periodic, const float *lo, const float *hi, long long bs, float *out,
                              unsigned *flags);
void emu_spline_integrate_f64(unsigned gx, const double *x, long long xs, const double *y, const double *m, int n,
                              int count, int periodic, const double *lo, const double *hi, long long bs, double *out,
                              unsigned *flags);
#ifdef __cplusplus
}
#endif
