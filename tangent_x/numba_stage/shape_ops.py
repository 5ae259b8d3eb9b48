"""Numba implementations of NumPy shape ops and of the adjoints of shape
and reduction ops that ``overloads`` does not cover (registered when
``numba_runtime`` is imported, after those): ``np.tile``, ``np.diagonal``, ``np.flip`` and
``np.cumsum`` along an axis, ``prod_others`` along an axis, ``unhstack``,
``untile``, ``unrepeat``, ``undiagonal``, the adjoints of ``np.linalg.solve``.

Same conventions as there: loops writing one element at a time, kernels
generated as source per rank where the rank decides the loop nest.  An
overload that does not apply returns None, so the older overload of the
same function (in ``overloads.shapes`` or ``overloads.reductions``) answers.
"""
import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.extending import overload, register_jitable
from numba.np.numpy_support import as_dtype

from .. import runtime
from .kernels.common import CACHED, is_array, is_none_value
from .kernels.dtypes import result_dtype
from .kernels.loops import jitable_from_source
from .overloads import reductions  # noqa: F401 (its prod_others answers before the one here)
from .overloads.shapes import cumsum, diagonal, flip, repeat, tile


# --- along one axis: move it last, work on rows --------------------------------

@register_jitable
def _rows(a, axis):
    """``a`` with ``axis`` moved last, contiguous, as (rows, n)."""
    moved = np.ascontiguousarray(np.moveaxis(a, axis, -1))
    n = moved.shape[-1]
    return moved, moved.reshape((moved.size // max(n, 1), n))


@overload(runtime.prod_others, jit_options=CACHED)
def _prod_others_axis(a, axis=None):
    """``prod_others`` over one axis of an array of any rank (each row's
    prefix times suffix products: zeros stay exact)."""
    if not is_array(a) or a.ndim < 2 or not isinstance(axis, types.Integer):
        return None        # overloads.reductions': all axes, or 1-d

    def impl(a, axis=None):
        ax = axis % a.ndim
        moved, rows = _rows(a, ax)
        out = np.empty(rows.shape, rows.dtype)
        for r in range(rows.shape[0]):
            before = 1.0
            for i in range(rows.shape[1]):
                out[r, i] = before
                before *= rows[r, i]
            after = 1.0
            for i in range(rows.shape[1] - 1, -1, -1):
                out[r, i] *= after
                after *= rows[r, i]
        return np.ascontiguousarray(np.moveaxis(out.reshape(moved.shape), -1, ax))
    return impl


@overload(cumsum, jit_options=CACHED)
def _cumsum_axis(a, axis):
    """``np.cumsum(a, axis)`` for an array of rank 2 or more."""
    if not is_array(a) or a.ndim < 2 or not isinstance(axis, types.Integer):
        return None
    dtype = np.int64 if isinstance(a.dtype, (types.Integer, types.Boolean)) else None
    # the running sum starts at a zero of the result's type (not at
    # ``out[r, 0] * 0``: out is uninitialised, and garbage times 0 may be nan)
    zero = np.dtype(dtype or as_dtype(a.dtype)).type(0)

    def impl(a, axis):
        ax = axis % a.ndim
        moved, rows = _rows(a, ax)
        out = np.empty(rows.shape, rows.dtype if dtype is None else dtype)
        for r in range(rows.shape[0]):
            total = zero
            for i in range(rows.shape[1]):
                total += rows[r, i]
                out[r, i] = total
        return np.ascontiguousarray(np.moveaxis(out.reshape(moved.shape), -1, ax))
    return impl


# --- joins and copies ----------------------------------------------------------

@overload(runtime.unhstack, jit_options=CACHED)
def _unhstack(g, tup):
    if not is_array(g):
        raise TypingError("unhstack: the cotangent of hstack is an array")
    axis = 0 if g.ndim == 1 else 1
    return lambda g, tup: runtime.unconcatenate(g, tup, axis)


_UNTILE = {}


def _untile_kernel(gn, an):
    """Sum of ``g`` (gn dims) over the copies of ``A`` (an <= gn dims) that
    ``np.tile`` laid side by side: entry idx goes to idx mod A's shape."""
    key = (gn, an)
    if key not in _UNTILE:
        lead = gn - an
        parts = [f"idx[{lead + d}] % shape[{d}]" for d in range(an)]
        target = "(" + ", ".join(parts) + ("," if an == 1 else "") + ")" if an else "()"
        _UNTILE[key] = jitable_from_source("\n".join([
            "def untile(g, shape, dtype):",
            "    out = np.zeros(shape, dtype)",
            "    for idx in np.ndindex(g.shape):",
            f"        out[{target}] += g[idx]",
            "    return out"]), "untile")
    return _UNTILE[key]


@overload(runtime.untile, jit_options=CACHED)
def _untile(g, A, reps):
    if not is_array(g):
        return lambda g, A, reps: g
    if not is_array(A):
        return lambda g, A, reps: np.sum(g)
    if A.ndim > g.ndim:
        raise TypingError("untile: the cotangent has fewer axes than the tiled array")
    kernel = _untile_kernel(g.ndim, A.ndim)
    return lambda g, A, reps: kernel(g, A.shape, g.dtype)


@register_jitable
def _repeat_counts(repeats, n):
    counts = np.empty(n, np.int64)
    flat = np.asarray(repeats).reshape(-1)
    for i in range(n):
        counts[i] = flat[0] if flat.size == 1 else flat[i]
    return counts


@register_jitable
def _unrepeat_rows(g2, counts, n):
    """Row i of the result: the sum of the rows of ``g2`` that repeat row i."""
    out = np.zeros((n, g2.shape[1]), g2.dtype)
    j = 0
    for i in range(n):
        for _ in range(counts[i]):
            for r in range(g2.shape[1]):
                out[i, r] += g2[j, r]
            j += 1
    return out


@overload(runtime.unrepeat, jit_options=CACHED)
def _unrepeat(g, a, repeats, axis=None):
    if not is_array(g):
        raise TypingError("unrepeat: the cotangent of repeat is an array")
    if is_none_value(axis):
        if not is_array(a):
            return lambda g, a, repeats, axis=None: np.sum(g)

        def flat(g, a, repeats, axis=None):
            n = a.size
            g2 = np.ascontiguousarray(g).reshape((g.size, 1))
            out = _unrepeat_rows(g2, _repeat_counts(repeats, n), n)
            return out.reshape(a.shape)
        return flat
    if not isinstance(axis, types.Integer) or not is_array(a):
        raise TypingError("unrepeat: axis must be an int")

    def along(g, a, repeats, axis=None):
        ax = axis % a.ndim
        n = a.shape[ax]
        moved = np.ascontiguousarray(np.moveaxis(g, ax, 0))
        g2 = moved.reshape((moved.shape[0], moved.size // max(moved.shape[0], 1)))
        out = _unrepeat_rows(g2, _repeat_counts(repeats, n), n)
        shape = np.moveaxis(np.empty(a.shape, np.bool_), ax, 0).shape
        return np.ascontiguousarray(np.moveaxis(out.reshape(shape), 0, ax))
    return along


_UNDIAGONAL = {}


def _diagonal_index_lines(n):
    """Body lines of a loop over ``idx`` (the other axes, then the position
    ``i`` along the diagonal) that set ``full`` to the matching index of the
    n-dim array: shared by ``diagonal`` (read there) and ``undiagonal``
    (written there)."""
    return ["        i = idx[len(idx) - 1]",
            "        j = 0",
            f"        for d in range({n}):",
            "            if d == a1:",
            "                full[d] = i + max(-offset, 0)",
            "            elif d == a2:",
            "                full[d] = i + max(offset, 0)",
            "            else:",
            "                full[d] = idx[j]",
            "                j += 1"]


def _undiagonal_kernel(n):
    """Write ``g`` (n-1 dims: the others, then the diagonal) onto the
    diagonal of a zero array of n dims (``axis1``/``axis2`` run-time)."""
    if n not in _UNDIAGONAL:
        index = ", ".join(f"full[{d}]" for d in range(n)) + ("," if n == 1 else "")
        _UNDIAGONAL[n] = jitable_from_source("\n".join([
            "def undiagonal(g, shape, dtype, offset, axis1, axis2):",
            "    out = np.zeros(shape, dtype)",
            f"    a1 = axis1 % {n}",
            f"    a2 = axis2 % {n}",
            f"    full = np.empty({n}, np.int64)",
            "    for idx in np.ndindex(g.shape):",
            *_diagonal_index_lines(n),
            f"        out[{index}] = g[idx]",
            "    return out"]), "undiagonal")
    return _UNDIAGONAL[n]


@overload(runtime.undiagonal, jit_options=CACHED)
def _undiagonal(g, a, offset=0, axis1=0, axis2=1):
    if not is_array(a) or a.ndim < 2:
        raise TypingError("undiagonal: the array has at least two axes")
    kernel = _undiagonal_kernel(a.ndim)
    # NumPy's dtype of a and g together, as the eager helper's zeros have
    dtype = (result_dtype(a, g) or np.dtype(np.float64)).type
    if not is_array(g):
        def scalar(g, a, offset=0, axis1=0, axis2=1):
            return kernel(np.full(1, g), a.shape, dtype, offset, axis1, axis2)
        return scalar

    def impl(g, a, offset=0, axis1=0, axis2=1):
        return kernel(g, a.shape, dtype, offset, axis1, axis2)
    return impl


# --- linear algebra ------------------------------------------------------------

@overload(runtime.solve_transposed, jit_options=CACHED)
def _solve_transposed(a, g, b):
    """``a.T @ y = g`` solved (``a``: one matrix; ``g`` a vector or matrix)."""
    if not is_array(a) or a.ndim != 2:
        raise TypingError("solve_transposed: compiled for one matrix (a stack: not yet)")
    return lambda a, g, b: np.linalg.solve(np.ascontiguousarray(a.T),
                                           np.ascontiguousarray(g))


@overload(runtime.solve_adjoint_lhs, jit_options=CACHED)
def _solve_adjoint_lhs(y, a, b, x):
    """``-y x^T`` (an outer product when ``solve`` read ``b`` as a vector)."""
    if not is_array(a) or a.ndim != 2:
        raise TypingError("solve_adjoint_lhs: compiled for one matrix (a stack: not yet)")
    if is_array(b) and b.ndim == 1:
        return lambda y, a, b, x: -np.outer(y, x)
    return lambda y, a, b, x: -np.dot(np.ascontiguousarray(y), np.ascontiguousarray(x.T))


# --- forward ops Numba's NumPy lacks -------------------------------------------

_TILE = {}


def _tile_kernel(an, d):
    """``A`` (an dims) tiled into d >= an dims: entry idx reads A at idx
    mod A's shape (the leading d - an axes only repeat)."""
    key = (an, d)
    if key not in _TILE:
        lead = d - an
        src = ", ".join(f"idx[{lead + k}] % A.shape[{k}]" for k in range(an))
        src = "(" + src + ("," if an == 1 else "") + ")" if an else "()"
        shape = ", ".join(
            f"reps[{k}] * A.shape[{k - lead}]" if k >= lead else f"reps[{k}]"
            for k in range(d)) + ("," if d == 1 else "")
        _TILE[key] = jitable_from_source("\n".join([
            "def tile(A, reps):",
            f"    out = np.empty(({shape}), A.dtype)",
            "    for idx in np.ndindex(out.shape):",
            f"        out[idx] = A[{src}]",
            "    return out"]), "tile")
    return _TILE[key]


@overload(tile, jit_options=CACHED)
def _tile(A, reps):
    if not is_array(A):
        return lambda A, reps: np.full(reps, A)
    n = 1 if isinstance(reps, types.Integer) else len(reps)
    d = max(A.ndim, n)
    kernel = _tile_kernel(A.ndim, d)
    # reps padded with leading ones to d entries, as np.tile does
    pad = d - n
    ones = "".join("1, " for _ in range(pad))
    if isinstance(reps, types.Integer):
        lift = jitable_from_source(f"def lift(reps):\n    return ({ones}reps,)", "lift")
    else:
        items = "".join(f"reps[{k}], " for k in range(n))
        lift = jitable_from_source(f"def lift(reps):\n    return ({ones}{items})", "lift")
    return lambda A, reps: kernel(A, lift(reps))


_DIAGONAL = {}


def _diagonal_kernel(n):
    if n not in _DIAGONAL:
        shape = ", ".join(f"others[{k}]" for k in range(n - 2)) + \
            (", " if n > 2 else "") + "length,"
        index = ", ".join(f"full[{d}]" for d in range(n))
        _DIAGONAL[n] = jitable_from_source("\n".join([
            "def diagonal(a, offset, axis1, axis2):",
            f"    a1 = axis1 % {n}",
            f"    a2 = axis2 % {n}",
            f"    others = np.empty({max(n - 2, 1)}, np.int64)",
            "    j = 0",
            f"    for d in range({n}):",
            "        if d != a1 and d != a2:",
            "            others[j] = a.shape[d]",
            "            j += 1",
            "    if offset >= 0:",
            "        length = max(0, min(a.shape[a1], a.shape[a2] - offset))",
            "    else:",
            "        length = max(0, min(a.shape[a1] + offset, a.shape[a2]))",
            f"    out = np.empty(({shape}), a.dtype)",
            f"    full = np.empty({n}, np.int64)",
            "    for idx in np.ndindex(out.shape):",
            *_diagonal_index_lines(n),
            f"        out[idx] = a[{index}]",
            "    return out"]), "diagonal")
    return _DIAGONAL[n]


@overload(diagonal, jit_options=CACHED)
def _diagonal(a, offset=0, axis1=0, axis2=1):
    if not is_array(a) or a.ndim < 2:
        raise TypingError("diagonal: the array has at least two axes")
    kernel = _diagonal_kernel(a.ndim)
    return lambda a, offset=0, axis1=0, axis2=1: kernel(a, offset, axis1, axis2)


@overload(flip, jit_options=CACHED)
def _flip_axis(m, axis):
    """``np.flip(m, axis)`` for one axis of an array of rank 2 or more."""
    if not is_array(m) or m.ndim < 2 or not isinstance(axis, types.Integer):
        return None

    def impl(m, axis):
        ax = axis % m.ndim
        moved, rows = _rows(m, ax)
        out = np.empty(rows.shape, rows.dtype)
        n = rows.shape[1]
        for r in range(rows.shape[0]):
            for i in range(n):
                out[r, i] = rows[r, n - 1 - i]
        return np.ascontiguousarray(np.moveaxis(out.reshape(moved.shape), -1, ax))
    return impl


@overload(repeat, jit_options=CACHED)
def _repeat(a, repeats, axis):
    """``np.repeat(a, repeats, axis)`` along one axis (Numba's has no ``axis``)."""
    if not is_array(a) or not isinstance(axis, types.Integer):
        raise TypingError("repeat: compiled for an array and an integer axis")
    n = a.ndim
    shape = jitable_from_source("def shape(total, moved):\n    return (total, " + "".join(
        f"moved.shape[{d}], " for d in range(1, n)) + ")", "shape")

    def impl(a, repeats, axis):
        ax = axis % a.ndim
        moved = np.ascontiguousarray(np.moveaxis(a, ax, 0))
        rows = moved.shape[0]
        flat = moved.reshape((rows, moved.size // max(rows, 1)))
        counts = _repeat_counts(repeats, rows)
        out = np.empty((counts.sum(), flat.shape[1]), a.dtype)
        j = 0
        for i in range(rows):
            for _ in range(counts[i]):
                for r in range(flat.shape[1]):
                    out[j, r] = flat[i, r]
                j += 1
        return np.ascontiguousarray(np.moveaxis(out.reshape(shape(out.shape[0], moved)), 0, ax))
    return impl


# --- reductions of a tuple of numbers (a shape) -------------------------------
# ``np.prod(x.shape)``, ``np.sum(x.shape[1:])``: NumPy reads the tuple as a
# 1-d array; Numba has these reductions for arrays only.  An empty tuple
# gives NumPy's identities (prod 1, sum 0); max/min of one raise as NumPy does.

def _number_tuple(t):
    """A tuple of numbers of one type (a shape; its items read by a run-time
    index in the loop below), or the empty tuple."""
    if isinstance(t, types.UniTuple):
        return isinstance(t.dtype, (types.Integer, types.Float, types.Boolean))
    return isinstance(t, types.Tuple) and len(t.types) == 0


def _tuple_reduction(fn, start, combine, empty_error=None):
    @overload(fn, jit_options=CACHED)
    def _reduce(a):
        if not _number_tuple(a):
            return None
        if len(a.types) == 0:
            if empty_error is not None:
                def empty(a):
                    raise ValueError(empty_error)
                return empty
            return lambda a: start
        if all(isinstance(e, (types.Integer, types.Boolean)) for e in a.types):
            cast = np.int64
        else:
            cast = np.float64

        def reduce(a):
            acc = cast(a[0])
            for i in range(1, len(a)):
                acc = combine(acc, cast(a[i]))
            return acc
        return reduce
    return _reduce


@register_jitable
def _times(a, b):
    return a * b


@register_jitable
def _plus(a, b):
    return a + b


@register_jitable
def _larger(a, b):
    return a if a >= b else b


@register_jitable
def _smaller(a, b):
    return a if a <= b else b


_EMPTY = "zero-size array to reduction operation {} which has no identity"
_tuple_reduction(np.prod, 1, _times)
_tuple_reduction(np.sum, 0, _plus)
for _fn, _op, _name in ((np.max, _larger, "maximum"), (np.amax, _larger, "maximum"),
                        (np.min, _smaller, "minimum"), (np.amin, _smaller, "minimum")):
    _tuple_reduction(_fn, None, _op, _EMPTY.format(_name))


# --- np.atleast_{1,2,3}d of a number (Numba has them for arrays only) -----------

def _atleast_number(fn, ndim):
    shape = (1,) * ndim

    @overload(fn, jit_options=CACHED)
    def _of_number(a):
        if not isinstance(a, (types.Number, types.Boolean)):
            return None
        return lambda a: np.full(shape, a)
    return _of_number


for _n in (1, 2, 3):
    _atleast_number(getattr(np, f"atleast_{_n}d"), _n)
