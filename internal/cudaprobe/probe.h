// The CUDA driver probe of package cudaprobe, callable from C (a cgo
// preamble of any package of the binary).
#ifndef BANDSOLVE_CUDAPROBE_H
#define BANDSOLVE_CUDAPROBE_H

// Outcomes of the probe.
enum {
	BANDSOLVE_CUDA_OK = 0,        // the driver loads, initializes and has a device
	BANDSOLVE_CUDA_NO_LIBRARY = 1, // libcuda.so.1 cannot be loaded
	BANDSOLVE_CUDA_NO_SYMBOL = 2,  // it lacks cuInit or cuDeviceGetCount
	BANDSOLVE_CUDA_INIT = 3,       // cuInit(0) failed
	BANDSOLVE_CUDA_COUNT = 4,      // cuDeviceGetCount failed
	BANDSOLVE_CUDA_NO_DEVICE = 5   // the driver counts no device
};

// bandsolve_cuda_probe runs the probe once (later calls return the
// recorded result) and returns its outcome; *code receives the CUDA
// result code of a failed call (0 otherwise) and *what a sentence naming
// what is missing ("" when all is well). Both pointers may be NULL.
int bandsolve_cuda_probe(int *code, const char **what);

// bandsolve_cuda_require prints, when the probe failed, one line
// "<prog>: built with -tags cuda, but <what>; <hint>" on stderr and ends
// the process with status 1. It is meant for a command's own constructor
// (it runs before any Go package's init, so before gorgonia.org/cu ends
// the process with a message of its own); library code queries
// bandsolve_cuda_probe (or cudaprobe.Err) instead.
void bandsolve_cuda_require(const char *prog, const char *hint);

#endif
