"""Cotangents of shape ops that NumPy cannot undo in one call: split what
was joined (concatenate, hstack, stack), sum what was copied (tile,
repeat), put a diagonal back."""
import numpy as np


def unconcatenate(g, arrays, axis=0):
    """Split the cotangent of ``np.concatenate(arrays, axis)`` into one piece
    per array, each shaped like its array (a list, as ``arrays`` was a sequence).

    The pieces' extents along ``axis`` are read off the arrays' sizes, so the
    same helper undoes ``vstack``/``hstack``, which first promote 0-d and 1-d
    arrays (``axis=None``: the arrays were raveled first).
    """
    g = np.asarray(g)
    if axis is None:
        g, axis = np.ravel(g), 0
    axis %= g.ndim
    across = g.size // g.shape[axis] if g.shape[axis] else 1
    ends = np.cumsum([np.size(x) // across for x in arrays])[:-1]
    pieces = [np.reshape(p, np.shape(x)) for p, x in zip(np.split(g, ends, axis=axis), arrays)]
    return np.stack(pieces) if isinstance(arrays, np.ndarray) else pieces


def rejoin(cts, g, arrays, axis=0):
    """Cotangent of ``g`` in ``unconcatenate(g, arrays, axis)``: the pieces'
    cotangents joined back in place (symbolic zeros become zeros)."""
    g = np.asarray(g)
    shape = g.shape
    if axis is None:
        g, axis = np.ravel(g), 0
    axis %= g.ndim
    across = g.size // g.shape[axis] if g.shape[axis] else 1
    ends = np.cumsum([np.size(x) // across for x in arrays])[:-1]
    pieces = np.split(g, ends, axis=axis)
    joined = np.concatenate([np.zeros(p.shape) if c is None else np.reshape(c, p.shape)
                             for c, p in zip(cts, pieces)], axis=axis)
    return np.reshape(joined, shape)


def unhstack(g, tup):
    """Cotangents of the arrays of ``np.hstack(tup)``: it joins 1-d results
    along axis 0 and everything else along axis 1."""
    return unconcatenate(g, tup, axis=0 if np.ndim(g) == 1 else 1)


def unstack(g, axis=0):
    """Cotangents of the arrays of ``np.stack(arrays, axis)``: the slices of ``g``."""
    return list(np.moveaxis(np.asarray(g), axis, 0))


def untile(g, A, reps):
    """Cotangent of ``A`` in ``np.tile(A, reps)``: the sum over the copies."""
    shape = np.shape(A)
    reps = (int(reps),) if np.ndim(reps) == 0 else tuple(reps)
    d = max(len(shape), len(reps))
    shape_d = (1,) * (d - len(shape)) + shape
    reps_d = (1,) * (d - len(reps)) + reps
    copies = np.reshape(g, [n for pair in zip(reps_d, shape_d) for n in pair])
    return np.reshape(np.sum(copies, axis=tuple(range(0, 2 * d, 2))), shape)


def unrepeat(g, a, repeats, axis=None):
    """Cotangent of ``a`` in ``np.repeat(a, repeats, axis)``: each entry
    receives the sum of the cotangents of its copies."""
    shape = np.shape(a)
    g = np.asarray(g)
    if axis is None:
        flat = unrepeat(g, np.ravel(a), repeats, axis=0)
        return np.reshape(flat, shape)
    axis %= len(shape)
    n = shape[axis]
    moved = np.moveaxis(g, axis, 0)
    if np.size(repeats) == 1:
        r = int(np.ravel(repeats)[0])
        total = np.sum(np.reshape(moved, (n, r) + moved.shape[1:]), axis=1)
    else:
        total = np.zeros((n,) + moved.shape[1:], dtype=g.dtype)
        np.add.at(total, np.repeat(np.arange(n), repeats), moved)
    return np.moveaxis(total, 0, axis)


def undiagonal(g, a, offset=0, axis1=0, axis2=1):
    """Zeros shaped like ``a`` with ``g`` written on the diagonal that
    ``np.diagonal(a, offset, axis1, axis2)`` reads."""
    g = np.asarray(g)
    dtype = np.result_type(np.asarray(a).dtype, g.dtype)
    out = np.zeros(np.shape(a), dtype=dtype)
    plane = np.moveaxis(out, (axis1, axis2), (-2, -1))     # a writable view
    i = np.arange(g.shape[-1])
    plane[..., i + max(-offset, 0), i + max(offset, 0)] = g
    return out
