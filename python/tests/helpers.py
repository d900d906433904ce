"""Reference solves for the tests: dense NumPy solves of each system."""

import numpy as np


def dense(a, b, c, cyclic=False):
    """The dense matrix of one tridiagonal system."""
    n = len(b)
    m = np.diag(np.asarray(b, dtype=np.float64))
    if n > 1:
        m += np.diag(np.asarray(a[1:], dtype=np.float64), -1) + np.diag(np.asarray(c[:-1], dtype=np.float64), 1)
    if cyclic and n > 2:
        m[0, n - 1] += a[0]
        m[n - 1, 0] += c[n - 1]
    return m


def reference(a, b, c, d, axis=-1, cyclic=False):
    """Solves every line of d along axis by a dense solve in float64."""
    a, b, c, d = (np.moveaxis(np.broadcast_to(x, np.shape(d)), axis, -1) for x in (a, b, c, d))
    x = np.empty(d.shape, dtype=np.float64)
    for idx in np.ndindex(d.shape[:-1]):
        x[idx] = np.linalg.solve(dense(a[idx], b[idx], c[idx], cyclic), d[idx].astype(np.float64))
    return np.moveaxis(x, -1, axis)


def dominant(rng, shape, dtype=np.float64):
    """Coefficients of diagonally dominant systems and right-hand sides."""
    a = rng.uniform(-1, 1, shape)
    c = rng.uniform(-1, 1, shape)
    b = 2.5 + rng.uniform(0, 1, shape)
    d = rng.standard_normal(shape)
    return tuple(x.astype(dtype) for x in (a, b, c, d))
