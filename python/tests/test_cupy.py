"""bandsolve on CuPy arrays (and PyTorch tensors) on the GPU, against the
CPU solves; skipped where CuPy or a GPU is missing."""

import os
import sys
import unittest

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from helpers import dominant, reference  # noqa: E402

import bandsolve  # noqa: E402

try:
    import cupy
    cupy.cuda.runtime.getDeviceCount()
except Exception:  # not installed, or no GPU
    cupy = None

try:
    import torch
    if not torch.cuda.is_available():
        torch = None
except Exception:
    torch = None


def gpu_library():
    try:
        return bandsolve.has_cuda()
    except ImportError:
        return False


TOL = {np.dtype(np.float32): 2e-5, np.dtype(np.float64): 1e-12}


@unittest.skipIf(cupy is None, "cupy is not importable or finds no GPU")
@unittest.skipUnless(cupy is not None and gpu_library(), "the CUDA variant of libbandsolve is not loaded")
class TestCuPy(unittest.TestCase):
    def setUp(self):
        self.rng = np.random.default_rng(11)

    def upload(self, *xs):
        return tuple(cupy.asarray(x) for x in xs)

    def test_in_place_every_axis(self):
        for dtype in (np.float32, np.float64):
            ha, hb, hc, hd = dominant(self.rng, (6, 40, 33), dtype)
            for axis in (0, 1, 2):
                with self.subTest(dtype=dtype, axis=axis):
                    a, b, c, d = self.upload(ha, hb, hc, hd)
                    x = bandsolve.solve(a, b, c, d, axis=axis, out=d)
                    self.assertIs(x, d)
                    self.assertIsInstance(x, cupy.ndarray)
                    np.testing.assert_allclose(cupy.asnumpy(d), reference(ha, hb, hc, hd, axis),
                                               rtol=TOL[np.dtype(dtype)], atol=TOL[np.dtype(dtype)])

    def test_dlpack(self):
        # CUDA memory seen through DLPack alone (as a JAX array on the GPU):
        # adopted as a CuPy array over the same memory, solved in place.
        class DLPackOnly:
            def __init__(self, a):
                self._a = a

            def __dlpack__(self, stream=None):
                return self._a.__dlpack__(stream=stream)

            def __dlpack_device__(self):
                return self._a.__dlpack_device__()

        ha, hb, hc, hd = dominant(self.rng, (64, 32))
        a, b, c, d = self.upload(ha, hb, hc, hd)
        x = bandsolve.solve(*(DLPackOnly(v) for v in (a, b, c)), DLPackOnly(d), out=DLPackOnly(d))
        self.assertIsInstance(x, cupy.ndarray)
        self.assertEqual(x.data.ptr, d.data.ptr)
        np.testing.assert_allclose(cupy.asnumpy(d), reference(ha, hb, hc, hd), rtol=1e-12, atol=1e-12)

    def test_new_result_on_device(self):
        ha, hb, hc, hd = dominant(self.rng, (128, 64))
        a, b, c, d = self.upload(ha, hb, hc, hd)
        x = bandsolve.solve(a, b, c, d)
        self.assertIsInstance(x, cupy.ndarray)
        self.assertEqual(x.device.id, d.device.id)
        np.testing.assert_array_equal(cupy.asnumpy(d), hd, "d is kept")
        np.testing.assert_allclose(cupy.asnumpy(x), reference(ha, hb, hc, hd), rtol=1e-12, atol=1e-12)

    def test_non_default_stream(self):
        ha, hb, hc, hd = dominant(self.rng, (256, 128))
        s = cupy.cuda.Stream(non_blocking=True)
        with s:
            a, b, c, d = self.upload(ha, hb, hc, hd)
            d *= 2  # queued on s before the solve
            bandsolve.solve(a, b, c, d, out=d)
            d += 1  # queued on s after it
        s.synchronize()
        want = reference(ha, hb, hc, 2 * hd) + 1
        np.testing.assert_allclose(cupy.asnumpy(d), want, rtol=1e-12, atol=1e-12)
        # The stream given explicitly.
        a, b, c, d = self.upload(ha, hb, hc, hd)
        s.synchronize()
        cupy.cuda.Device().synchronize()
        bandsolve.solve(a, b, c, d, out=d, stream=s)
        s.synchronize()
        np.testing.assert_allclose(cupy.asnumpy(d), reference(ha, hb, hc, hd), rtol=1e-12, atol=1e-12)

    def test_views_and_constant(self):
        ha, hb, hc, hd = dominant(self.rng, (64, 48))
        a, b, c, d = self.upload(ha, hb, hc, hd)
        x = bandsolve.solve(a[:, ::2], b[:, ::2], c[:, ::2], d[:, ::2], axis=0)
        np.testing.assert_allclose(cupy.asnumpy(x), reference(ha[:, ::2], hb[:, ::2], hc[:, ::2], hd[:, ::2], 0),
                                   rtol=1e-12, atol=1e-12)
        x = bandsolve.solve(a[::-1], b[::-1], c[::-1], d[::-1], axis=0)  # negative strides: copied
        np.testing.assert_allclose(cupy.asnumpy(x), reference(ha[::-1], hb[::-1], hc[::-1], hd[::-1], 0),
                                   rtol=1e-12, atol=1e-12)
        x = bandsolve.solve(-1.0, 3.0, -1.0, d, axis=1, cyclic=True)
        np.testing.assert_allclose(cupy.asnumpy(x), reference(-1.0, 3.0, -1.0, hd, 1, cyclic=True),
                                   rtol=1e-12, atol=1e-12)

    def test_plan(self):
        n, g = 256, 1024
        ha, hb, hc, hd = dominant(self.rng, (g, n), np.float32)
        a, b, c, d = self.upload(ha, hb, hc, hd)
        with bandsolve.Plan(n, g, dtype=np.float32, device="cuda") as p:
            self.assertEqual(p.device, "cuda:0")
            p.solve(a, b, c, d, out=d)
            np.testing.assert_allclose(cupy.asnumpy(d), reference(ha, hb, hc, hd), rtol=2e-5, atol=2e-5)
            # Host arrays on a CUDA plan are copied in and out.
            x = p.solve(ha, hb, hc, hd)
            np.testing.assert_allclose(x, reference(ha, hb, hc, hd), rtol=2e-5, atol=2e-5)
            self.assertTrue(p.describe())
            a, b, c, d = self.upload(ha, hb, hc, hd)
            p.solve_pointers(a.data.ptr, b.data.ptr, c.data.ptr, d.data.ptr, d.data.ptr,
                             stream=cupy.cuda.get_current_stream().ptr)
            np.testing.assert_allclose(cupy.asnumpy(d), reference(ha, hb, hc, hd), rtol=2e-5, atol=2e-5)
            with self.assertRaises(NotImplementedError):
                p.factor(ha, hb, hc)
            with self.assertRaises(ValueError):  # negative strides
                p.solve(a, b, c, d[::-1])
            with self.assertRaises(ValueError):  # too short
                p.solve(a, b, c, d[:-1])

    def test_breakdown(self):
        ha, hb, hc, hd = dominant(self.rng, (8, 64))
        hb[3, 0] = 0
        hd[5, 7] = np.nan  # not scanned on the GPU: the system breaks down
        a, b, c, d = self.upload(ha, hb, hc, hd)
        with self.assertRaises(bandsolve.SolveError) as e:
            bandsolve.solve(a, b, c, d, algorithm="thomas", pivoting="never", out=d)
        self.assertIn(3, e.exception.systems)
        self.assertIn(5, e.exception.systems)
        x = cupy.asnumpy(d)
        ok = [g for g in range(8) if g not in e.exception.systems]
        np.testing.assert_allclose(x[ok], reference(ha, hb, hc, hd)[ok], rtol=1e-12, atol=1e-12)

    def test_errors(self):
        ha, hb, hc, hd = dominant(self.rng, (4, 16))
        a, b, c, d = self.upload(ha, hb, hc, hd)
        cases = {
            "int dtype": lambda: bandsolve.solve(a, b, c, d.astype(cupy.int32)),
            "mixed dtype": lambda: bandsolve.solve(a.astype(cupy.float32), b, c, d),
            "shape": lambda: bandsolve.solve(a[:, :8], b, c, d),
            "host coefficient": lambda: bandsolve.solve(ha, b, c, d),
            "host out": lambda: bandsolve.solve(a, b, c, d, out=hd.copy()),
            "CPU plan": lambda: bandsolve.Plan(16, 4).solve(a, b, c, d),
            "mixed plan arrays": lambda: bandsolve.Plan(16, 4, device="cuda").solve(ha, b, c, d),
            "banded mixed": lambda: bandsolve.solve_banded((1, 1), np.ones((3, 4)), cupy.ones(4)),
        }
        if cupy.cuda.runtime.getDeviceCount() > 1:
            with cupy.cuda.Device(1):
                other = cupy.ones((4, 16))
            cases["other GPU"] = lambda: bandsolve.solve(a, b, c, other)
        for name, call in cases.items():
            with self.subTest(name), self.assertRaises(ValueError):
                call()

    def test_solve_banded(self):
        import scipy.linalg
        ab = self.rng.standard_normal((3, 4, 20))
        ab[:, 1, :] += 8
        hb = self.rng.standard_normal((3, 20, 2))
        x = bandsolve.solve_banded((2, 1), cupy.asarray(ab), cupy.asarray(hb))
        self.assertIsInstance(x, cupy.ndarray)
        for s in range(3):
            np.testing.assert_allclose(cupy.asnumpy(x[s]), scipy.linalg.solve_banded((2, 1), ab[s], hb[s]),
                                       rtol=1e-11)


@unittest.skipIf(torch is None, "torch with CUDA is not importable")
@unittest.skipUnless(torch is not None and gpu_library(), "the CUDA variant of libbandsolve is not loaded")
class TestTorch(unittest.TestCase):
    def test_in_place(self):
        rng = np.random.default_rng(5)
        ha, hb, hc, hd = dominant(rng, (32, 50))
        a, b, c, d = (torch.from_numpy(x).cuda() for x in (ha, hb, hc, hd))
        x = bandsolve.solve(a, b, c, d, axis=0, out=d)
        self.assertIs(x, d)
        torch.cuda.synchronize()
        np.testing.assert_allclose(d.cpu().numpy(), reference(ha, hb, hc, hd, 0), rtol=1e-12, atol=1e-12)
        y = bandsolve.solve(a, b, c, torch.from_numpy(hd).cuda())
        self.assertTrue(y.is_cuda)
        with self.assertRaises(ValueError):
            bandsolve.solve(a, b, c, d.to(torch.float32))


if __name__ == "__main__":
    unittest.main()
