"""Views of NumPy arrays and of objects with __cuda_array_interface__
(CuPy, PyTorch, Numba): pointer, shape, strides in elements, dtype; and
the adoption of objects that only speak DLPack (JAX, TensorFlow, ...)."""

import contextlib
import math

import numpy as np


class View:
    """One array as the library sees it."""

    __slots__ = ("obj", "device", "ptr", "shape", "strides", "dtype", "readonly", "stream")

    def __init__(self, obj, device, ptr, shape, strides, dtype, readonly, stream=None):
        self.obj = obj
        self.device = device  # "host" or "cuda"
        self.ptr = ptr
        self.shape = tuple(shape)
        self.strides = strides  # in elements, or None when not whole elements
        self.dtype = dtype
        self.readonly = readonly
        self.stream = stream

    @property
    def size(self):
        return math.prod(self.shape)

    def span(self):
        """Elements from ptr to the last element, inclusive; None when a
        stride is negative or not whole elements."""
        if self.strides is None or any(s < 0 for s in self.strides):
            return None
        if self.size == 0:
            return 0
        return 1 + sum((n - 1) * s for n, s in zip(self.shape, self.strides))


def _elem_strides(byte_strides, itemsize):
    if any(s % itemsize for s in byte_strides):
        return None
    return tuple(s // itemsize for s in byte_strides)


# DLPack device types (dlpack.h, DLDeviceType).
_DL_CPU, _DL_CUDA, _DL_CUDA_HOST, _DL_CUDA_MANAGED = 1, 2, 3, 13


class _Alias:
    """A writable __array_interface__ over memory that owner keeps alive."""

    def __init__(self, iface, owner):
        self.__array_interface__ = iface
        self._owner = owner


def adopt(x):
    """x itself, or, for an object with __dlpack__ and __dlpack_device__
    but no __cuda_array_interface__ that is not a NumPy array: a NumPy
    array (host memory) or a CuPy array (CUDA memory) over the same memory,
    so that results written to it (out=x) land in x. Memory on another
    kind of device raises ValueError."""
    if x is None or isinstance(x, np.ndarray) or is_device(x):
        return x
    if not (hasattr(x, "__dlpack__") and hasattr(x, "__dlpack_device__")):
        return x
    kind, _ = x.__dlpack_device__()
    if kind in (_DL_CPU, _DL_CUDA_HOST):
        a = np.from_dlpack(x)
        if a.flags.writeable:
            return a
        # NumPy marks arrays from DLPack read-only; the memory is x's.
        iface = dict(a.__array_interface__)
        iface["data"] = (iface["data"][0], False)
        return np.asarray(_Alias(iface, (x, a)))
    if kind in (_DL_CUDA, _DL_CUDA_MANAGED):
        try:
            import cupy
        except ImportError:
            raise ValueError("bandsolve: a CUDA array given through DLPack needs CuPy to be adopted") from None
        return cupy.from_dlpack(x)
    raise ValueError(f"bandsolve: DLPack device type {kind} is not supported (CPU and CUDA memory are)")


def is_device(x):
    return hasattr(x, "__cuda_array_interface__")


def view(x, name):
    """The View of x: a CUDA array, or anything NumPy converts."""
    if is_device(x):
        cai = x.__cuda_array_interface__
        dtype = np.dtype(cai["typestr"])
        shape = tuple(cai["shape"])
        strides = cai.get("strides")
        if strides is None:  # C-contiguous
            strides, acc = [], dtype.itemsize
            for n in reversed(shape):
                strides.append(acc)
                acc *= max(n, 1)
            strides = tuple(reversed(strides))
        ptr, readonly = cai["data"]
        return View(x, "cuda", int(ptr or 0), shape, _elem_strides(strides, dtype.itemsize), dtype,
                    bool(readonly), cai.get("stream"))
    a = x if isinstance(x, np.ndarray) else np.asarray(x)
    return View(a, "host", a.__array_interface__["data"][0], a.shape, _elem_strides(a.strides, a.itemsize), a.dtype,
                not a.flags.writeable)


class Host:
    """Array operations on NumPy arrays."""

    name = "numpy"

    @staticmethod
    def empty_like(x):
        return np.empty_like(x)

    @staticmethod
    def empty(shape, dtype):
        return np.empty(shape, dtype=dtype)

    @staticmethod
    def contiguous_last(x, axis, dtype, copy=False):
        m = np.moveaxis(np.asarray(x), axis, -1)
        return np.array(m, dtype=dtype, order="C", copy=True) if copy else np.ascontiguousarray(m, dtype=dtype)

    @staticmethod
    def store_last(out, axis, xc):
        np.moveaxis(out, axis, -1)[...] = xc

    @staticmethod
    def broadcast(x, shape, dtype):
        return np.broadcast_to(np.asarray(x, dtype=dtype), shape)

    @staticmethod
    def to_host(x):
        return np.asarray(x)

    @staticmethod
    def from_host(h, like):
        return h


class CuPy:
    """Array operations on CuPy arrays (on CuPy's current stream)."""

    name = "cupy"

    def __init__(self):
        import cupy
        self.cp = cupy

    def empty_like(self, x):
        with self.cp.cuda.Device(x.device.id):
            return self.cp.empty_like(x)

    def empty(self, shape, dtype):
        return self.cp.empty(shape, dtype=dtype)

    def contiguous_last(self, x, axis, dtype, copy=False):
        m = self.cp.moveaxis(self.cp.asarray(x), axis, -1)
        return self.cp.array(m, dtype=dtype, order="C", copy=True) if copy else self.cp.ascontiguousarray(m, dtype=dtype)

    def store_last(self, out, axis, xc):
        self.cp.moveaxis(out, axis, -1)[...] = xc

    def broadcast(self, x, shape, dtype):
        return self.cp.broadcast_to(self.cp.asarray(x, dtype=dtype), shape)

    def to_host(self, x):
        return self.cp.asnumpy(x)

    def from_host(self, h, like):
        return self.cp.asarray(h)

    def device(self, ordinal):
        return self.cp.cuda.Device(ordinal)

    def stream(self, handle):
        if handle is None:
            return contextlib.nullcontext()
        if handle in (0, 1):  # the legacy default stream
            return self.cp.cuda.Stream.null
        return self.cp.cuda.ExternalStream(handle)


class Torch:
    """Array operations on PyTorch CUDA tensors."""

    name = "torch"

    def __init__(self):
        import torch
        self.t = torch

    _types = {np.dtype(np.float32): "float32", np.dtype(np.float64): "float64"}

    def _dt(self, dtype):
        return getattr(self.t, self._types[np.dtype(dtype)])

    def empty_like(self, x):
        return self.t.empty_like(x)

    def empty(self, shape, dtype, like=None):
        return self.t.empty(shape, dtype=self._dt(dtype), device="cuda")

    def contiguous_last(self, x, axis, dtype, copy=False):
        return x.movedim(axis, -1).to(self._dt(dtype), copy=copy).contiguous()

    def store_last(self, out, axis, xc):
        out.movedim(axis, -1).copy_(xc)

    def broadcast(self, x, shape, dtype):
        if isinstance(x, self.t.Tensor):
            return x.to(self._dt(dtype)).expand(shape)
        return self.t.full(shape, float(x), dtype=self._dt(dtype), device="cuda")

    def to_host(self, x):
        return x.detach().cpu().numpy()

    def from_host(self, h, like):
        return self.t.from_numpy(h).to(like.device)

    def device(self, ordinal):
        return self.t.cuda.device(ordinal)

    def stream(self, handle):
        if handle is None:
            return contextlib.nullcontext()
        return self.t.cuda.stream(self.t.cuda.ExternalStream(handle))


def is_c_contiguous(v):
    """Whether a View's elements are C-contiguous (axes of length 1 may
    have any stride)."""
    if v.strides is None:
        return False
    want = 1
    for n, st in zip(reversed(v.shape), reversed(v.strides)):
        if n > 1 and st != want:
            return False
        want *= n
    return True


@contextlib.contextmanager
def on_device(ops, ordinal, stream=None):
    """A context in which ops' library allocates on GPU ordinal and, when
    stream (a CUstream handle) is not None, queues its work on it."""
    if ops is None or ops.name == "numpy":
        yield
        return
    with ops.device(ordinal), ops.stream(stream):
        yield


def ops_for(x):
    """The array operations of x's library."""
    if not is_device(x):
        return Host()
    mod = type(x).__module__ or ""
    if mod.startswith("cupy"):
        return CuPy()
    if mod.startswith("torch"):
        return Torch()
    return None
