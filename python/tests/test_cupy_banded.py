"""bandsolve.solve_banded on CuPy arrays (and PyTorch tensors), solved on
the GPU by bandsolve_solve_banded_device, against scipy.linalg.solve_banded
on host copies; skipped where CuPy or a GPU (or SciPy) is missing."""

import os
import sys
import unittest

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import bandsolve  # noqa: E402

try:
    import scipy.linalg
except ImportError:  # pragma: no cover
    scipy = None

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


TOL = {np.dtype(np.float32): 2e-4, np.dtype(np.float64): 1e-11}

# (l, u, n): bands the GPU kernel takes (K = max(1, l, u) <= 8, K < n:
# equal and unequal bandwidths, a diagonal, the widest) and shapes solved
# through the host (K > 8, n = 1).
SHAPES = [(1, 1, 9), (2, 1, 10), (0, 3, 8), (3, 0, 8), (2, 2, 12), (0, 0, 5), (8, 8, 40), (7, 2, 30),
          (9, 4, 30), (0, 0, 1)]


def reference(l, u, ab, b):
    """scipy.linalg.solve_banded of every system of a batch, in float64
    (a division for n = 1, which SciPy 1.10 does not take with b of
    shape (1,))."""
    ab, b = np.asarray(ab, dtype=np.float64), np.asarray(b, dtype=np.float64)
    batch = ab.shape[:-2]
    x = np.empty(b.shape)
    for idx in np.ndindex(*batch):
        if ab.shape[-1] == 1:
            x[idx] = b[idx] / ab[idx][u, 0]
        else:
            x[idx] = scipy.linalg.solve_banded((l, u), ab[idx], b[idx])
    return x


