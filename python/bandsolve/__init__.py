"""bandsolve: batched tridiagonal and banded solves on NumPy arrays, and in
place on CuPy arrays and PyTorch tensors on the GPU.

    import bandsolve
    x = bandsolve.solve(a, b, c, d, axis=0)       # every column of d
    x = bandsolve.solve_banded((l, u), ab, b)     # scipy.linalg.solve_banded

Row i of each system reads a[i]*x[i-1] + b[i]*x[i] + c[i]*x[i+1] = d[i];
a[0] and c[-1] are ignored unless cyclic=True. The library is libbandsolve
(the Go module's capi), loaded with ctypes: its CUDA variant where a GPU is
present, the CPU variant otherwise (BANDSOLVE_LIB names a prebuilt one,
BANDSOLVE_DEVICE=cpu forces the CPU variant).
"""

import collections
import ctypes
import itertools
import numbers
import re
import threading

import numpy as np

from . import _arrays, _lib

__all__ = ["solve", "solve_banded", "solveh_banded", "Plan", "Factors", "SolveError", "version", "has_cuda"]

__version__ = "0.1.0"

_FLOAT = {np.dtype(np.float32): _lib.F32, np.dtype(np.float64): _lib.F64}


class SolveError(np.linalg.LinAlgError, ValueError):
    """A numerical failure: NaN or Inf in the input, or systems that broke
    down (a zero pivot, a singular matrix, a non-finite result, the
    accuracy check).

    Attributes: system (the index of the first failed system in the
    batch, or None), row (its row, 0-based, or None), index (the index of
    that system's line in the right-hand-side array, with slice(None) on
    the solved axis, or None), systems (the failed systems), info (one
    LAPACK-style code per system of the last call: 0 solved, i > 0 failed
    at row i-1, -1 failed at an unknown row, -2 not solved)."""

    def __init__(self, message, system=None, row=None, systems=(), info=None, index=None):
        super().__init__(message)
        self.system = system
        self.row = row
        self.systems = list(systems)
        self.info = info
        self.index = index


def _lib_():
    return _lib.load()


def version():
    """The library's version text, e.g. 'bandsolve 1 (cuda)', and its path."""
    lib = _lib_()
    return f"{lib.bandsolve_version().decode()} [{lib.path}]"


def has_cuda():
    """Whether the loaded library is the CUDA variant (a GPU was found)."""
    return bool(_lib_().bandsolve_has_cuda())


def _raise(status, info=None, where=None):
    """Raises the exception of a failed status (info: the per-system codes
    of the call; where(g) maps a system to its (index in the batch, array
    index))."""
    msg = _lib_().bandsolve_last_error().decode(errors="replace")
    if status in (_lib.ERR_SYSTEMS, _lib.ERR_NONFINITE):
        system = row = index = None
        systems = []
        if status == _lib.ERR_SYSTEMS and info is not None:
            systems = [int(g) for g in np.nonzero(info)[0]]
            if systems:
                system = systems[0]
                row = int(info[system]) - 1 if info[system] > 0 else None
        else:
            m = re.search(r"system (\d+), row (\d+)", msg)
            if m:
                system, row = int(m.group(1)), int(m.group(2))
                systems = [system]
        if where is not None and system is not None:
            system, index = where(system)
            systems = [where(g)[0] for g in systems]
        raise SolveError(msg, system=system, row=row, systems=systems, info=info, index=index)
    if status == _lib.ERR_ARGUMENT:
        raise ValueError(msg)
    if status == _lib.ERR_UNSUPPORTED:
        raise NotImplementedError(msg)
    if status == _lib.ERR_MEMORY:
        raise MemoryError(msg)
    raise RuntimeError(msg)


def _stream_of(stream, views):
    """The CUstream handle a device solve is queued on: stream (an int, or
    an object with .ptr (CuPy) or .cuda_stream (PyTorch)), else the
    "stream" key of the arrays' __cuda_array_interface__, else CuPy's
    current stream when CuPy is importable, else 0 (the legacy default
    stream)."""
    if stream is not None:
        for attr in ("ptr", "cuda_stream"):
            if hasattr(stream, attr):
                return int(getattr(stream, attr))
        return int(stream)
    for v in views:
        if v is not None and v.stream is not None:
            return int(v.stream)
    try:
        import cupy
        return int(cupy.cuda.get_current_stream().ptr)
    except Exception:
        return 0


