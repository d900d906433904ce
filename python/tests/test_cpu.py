"""bandsolve on NumPy arrays against dense NumPy solves and
scipy.linalg.solve_banded (run with python3 -m unittest discover)."""

import os
import sys
import unittest

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from helpers import dense, dominant, reference  # noqa: E402

import bandsolve  # noqa: E402
from bandsolve import _layout  # noqa: E402

try:
    import scipy.linalg
except ImportError:
    scipy = None

TOL = {np.dtype(np.float32): 2e-5, np.dtype(np.float64): 1e-12}


class DLPackOnly:
    """A host array seen through DLPack alone (no NumPy interfaces)."""

    def __init__(self, a, device=None):
        self._a = a
        self._device = device

    def __dlpack__(self, stream=None):
        return self._a.__dlpack__()

    def __dlpack_device__(self):
        return self._device or self._a.__dlpack_device__()


class TestSolve(unittest.TestCase):
    def setUp(self):
        self.rng = np.random.default_rng(42)

    def check(self, x, want, dtype):
        self.assertEqual(x.dtype, np.dtype(dtype))
        np.testing.assert_allclose(x, want, rtol=TOL[np.dtype(dtype)], atol=TOL[np.dtype(dtype)])

    def test_every_axis(self):
        for dtype in (np.float32, np.float64):
            for order in ("C", "F"):
                shape = (5, 6, 7)
                a, b, c, d = (np.asarray(v, order=order) for v in dominant(self.rng, shape, dtype))
                for axis in (0, 1, 2, -1):
                    with self.subTest(dtype=dtype, order=order, axis=axis):
                        d0 = d.copy()
                        x = bandsolve.solve(a, b, c, d, axis=axis)
                        np.testing.assert_array_equal(d, d0, "d is kept when out is None")
                        self.check(x, reference(a, b, c, d, axis), dtype)

    def test_one_system(self):
        a, b, c, d = dominant(self.rng, (9,))
        x = bandsolve.solve(a, b, c, d)
        self.check(x, np.linalg.solve(dense(a, b, c), d), np.float64)

    def test_in_place(self):
        a, b, c, d = dominant(self.rng, (8, 16))
        want = reference(a, b, c, d, axis=0)
        out = bandsolve.solve(a, b, c, d, axis=0, out=d)
        self.assertIs(out, d)
        self.check(d, want, np.float64)

    def test_dlpack(self):
        # An object that only speaks DLPack (as JAX arrays do) is solved
        # over its own memory; out= writes into it.
        a, b, c, d = dominant(self.rng, (8, 16))
        want = reference(a, b, c, d, axis=0)
        x = bandsolve.solve(*(DLPackOnly(v) for v in (a, b, c, d)), axis=0)
        self.check(x, want, np.float64)
        out = np.zeros_like(d)
        got = bandsolve.solve(a, b, c, DLPackOnly(d), axis=0, out=DLPackOnly(out))
        self.check(out, want, np.float64)
        self.assertEqual(got.__array_interface__["data"][0], out.__array_interface__["data"][0])
        plan = bandsolve.Plan(8, 16, layout="interleaved")
        out2 = np.zeros_like(d)
        plan.solve(DLPackOnly(a), DLPackOnly(b), DLPackOnly(c), DLPackOnly(d), out=DLPackOnly(out2))
        self.check(out2, want, np.float64)
        with self.assertRaises(ValueError):
            bandsolve.solve(a, b, c, DLPackOnly(d, device=(4, 0)))

    def test_views(self):
        # Every other column of a wider array: the lines are strided.
        a, b, c, d = dominant(self.rng, (10, 12))
        va, vb, vc, vd = (v[:, ::2] for v in (a, b, c, d))
        out = np.zeros_like(d)
        x = bandsolve.solve(va, vb, vc, vd, axis=0, out=out[:, ::2])
        self.check(x, reference(va, vb, vc, vd, axis=0), np.float64)
        np.testing.assert_array_equal(out[:, 1::2], 0, "the columns between stay untouched")
        # Arrays of different strides are copied and still solved.
        x = bandsolve.solve(np.ascontiguousarray(va), vb, vc, vd, axis=1)
        self.check(x, reference(va, vb, vc, vd, axis=1), np.float64)

    def test_broadcast_coefficients(self):
        _, _, _, d = dominant(self.rng, (4, 6))
        a, c = np.full(6, -1.0), np.full(6, -1.0)
        b = 3.0 + np.arange(6) / 6
        d0 = d.copy()
        x = bandsolve.solve(a, b, c, d)
        np.testing.assert_array_equal(d, d0, "d is kept when out is None")
        self.check(x, reference(a, b, c, d), np.float64)

    def test_constant(self):
        _, _, _, d = dominant(self.rng, (7, 5))
        x = bandsolve.solve(-1.0, 3.0, -0.5, d, axis=0)
        self.check(x, reference(-1.0, 3.0, -0.5, d, axis=0), np.float64)

    def test_cyclic(self):
        a, b, c, d = dominant(self.rng, (3, 9))
        x = bandsolve.solve(a, b, c, d, cyclic=True)
        self.check(x, reference(a, b, c, d, cyclic=True), np.float64)

    def test_algorithms(self):
        a, b, c, d = dominant(self.rng, (6, 32))
        for alg in ("thomas", "gtsv", "cr", "pcr", "tpr", "partition", "partition-pivot"):
            with self.subTest(algorithm=alg):
                x = bandsolve.solve(a, b, c, d, algorithm=alg)
                np.testing.assert_allclose(x, reference(a, b, c, d), rtol=1e-10, atol=1e-10)
        # LDLT reads b and c of a symmetric positive definite matrix.
        c = -np.ones((6, 32))
        b = 2.5 * np.ones((6, 32))
        x = bandsolve.solve(None, b, c, d, algorithm="ldlt")
        a = np.roll(c, 1, axis=-1)
        np.testing.assert_allclose(x, reference(a, b, c, d), rtol=1e-12, atol=1e-12)

    def test_pivoting(self):
        # A zero first diagonal: only pivoting solves it.
        a, b, c, d = dominant(self.rng, (3, 6))
        b[:, 0] = 0
        x = bandsolve.solve(a, b, c, d, pivoting="always")
        self.check(x, reference(a, b, c, d), np.float64)
        with self.assertRaises(bandsolve.SolveError) as e:
            bandsolve.solve(a, b, c, d, algorithm="thomas", pivoting="never")
        self.assertEqual(e.exception.systems, [0, 1, 2])
        self.assertEqual(e.exception.row, 0)
        self.assertIsInstance(e.exception, np.linalg.LinAlgError)

    def test_zero_pivot_names_system(self):
        a, b, c, d = dominant(self.rng, (6, 4))  # systems along axis 0: 4 of 6 rows
        b[0, 2] = 0
        with self.assertRaises(bandsolve.SolveError) as e:
            bandsolve.solve(a, b, c, d, axis=0, algorithm="thomas", pivoting="never")
        err = e.exception
        self.assertEqual(err.system, 2)
        self.assertEqual(err.row, 0)
        self.assertEqual(err.index, (slice(None), 2))
        self.assertEqual(list(err.info), [0, 0, 1, 0])
        self.assertIn("system 2, row 0", str(err))

    def test_nan(self):
        a, b, c, d = dominant(self.rng, (3, 4, 5))
        d[1, 2, 3] = np.nan
        with self.assertRaises(bandsolve.SolveError) as e:
            bandsolve.solve(a, b, c, d, axis=1)
        err = e.exception
        self.assertIsInstance(err, ValueError)
        self.assertEqual(err.row, 2)
        self.assertEqual(err.index, (1, slice(None), 3))
        self.assertIn("NaN", str(err))

    def test_bad_arguments(self):
        a, b, c, d = dominant(self.rng, (3, 5))
        cases = {
            "int dtype": lambda: bandsolve.solve(a, b, c, d.astype(np.int64)),
            "mixed dtype": lambda: bandsolve.solve(a.astype(np.float32), b, c, d),
            "shape": lambda: bandsolve.solve(a[:, :4], b, c, d),
            "axis": lambda: bandsolve.solve(a, b, c, d, axis=2),
            "algorithm": lambda: bandsolve.solve(a, b, c, d, algorithm="gauss"),
            "pivoting": lambda: bandsolve.solve(a, b, c, d, algorithm="thomas", pivoting="always"),
            "out shape": lambda: bandsolve.solve(a, b, c, d, out=np.empty((5, 3))),
            "out dtype": lambda: bandsolve.solve(a, b, c, d, out=np.empty((3, 5), np.float32)),
            "a None": lambda: bandsolve.solve(None, b, c, d),
            "scalar d": lambda: bandsolve.solve(1.0, 2.0, 1.0, np.float64(1.0)),
        }
        ro = d.copy()
        ro.flags.writeable = False
        cases["read-only out"] = lambda: bandsolve.solve(a, b, c, d, out=ro)
        for name, call in cases.items():
            with self.subTest(name):
                with self.assertRaises(ValueError):
                    call()

    def test_empty(self):
        d = np.empty((0, 4))
        x = bandsolve.solve(d, d, d, d)
        self.assertEqual(x.shape, (0, 4))


