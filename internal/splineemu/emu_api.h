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
void emu_spline_fit_knots_f32(unsigned gx, unsigned bd, const float *x, int n, unsigned *info, float *h);
void emu_spline_fit_knots_f64(unsigned gx, unsigned bd, const double *x, int n, unsigned *info, double *h);
void emu_spline_fit_rows_f32(unsigned gx, const float *x, long long xs, const float *y, int n, int count, int kind,
                             const float *d0, const float *dn, long long ss, float *a, float *b, float *c, float *d,
                             unsigned *flags);
void emu_spline_fit_rows_f64(unsigned gx, const double *x, long long xs, const double *y, int n, int count, int kind,
                             const double *d0, const double *dn, long long ss, double *a, double *b, double *c,
                             double *d, unsigned *flags);
void emu_spline_fit_wrap_f32(unsigned gx, unsigned bd, float *m, int n, int count);
void emu_spline_fit_wrap_f64(unsigned gx, unsigned bd, double *m, int n, int count);
#ifdef __cplusplus
}
#endif
