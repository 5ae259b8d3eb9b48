"""Cotangents of broadcasting and of reductions: sum a cotangent back to a
broadcast operand's shape (``unbroadcast``), spread a reduction's cotangent
back over the reduced axes (``unreduce``), and the helpers of the product
and tangent rules of reductions."""
import numpy as np

from .values import Unbound


def unbroadcast(g, x):
    """Sum ``g`` down to the shape of ``x`` (undo NumPy broadcasting)."""
    if isinstance(x, (list, tuple, dict)):
        # a container: leaf by leaf where ``g`` has the same structure (a
        # container shared by every lane of vmapped code, its cotangent
        # batched: ``broadcast_lanes``), else nothing was broadcast
        return _unbroadcast_items(g, x)
    if isinstance(x, Unbound) or x is None:
        return g          # a value never assigned (a lane's side of ``select_lanes``
                          # not taken yet): its cotangent is never read
    shape = np.shape(x)
    g_shape = np.shape(g)
    if g_shape == shape:
        return g
    if len(g_shape) < len(shape) or any(
            a != b and b != 1 for a, b in zip(g_shape[len(g_shape) - len(shape):], shape)):
        return np.broadcast_to(g, shape)      # a scalar cotangent of a folded seed
    lead = len(g_shape) - len(shape)
    axes = tuple(range(lead)) + tuple(
        lead + i for i, n in enumerate(shape) if n == 1 and g_shape[lead + i] != 1)
    total = np.sum(g, axis=axes, keepdims=False)
    return np.reshape(total, shape)


def _unbroadcast_items(g, x):
    if isinstance(g, dict) and isinstance(x, dict):
        return {k: _unbroadcast_item(v, x[k]) if k in x else v for k, v in g.items()}
    if isinstance(g, (list, tuple)) and isinstance(x, (list, tuple)) and len(g) == len(x):
        items = [_unbroadcast_item(u, v) for u, v in zip(g, x)]
        return type(g)(*items) if hasattr(g, "_fields") else type(g)(items)
    return g


def _unbroadcast_item(g, x):
    return None if g is None else unbroadcast(g, x)


def unreduce(g, x, axis=None, keepdims=False):
    """Broadcast the cotangent of a reduction over ``axis`` back to ``x``'s shape.
    A Python number ``g`` (a gradient's seed ``1.0``) is weak, as in NumPy's
    arithmetic: next to a float32 ``x`` it gives a float32 cotangent."""
    if type(g) in (int, float):
        g = np.asarray(g, dtype=np.result_type(g, x))
    shape = np.shape(x)
    if axis is not None and not keepdims:
        axes = (axis,) if np.ndim(axis) == 0 else tuple(axis)
        axes = sorted(a % len(shape) for a in axes)
        g = np.expand_dims(g, tuple(axes))
    return np.broadcast_to(g, shape)


def broadcast_like(t, ans):
    """A tangent broadcast to its result's shape (an operand without a
    tangent may have been the larger one)."""
    if isinstance(ans, (list, tuple, dict)) or np.shape(t) == np.shape(ans):
        return t
    return np.broadcast_to(t, np.shape(ans))


def reduced_axes(axis, ndim):
    """``axis`` (None, int or tuple, negatives allowed) as a sorted tuple."""
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if np.ndim(axis) == 0 else tuple(axis)
    return tuple(sorted(int(a) % ndim for a in axes))


def prod_others(a, *tangents, axis=None):
    """For each entry of ``a``, the product of the other entries that
    ``np.prod(a, axis)`` multiplies it with.

    This is the derivative of the product; computed from prefix and suffix
    products (not ``prod / a``), so zeros in ``a`` are exact.

    With ``tangents`` t1..tm (shaped like ``a``), its m-th derivative along
    them: for entry i, the sum over distinct other entries j1..jm of
    ``t1[j1] ... tm[jm]`` times the product of the entries left.  That family
    is closed under differentiation (the derivative along ``a``'s tangent
    appends it to ``tangents``), so products differentiate to any order.
    """
    a = np.asarray(a)
    axes = reduced_axes(axis, a.ndim)
    last = tuple(range(a.ndim - len(axes), a.ndim))
    moved_shape = np.moveaxis(a, axes, last).shape

    def rows(x):
        moved = np.moveaxis(np.broadcast_to(np.asarray(x), a.shape), axes, last)
        return np.reshape(moved, moved.shape[:a.ndim - len(axes)] + (-1,))

    out = _others(rows(a), [rows(t) for t in tangents])
    return np.moveaxis(np.reshape(out, moved_shape), last, axes)


def _others(rows, tangents):
    """``prod_others`` along the last axis of ``rows`` (see there)."""
    n = rows.shape[-1]
    if n == 0:
        return np.zeros_like(rows)
    if not tangents:
        ones = np.ones_like(rows[..., :1])
        before = np.cumprod(np.concatenate([ones, rows[..., :-1]], axis=-1), axis=-1)
        after = np.cumprod(np.concatenate([ones, rows[..., :0:-1]], axis=-1), axis=-1)[..., ::-1]
        return before * after
    # Choose j1 for the first tangent: a new axis j holds, for each choice,
    # the rows with entry j replaced by t1[j] and the later tangents zeroed
    # there (j is taken); then sum over j != i.
    first, rest = tangents[0], tangents[1:]
    eye = np.eye(n, dtype=bool)
    chosen = np.where(eye, first[..., :, None], rows[..., None, :])
    rest = [np.where(eye, 0.0, t[..., None, :]) for t in rest]
    each = _others(chosen, rest)                  # [..., j, i]
    return np.sum(np.where(eye, 0.0, each), axis=-2)