@unittest.skipIf(scipy is None, "scipy is not importable")
@unittest.skipIf(cupy is None, "cupy is not importable or finds no GPU")
@unittest.skipUnless(cupy is not None and gpu_library(), "the CUDA variant of libbandsolve is not loaded")
class TestCuPyBanded(unittest.TestCase):
    def setUp(self):
        self.rng = np.random.default_rng(23)

    def band(self, l, u, n, lead=(), dtype=np.float64):
        ab = self.rng.standard_normal(lead + (l + u + 1, n))
        ab[..., u, :] += 4 * (l + u + 1)
        return ab.astype(dtype)

    def check(self, x, want, dtype, what=""):
        self.assertIsInstance(x, cupy.ndarray, what)
        self.assertEqual(x.dtype, np.dtype(dtype), what)
        self.assertEqual(x.shape, want.shape, what)
        tol = TOL[np.dtype(dtype)]
        np.testing.assert_allclose(cupy.asnumpy(x), want, rtol=tol, atol=tol, err_msg=what)

    def test_against_scipy(self):
        for dtype in (np.float32, np.float64):
            for l, u, n in SHAPES:
                ab = self.band(l, u, n, dtype=dtype)
                for bshape in ((n,), (n, 3)):
                    b = self.rng.standard_normal(bshape).astype(dtype)
                    what = f"{np.dtype(dtype)} l={l} u={u} n={n} b{bshape}"
                    with self.subTest(what):
                        x = bandsolve.solve_banded((l, u), cupy.asarray(ab), cupy.asarray(b))
                        self.check(x, reference(l, u, ab, b), dtype, what)

    def test_batch(self):
        for dtype in (np.float32, np.float64):
            for l, u, n in ((2, 1, 7), (1, 1, 64), (4, 4, 100), (10, 3, 20)):
                ab = self.band(l, u, n, (3, 70), dtype)
                for bshape in ((3, 70, n), (3, 70, n, 2)):
                    b = self.rng.standard_normal(bshape).astype(dtype)
                    what = f"{np.dtype(dtype)} l={l} u={u} n={n} b{bshape}"
                    with self.subTest(what):
                        dab, db = cupy.asarray(ab), cupy.asarray(b)
                        x = bandsolve.solve_banded((l, u), dab, db)
                        self.check(x, reference(l, u, ab, b), dtype, what)
                        np.testing.assert_array_equal(cupy.asnumpy(dab), ab, "ab is kept")
                        np.testing.assert_array_equal(cupy.asnumpy(db), b, "b is kept")

    def test_same_as_host(self):
        # The GPU's LU with partial pivoting is the CPU's, operation for
        # operation: the same solutions (up to the sign of a zero) on
        # systems that interchange rows at most steps.
        for dtype in (np.float32, np.float64):
            for l, u in ((2, 1), (1, 3), (3, 3)):
                ab = self.rng.standard_normal((50, l + u + 1, 40)).astype(dtype)
                b = self.rng.standard_normal((50, 40, 2)).astype(dtype)
                with self.subTest(dtype=dtype, l=l, u=u):
                    x = bandsolve.solve_banded((l, u), cupy.asarray(ab), cupy.asarray(b))
                    np.testing.assert_array_equal(cupy.asnumpy(x), bandsolve.solve_banded((l, u), ab, b))

    def test_dtypes(self):
        # As on the host: integers become float64, float32 with float64
        # float64.
        iab = np.array([[0, 1, 1], [4, 4, 4], [1, 1, 0]])
        ib = np.array([1, 2, 3])
        x = bandsolve.solve_banded((1, 1), cupy.asarray(iab), cupy.asarray(ib))
        self.check(x, reference(1, 1, iab, ib), np.float64)
        ab, b = self.band(1, 2, 9), self.rng.standard_normal(9)
        x = bandsolve.solve_banded((1, 2), cupy.asarray(ab, dtype=np.float32), cupy.asarray(b))
        self.check(x, reference(1, 2, ab.astype(np.float32), b), np.float64)

    def test_views(self):
        # Arrays that are not C-contiguous are copied to ones that are.
        ab = self.band(2, 2, 16, (4,))
        b = self.rng.standard_normal((4, 16, 3))
        dab = cupy.asfortranarray(cupy.asarray(ab))
        db = cupy.asarray(np.concatenate([b, b], axis=2))[:, :, ::2]
        x = bandsolve.solve_banded((2, 2), dab, db)
        self.check(x, reference(2, 2, ab, np.concatenate([b, b], axis=2)[:, :, ::2]), np.float64)

    def test_in_place(self):
        for dtype in (np.float32, np.float64):
            ab = self.band(2, 1, 12, (5,), dtype)
            b = self.rng.standard_normal((5, 12, 2)).astype(dtype)
            want = reference(2, 1, ab, b)
            db = cupy.asarray(b)
            ptr = db.data.ptr
            x = bandsolve.solve_banded((2, 1), cupy.asarray(ab), db, out=db)
            self.assertIs(x, db)
            self.assertEqual(db.data.ptr, ptr)
            self.check(db, want, dtype)
            # out apart from b, and a strided out.
            out = cupy.empty_like(cupy.asarray(b))
            self.assertIs(bandsolve.solve_banded((2, 1), cupy.asarray(ab), cupy.asarray(b), out=out), out)
            self.check(out, want, dtype)
            wide = cupy.zeros((5, 12, 4), dtype=dtype)
            bandsolve.solve_banded((2, 1), cupy.asarray(ab), cupy.asarray(b), out=wide[:, :, ::2])
            self.check(wide[:, :, ::2], want, dtype)
            self.assertEqual(int(cupy.count_nonzero(wide[:, :, 1::2])), 0)

    def test_singular_in_batch(self):
        for dtype in (np.float32, np.float64):
            for l, u, n in ((1, 1, 5), (2, 3, 9), (10, 2, 14)):
                ab = self.band(l, u, n, (2, 3), dtype)
                ab[0, 1, :, 2] = 0  # column 2 of system (0, 1): singular at row 2
                b = self.rng.standard_normal((2, 3, n, 2)).astype(dtype)
                what = f"{np.dtype(dtype)} l={l} u={u} n={n}"
                with self.subTest(what):
                    out = cupy.zeros(b.shape, dtype=dtype)
                    with self.assertRaises(bandsolve.SolveError) as e:
                        bandsolve.solve_banded((l, u), cupy.asarray(ab), cupy.asarray(b), out=out)
                    self.assertIsInstance(e.exception, np.linalg.LinAlgError)
                    self.assertEqual(e.exception.system, 1)
                    self.assertEqual(e.exception.row, 2)
                    self.assertEqual(e.exception.index, (0, 1))
                    self.assertEqual(list(e.exception.info), [0, 3, 0, 0, 0, 0])
                    with self.assertRaises(bandsolve.SolveError) as h:
                        bandsolve.solve_banded((l, u), ab, b)
                    self.assertEqual(list(h.exception.info), list(e.exception.info), "the host's info")
                    x = cupy.asnumpy(out)
                    self.assertTrue(np.isnan(x[0, 1]).all(), "the singular system's x is NaN")
                    ok = np.ones((2, 3), dtype=bool)
                    ok[0, 1] = False
                    tol = TOL[np.dtype(dtype)]
                    np.testing.assert_allclose(x[ok], reference(l, u, ab[ok], b[ok]), rtol=tol, atol=tol)

    def test_nonfinite_fails_its_system(self):
        # The device input is not scanned for the whole call: a NaN or Inf
        # fails its system only (the host refuses the call).
        ab = self.band(2, 1, 10, (4,))
        b = self.rng.standard_normal((4, 10))
        ab[1, 2, 5] = np.inf
        b[3, 7] = np.nan
        db = cupy.asarray(b)
        with self.assertRaises(bandsolve.SolveError) as e:
            bandsolve.solve_banded((2, 1), cupy.asarray(ab), db, out=db)
        self.assertEqual(e.exception.systems, [1, 3])
        self.assertEqual(e.exception.info[1], 7)  # the Inf's row 6 (ab[2, 5]: row 2 + 5 - 1)
        self.assertGreater(e.exception.info[3], 0)
        x = cupy.asnumpy(db)
        self.assertTrue(np.isnan(x[[1, 3]]).all())
        np.testing.assert_allclose(x[[0, 2]], reference(2, 1, ab[[0, 2]], b[[0, 2]]), rtol=1e-11, atol=1e-12)

    def test_non_default_stream(self):
        ab = self.band(3, 2, 200, (64,))
        b = self.rng.standard_normal((64, 200, 2))
        s = cupy.cuda.Stream(non_blocking=True)
        with s:
            dab, db = cupy.asarray(ab), cupy.asarray(b)
            db *= 2  # queued on s before the solve
            bandsolve.solve_banded((3, 2), dab, db, out=db)
            db += 1  # queued on s after it
        s.synchronize()
        np.testing.assert_allclose(cupy.asnumpy(db), reference(3, 2, ab, 2 * b) + 1, rtol=1e-11, atol=1e-11)
        # The stream given explicitly, with a copy of ab made for the solve.
        dab, db = cupy.asarray(ab, dtype=np.float32), cupy.asarray(b)
        cupy.cuda.Device().synchronize()
        x = bandsolve.solve_banded((3, 2), dab, db, stream=s)
        s.synchronize()
        self.check(x, reference(3, 2, ab.astype(np.float32), b), np.float64)
        # A wide band (solved through the host) on s.
        ab9 = self.band(9, 9, 40, (5,))
        b9 = self.rng.standard_normal((5, 40))
        with s:
            db9 = cupy.asarray(b9)
            db9 *= 3
            x = bandsolve.solve_banded((9, 9), cupy.asarray(ab9), db9)
            x += 1
        s.synchronize()
        np.testing.assert_allclose(cupy.asnumpy(x), reference(9, 9, ab9, 3 * b9) + 1, rtol=1e-11, atol=1e-11)

    def test_dlpack(self):
        class DLPackOnly:
            def __init__(self, a):
                self._a = a

            def __dlpack__(self, stream=None):
                return self._a.__dlpack__(stream=stream)

            def __dlpack_device__(self):
                return self._a.__dlpack_device__()

        ab = self.band(1, 2, 11, (3,))
        b = self.rng.standard_normal((3, 11))
        db = cupy.asarray(b)
        x = bandsolve.solve_banded((1, 2), DLPackOnly(cupy.asarray(ab)), DLPackOnly(db), out=DLPackOnly(db))
        self.assertIsInstance(x, cupy.ndarray)
        self.assertEqual(x.data.ptr, db.data.ptr)
        self.check(db, reference(1, 2, ab, b), np.float64)

    def test_empty(self):
        x = bandsolve.solve_banded((1, 1), cupy.ones((0, 3, 5)), cupy.ones((0, 5)))
        self.assertIsInstance(x, cupy.ndarray)
        self.assertEqual(x.shape, (0, 5))

    def test_errors(self):
        ab = self.band(1, 1, 5)
        dab, db = cupy.asarray(ab), cupy.ones(5)
        cases = {
            "host ab": lambda: bandsolve.solve_banded((1, 1), ab, db),
            "host b": lambda: bandsolve.solve_banded((1, 1), dab, np.ones(5)),
            "host out": lambda: bandsolve.solve_banded((1, 1), dab, db, out=np.ones(5)),
            "device out of host arrays": lambda: bandsolve.solve_banded((1, 1), ab, np.ones(5), out=db),
            "complex": lambda: bandsolve.solve_banded((1, 1), dab.astype(cupy.complex128), db),
            "complex b": lambda: bandsolve.solve_banded((1, 1), dab, db.astype(cupy.complex64)),
            "l+u+1": lambda: bandsolve.solve_banded((2, 1), dab, db),
            "b length": lambda: bandsolve.solve_banded((1, 1), dab, cupy.ones(4)),
            "b batch": lambda: bandsolve.solve_banded((1, 1), cupy.asarray(self.band(1, 1, 5, (2,))),
                                                      cupy.ones((3, 5))),
            "ab 1-d": lambda: bandsolve.solve_banded((1, 1), cupy.ones(5), db),
            "out shape": lambda: bandsolve.solve_banded((1, 1), dab, db, out=cupy.ones(4)),
            "l_and_u": lambda: bandsolve.solve_banded(1, dab, db),
            "l >= n": lambda: bandsolve.solve_banded((5, 0), cupy.ones((6, 5)), db),
            "negative u": lambda: bandsolve.solve_banded((2, -1), cupy.ones((2, 5)), db),
        }
        if cupy.cuda.runtime.getDeviceCount() > 1:
            with cupy.cuda.Device(1):
                other = cupy.ones(5)
                other_ab = cupy.asarray(ab)
            cases["b on another GPU"] = lambda: bandsolve.solve_banded((1, 1), dab, other)
            cases["ab on another GPU"] = lambda: bandsolve.solve_banded((1, 1), other_ab, db)
            cases["out on another GPU"] = lambda: bandsolve.solve_banded((1, 1), dab, db, out=other)
        for name, call in cases.items():
            with self.subTest(name), self.assertRaises(ValueError):
                call()