def _device_of(spec):
    """(device, ordinal) of a Plan's device argument."""
    if spec is None or spec == "cpu":
        return _lib.DEVICE_CPU, 0
    if isinstance(spec, numbers.Integral):
        return _lib.DEVICE_CUDA, int(spec)
    if isinstance(spec, str) and (spec == "cuda" or spec.startswith("cuda:")):
        return _lib.DEVICE_CUDA, int(spec[5:] or 0) if ":" in spec else 0
    raise ValueError(f"bandsolve: unknown device {spec!r} (want 'cpu', 'cuda', 'cuda:N' or an ordinal)")


class _Handle:
    """A library handle released by close(), at the end of a with block,
    or when the object is collected; _destroy names the library call that
    releases it."""

    _h = None
    _destroy = ""

    def close(self):
        """Releases the handle (again: nothing)."""
        if self._h:
            getattr(_lib_(), self._destroy)(self._h)
            self._h = None

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class Factors(_Handle):
    """The factors of a batch (Plan.factor): solve for new right-hand sides
    without factoring again. CPU plans only."""

    _destroy = "bandsolve_factors_destroy"

    def __init__(self, handle, plan):
        self._h = handle
        self._plan = plan

    def solve(self, d, out=None, *, nrhs=1):
        """Solves the factored batch for nrhs right-hand sides in d (column r
        at element r*L, L = Plan.length) and returns out (a new array when
        None; out may be d)."""
        p = self._plan
        d, out = _arrays.adopt(d), _arrays.adopt(out)
        dv = p._check_array(d, "d", p.length * nrhs, host=True)
        if out is None:
            out = np.empty_like(dv.obj)
        xv = p._check_array(out, "out", p.length * nrhs, host=True, write=True)
        info = np.zeros(p.batch, dtype=np.int32)
        st = _lib_().bandsolve_factors_solve(self._h, nrhs, dv.ptr, xv.ptr, _info_ptr(info))
        if st:
            _raise(st, info)
        return out



def _info_ptr(info):
    return info.__array_interface__["data"][0]


