"""Helpers that generated code imports by name.

These are the few operations a derivative rule needs that NumPy does not
spell in one call: summing a cotangent back to a broadcast operand's shape,
spreading a reduction's cotangent back over the reduced axes, scattering a
cotangent into zeros at an index.  Keeping them here, one job each, lets
every rule stay a one-line template.  Each is also registered as a
primitive, so generated code can itself be transformed again.
"""
import numbers

import numpy as np

__all__ = ["unbroadcast", "unreduce", "unindex", "unattr", "zeros_like",
           "tree_add", "check_grad_output", "stop_gradient", "index_zero",
           "matmul_adjoint_lhs", "matmul_adjoint_rhs"]

_BASIC_INDEX = (int, np.integer, slice, type(None), type(Ellipsis))


def _is_array_like(x):
    return isinstance(x, (np.ndarray, np.generic, numbers.Number))


def unbroadcast(g, x):
    """Sum ``g`` down to the shape of ``x`` (undo NumPy broadcasting)."""
    shape = np.shape(x)
    g_shape = np.shape(g)
    if g_shape == shape:
        return g
    if len(g_shape) < len(shape) or any(
            a != b and a != 1 for a, b in zip(g_shape[len(g_shape) - len(shape):], shape)):
        return np.broadcast_to(g, shape)      # a scalar cotangent of a folded seed
    lead = len(g_shape) - len(shape)
    axes = tuple(range(lead)) + tuple(
        lead + i for i, n in enumerate(shape) if n == 1 and g_shape[lead + i] != 1)
    total = np.sum(g, axis=axes, keepdims=False)
    return np.reshape(total, shape)


def unreduce(g, x, axis=None, keepdims=False):
    """Broadcast the cotangent of a reduction over ``axis`` back to ``x``'s shape."""
    shape = np.shape(x)
    if axis is not None and not keepdims:
        axes = (axis,) if np.ndim(axis) == 0 else tuple(axis)
        axes = sorted(a % len(shape) for a in axes)
        g = np.expand_dims(g, tuple(axes))
    return np.broadcast_to(g, shape)


def _is_basic(index):
    parts = index if isinstance(index, tuple) else (index,)
    return all(isinstance(p, _BASIC_INDEX) for p in parts)


def unindex(x, index, g):
    """Zeros shaped like ``x`` with ``g`` added at ``x[index]``.

    Repeated integer indices accumulate (np.add.at), as the chain rule wants.
    ``x`` may be a container (list, tuple, dict, namedtuple): the result is
    then a container of zeros with ``g`` in the indexed slot.
    """
    if isinstance(x, (list, tuple, dict)):
        out = zeros_like(x)
        if isinstance(out, tuple):
            items = list(out)
            items[index] = g
            return type(x)(*items) if hasattr(x, "_fields") else tuple(items)
        out[index] = g
        return out
    dtype = np.result_type(np.asarray(x).dtype, np.asarray(g).dtype)
    z = np.zeros(np.shape(x), dtype=dtype)
    if _is_basic(index):
        z[index] = g
    else:
        np.add.at(z, index, g)
    return z


def unattr(x, attr, g):
    """Zeros shaped like the record ``x`` with ``g`` as field ``attr``."""
    return zeros_like(x)._replace(**{attr: g})


def index_zero(g, index):
    """A copy of ``g`` with ``g[index]`` zeroed: the cotangent that flows
    past ``x[index] = v`` to the old ``x``."""
    out = np.array(g, copy=True)
    out[index] = 0
    return out


def zeros_like(x):
    """Zeros with the structure of ``x`` (a pytree of arrays and floats)."""
    from . import tree_util
    if _is_array_like(x):
        return np.zeros_like(x) if isinstance(x, (np.ndarray, np.generic)) else 0.0 * x
    return tree_util.tree_map(zeros_like, x)


def tree_add(a, b):
    """Leafwise ``a + b`` for cotangents of containers."""
    from . import tree_util
    if _is_array_like(a) and _is_array_like(b):
        return a + b
    return tree_util.tree_map(lambda u, v: u + v, a, b)


def check_grad_output(y):
    """grad differentiates scalar-output functions only (as JAX)."""
    shape = np.shape(y)
    if shape != () or not _is_array_like(y):
        raise TypeError("Gradient only defined for scalar-output functions. "
                        f"Output had shape: {shape}.")


def stop_gradient(x):
    """Identity on values; derivative zero."""
    return x


def matmul_adjoint_lhs(g, a, b):
    """Cotangent of ``a`` in ``a @ b`` (NumPy's 1-D promotion rules included)."""
    a, b, g = np.asarray(a), np.asarray(b), np.asarray(g)
    if b.ndim == 1:
        out = g[..., None] * b
    elif a.ndim == 1:
        out = np.matmul(b, g[..., None])[..., 0]
    else:
        out = np.matmul(g, np.swapaxes(b, -1, -2))
    return unbroadcast(out, a)


def matmul_adjoint_rhs(g, a, b):
    """Cotangent of ``b`` in ``a @ b``."""
    a, b, g = np.asarray(a), np.asarray(b), np.asarray(g)
    if a.ndim == 1 and b.ndim == 1:
        out = g * a
    elif a.ndim == 1:
        out = a[:, None] * g[..., None, :]
    elif b.ndim == 1:
        out = np.matmul(np.swapaxes(a, -1, -2), g[..., None])[..., 0]
    else:
        out = np.matmul(np.swapaxes(a, -1, -2), g)
    return unbroadcast(out, b)
