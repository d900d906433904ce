/*
 * example.c: libbandsolve from C. It solves a few batches through
 * bandsolve.h and prints, one per line, "name v1 v2 ..." records: the
 * solutions ("x.*"), status codes ("st.*"), per-system info ("info.*")
 * and error texts ("err.*"). capi_test.go runs it and compares the
 * records with solves made in Go. The inputs are the formulas of
 * coef() and rhs(), which capi_test.go repeats.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bandsolve.h"

/* coef is coefficient array w (0 a, 1 b, 2 c) at element k. */
static double coef(int w, int k) {
	switch (w) {
	case 0:
		return -1.0 + 0.125 * (k % 7);
	case 1:
		return 4.0 + 0.25 * (k % 5);
	default:
		return -1.5 + 0.0625 * (k % 3);
	}
}

/* rhs is the right-hand side at element k. */
static double rhs(int k) { return (double)(k % 11) - 5.0; }

static void print_f64(const char *name, const double *v, int n) {
	printf("%s", name);
	for (int i = 0; i < n; i++) {
		printf(" %.17g", v[i]);
	}
	printf("\n");
}

static void print_f32(const char *name, const float *v, int n) {
	printf("%s", name);
	for (int i = 0; i < n; i++) {
		printf(" %.9g", (double)v[i]);
	}
	printf("\n");
}

static void print_info(const char *name, const int32_t *info, int n) {
	printf("%s", name);
	for (int i = 0; i < n; i++) {
		printf(" %d", (int)info[i]);
	}
	printf("\n");
}

/* report prints the status and, on failure, the thread's error text
 * (one line: newlines become spaces). */
static void report(const char *name, bandsolve_status st) {
	printf("st.%s %d\n", name, st);
	if (st != BANDSOLVE_OK) {
		char buf[4096];
		snprintf(buf, sizeof buf, "%s", bandsolve_last_error());
		for (char *p = buf; *p; p++) {
			if (*p == '\n') {
				*p = ' ';
			}
		}
		printf("err.%s %s\n", name, buf);
	}
}

/* fail ends the program when a call that must succeed does not. */
static void must(const char *what, bandsolve_status st) {
	if (st != BANDSOLVE_OK) {
		fprintf(stderr, "%s: status %d: %s\n", what, st, bandsolve_last_error());
		exit(1);
	}
}