class Plan(_Handle):
    """A tridiagonal plan: batches of `batch` systems of `n` rows, made once
    and reused (it owns its workspace).

    layout: "contiguous" (row i of system g at g*n + i), "interleaved"
    (i*batch + g) or "strided" with strides=(elem, batch) in elements.
    dtype: float32 or float64. algorithm: "auto", "thomas", "gtsv", "cr",
    "pcr", "wangmou", "tpr", "partition", "partition-pivot", "ldlt".
    pivoting: "auto", "always", "never". device: "cpu" (workers threads,
    0 for one per core), "cuda", "cuda:N" or a GPU ordinal.

    The solve methods take flat buffers: NumPy arrays for any plan, CUDA
    arrays (CuPy, PyTorch) for CUDA plans, each holding the batch from its
    first element (Plan.length elements of the plan's dtype at least)."""

    _destroy = "bandsolve_tridiag_destroy"

    def __init__(self, n, batch=1, *, dtype=np.float64, layout="contiguous", strides=None,
                 algorithm="auto", pivoting="auto", cyclic=False, check=False,
                 skip_finite_check=False, device="cpu", workers=0):
        self._h = None
        lib = _lib_()
        self.dtype = np.dtype(dtype)
        if self.dtype not in _FLOAT:
            raise ValueError(f"bandsolve: dtype {self.dtype} is not supported (float32 or float64)")
        if pivoting not in _lib.PIVOTING:
            raise ValueError(f"bandsolve: unknown pivoting {pivoting!r} (want auto, always or never)")
        es, bs = 0, 0
        if layout == "contiguous":
            lay = _lib.LAYOUT_CONTIGUOUS
            es, bs = 1, n
        elif layout == "interleaved":
            lay = _lib.LAYOUT_INTERLEAVED
            es, bs = batch, 1
        elif layout == "strided":
            if strides is None or len(strides) != 2:
                raise ValueError("bandsolve: layout 'strided' needs strides=(elem, batch)")
            lay = _lib.LAYOUT_STRIDED
            es, bs = int(strides[0]), int(strides[1])
        else:
            raise ValueError(f"bandsolve: unknown layout {layout!r} (want contiguous, interleaved or strided)")
        dev, ordinal = _device_of(device)
        if dev == _lib.DEVICE_CPU:
            ordinal = int(workers)
        flags = (_lib.FLAG_CYCLIC if cyclic else 0) | (_lib.FLAG_CHECK if check else 0) | \
            (_lib.FLAG_SKIP_FINITE if skip_finite_check else 0)
        h = ctypes.c_void_p()
        st = lib.bandsolve_tridiag_create(ctypes.byref(h), int(n), int(batch), lay, es, bs, _FLOAT[self.dtype],
                                          (algorithm or "auto").encode(), _lib.PIVOTING[pivoting], flags,
                                          dev, ordinal)
        if st:
            _raise(st)
        self._h = h.value
        self.n, self.batch = int(n), int(batch)
        self.strides = (es, bs)
        self.algorithm = algorithm
        self.device = "cpu" if dev == _lib.DEVICE_CPU else f"cuda:{ordinal}"
        self.length = (self.n - 1) * es + (self.batch - 1) * bs + 1
        self._ldlt = (algorithm or "").lower() == "ldlt"

    def describe(self):
        """How the plan solves: the algorithm the device runs."""
        return _lib_().bandsolve_tridiag_describe(self._h).decode()

    def _check_array(self, x, name, need, host=False, write=False, device=None):
        v = _arrays.view(x, name)
        if host and v.device != "host":
            raise ValueError(f"bandsolve: {name} is a device array; this call takes host (NumPy) arrays")
        if device is not None and v.device != device:
            raise ValueError(f"bandsolve: {name} is a {v.device} array, the other arrays are {device} arrays")
        return self._check_view(v, name, need, write)

    def _check_view(self, v, name, need, write=False):
        if v.dtype != self.dtype:
            raise ValueError(f"bandsolve: {name} has dtype {v.dtype}, the plan solves {self.dtype}")
        if write and v.readonly:
            raise ValueError(f"bandsolve: {name} is read-only")
        span = v.span()
        if span is None:
            raise ValueError(f"bandsolve: {name} has negative strides or strides that are not whole elements")
        if span < need:
            raise ValueError(f"bandsolve: {name} spans {span} elements, the {self.batch}×{self.n} batch needs {need}")
        return v

    def _views(self, arrays, names, need):
        views = [None if x is None else _arrays.view(x, n) for x, n in zip(arrays, names)]
        kinds = {v.device for v in views if v is not None}
        if len(kinds) > 1:
            raise ValueError("bandsolve: host and device arrays mixed in one solve")
        kind = kinds.pop() if kinds else "host"
        if kind == "cuda" and self.device == "cpu":
            raise ValueError("bandsolve: device arrays given to a CPU plan (make it with device='cuda')")
        out = []
        for v, n in zip(views, names):
            out.append(None if v is None else self._check_view(v, n, need, write=(n == "out")))
        if kind == "cuda":
            ordinal = int(self.device[5:])
            for v, n in zip(out, names):
                if v is not None:
                    o = _lib.device_ordinal(v.ptr)
                    if o is not None and o != ordinal:
                        raise ValueError(f"bandsolve: {n} is on GPU {o}, the plan on GPU {ordinal}")
        return kind, out

    def solve(self, a, b, c, d, out=None, *, stream=None):
        """Solves the batch and returns out (a new array like d when None;
        out may be d). a may be None for algorithm 'ldlt'. Device arrays are
        solved on stream (see the package's docs); the call returns when
        the solve is done."""
        a, b, c, d, out = (_arrays.adopt(x) for x in (a, b, c, d, out))
        if out is None:
            out = _arrays.ops_for(d).empty_like(d)
        if a is None and not self._ldlt:
            raise ValueError("bandsolve: a is None (only algorithm 'ldlt' ignores a)")
        kind, (av, bv, cv, dv, xv) = self._views([a, b, c, d, out], ["a", "b", "c", "d", "out"], self.length)
        self._solve_views(kind, av, bv, cv, dv, xv, stream)
        return out

    def _solve_views(self, kind, av, bv, cv, dv, xv, stream, offset=0, const=None, where=None):
        lib = _lib_()
        info = np.zeros(self.batch, dtype=np.int32)
        isz = self.dtype.itemsize
        ptr = (lambda v: 0 if v is None else v.ptr + offset * isz)
        if kind == "cuda":
            s = _stream_of(stream, [dv, xv, av, bv, cv])
            if const is not None:
                st = lib.bandsolve_tridiag_solve_device_const(self._h, *const, ptr(dv), ptr(xv), s, _info_ptr(info))
            else:
                st = lib.bandsolve_tridiag_solve_device(self._h, ptr(av), ptr(bv), ptr(cv), ptr(dv), ptr(xv), s,
                                                        _info_ptr(info))
        elif const is not None:
            st = lib.bandsolve_tridiag_solve_const(self._h, *const, ptr(dv), ptr(xv), _info_ptr(info))
        else:
            st = lib.bandsolve_tridiag_solve(self._h, ptr(av), ptr(bv), ptr(cv), ptr(dv), ptr(xv), _info_ptr(info))
        if st:
            _raise(st, info, where)

    def solve_pointers(self, a, b, c, d, x, *, stream=None, info=None):
        """Solves the batch at raw addresses (ints; a may be 0 for 'ldlt'):
        host addresses for a CPU plan, device addresses (solved on stream,
        an int handle, 0 the legacy default stream) for a CUDA plan. No
        check of the arrays: the call for hot loops that keep their buffers.
        info: an int32 NumPy array of `batch` entries for the per-system
        codes, or None."""
        lib = _lib_()
        if info is None:
            info = np.zeros(self.batch, dtype=np.int32)
        ip = _info_ptr(info)
        if self.device == "cpu":
            st = lib.bandsolve_tridiag_solve(self._h, a, b, c, d, x, ip)
        else:
            st = lib.bandsolve_tridiag_solve_device(self._h, a, b, c, d, x, int(stream or 0), ip)
        if st:
            _raise(st, info)

    def solve_const(self, a, b, c, d, out=None, *, stream=None):
        """Solves the batch whose every row has the coefficients a, b, c."""
        d, out = _arrays.adopt(d), _arrays.adopt(out)
        if out is None:
            out = _arrays.ops_for(d).empty_like(d)
        kind, (dv, xv) = self._views([d, out], ["d", "out"], self.length)
        self._solve_views(kind, None, None, None, dv, xv, stream, const=(float(a), float(b), float(c)))
        return out

    def factor(self, a, b, c):
        """Factors the batch (host arrays; CPU plans of 'auto', 'thomas',
        'gtsv' or 'ldlt') and returns its Factors. Systems that break down
        raise SolveError."""
        vs = [None if x is None else self._check_array(_arrays.adopt(x), n, self.length, host=True)
              for x, n in zip([a, b, c], "abc")]
        return self._factor(lambda h, info: _lib_().bandsolve_tridiag_factor(
            self._h, *(0 if v is None else v.ptr for v in vs), ctypes.byref(h), _info_ptr(info)))

    def factor_const(self, a, b, c):
        """Factors the batch of constant coefficients a, b, c."""
        return self._factor(lambda h, info: _lib_().bandsolve_tridiag_factor_const(
            self._h, float(a), float(b), float(c), ctypes.byref(h), _info_ptr(info)))

    def _factor(self, call):
        h = ctypes.c_void_p()
        info = np.zeros(self.batch, dtype=np.int32)
        st = call(h, info)
        f = Factors(h.value, self) if h.value else None
        if st:
            if f is not None:
                f.close()
            _raise(st, info)
        return f



