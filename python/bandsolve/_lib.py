"""Loading libbandsolve: the CUDA variant where a GPU is present, the CPU
variant otherwise, and the ctypes prototypes of bandsolve.h."""

import ctypes
import os
import threading
from pathlib import Path

# Status codes of bandsolve.h.
OK = 0
ERR_ARGUMENT = 1
ERR_NONFINITE = 2
ERR_SYSTEMS = 3
ERR_UNSUPPORTED = 4
ERR_MEMORY = 5
ERR_DEVICE = 6
ERR_INTERNAL = 7

F32, F64 = 0, 1
LAYOUT_CONTIGUOUS, LAYOUT_INTERLEAVED, LAYOUT_STRIDED = 0, 1, 2
PIVOTING = {"auto": 0, "always": 1, "never": 2}
FLAG_CYCLIC, FLAG_CHECK, FLAG_SKIP_FINITE = 1, 2, 4
DEVICE_CPU, DEVICE_CUDA = 0, 1

CPU_NAME = "libbandsolve.so"
CUDA_NAME = "libbandsolve_cuda.so"

_lock = threading.Lock()
_lib = None
_probe = None


def cuda_probe():
    """Returns (ok, reason): whether the NVIDIA driver initializes and
    counts a GPU, asked through libcuda.so.1 with ctypes (cuInit,
    cuDeviceGetCount). Loading the CUDA variant where this fails would end
    the process, so the package asks first."""
    global _probe
    if _probe is not None:
        return _probe
    try:
        cu = ctypes.CDLL("libcuda.so.1")
    except OSError as e:
        _probe = (False, f"libcuda.so.1 cannot be loaded ({e})")
        return _probe
    r = cu.cuInit(0)
    if r != 0:
        _probe = (False, f"cuInit failed with CUDA error {r}")
        return _probe
    n = ctypes.c_int(0)
    r = cu.cuDeviceGetCount(ctypes.byref(n))
    if r != 0 or n.value < 1:
        _probe = (False, f"cuDeviceGetCount: error {r}, {n.value} devices")
        return _probe
    _probe = (True, f"{n.value} GPU(s)")
    return _probe


def _links_libcuda(path):
    """Whether the library file names libcuda.so.1 (the CUDA variant's
    dynamic dependency) without loading it."""
    try:
        with open(path, "rb") as f:
            return b"libcuda.so.1" in f.read()
    except OSError:
        return False


def _candidates():
    """The (cpu, cuda) library paths to consider, either may be None."""
    env = os.environ.get("BANDSOLVE_LIB")
    if env:
        p = Path(env)
        if p.is_dir():
            cpu, cuda = p / CPU_NAME, p / CUDA_NAME
            return (cpu if cpu.exists() else None, cuda if cuda.exists() else None)
        if not p.exists():
            raise ImportError(f"bandsolve: BANDSOLVE_LIB={env} does not exist")
        if _links_libcuda(p):
            return (None, p)
        return (p, None)
    d = Path(__file__).resolve().parent / "lib"
    cpu, cuda = d / CPU_NAME, d / CUDA_NAME
    return (cpu if cpu.exists() else None, cuda if cuda.exists() else None)


def load():
    """Loads the library once and returns it."""
    global _lib
    with _lock:
        if _lib is not None:
            return _lib
        cpu, cuda = _candidates()
        want = os.environ.get("BANDSOLVE_DEVICE", "")
        path = None
        if cuda is not None and want != "cpu":
            ok, why = cuda_probe()
            if ok:
                path = cuda
            elif cpu is None:
                raise ImportError(
                    f"bandsolve: only the CUDA variant of libbandsolve was found ({cuda}), "
                    f"and no GPU can be used here ({why}); loading it would end the process. "
                    "Point BANDSOLVE_LIB to the CPU variant (go build -buildmode=c-shared ./capi).")
        if path is None:
            path = cpu
        if path is None:
            raise ImportError(
                "bandsolve: libbandsolve was not found: install the package with pip (which builds "
                "it with Go), or set BANDSOLVE_LIB to a library built with "
                "go build -buildmode=c-shared -o libbandsolve.so ./capi")
        lib = ctypes.CDLL(str(path))
        _prototypes(lib)
        if lib.bandsolve_api_version() != 1:
            raise ImportError(f"bandsolve: {path} has API version {lib.bandsolve_api_version()}, want 1")
        lib.path = str(path)
        _lib = lib
        return lib