class TestLayout(unittest.TestCase):
    def test_layout(self):
        # (shape, strides, axis) -> N, elem stride, G, batch stride, inner, outer
        self.assertEqual(_layout((4, 5, 6), (30, 6, 1), 2), (6, 1, 20, 6, [1, 0], []))
        self.assertEqual(_layout((4, 5, 6), (30, 6, 1), 0), (4, 30, 30, 1, [2, 1], []))
        self.assertEqual(_layout((4, 5, 6), (30, 6, 1), 1), (5, 6, 6, 1, [2], [0]))
        self.assertEqual(_layout((7,), (1,), 0), (7, 1, 1, 1, [], []))
        self.assertIsNone(_layout((4, 5), (-5, 1), 1))


class TestPlan(unittest.TestCase):
    def setUp(self):
        self.rng = np.random.default_rng(7)

    def test_plan_layouts(self):
        n, g = 10, 6
        for layout, shape, axis in (("contiguous", (g, n), 1), ("interleaved", (n, g), 0)):
            a, b, c, d = dominant(self.rng, shape)
            with self.subTest(layout=layout), bandsolve.Plan(n, g, layout=layout) as p:
                self.assertEqual(p.length, n * g)
                x = p.solve(a, b, c, d)
                np.testing.assert_allclose(x, reference(a, b, c, d, axis), rtol=1e-12)
                self.assertIn("auto", p.describe().lower() + "auto")

    def test_strided_plan_and_bounds(self):
        a, b, c, d = dominant(self.rng, (8, 5))
        p = bandsolve.Plan(8, 4, layout="strided", strides=(5, 1), dtype=np.float64)
        x = p.solve(a, b, c, d)
        np.testing.assert_allclose(x[:, :4], reference(a, b, c, d, 0)[:, :4], rtol=1e-12)
        with self.assertRaises(ValueError):
            p.solve(a[:7], b, c, d)  # too short
        with self.assertRaises(ValueError):
            p.solve(a.astype(np.float32), b, c, d)
        with self.assertRaises(ValueError):
            bandsolve.Plan(4, 4, layout="strided", strides=(2, 1))  # rows overlap
        with self.assertRaises(ValueError):
            bandsolve.Plan(0, 4)
        with self.assertRaises(ValueError):
            bandsolve.Plan(4, 4, layout="diagonal")

    def test_solve_pointers(self):
        n, g = 9, 4
        a, b, c, d = dominant(self.rng, (g, n))
        x = np.empty_like(d)
        p = bandsolve.Plan(n, g)
        ptr = [v.__array_interface__["data"][0] for v in (a, b, c, d, x)]
        p.solve_pointers(*ptr)
        np.testing.assert_allclose(x, reference(a, b, c, d), rtol=1e-12)
        b[2, 0] = np.nan
        with self.assertRaises(bandsolve.SolveError) as e:
            p.solve_pointers(*ptr)
        self.assertEqual(e.exception.system, 2)

    def test_factors(self):
        n, g = 12, 5
        a, b, c, _ = dominant(self.rng, (g, n))
        d = self.rng.standard_normal((2, g, n))
        p = bandsolve.Plan(n, g, algorithm="thomas")
        f = p.factor(a, b, c)
        p.close()
        x = f.solve(d, nrhs=2)
        for r in range(2):
            np.testing.assert_allclose(x[r], reference(a, b, c, d[r]), rtol=1e-12)
        y = f.solve(d[0])
        np.testing.assert_allclose(y, x[0], rtol=0, atol=0)
        f.close()
        fc = bandsolve.Plan(n, g).factor_const(-1, 3, -1)
        np.testing.assert_allclose(fc.solve(d[1]), reference(-1.0, 3.0, -1.0, d[1]), rtol=1e-12)

    def test_factor_breakdown(self):
        a, b, c, _ = dominant(self.rng, (3, 4))
        b[1, 0] = 0
        p = bandsolve.Plan(4, 3, algorithm="thomas", pivoting="never")
        with self.assertRaises(bandsolve.SolveError) as e:
            p.factor(a, b, c)
        self.assertEqual(list(e.exception.info), [0, 1, 0])

    def test_device_arrays_refused_on_cpu(self):
        class Fake:
            __cuda_array_interface__ = {"shape": (4,), "typestr": "<f8", "data": (4096, False), "version": 3}
        p = bandsolve.Plan(4, 1)
        with self.assertRaises(ValueError):
            p.solve(Fake(), Fake(), Fake(), Fake(), Fake())
        with self.assertRaises(ValueError):
            p.solve(np.ones(4), np.ones(4), np.ones(4), Fake(), np.ones(4))