int main(void) {
	printf("version %s\n", bandsolve_version());
	printf("api %d %d\n", bandsolve_api_version(), BANDSOLVE_API_VERSION);
	printf("cuda %d\n", bandsolve_has_cuda());

	/* 1. float64, contiguous, N=7, G=5. */
	{
		enum { N = 7, G = 5, L = N * G };
		double a[L], b[L], c[L], d[L], x[L];
		int32_t info[G];
		for (int k = 0; k < L; k++) {
			a[k] = coef(0, k), b[k] = coef(1, k), c[k] = coef(2, k), d[k] = rhs(k);
		}
		bandsolve_tridiag p;
		must("create contiguous", bandsolve_tridiag_create(&p, N, G, BANDSOLVE_LAYOUT_CONTIGUOUS, 0, 0,
			BANDSOLVE_F64, "gtsv", BANDSOLVE_PIVOT_AUTO, 0, BANDSOLVE_DEVICE_CPU, 0));
		report("contiguous", bandsolve_tridiag_solve(p, a, b, c, d, x, info));
		printf("lasterror.ok [%s]\n", bandsolve_last_error());
		print_f64("x.contiguous", x, L);
		print_info("info.contiguous", info, G);
		printf("describe.contiguous %s\n", bandsolve_tridiag_describe(p));

		/* Device pointers on a CPU plan. */
		report("device_on_cpu", bandsolve_tridiag_solve_device(p, 0, 0, 0, 0, 0, 0, info));
		print_info("info.device_on_cpu", info, G);

		/* NaN in d of system 2, row 3: nothing solved. */
		d[2 * N + 3] = NAN;
		report("nan", bandsolve_tridiag_solve(p, a, b, c, d, x, info));
		print_info("info.nan", info, G);

		/* A null coefficient array. */
		report("null_b", bandsolve_tridiag_solve(p, a, NULL, c, d, x, info));
		must("destroy", bandsolve_tridiag_destroy(p));
	}

	/* 2. float32, strided (a 6×5 row-major array, the systems down its
	 * first 4 columns: elem_stride 5, batch_stride 1), in place. */
	{
		enum { N = 6, G = 4, E = 5, L = (N - 1) * E + (G - 1) + 1 };
		float a[L], b[L], c[L], d[L];
		for (int k = 0; k < L; k++) {
			a[k] = (float)coef(0, k), b[k] = (float)coef(1, k), c[k] = (float)coef(2, k), d[k] = (float)rhs(k);
		}
		bandsolve_tridiag p;
		must("create strided", bandsolve_tridiag_create(&p, N, G, BANDSOLVE_LAYOUT_STRIDED, E, 1,
			BANDSOLVE_F32, NULL, BANDSOLVE_PIVOT_AUTO, 0, BANDSOLVE_DEVICE_CPU, 2));
		report("strided", bandsolve_tridiag_solve(p, a, b, c, d, d, NULL));
		print_f32("x.strided", d, L);
		must("destroy", bandsolve_tridiag_destroy(p));
	}

	/* 3. float64, constant coefficients, cyclic, interleaved. */
	{
		enum { N = 8, G = 3, L = N * G };
		double d[L], x[L];
		for (int k = 0; k < L; k++) {
			d[k] = rhs(k);
		}
		bandsolve_tridiag p;
		must("create cyclic", bandsolve_tridiag_create(&p, N, G, BANDSOLVE_LAYOUT_INTERLEAVED, 0, 0,
			BANDSOLVE_F64, "auto", BANDSOLVE_PIVOT_AUTO, BANDSOLVE_CYCLIC, BANDSOLVE_DEVICE_CPU, 0));
		report("cyclic_const", bandsolve_tridiag_solve_const(p, -1.0, 3.0, -0.5, d, x, NULL));
		print_f64("x.cyclic_const", x, L);
		must("destroy", bandsolve_tridiag_destroy(p));
	}

	/* 4. Factor once, solve two right-hand sides. */
	{
		enum { N = 5, G = 4, L = N * G, R = 2 };
		double a[L], b[L], c[L], d[R * L], x[R * L];
		int32_t info[G];
		for (int k = 0; k < L; k++) {
			a[k] = coef(0, k), b[k] = coef(1, k), c[k] = coef(2, k);
		}
		for (int k = 0; k < R * L; k++) {
			d[k] = rhs(3 * k + 1);
		}
		bandsolve_tridiag p;
		bandsolve_factors f;
		must("create factor", bandsolve_tridiag_create(&p, N, G, BANDSOLVE_LAYOUT_CONTIGUOUS, 0, 0,
			BANDSOLVE_F64, "thomas", BANDSOLVE_PIVOT_AUTO, 0, BANDSOLVE_DEVICE_CPU, 0));
		report("factor", bandsolve_tridiag_factor(p, a, b, c, &f, info));
		must("destroy plan", bandsolve_tridiag_destroy(p)); /* the factors stay valid */
		report("factors_solve", bandsolve_factors_solve(f, R, d, x, info));
		print_f64("x.factors", x, R * L);
		must("destroy factors", bandsolve_factors_destroy(f));

		/* A zero pivot: system 1's first diagonal entry, Thomas without
		 * pivoting. */
		b[1 * N + 0] = 0;
		must("create zero", bandsolve_tridiag_create(&p, N, G, BANDSOLVE_LAYOUT_CONTIGUOUS, 0, 0,
			BANDSOLVE_F64, "thomas", BANDSOLVE_PIVOT_NEVER, 0, BANDSOLVE_DEVICE_CPU, 0));
		report("zero_pivot", bandsolve_tridiag_solve(p, a, b, c, d, x, info));
		print_info("info.zero_pivot", info, G);
		print_f64("x.zero_pivot", x, L);
		must("destroy", bandsolve_tridiag_destroy(p));
	}

	/* 5. Argument errors. */
	{
		bandsolve_tridiag p = NULL;
		report("n0", bandsolve_tridiag_create(&p, 0, 3, BANDSOLVE_LAYOUT_CONTIGUOUS, 0, 0,
			BANDSOLVE_F64, NULL, 0, 0, BANDSOLVE_DEVICE_CPU, 0));
		printf("handle.n0 %d\n", p == NULL);
		report("overlap", bandsolve_tridiag_create(&p, 4, 4, BANDSOLVE_LAYOUT_STRIDED, 2, 1,
			BANDSOLVE_F64, NULL, 0, 0, BANDSOLVE_DEVICE_CPU, 0));
		report("algorithm", bandsolve_tridiag_create(&p, 4, 4, BANDSOLVE_LAYOUT_CONTIGUOUS, 0, 0,
			BANDSOLVE_F64, "gauss", 0, 0, BANDSOLVE_DEVICE_CPU, 0));
		report("precision", bandsolve_tridiag_create(&p, 4, 4, BANDSOLVE_LAYOUT_CONTIGUOUS, 0, 0,
			7, NULL, 0, 0, BANDSOLVE_DEVICE_CPU, 0));
		if (!bandsolve_has_cuda()) {
			report("cuda_in_cpu", bandsolve_tridiag_create(&p, 4, 4, BANDSOLVE_LAYOUT_CONTIGUOUS, 0, 0,
				BANDSOLVE_F64, NULL, 0, 0, BANDSOLVE_DEVICE_CUDA, 0));
		}
		int32_t info[2] = {7, 7};
		report("null_handle", bandsolve_tridiag_solve(NULL, NULL, NULL, NULL, NULL, NULL, info));
		report("null_destroy", bandsolve_tridiag_destroy(NULL));
	}

	/* 6. Banded, SciPy's (l, u) storage: N=6, kl=2, ku=1, G=3, two
	 * right-hand sides; system 2 is singular (column 4 is zero). */
	{
		enum { N = 6, KL = 2, KU = 1, R = KL + KU + 1, G = 3, NR = 2 };
		double ab[G * R * N], b[G * N * NR], x[G * N * NR];
		int32_t info[G];
		for (int k = 0; k < G * R * N; k++) {
			int j = k % N, row = (k / N) % R;
			ab[k] = row == KU ? 5.0 + coef(1, k) : coef(row < KU ? 2 : 0, k);
			(void)j;
		}
		for (int k = 0; k < G * N * NR; k++) {
			b[k] = rhs(k);
		}
		for (int r = 0; r < R; r++) {
			ab[2 * R * N + r * N + 4] = 0;
		}
		report("banded", bandsolve_solve_banded(BANDSOLVE_F64, N, KL, KU, G, NR, ab, b, x, info));
		print_info("info.banded", info, G);
		print_f64("x.banded", x, G * N * NR);
		b[1 * N * NR + 3 * NR + 1] = INFINITY;
		report("banded_inf", bandsolve_solve_banded(BANDSOLVE_F64, N, KL, KU, G, NR, ab, b, x, info));
		print_info("info.banded_inf", info, G);
		report("banded_kl", bandsolve_solve_banded(BANDSOLVE_F64, N, N, KU, G, NR, ab, b, x, info));

		/* The device solve: argument errors in either variant (nothing
		 * is read), the refusal of the CPU variant. The addresses are
		 * never dereferenced. */
		const uint64_t fake = 4096;
		report("banded_device_null", bandsolve_solve_banded_device(BANDSOLVE_F64, N, KL, KU, G, NR,
			fake, 0, fake, 0, 0, info));
		print_info("info.banded_device_null", info, G);
		report("banded_device_ku", bandsolve_solve_banded_device(BANDSOLVE_F64, N, KL, N, G, NR,
			fake, fake, fake, 0, 0, info));
		report("banded_device_precision", bandsolve_solve_banded_device(7, N, KL, KU, G, NR,
			fake, fake, fake, 0, 0, info));
		report("banded_device_ordinal", bandsolve_solve_banded_device(BANDSOLVE_F32, N, KL, KU, G, NR,
			fake, fake, fake, -1, 0, info));
		if (!bandsolve_has_cuda()) {
			report("banded_device_cpu", bandsolve_solve_banded_device(BANDSOLVE_F64, N, KL, KU, G, NR,
				fake, fake, fake, 0, 0, info));
			print_info("info.banded_device_cpu", info, G);
		}
	}

	/* 7. Symmetric positive definite bands, SciPy's solveh_banded upper
	 * storage: N=5, u=1 (4 on the diagonal, -1 beside it), G=2; the
	 * diagonal of system 1 at row 3 is -4, so it is not positive
	 * definite there. */
	{
		enum { N = 5, U = 1, G = 2 };
		double ab[G * (U + 1) * N], b[G * N], x[G * N];
		int32_t info[G];
		for (int s = 0; s < G; s++) {
			for (int j = 0; j < N; j++) {
				ab[s * (U + 1) * N + j] = j == 0 ? 0 : -1;      /* a[j-1][j] */
				ab[s * (U + 1) * N + N + j] = 4;                 /* a[j][j] */
				b[s * N + j] = 1 + j;
			}
		}
		ab[1 * (U + 1) * N + N + 3] = -4;
		report("solveh", bandsolve_solveh_banded(BANDSOLVE_F64, N, U, 0, G, 1, ab, b, x, info));
		print_info("info.solveh", info, G);
		print_f64("x.solveh", x, G * N);
	}
	printf("done\n");
	return 0;
}