def _prototypes(lib):
    c = ctypes
    vp, i64, u64, up, dbl = c.c_void_p, c.c_int64, c.c_uint64, c.c_size_t, c.c_double
    i32p = vp  # int32_t *info, passed as an address
    handle = c.c_void_p
    protos = {
        "bandsolve_version": (c.c_char_p, []),
        "bandsolve_api_version": (c.c_int, []),
        "bandsolve_has_cuda": (c.c_int, []),
        "bandsolve_last_error": (c.c_char_p, []),
        "bandsolve_tridiag_create": (c.c_int, [c.POINTER(handle), i64, i64, c.c_int, i64, i64, c.c_int,
                                               c.c_char_p, c.c_int, c.c_uint, c.c_int, c.c_int]),
        "bandsolve_tridiag_destroy": (c.c_int, [handle]),
        "bandsolve_tridiag_describe": (c.c_char_p, [handle]),
        "bandsolve_tridiag_solve": (c.c_int, [handle, vp, vp, vp, vp, vp, i32p]),
        "bandsolve_tridiag_solve_const": (c.c_int, [handle, dbl, dbl, dbl, vp, vp, i32p]),
        "bandsolve_tridiag_solve_many": (c.c_int, [handle, i64, vp, vp, vp, vp, vp, i32p]),
        "bandsolve_tridiag_factor": (c.c_int, [handle, vp, vp, vp, c.POINTER(handle), i32p]),
        "bandsolve_tridiag_factor_const": (c.c_int, [handle, dbl, dbl, dbl, c.POINTER(handle), i32p]),
        "bandsolve_factors_solve": (c.c_int, [handle, i64, vp, vp, i32p]),
        "bandsolve_factors_destroy": (c.c_int, [handle]),
        "bandsolve_tridiag_solve_device": (c.c_int, [handle, u64, u64, u64, u64, u64, up, i32p]),
        "bandsolve_tridiag_solve_device_const": (c.c_int, [handle, dbl, dbl, dbl, u64, u64, up, i32p]),
        "bandsolve_solve_banded": (c.c_int, [c.c_int, i64, i64, i64, i64, i64, vp, vp, vp, i32p]),
        "bandsolve_solveh_banded": (c.c_int, [c.c_int, i64, i64, c.c_int, i64, i64, vp, vp, vp, i32p]),
        "bandsolve_solve_banded_device": (c.c_int, [c.c_int, i64, i64, i64, i64, i64, u64, u64, u64, c.c_int, up,
                                                    i32p]),
    }
    for name, (res, args) in protos.items():
        f = getattr(lib, name)
        f.restype, f.argtypes = res, args


_cu = None
_gpus = None


def _driver():
    """libcuda.so.1, loaded once (None when absent)."""
    global _cu
    if _cu is None:
        try:
            _cu = ctypes.CDLL("libcuda.so.1")
        except OSError:
            _cu = False
    return _cu or None


def gpu_count():
    """The number of GPUs the driver counts (0 when it cannot be used)."""
    global _gpus
    if _gpus is None:
        ok, why = cuda_probe()
        n = ctypes.c_int(0)
        _gpus = n.value if ok and _driver().cuDeviceGetCount(ctypes.byref(n)) == 0 else 0
    return _gpus


def device_ordinal(ptr):
    """The ordinal of the GPU that holds device address ptr
    (cuPointerGetAttribute), or None when the driver does not know it. With
    one GPU it is 0 without asking."""
    if gpu_count() == 1:
        return 0
    cu = _driver()
    if cu is None:
        return None
    v = ctypes.c_int(-1)
    CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL = 9
    r = cu.cuPointerGetAttribute(ctypes.byref(v), CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, ctypes.c_uint64(ptr))
    return v.value if r == 0 else None