@unittest.skipIf(scipy is None, "scipy is not importable")
@unittest.skipIf(torch is None, "torch with CUDA is not importable")
@unittest.skipUnless(torch is not None and gpu_library(), "the CUDA variant of libbandsolve is not loaded")
class TestTorchBanded(unittest.TestCase):
    def test_solve(self):
        rng = np.random.default_rng(8)
        ab = rng.standard_normal((6, 4, 30))
        ab[:, 2, :] += 16
        b = rng.standard_normal((6, 30, 2))
        tab, tb = torch.from_numpy(ab).cuda(), torch.from_numpy(b).cuda()
        x = bandsolve.solve_banded((1, 2), tab, tb)
        self.assertTrue(x.is_cuda)
        torch.cuda.synchronize()
        np.testing.assert_allclose(x.cpu().numpy(), reference(1, 2, ab, b), rtol=1e-11, atol=1e-12)
        y = bandsolve.solve_banded((1, 2), tab, tb, out=tb)
        self.assertIs(y, tb)
        torch.cuda.synchronize()
        np.testing.assert_allclose(tb.cpu().numpy(), reference(1, 2, ab, b), rtol=1e-11, atol=1e-12)
        with self.assertRaises(ValueError):
            bandsolve.solve_banded((1, 2), tab, torch.from_numpy(b))


if __name__ == "__main__":
    unittest.main()
