"""Cotangents of indexing and indexed updates: scatter a cotangent into
zeros at an index (``unindex``), zero what an assignment overwrote
(``index_zero``), keep only the last of repeated writes (``last_writes``),
accumulate in place (``add_at``), and the shares of ``x.at[i].min/max/
multiply(v)`` (JAX's scatter-min/max/mul)."""
import numpy as np

from .values import tree_add


_BASIC_INDEX = (int, np.integer, slice, type(None), type(Ellipsis))


def _is_basic(index):
    parts = index if isinstance(index, tuple) else (index,)
    return all(isinstance(p, _BASIC_INDEX) for p in parts)


def unindex(x, index, g):
    """Zeros shaped like ``x`` with ``g`` added at ``x[index]``.

    Repeated integer indices accumulate (np.add.at), as the chain rule wants.
    ``x`` may be a container (list, tuple, dict, namedtuple): the result is
    then the same container holding ``g`` in the indexed slot and ``None``
    (a symbolic zero) in the others, so touching one layer of a parameter
    list never allocates zeros for all of them.
    """
    if isinstance(x, (list, tuple, dict)):
        if isinstance(x, dict):
            out = dict.fromkeys(x)
            out[index] = g
            return out
        items = [None] * len(x)
        items[index] = g
        if hasattr(x, "_fields"):
            return type(x)(*items)
        return tuple(items) if isinstance(x, tuple) else items
    dtype = np.result_type(np.asarray(x).dtype, np.asarray(g).dtype)
    z = np.zeros(np.shape(x), dtype=dtype)
    if _is_basic(index):
        z[index] = g
    else:
        np.add.at(z, index, g)
    return z


def _float_dtype(*arrays):
    dtype = np.result_type(*[np.asarray(a).dtype for a in arrays])
    return dtype if np.issubdtype(dtype, np.inexact) else np.dtype(np.float64)


def _extremum_winners(x, index, v, ans):
    """Which entries of ``x`` and of the updates ``v`` produced the result
    ``ans`` of ``x.at[index].min(v)`` (or ``.max``), and how many tie there."""
    ans = np.asarray(ans)
    dtype = _float_dtype(ans, v)
    won_x = (np.asarray(x) == ans).astype(dtype)
    chosen = np.asarray(ans[index])
    won_v = (np.broadcast_to(v, chosen.shape) == chosen).astype(dtype)
    count = np.array(won_x)
    np.add.at(count, index, won_v)
    count[count == 0] = 1           # a NaN result: no entry wins, no gradient
    return won_x, won_v, count


def extremum_share_x(x, index, v, ans):
    """The derivative of ``x.at[index].min(v)`` (or ``.max``) along ``x``,
    entry by entry: 1 where ``x`` kept its value alone, 0 where an update
    won, and 1/k where ``x`` ties with k-1 updates (ties split the gradient
    evenly, as JAX's scatter_min/max and ``np.minimum``'s rules do)."""
    won_x, _, count = _extremum_winners(x, index, v, ans)
    return won_x / count


def extremum_share_v(x, index, v, ans):
    """The same along the updates: shaped like ``ans[index]`` (``v``
    broadcast), 1 for the update that won its slot, 1/k for k ties."""
    _, won_v, count = _extremum_winners(x, index, v, ans)
    return won_v / np.asarray(count[index])


def product_others_at(x, index, v):
    """The derivative of ``x.at[index].multiply(v)`` along each update:
    shaped like ``x[index]`` (``v`` broadcast), entry k is ``x[j]`` times the
    product of the other updates written to the same slot ``j``.  Counted
    with the zeros apart (not ``ans / v``), so zero updates are exact."""
    x = np.asarray(x)
    dtype = _float_dtype(x, v)
    chosen_shape = np.shape(x[index])
    vb = np.broadcast_to(np.asarray(v, dtype=dtype), chosen_shape)
    zero = vb == 0
    zeros = np.zeros(x.shape, dtype=np.int64)
    np.add.at(zeros, index, zero.astype(np.int64))
    nonzero_product = np.ones(x.shape, dtype=dtype)
    np.multiply.at(nonzero_product, index, np.where(zero, 1, vb))
    base = np.asarray((x * nonzero_product)[index])
    n_zero = np.asarray(zeros[index])
    safe = np.where(zero, 1, vb)
    return np.where(zero, np.where(n_zero == 1, base, 0),
                    np.where(n_zero == 0, base / safe, 0)).astype(dtype)


def unattr(x, attr, g):
    """The record ``x`` with ``g`` as field ``attr``, symbolic zeros (None)
    elsewhere."""
    return type(x)(*[None] * len(x))._replace(**{attr: g})


def index_zero(g, index):
    """A copy of ``g`` with ``g[index]`` zeroed: the cotangent that flows
    past ``x[index] = v`` to the old ``x``."""
    if isinstance(g, (list, dict)):
        out = type(g)(g)
        if isinstance(g, dict) and index not in g:
            return out
        out[index] = None
        return out
    if isinstance(g, tuple):        # (a tuple's cotangent, ``with_item``'s)
        items = list(g)
        items[index] = None
        return tuple(items)
    out = np.array(g, copy=True)
    out[index] = 0
    return out


def last_writes(items, index, like):
    """``items`` (shaped like ``like[index]``) with zeros where a later write
    of ``like[index] = items`` lands on the same position: the cotangent of
    the values an assignment writes.  NumPy keeps the last of the values
    written to a repeated index, so only that one reaches the result.
    Indices without an integer array (ints, slices, masks) never repeat and
    return ``items`` as they are."""
    if isinstance(index, np.ndarray) and index.ndim == 1 and index.dtype.kind in "iu":
        order = np.arange(index.size)   # the common case: rows along the first axis
        last = np.empty(np.shape(like)[:1], dtype=np.intp)
    elif _may_repeat(index):
        order = np.arange(np.size(items)).reshape(np.shape(items))
        last = np.empty(np.shape(like), dtype=np.intp)
    else:
        return items
    items = np.asarray(items)
    last[index] = order             # only the positions written here are read back
    survived = last[index] == order
    if np.count_nonzero(survived) == survived.size:
        return items
    survived = survived.reshape(survived.shape + (1,) * (items.ndim - survived.ndim))
    return np.where(survived, items, np.zeros((), items.dtype))


def _may_repeat(index):
    """Whether ``index`` holds an integer array (a position may repeat)."""
    parts = index if isinstance(index, tuple) else (index,)
    return any(isinstance(p, (list, np.ndarray)) and np.asarray(p).dtype != np.bool_
               and np.size(p) > 1 for p in parts)


def add_at(acc, index, g):
    """``acc[index] += g`` in place, returning ``acc``.

    Generated code uses it only on accumulators it allocated itself (the
    zeros a loop's backward pass adds into), so indexing one element per
    iteration costs O(1) instead of a full-size temporary."""
    if g is None:           # a symbolic zero
        return acc
    if isinstance(acc, np.ndarray):
        if not acc.flags.writeable:     # vmap's lanes of a shared accumulator: a
            acc = np.array(acc)         # read-only broadcast view, so add into a copy
        if _is_basic(index):
            acc[index] += g
        else:
            np.add.at(acc, index, g)
        return acc
    if isinstance(acc, (list, dict)):
        acc[index] = tree_add(acc[index], g)
        return acc
    return tree_add(acc, unindex(acc, index, g))