# Plans made by solve(), reused for the same shape and options.
_cache = collections.OrderedDict()
_cache_lock = threading.Lock()
_CACHE_SIZE = 16


def _cached_plan(key, make):
    with _cache_lock:
        p = _cache.get(key)
        if p is not None:
            _cache.move_to_end(key)
            return p
    p = make()
    with _cache_lock:
        _cache[key] = p
        while len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    return p


def _layout(shape, strides, axis):
    """How the lines of an array along axis map to one plan: (N, elem
    stride, G, batch stride, inner axes, outer axes) where the inner axes
    (by increasing stride) collapse into one batch stride and the outer
    ones are looped over; None when a stride is not positive."""
    n = shape[axis]
    es = strides[axis] if n > 1 else 1
    if es < 1:
        return None
    batch = sorted((strides[k], k) for k in range(len(shape)) if k != axis and shape[k] > 1)
    if any(s < 1 for s, _ in batch):
        return None
    if not batch:
        return n, es, 1, 1, [], []
    bs, k0 = batch[0]
    g, inner = shape[k0], [k0]
    i = 1
    while i < len(batch) and batch[i][0] == bs * g:
        g *= shape[batch[i][1]]
        inner.append(batch[i][1])
        i += 1
    return n, es, g, bs, inner, [k for _, k in batch[i:]]


def _is_scalar(x):
    return isinstance(x, numbers.Number) or (isinstance(x, np.ndarray) and x.ndim == 0)


