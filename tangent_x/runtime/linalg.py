"""Cotangents of ``np.linalg``: solve (and its tangent's helpers) and norm."""
import numpy as np

from .broadcasting import reduced_axes, unbroadcast


def _solves_vectors(a, b):
    """Whether ``np.linalg.solve(a, b)`` reads ``b`` as (a stack of) vectors:
    NumPy 2 when ``b`` is 1-d, NumPy 1 when ``b`` has one axis less than ``a``."""
    if int(np.__version__.split(".")[0]) >= 2:
        return np.ndim(b) == 1
    return np.ndim(b) == np.ndim(a) - 1


def solve_transposed(a, g, b):
    """Solve ``a.T @ y = g`` for ``g`` shaped like ``np.linalg.solve(a, b)``:
    the cotangent of ``b`` (before summing axes that ``b`` broadcast over)."""
    at = np.swapaxes(a, -1, -2)
    if _solves_vectors(a, b):
        return np.linalg.solve(at, np.asarray(g)[..., None])[..., 0]
    return np.linalg.solve(at, g)


def solve_adjoint_lhs(y, a, b, x):
    """Cotangent of ``a`` in ``x = np.linalg.solve(a, b)`` given ``y``, the
    one of ``b``: ``-y @ x.T`` (an outer product for vectors)."""
    if _solves_vectors(a, b):
        out = -y[..., :, None] * x[..., None, :]
    else:
        out = -np.matmul(y, np.swapaxes(x, -1, -2))
    return unbroadcast(out, a)


def solve_matvec(m, x, a, b):
    """``m @ x`` for ``x`` shaped like ``np.linalg.solve(a, b)``: a (stack of)
    vector(s) or matrices as ``solve`` reads ``b`` (``m`` is shaped like ``a``).
    The tangent of ``solve`` applies ``a``'s tangent to the solution with it."""
    if _solves_vectors(a, b):
        return np.matmul(m, np.asarray(x)[..., None])[..., 0]
    return np.matmul(m, x)


def _ties(x, best, axes):
    """1 where ``x`` attains the extreme ``best`` (keepdims), shared among ties."""
    hit = (x == best).astype(float)
    return hit / np.sum(hit, axis=axes, keepdims=True)


def norm_adjoint(g, ans, x, ord=None, axis=None, keepdims=False):
    """Cotangent of ``x`` in ``np.linalg.norm(x, ord, axis, keepdims)``.

    Vector norms: any ``ord`` (inf/-inf share the cotangent among ties).
    Matrix norms: ``'fro'``, ``'nuc'``, 2/-2 (largest/smallest singular
    value), 1/-1 (column sums), inf/-inf (row sums).
    """
    x = np.asarray(x)
    if axis is None:
        axis = tuple(range(x.ndim)) if ord is None or x.ndim > 2 else \
            (0 if x.ndim == 1 else (0, 1))
    axes = reduced_axes(axis, x.ndim)
    g, ans = np.asarray(g), np.asarray(ans)
    if not keepdims:
        g, ans = np.expand_dims(g, axes), np.expand_dims(ans, axes)
    if len(axes) != 2 or ord is None or ord == "fro":
        if ord is None or ord == "fro" or ord == 2:
            return g * x / ans
        if ord == np.inf or ord == -np.inf:
            return g * np.sign(x) * _ties(np.abs(x), ans, axes)
        if ord == 0:
            return np.zeros_like(x)
        return g * np.sign(x) * (np.abs(x) / ans) ** (ord - 1)
    rows, cols = axes
    if ord in (1, -1, np.inf, -np.inf):
        summed = cols if ord in (np.inf, -np.inf) else rows
        sums = np.sum(np.abs(x), axis=summed, keepdims=True)
        other = rows if summed == cols else cols
        return g * np.sign(x) * _ties(sums, ans, (other,))
    m = np.moveaxis(x, (rows, cols), (-2, -1))
    u, s, vt = np.linalg.svd(m, full_matrices=False)
    if ord == "nuc":
        d = np.matmul(u, vt)
    elif ord in (2, -2):
        i = 0 if ord == 2 else -1
        d = u[..., :, i, None] * vt[..., i, None, :]
    else:
        raise NotImplementedError(f"no derivative for np.linalg.norm with ord={ord!r}")
    return g * np.moveaxis(d, (-2, -1), (rows, cols))
