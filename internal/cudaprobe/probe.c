//go:build cuda

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "probe.h"

typedef int (*cu_init_fn)(unsigned int);
typedef int (*cu_count_fn)(int *);
typedef int (*cu_error_fn)(int, const char **);

static int probe_done;
static int probe_status;
static int probe_code;
static char probe_what[512];

// describe writes the CUDA name and text of result r, as cuGetErrorName
// and cuGetErrorString give them, to buf.
static void describe(void *lib, int r, char *buf, size_t n) {
	cu_error_fn name = (cu_error_fn)dlsym(lib, "cuGetErrorName");
	cu_error_fn text = (cu_error_fn)dlsym(lib, "cuGetErrorString");
	const char *s1 = NULL, *s2 = NULL;
	if (name == NULL || name(r, &s1) != 0) {
		s1 = NULL;
	}
	if (text == NULL || text(r, &s2) != 0) {
		s2 = NULL;
	}
	if (s1 != NULL && s2 != NULL) {
		snprintf(buf, n, "%s (%d: %s)", s1, r, s2);
	} else if (s1 != NULL) {
		snprintf(buf, n, "%s (%d)", s1, r);
	} else {
		snprintf(buf, n, "error %d", r);
	}
}

static void run_probe(void) {
	char err[256];
	// The library stays loaded: the CUDA bindings use the same one.
	void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
	if (lib == NULL) {
		const char *e = dlerror();
		probe_status = BANDSOLVE_CUDA_NO_LIBRARY;
		snprintf(probe_what, sizeof probe_what,
			"the NVIDIA driver library libcuda.so.1 cannot be loaded (%s): no NVIDIA driver is installed",
			e != NULL ? e : "not found");
		return;
	}
	cu_init_fn init = (cu_init_fn)dlsym(lib, "cuInit");
	cu_count_fn count = (cu_count_fn)dlsym(lib, "cuDeviceGetCount");
	if (init == NULL || count == NULL) {
		probe_status = BANDSOLVE_CUDA_NO_SYMBOL;
		snprintf(probe_what, sizeof probe_what,
			"the driver library libcuda.so.1 has no %s (not an NVIDIA driver?)",
			init == NULL ? "cuInit" : "cuDeviceGetCount");
		return;
	}
	int r = init(0);
	if (r != 0) {
		probe_status = BANDSOLVE_CUDA_INIT;
		probe_code = r;
		describe(lib, r, err, sizeof err);
		if (r == 100) { // CUDA_ERROR_NO_DEVICE
			snprintf(probe_what, sizeof probe_what,
				"the NVIDIA driver finds no GPU: cuInit failed with %s", err);
		} else {
			snprintf(probe_what, sizeof probe_what,
				"the NVIDIA driver cannot be initialized: cuInit failed with %s", err);
		}
		return;
	}
	int n = 0;
	r = count(&n);
	if (r != 0) {
		probe_status = BANDSOLVE_CUDA_COUNT;
		probe_code = r;
		describe(lib, r, err, sizeof err);
		snprintf(probe_what, sizeof probe_what,
			"the NVIDIA driver cannot count its devices: cuDeviceGetCount failed with %s", err);
		return;
	}
	if (n == 0) {
		probe_status = BANDSOLVE_CUDA_NO_DEVICE;
		snprintf(probe_what, sizeof probe_what, "the NVIDIA driver finds no GPU (cuDeviceGetCount: 0 devices)");
	}
}

int bandsolve_cuda_probe(int *code, const char **what) {
	// Constructors run on one thread, before any Go code; later calls
	// (from Go) only read what the first one recorded.
	if (!probe_done) {
		run_probe();
		probe_done = 1;
	}
	if (code != NULL) {
		*code = probe_code;
	}
	if (what != NULL) {
		*what = probe_what;
	}
	return probe_status;
}

void bandsolve_cuda_require(const char *prog, const char *hint) {
	const char *what;
	if (bandsolve_cuda_probe(NULL, &what) == BANDSOLVE_CUDA_OK) {
		return;
	}
	fflush(stdout);
	fprintf(stderr, "%s: built with -tags cuda, but %s; %s\n", prog, what, hint);
	fflush(stderr);
	_exit(1);
}

// The probe runs before any Go package's init (gorgonia.org/cu calls
// cuInit in its init and ends the process when that fails), so that what
// it found can be told, or acted on, first. It only records the result.
__attribute__((constructor)) static void bandsolve_cuda_probe_early(void) {
	bandsolve_cuda_probe(NULL, NULL);
}