def solve(a, b, c, d, *, axis=-1, algorithm="auto", pivoting="auto", cyclic=False, check=False,
          out=None, stream=None):
    """Solves the tridiagonal systems along `axis` of d: every line of d
    along axis is one right-hand side, with the coefficients at the same
    places of a (sub-diagonal), b (diagonal) and c (super-diagonal). a, b
    and c are arrays of d's shape (or broadcastable to it), or all three
    scalars (the same matrix for every system); a may be None for
    algorithm='ldlt'. d is a NumPy array (solved on the CPU) or a CUDA
    array (CuPy, PyTorch: solved on its GPU, on `stream` or the caller's
    current stream); an array that only speaks DLPack (JAX, ...) is taken
    as a NumPy or CuPy array over its memory. Returns out (a new array like d when None; out=d
    solves in place).

    When the arrays share their strides and the lines of the other axes
    are evenly spaced, the arrays are solved where they are, without a
    copy (any axis of a C- or Fortran-ordered array); otherwise they are
    copied to contiguous ones first.

    Raises ValueError for bad shapes, dtypes, devices and options, and
    SolveError (system, row, index attributes) for NaN/Inf input and for
    systems that break down (the others are solved)."""
    a, b, c, d, out = (_arrays.adopt(x) for x in (a, b, c, d, out))
    dv = _arrays.view(d, "d")
    ops = _arrays.ops_for(d)
    if dv.device == "host":
        d = dv.obj
    if ops is None:
        if out is None:
            raise ValueError("bandsolve: d is a CUDA array of an unknown library: pass out=")
        ops = _arrays.Host()
    dtype = dv.dtype
    if dtype not in _FLOAT:
        raise ValueError(f"bandsolve: d has dtype {dtype}: float32 or float64 are solved")
    if len(dv.shape) == 0:
        raise ValueError("bandsolve: d is a scalar: want an array with the systems along axis")
    nd = len(dv.shape)
    if not -nd <= axis < nd:
        raise ValueError(f"bandsolve: axis {axis} is out of range for d of shape {dv.shape}")
    axis %= nd
    is_ldlt = (algorithm or "").lower() == "ldlt"
    coefs = [a, b, c]
    const = None
    if all(_is_scalar(x) for x in coefs if x is not None) and not (a is None and not is_ldlt):
        const = tuple(0.0 if x is None else float(x) for x in coefs)
    elif a is None and not is_ldlt:
        raise ValueError("bandsolve: a is None (only algorithm 'ldlt' ignores a)")
    if const is None:
        for i, (x, name) in enumerate(zip(coefs, "abc")):
            if x is None:
                continue
            v = _arrays.view(x, name)
            if v.device != dv.device:
                raise ValueError(f"bandsolve: {name} is a {v.device} array and d a {dv.device} array")
            if v.dtype != dtype and not _is_scalar(x):
                raise ValueError(f"bandsolve: {name} has dtype {v.dtype} and d {dtype}: use one dtype")
            if v.shape != dv.shape:
                try:
                    np.broadcast_shapes(v.shape, dv.shape)
                except ValueError:
                    raise ValueError(f"bandsolve: {name} has shape {v.shape}, d {dv.shape}") from None
                if np.broadcast_shapes(v.shape, dv.shape) != dv.shape:
                    raise ValueError(f"bandsolve: {name} has shape {v.shape}, d {dv.shape}")
                x = ops.broadcast(x, dv.shape, dtype)
            coefs[i] = x
    if out is None:
        out = ops.empty_like(d)
    ov = _arrays.view(out, "out")
    if ov.device != dv.device:
        raise ValueError(f"bandsolve: out is a {ov.device} array and d a {dv.device} array")
    if ov.dtype != dtype or ov.shape != dv.shape:
        raise ValueError(f"bandsolve: out is {ov.dtype} {ov.shape}, d {dtype} {dv.shape}")
    if ov.readonly:
        raise ValueError("bandsolve: out is read-only")
    if dv.size == 0:
        return out
    views = [None if x is None or const is not None else _arrays.view(x, n) for x, n in zip(coefs, "abc")]
    views += [dv, ov]
    if dv.device == "cuda":
        if not has_cuda():
            raise ValueError("bandsolve: d is a CUDA array, but the loaded library is the CPU variant "
                             f"({_lib_().path})")
        dev = _lib.device_ordinal(dv.ptr) or 0
        for v, name in zip(views, ("a", "b", "c", "d", "out")):
            o = None if v is None else _lib.device_ordinal(v.ptr)
            if o is not None and o != dev:
                raise ValueError(f"bandsolve: {name} is on GPU {o} and d on GPU {dev}")
        device = f"cuda:{dev}"
    else:
        device = "cpu"
    strides = {v.strides for v in views if v is not None}
    lay = _layout(dv.shape, dv.strides, axis) if len(strides) == 1 and None not in strides else None
    kw = dict(algorithm=algorithm, pivoting=pivoting, cyclic=cyclic, check=check)
    if lay is not None:
        n, es, g, bs, inner, outer = lay
        plan = _cached_plan((n, g, es, bs, dtype.str, algorithm, pivoting, cyclic, check, device),
                            lambda: Plan(n, g, dtype=dtype, layout="strided", strides=(es, bs), device=device, **kw))
        shape = dv.shape
        for idx in itertools.product(*(range(shape[k]) for k in outer)):
            off = sum(i * dv.strides[k] for i, k in zip(idx, outer))

            def where(sys, idx=idx):
                pos = dict(zip(outer, idx))
                flat = sys
                for k in inner:
                    pos[k] = flat % shape[k]
                    flat //= shape[k]
                index = tuple(slice(None) if k == axis else pos.get(k, 0) for k in range(len(shape)))
                outer_flat = np.ravel_multi_index(idx, [shape[k] for k in outer]) if outer else 0
                return int(outer_flat) * g + sys, index

            plan._solve_views(dv.device, *views, stream, offset=off, const=const, where=where)
        return out
    # Copy to contiguous arrays, systems along the last axis.
    cs = [None if (x is None or const is not None) else ops.contiguous_last(x, axis, dtype) for x in coefs]
    dc = ops.contiguous_last(d, axis, dtype, copy=True)  # solved in place: never d itself
    n = dv.shape[axis]
    g = dv.size // n
    batch_shape = tuple(s for k, s in enumerate(dv.shape) if k != axis)
    plan = _cached_plan((n, g, 1, n, dtype.str, algorithm, pivoting, cyclic, check, device),
                        lambda: Plan(n, g, dtype=dtype, layout="strided", strides=(1, n), device=device, **kw))

    def where(sys):
        pos = list(np.unravel_index(sys, batch_shape)) if batch_shape else []
        pos.insert(axis, slice(None))
        return sys, tuple(int(p) if not isinstance(p, slice) else p for p in pos)

    cvs = [None if x is None else _arrays.view(x, "coef") for x in cs]
    dcv = _arrays.view(dc, "d")
    plan._solve_views(dv.device, *cvs, dcv, dcv, stream, const=const, where=where)
    ops.store_last(out, axis, dc)
    return out