@unittest.skipIf(scipy is None, "scipy is not importable")
class TestSolvehBanded(unittest.TestCase):
    """solveh_banded against scipy.linalg.solveh_banded (pbsv)."""

    def setUp(self):
        self.rng = np.random.default_rng(5)

    def sym(self, u, n, lead=()):
        """A random SPD band in the upper form and the same in the lower."""
        upper = self.rng.standard_normal(lead + (u + 1, n))
        upper[..., u, :] = np.abs(upper[..., u, :]) + 2 * (u + 1)
        for t in range(1, u + 1):
            upper[..., u - t, :t] = 0  # outside the matrix
        lower = np.zeros_like(upper)
        for t in range(u + 1):
            lower[..., t, :n - t] = upper[..., u - t, t:]
        return upper, lower

    def test_against_scipy(self):
        for u, n in ((0, 6), (1, 9), (2, 12), (4, 30)):
            upper, lower = self.sym(u, n)
            for bshape in ((n,), (n, 3)):
                b = self.rng.standard_normal(bshape)
                with self.subTest(u=u, b=bshape):
                    want = scipy.linalg.solveh_banded(upper, b)
                    for ab, lw in ((upper, False), (lower, True)):
                        got = bandsolve.solveh_banded(ab, b, lower=lw)
                        self.assertEqual(got.shape, want.shape)
                        np.testing.assert_allclose(got, want, rtol=1e-11, atol=1e-12)
                        np.testing.assert_allclose(got, scipy.linalg.solveh_banded(ab, b, lower=lw),
                                                   rtol=1e-11, atol=1e-12)

    def test_batch_and_float32(self):
        upper, _ = self.sym(2, 8, (3, 2))
        b = self.rng.standard_normal((3, 2, 8))
        x = bandsolve.solveh_banded(upper, b)
        for idx in np.ndindex(3, 2):
            np.testing.assert_allclose(x[idx], scipy.linalg.solveh_banded(upper[idx], b[idx]), rtol=1e-11)
        x32 = bandsolve.solveh_banded(upper.astype(np.float32), b.astype(np.float32))
        self.assertEqual(x32.dtype, np.float32)
        np.testing.assert_allclose(x32, x, rtol=1e-4, atol=1e-4)

    def test_not_positive_definite(self):
        upper, _ = self.sym(1, 6, (3,))
        upper[2, 1, 4] = -1.0  # a[4][4] of system 2
        b = self.rng.standard_normal((3, 6))
        with self.assertRaises(np.linalg.LinAlgError):
            scipy.linalg.solveh_banded(upper[2], b[2])
        out = np.zeros((3, 6))
        with self.assertRaises(bandsolve.SolveError) as e:
            bandsolve.solveh_banded(upper, b, out=out)
        self.assertEqual(e.exception.system, 2)
        self.assertEqual(list(e.exception.info), [0, 0, 5])
        self.assertTrue(np.all(np.isnan(out[2])))
        np.testing.assert_allclose(out[0], scipy.linalg.solveh_banded(upper[0], b[0]), rtol=1e-11)

    def test_bad_input(self):
        upper, _ = self.sym(1, 5)
        with self.assertRaises(ValueError):
            bandsolve.solveh_banded(upper, np.ones(4))
        with self.assertRaises(ValueError):
            bandsolve.solveh_banded(np.ones(5), np.ones(5))
        bad = upper.copy()
        bad[1, 2] = np.nan
        with self.assertRaises(bandsolve.SolveError):
            bandsolve.solveh_banded(bad, np.ones(5))