def solve_banded(l_and_u, ab, b, overwrite_ab=False, overwrite_b=False, check_finite=True, *, out=None,
                 stream=None):
    """Solves the banded systems A x = b with SciPy's signature and storage:
    ab[u + i - j, j] = A[i, j] for l sub- and u super-diagonals, by LU with
    partial pivoting (LAPACK gbsv). A batch: ab of shape (..., l+u+1, n)
    and b of shape (..., n) or (..., n, k), the leading dimensions the
    systems. The result has b's shape and the dtype of ab and b together
    (float32 or float64; integers become float64); out= receives it.
    overwrite_ab, overwrite_b and check_finite are accepted for SciPy's
    signature: ab and b are never changed.

    NumPy arrays are solved on the CPU: NaN/Inf input raises SolveError
    and nothing is solved. CUDA arrays (CuPy, PyTorch, DLPack) are solved
    on their GPU, queued on `stream` (an int handle or an object with .ptr
    or .cuda_stream) or the caller's current stream, and the result is an
    array of the same library on that GPU (out=b solves in place); the
    call returns when the solve is done. There, a system with NaN or Inf
    in its band or b, or whose solution is not finite, fails like a
    singular one. Singular (failed) systems raise SolveError, whose info
    says which (info[s] = row + 1); the other systems of the batch are
    solved and a failed one's x is NaN, also in out."""
    del overwrite_ab, overwrite_b, check_finite
    ab, b, out = _arrays.adopt(ab), _arrays.adopt(b), _arrays.adopt(out)
    try:
        l, u = (int(v) for v in l_and_u)
    except (TypeError, ValueError):
        raise ValueError("bandsolve: l_and_u must be a pair of integers (l, u)") from None
    devs = [_arrays.is_device(x) for x in (ab, b, out) if x is not None]
    if any(devs):
        if not all(devs):
            raise ValueError("bandsolve: host and device arrays mixed in one solve")
        return _solve_banded_device(l, u, ab, b, out, stream)
    abh, bh = np.asarray(ab), np.asarray(b)
    dtype, n, batch, nrhs, g = _banded_shape(l, u, abh.shape, abh.dtype, bh.shape, bh.dtype)
    return _solve_host(lambda ab_, b_, x_, info: _lib_().bandsolve_solve_banded(
        _FLOAT[dtype], n, l, u, g, nrhs, ab_, b_, x_, info), abh, bh, out, dtype, n, batch, nrhs, g)


def _solve_host(call, abh, bh, out, dtype, n, batch, nrhs, g):
    """Solves a host batch of banded systems through call(ab, b, x, info)
    (addresses), into out when given; failed systems raise SolveError, out
    then receiving the solved ones (NaN for the failed)."""
    abc = np.ascontiguousarray(abh, dtype=dtype)
    bc = np.ascontiguousarray(bh, dtype=dtype)
    x = np.empty(bh.shape, dtype=dtype)
    if g > 0 and n > 0 and nrhs > 0:
        info = np.zeros(g, dtype=np.int32)
        st = call(abc.ctypes.data, bc.ctypes.data, x.ctypes.data, _info_ptr(info))
        if st:
            if st == _lib.ERR_SYSTEMS and out is not None:
                out[...] = x  # the solved systems, NaN for the failed ones
            _raise(st, info, _batch_where(batch))
    if out is None:
        return x
    out[...] = x
    return out


def solveh_banded(ab, b, overwrite_ab=False, overwrite_b=False, lower=False, check_finite=True, *, out=None):
    """Solves symmetric positive definite banded systems A x = b with
    SciPy's signature and storage, by Cholesky's method (LAPACK pbsv): ab of
    shape (..., u+1, n) holds A's u super-diagonals and diagonal,
    ab[u + i - j, j] = A[i, j] for i <= j, or with lower=True its diagonal
    and u sub-diagonals, ab[i - j, j] = A[i, j] for i >= j. A batch as for
    solve_banded: b of shape (..., n) or (..., n, k). The result has b's
    shape and the dtype of ab and b together (float32 or float64); out=
    receives it. overwrite_ab, overwrite_b and check_finite are accepted for
    SciPy's signature: ab and b are never changed.

    NumPy arrays only (solved on the CPU); CUDA arrays raise ValueError.
    NaN/Inf input raises SolveError and nothing is solved. A system that is
    not positive definite raises SolveError, whose info says which
    (info[s] = the row of the pivot that is not positive, + 1); the other
    systems of the batch are solved and a failed one's x is NaN, also in
    out."""
    del overwrite_ab, overwrite_b, check_finite
    ab, b, out = _arrays.adopt(ab), _arrays.adopt(b), _arrays.adopt(out)
    if any(_arrays.is_device(x) for x in (ab, b, out) if x is not None):
        raise ValueError("bandsolve: solveh_banded solves NumPy arrays (on the CPU); "
                         "solve_banded((u, u), ...) solves CUDA arrays on their GPU")
    abh, bh = np.asarray(ab), np.asarray(b)
    if abh.ndim < 2:
        raise ValueError(f"bandsolve: ab has shape {abh.shape}: want (..., u+1, n)")
    u = abh.shape[-2] - 1
    # The shape checks of a band of u+1 rows: solve_banded's with l = 0.
    dtype, n, batch, nrhs, g = _banded_shape(0, u, abh.shape, abh.dtype, bh.shape, bh.dtype)
    return _solve_host(lambda ab_, b_, x_, info: _lib_().bandsolve_solveh_banded(
        _FLOAT[dtype], n, u, 1 if lower else 0, g, nrhs, ab_, b_, x_, info), abh, bh, out, dtype, n, batch, nrhs, g)


def _banded_shape(l, u, ab_shape, ab_dtype, b_shape, b_dtype):
    """Checks solve_banded's shapes and dtypes and returns (dtype, n,
    batch shape, nrhs, number of systems)."""
    for name, dt in (("ab", ab_dtype), ("b", b_dtype)):
        if np.dtype(dt).kind not in "biuf":
            raise ValueError(f"bandsolve: {name} has dtype {dt}: real arrays are solved")
    dtype = np.result_type(ab_dtype, b_dtype, np.float32)
    if dtype not in _FLOAT:
        raise ValueError(f"bandsolve: dtype {dtype} is not solved (float32 or float64)")
    if len(ab_shape) < 2:
        raise ValueError(f"bandsolve: ab has shape {ab_shape}: want (..., l+u+1, n)")
    if ab_shape[-2] != l + u + 1:
        raise ValueError(f"bandsolve: invalid values for the number of lower and upper diagonals: "
                         f"l+u+1 ({l + u + 1}) does not equal ab.shape[-2] ({ab_shape[-2]})")
    n = ab_shape[-1]
    batch = tuple(ab_shape[:-2])
    nb = len(b_shape)
    if tuple(b_shape[:len(batch)]) != batch or nb - len(batch) not in (1, 2) or b_shape[len(batch)] != n:
        raise ValueError(f"bandsolve: shape mismatch between ab {tuple(ab_shape)} and b {tuple(b_shape)}: "
                         f"want b of shape {batch + (n,)} or {batch + (n, 'k')}")
    nrhs = b_shape[-1] if nb - len(batch) == 2 else 1
    g = int(np.prod(batch, dtype=np.int64))
    return dtype, n, batch, nrhs, g