@unittest.skipIf(scipy is None, "scipy is not importable")
class TestBanded(unittest.TestCase):
    def setUp(self):
        self.rng = np.random.default_rng(3)

    def band(self, l, u, n, lead=()):
        ab = self.rng.standard_normal(lead + (l + u + 1, n))
        ab[..., u, :] += 4 * (l + u + 1)
        return ab

    def test_against_scipy(self):
        for l, u, n in ((1, 1, 9), (2, 1, 10), (0, 3, 8), (3, 0, 8), (2, 2, 12)):
            ab = self.band(l, u, n)
            for bshape in ((n,), (n, 3)):
                b = self.rng.standard_normal(bshape)
                with self.subTest(l=l, u=u, b=bshape):
                    want = scipy.linalg.solve_banded((l, u), ab, b)
                    got = bandsolve.solve_banded((l, u), ab, b)
                    self.assertEqual(got.shape, want.shape)
                    np.testing.assert_allclose(got, want, rtol=1e-11, atol=1e-12)

    def test_batch(self):
        l, u, n = 2, 1, 7
        ab = self.band(l, u, n, (3, 2))
        b = self.rng.standard_normal((3, 2, n, 2))
        x = bandsolve.solve_banded((l, u), ab, b)
        for idx in np.ndindex(3, 2):
            np.testing.assert_allclose(x[idx], scipy.linalg.solve_banded((l, u), ab[idx], b[idx]), rtol=1e-11)
        x32 = bandsolve.solve_banded((l, u), ab.astype(np.float32), b.astype(np.float32))
        self.assertEqual(x32.dtype, np.float32)
        np.testing.assert_allclose(x32, x, rtol=1e-4, atol=1e-4)

    def test_integer_input(self):
        ab = np.array([[0, 1, 1], [4, 4, 4], [1, 1, 0]])
        b = np.array([1, 2, 3])
        np.testing.assert_allclose(bandsolve.solve_banded((1, 1), ab, b),
                                   scipy.linalg.solve_banded((1, 1), ab, b), rtol=1e-14)

    def test_singular(self):
        ab = self.band(1, 1, 5, (3,))
        ab[1, :, 2] = 0  # column 2 of system 1
        b = self.rng.standard_normal((3, 5))
        with self.assertRaises(bandsolve.SolveError) as e:
            bandsolve.solve_banded((1, 1), ab, b)
        self.assertIsInstance(e.exception, np.linalg.LinAlgError)
        self.assertEqual(e.exception.system, 1)
        self.assertEqual(list(e.exception.info), [0, 3, 0])
        # out= receives the solved systems, NaN for the singular one.
        out = np.zeros((3, 5))
        with self.assertRaises(bandsolve.SolveError):
            bandsolve.solve_banded((1, 1), ab, b, out=out)
        self.assertTrue(np.isnan(out[1]).all())
        for s in (0, 2):
            np.testing.assert_allclose(out[s], scipy.linalg.solve_banded((1, 1), ab[s], b[s]), rtol=1e-11)

    def test_device_arrays_need_the_cuda_library(self):
        class Fake:
            __cuda_array_interface__ = {"shape": (5,), "typestr": "<f8", "data": (4096, False), "version": 3}
        if bandsolve.has_cuda():
            self.skipTest("the CUDA variant is loaded (test_cupy_banded covers device arrays)")
        ab = self.band(1, 1, 5)
        with self.assertRaises(ValueError) as e:
            bandsolve.solve_banded((1, 1), ab, Fake())
        self.assertIn("mixed", str(e.exception))
        fab = type("FakeAB", (), {"__cuda_array_interface__": {"shape": (3, 5), "typestr": "<f8",
                                                                "data": (8192, False), "version": 3}})()
        with self.assertRaises(ValueError) as e:
            bandsolve.solve_banded((1, 1), fab, Fake())
        self.assertIn("CPU variant", str(e.exception))

    def test_errors(self):
        ab = self.band(1, 1, 5)
        b = np.ones(5)
        for name, call in {
            "l+u+1": lambda: bandsolve.solve_banded((2, 1), ab, b),
            "b length": lambda: bandsolve.solve_banded((1, 1), ab, np.ones(4)),
            "complex": lambda: bandsolve.solve_banded((1, 1), ab.astype(complex), b),
            "l_and_u": lambda: bandsolve.solve_banded(1, ab, b),
        }.items():
            with self.subTest(name), self.assertRaises(ValueError):
                call()
        bad = b.copy()
        bad[3] = np.inf
        with self.assertRaises(bandsolve.SolveError) as e:
            bandsolve.solve_banded((1, 1), ab, bad)
        self.assertEqual(e.exception.row, 3)


if __name__ == "__main__":
    unittest.main()