def _batch_where(batch):
    """The where() of _raise for a batch of systems of shape batch."""
    return lambda s: (s, tuple(int(i) for i in np.unravel_index(s, batch)) if batch else ())


def _ordinal_of(v):
    """The GPU of a device array's view."""
    o = _lib.device_ordinal(v.ptr) if v.ptr else None
    if o is None:
        dev = getattr(v.obj, "device", None)
        o = getattr(dev, "id", None)
        if o is None:
            o = getattr(dev, "index", None)
    return int(o or 0)


def _spans(v):
    """The byte range [start, end) of a view's elements."""
    span = v.span()
    return v.ptr, v.ptr + (span or 0) * v.dtype.itemsize


def _overlap(v, w):
    a0, a1 = _spans(v)
    b0, b1 = _spans(w)
    return a0 < b1 and b0 < a1


def _solve_banded_device(l, u, ab, b, out, stream):
    """solve_banded on CUDA arrays: bandsolve_solve_banded_device on the
    arrays' GPU and stream."""
    abv, bv = _arrays.view(ab, "ab"), _arrays.view(b, "b")
    ov = None if out is None else _arrays.view(out, "out")
    dtype, n, batch, nrhs, g = _banded_shape(l, u, abv.shape, abv.dtype, bv.shape, bv.dtype)
    if not has_cuda():
        raise ValueError("bandsolve: ab and b are CUDA arrays, but the loaded library is the CPU variant "
                         f"({_lib_().path})")
    dev = _ordinal_of(bv)
    for v, name in ((abv, "ab"), (ov, "out")):
        if v is not None and v.size and bv.size and _ordinal_of(v) != dev:
            raise ValueError(f"bandsolve: {name} is on GPU {_ordinal_of(v)} and b on GPU {dev}")
    if ov is not None:
        if ov.shape != bv.shape:
            raise ValueError(f"bandsolve: out has shape {ov.shape}, b {bv.shape}")
        if ov.readonly:
            raise ValueError("bandsolve: out is read-only")
    ops = _arrays.ops_for(b) or _arrays.ops_for(ab) or (None if out is None else _arrays.ops_for(out))
    s = _stream_of(stream, [bv, abv, ov])
    with _arrays.on_device(ops, dev, s if stream is not None else None):
        def ready(x, v, name):
            # x as a C-contiguous array of dtype on the GPU (x itself when
            # it is one).
            if v.dtype == dtype and _arrays.is_c_contiguous(v):
                return x, v
            if ops is None:
                raise ValueError(f"bandsolve: {name} is a CUDA array of an unknown library that needs a copy "
                                 f"(to {dtype}, C-contiguous): pass a contiguous {dtype} array")
            c = ops.contiguous_last(x, -1, dtype)
            return c, _arrays.view(c, name)

        abc, abcv = ready(ab, abv, "ab")
        bc, bcv = ready(b, bv, "b")
        # The solutions go straight to out when it is a C-contiguous array of
        # the dtype that is b itself or overlaps neither ab nor b.
        direct = (ov is not None and ov.dtype == dtype and _arrays.is_c_contiguous(ov)
                  and (ov.ptr == bcv.ptr or not (_overlap(ov, bcv) or _overlap(ov, abcv))))
        if direct:
            x, xv = out, ov
        else:
            if ops is None:
                raise ValueError("bandsolve: b is a CUDA array of an unknown library: pass out= "
                                 f"(a C-contiguous {dtype} array)")
            x = ops.empty_like(bc)
            xv = _arrays.view(x, "x")
        if g > 0 and n > 0 and nrhs > 0:
            info = np.zeros(g, dtype=np.int32)
            st = _lib_().bandsolve_solve_banded_device(_FLOAT[dtype], n, l, u, g, nrhs, abcv.ptr, bcv.ptr, xv.ptr,
                                                       dev, s, _info_ptr(info))
            if st:
                if st == _lib.ERR_SYSTEMS and out is not None and not direct:
                    out[...] = x  # the solved systems, NaN for the failed ones
                _raise(st, info, _batch_where(batch))
        if out is None or direct:
            return x
        out[...] = x
        return out
