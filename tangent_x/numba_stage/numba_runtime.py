"""Numba implementations of the helpers generated code calls.

The numba stage is the python stage's own source (see ``specialize``), so it
calls the very functions eager code calls: ``tangent_x.runtime.unbroadcast``,
``np.tanh`` ...  For the runtime helpers, ``numba.extending.overload``
registers a compiled implementation *for the same function object*: one
source, two executions.  NumPy calls whose options Numba's NumPy lacks
(``np.sum(x, axis=(0, 2), keepdims=True)``, ``np.squeeze``) are spelled by
the specialiser as the helpers defined here (``sum_axes`` ...), which are
plain NumPy when run eagerly and overloaded for Numba.

Rank-dependent kernels (sum-to-shape, reductions over several axes) are
generated as source per (rank, rank) pair and compiled on first use: the
number of axes is part of a Numba type (tuples have a length), so one small
loop nest per combination is the general mechanism, not a special case.
Loops write elements one at a time: no slice assignment (whose first use
in a process costs ~2 s of compile), no ``objmode``.
"""
import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.extending import overload, register_jitable

from .. import runtime

__all__ = ["sum_axes", "mean_axes", "max_axes", "min_axes", "prod_axes", "var_axes",
           "std_axes", "all_axes", "any_axes", "transpose", "squeeze", "expand_dims",
           "moveaxis", "broadcast_to", "cumsum", "flip", "dot"]


def _is_array(t):
    return isinstance(t, types.Array)


def _is_none(t):
    return t is None or isinstance(t, (types.NoneType, types.Omitted))


def _kernel(source, name, env=None):
    """Compile-time generated source -> a Python function Numba inlines."""
    namespace = {"np": np, "register_jitable": register_jitable, "__name__": __name__}
    namespace.update(env or {})
    exec(compile(source, f"<tangent_x numba kernel {name}>", "exec"), namespace)
    return namespace[name]


def _tuple_of(prefix, n):
    return "(" + "".join(f"{prefix}{i}, " for i in range(n)) + ")"


# --- shapes --------------------------------------------------------------------

_BROADCAST_CACHE = {}


def _broadcast_fill(gn, xn):
    """``out`` of shape ``shape`` (xn dims) with ``g`` (gn <= xn dims,
    NumPy-broadcastable) copied in."""
    key = (gn, xn)
    if key not in _BROADCAST_CACHE:
        lead = xn - gn
        lines = ["def fill(g, shape, dtype):", "    out = np.empty(shape, dtype)",
                 "    gs = g.shape"]
        if xn == 0:
            lines += ["    out[()] = g[()]", "    return out"]
        else:
            lines.append("    for idx in np.ndindex(shape):")
            parts = []
            for d in range(gn):
                parts.append(f"0 if gs[{d}] == 1 else idx[{d + lead}]")
            gidx = "(" + ", ".join(parts) + ("," if gn == 1 else "") + ")" if gn else "()"
            lines.append(f"        out[idx] = g[{gidx}]")
            lines.append("    return out")
        _BROADCAST_CACHE[key] = register_jitable(_kernel("\n".join(lines), "fill"))
    return _BROADCAST_CACHE[key]


_SUM_TO_CACHE = {}


def _sum_to(gn, xn):
    """Sum ``g`` (gn dims) down to shape ``shape`` (xn <= gn dims)."""
    key = (gn, xn)
    if key not in _SUM_TO_CACHE:
        lead = gn - xn
        lines = ["def sum_to(g, shape):", "    out = np.zeros(shape, g.dtype)"]
        if gn == 0:
            lines += ["    out[()] += g[()]", "    return out"]
        else:
            lines.append("    for idx in np.ndindex(g.shape):")
            parts = [f"0 if shape[{d}] == 1 else idx[{d + lead}]" for d in range(xn)]
            oidx = "(" + ", ".join(parts) + ("," if xn == 1 else "") + ")" if xn else "()"
            lines.append(f"        out[{oidx}] += g[idx]")
            lines.append("    return out")
        _SUM_TO_CACHE[key] = register_jitable(_kernel("\n".join(lines), "sum_to"))
    return _SUM_TO_CACHE[key]


@overload(runtime.unbroadcast)
def _unbroadcast(g, x):
    if not _is_array(g):
        if not _is_array(x):
            return lambda g, x: g
        return lambda g, x: np.full(x.shape, g)
    if not _is_array(x):
        return lambda g, x: np.sum(g)
    gn, xn = g.ndim, x.ndim
    if xn > gn:
        fill = _broadcast_fill(gn, xn)
        return lambda g, x: fill(g, x.shape, g.dtype)
    sum_to = _sum_to(gn, xn)
    if gn == xn:
        def impl(g, x):
            if g.shape == x.shape:
                return np.ascontiguousarray(g)
            return sum_to(g, x.shape)
        return impl
    return lambda g, x: sum_to(g, x.shape)


@overload(runtime.broadcast_like)
def _broadcast_like(t, ans):
    if not _is_array(ans):
        return lambda t, ans: t
    if not _is_array(t):
        return lambda t, ans: np.full(ans.shape, t)
    fill = _broadcast_fill(t.ndim, ans.ndim)

    def impl(t, ans):
        if t.shape == ans.shape:
            return np.ascontiguousarray(t)
        return fill(t, ans.shape, t.dtype)
    return impl


def _count_axes(axis, ndim):
    if _is_none(axis):
        return ndim
    if isinstance(axis, types.Integer):
        return 1
    if isinstance(axis, types.BaseTuple):
        return len(axis)
    raise TypingError(f"axis must be an int or a tuple of ints, not {axis}")


_KEEP_CACHE = {}


def _keep_shape(xn):
    """The keepdims shape of reducing ``shape`` (xn dims) over ``axes``."""
    if xn not in _KEEP_CACHE:
        lines = ["def keep(shape, axes):", f"    red = np.zeros({max(xn, 1)}, np.bool_)",
                 "    for a in axes:", f"        red[a % {max(xn, 1)}] = True"]
        parts = [f"1 if red[{d}] else shape[{d}]" for d in range(xn)]
        lines.append("    return (" + ", ".join(parts) + ("," if xn == 1 else "") + ")")
        _KEEP_CACHE[xn] = register_jitable(_kernel("\n".join(lines), "keep"))
    return _KEEP_CACHE[xn]


def _axes_tuple(axis, ndim):
    """A jitable ``axis -> tuple of int64`` for a Numba type (a tuple of
    literals may be heterogeneous; the loops want a homogeneous one)."""
    if _is_none(axis):
        src = "def to_tuple(axis):\n    return " + _tuple_of("", 0) if ndim == 0 else \
            "def to_tuple(axis):\n    return (" + "".join(
                f"np.int64({d}), " for d in range(ndim)) + ")"
    elif isinstance(axis, types.Integer):
        src = "def to_tuple(axis):\n    return (np.int64(axis),)"
    else:
        src = "def to_tuple(axis):\n    return (" + "".join(
            f"np.int64(axis[{i}]), " for i in range(len(axis))) + ")"
    return _kernel(src, "to_tuple")


@overload(runtime.unreduce)
def _unreduce(g, x, axis=None, keepdims=False):
    if not _is_array(x):
        return lambda g, x, axis=None, keepdims=False: g
    xn = x.ndim
    if not _is_array(g):
        return lambda g, x, axis=None, keepdims=False: np.full(x.shape, g)
    fill = _broadcast_fill(xn, xn)
    if g.ndim == xn:
        return lambda g, x, axis=None, keepdims=False: fill(g, x.shape, g.dtype)
    keep = _keep_shape(xn)
    to_tuple = register_jitable(_axes_tuple(axis, xn))

    def impl(g, x, axis=None, keepdims=False):
        shape = keep(x.shape, to_tuple(axis))
        return fill(np.ascontiguousarray(g).reshape(shape), x.shape, g.dtype)
    return impl


# --- reductions ----------------------------------------------------------------

_REDUCE_CACHE = {}
_INIT = {"sum": "0", "prod": "1", "max": "-np.inf", "min": "np.inf"}
_STEP = {"sum": "acc + v", "prod": "acc * v", "max": "v if v > acc or v != v else acc",
         "min": "v if v < acc or v != v else acc"}


def _reduce_kernel(op, xn, naxes, keepdims, dtype_expr):
    """A loop nest reducing ``a`` (xn dims) over ``axes`` with ``op``."""
    key = (op, xn, naxes, keepdims, dtype_expr)
    if key in _REDUCE_CACHE:
        return _REDUCE_CACHE[key]
    keep = _keep_shape(xn)
    n_out = xn if keepdims else xn - naxes
    lines = ["def reduce(a, axes):",
             "    shape = a.shape",
             "    kshape = keep(shape, axes)",
             f"    out = np.full(kshape, {_INIT[op]}, {dtype_expr})"]
    if xn:
        lines.append("    for idx in np.ndindex(shape):")
        parts = [f"0 if kshape[{d}] == 1 else idx[{d}]" for d in range(xn)]
        lines.append("        o = (" + ", ".join(parts) + ("," if xn == 1 else "") + ")")
        lines.append("        acc = out[o]")
        lines.append("        v = a[idx]")
        lines.append(f"        out[o] = {_STEP[op]}")
    else:
        lines.append("    acc = out[()]")
        lines.append("    v = a[()]")
        lines.append(f"    out[()] = {_STEP[op]}")
    if keepdims:
        lines.append("    return out")
    elif n_out == 0:
        lines.append("    return out.reshape(-1)[0]")
    else:
        lines.append(f"    kept = np.empty({n_out}, np.int64)")
        lines.append("    j = 0")
        lines.append(f"    for d in range({xn}):")
        lines.append("        red = False")
        lines.append("        for ax in axes:")
        lines.append(f"            if ax % {xn} == d:")
        lines.append("                red = True")
        lines.append("        if not red:")
        lines.append("            kept[j] = shape[d]")
        lines.append("            j += 1")
        parts = [f"kept[{d}]" for d in range(n_out)]
        lines.append("    return out.reshape((" + ", ".join(parts) +
                     ("," if n_out == 1 else "") + "))")
    fn = register_jitable(_kernel("\n".join(lines), "reduce", {"keep": keep}))
    _REDUCE_CACHE[key] = fn
    return fn


def _dtype_expr(op, a):
    if op in ("sum", "prod"):
        if isinstance(a.dtype, (types.Boolean, types.Integer)):
            return "np.int64"
    return "a.dtype"


def _define_reduction(op):
    def eager(a, axes, keepdims):
        return getattr(np, op)(a, axis=axes, keepdims=keepdims)
    eager.__name__ = f"{op}_axes"
    eager.__doc__ = f"``np.{op}(a, axis=axes, keepdims=keepdims)``; compiled by Numba too."

    @overload(eager)
    def _ov(a, axes, keepdims):
        if not _is_array(a):
            return lambda a, axes, keepdims: a
        naxes = _count_axes(axes, a.ndim)
        keep = keepdims.literal_value if isinstance(keepdims, types.Literal) else None
        if keep is None:
            raise TypingError("keepdims must be a literal True/False")
        kernel = _reduce_kernel(op, a.ndim, naxes, bool(keep), _dtype_expr(op, a))
        to_tuple = register_jitable(_axes_tuple(axes, a.ndim))
        return lambda a, axes, keepdims: kernel(a, to_tuple(axes))
    return eager


sum_axes = _define_reduction("sum")
prod_axes = _define_reduction("prod")
max_axes = _define_reduction("max")
min_axes = _define_reduction("min")


def mean_axes(a, axes, keepdims):
    """``np.mean(a, axis=axes, keepdims=keepdims)``; compiled by Numba too."""
    return np.mean(a, axis=axes, keepdims=keepdims)


def var_axes(a, axes, keepdims):
    """``np.var(a, axis=axes, keepdims=keepdims)``; compiled by Numba too."""
    return np.var(a, axis=axes, keepdims=keepdims)


def std_axes(a, axes, keepdims):
    """``np.std(a, axis=axes, keepdims=keepdims)``; compiled by Numba too."""
    return np.std(a, axis=axes, keepdims=keepdims)


def all_axes(a, axes, keepdims):
    return np.all(a, axis=axes, keepdims=keepdims)


def any_axes(a, axes, keepdims):
    return np.any(a, axis=axes, keepdims=keepdims)


@overload(mean_axes)
def _mean_axes(a, axes, keepdims):
    if not _is_array(a):
        return lambda a, axes, keepdims: a
    keep = keepdims.literal_value
    kernel = _reduce_kernel("sum", a.ndim, _count_axes(axes, a.ndim), bool(keep), "np.float64"
                            if not isinstance(a.dtype, types.Float) else "a.dtype")
    to_tuple = register_jitable(_axes_tuple(axes, a.ndim))

    def impl(a, axes, keepdims):
        total = kernel(a, to_tuple(axes))
        return total / (a.size / max(np.size(total), 1)) if a.size else total * np.nan
    return impl


@overload(var_axes)
def _var_axes(a, axes, keepdims):
    if not _is_array(a):
        return lambda a, axes, keepdims: 0.0 * a
    keep = bool(keepdims.literal_value)

    def impl(a, axes, keepdims):
        centered = a - mean_axes(a, axes, True)
        return mean_axes(centered * centered, axes, keep)
    return impl


@overload(std_axes)
def _std_axes(a, axes, keepdims):
    return lambda a, axes, keepdims: np.sqrt(var_axes(a, axes, keepdims))


# --- shape ops -----------------------------------------------------------------

def transpose(a, axes):
    """``np.transpose(a, axes)``; compiled by Numba too."""
    return np.transpose(a, axes)


@overload(transpose)
def _transpose(a, axes):
    if not _is_array(a):
        return lambda a, axes: a
    if _is_none(axes):
        return lambda a, axes: np.transpose(a)
    return lambda a, axes: np.transpose(a, axes)


def squeeze(a, axis):
    """``np.squeeze(a, axis)``; compiled by Numba too (``axis=None`` needs the
    sizes, so it is only compiled when they are 1 by rank: see the overload)."""
    return np.squeeze(a, axis)


@overload(squeeze)
def _squeeze(a, axis):
    if not _is_array(a):
        return lambda a, axis: a
    xn = a.ndim
    if _is_none(axis):
        raise TypingError("np.squeeze without axis has a result rank that depends on the "
                          "sizes; pass axis=")
    naxes = _count_axes(axis, xn)
    n_out = xn - naxes
    to_tuple = register_jitable(_axes_tuple(axis, xn))
    parts = ", ".join(f"kept[{d}]" for d in range(n_out)) + ("," if n_out == 1 else "")
    src = "\n".join([
        "def sq(a, axes):",
        f"    kept = np.empty({max(n_out, 1)}, np.int64)",
        "    j = 0",
        f"    for d in range({xn}):",
        "        red = False",
        "        for ax in axes:",
        f"            if ax % {xn} == d:",
        "                red = True",
        "        if not red:",
        "            kept[j] = a.shape[d]",
        "            j += 1",
        f"    return np.ascontiguousarray(a).reshape(({parts}))"])
    sq = register_jitable(_kernel(src, "sq"))
    return lambda a, axis: sq(a, to_tuple(axis))


def expand_dims(a, axis):
    """``np.expand_dims(a, axis)`` (axis may be a tuple); compiled by Numba too."""
    return np.expand_dims(a, axis)


@overload(expand_dims)
def _expand_dims(a, axis):
    xn = a.ndim if _is_array(a) else 0
    naxes = _count_axes(axis, xn)
    n_out = xn + naxes
    to_tuple = register_jitable(_axes_tuple(axis, n_out))
    parts = ", ".join(f"shape[{d}]" for d in range(n_out)) + ("," if n_out == 1 else "")
    src = "\n".join([
        "def ex(a, axes):",
        "    arr = np.asarray(a)",
        f"    new = np.zeros({n_out}, np.bool_)",
        "    for ax in axes:",
        f"        new[ax % {n_out}] = True",
        f"    shape = np.empty({n_out}, np.int64)",
        "    j = 0",
        f"    for d in range({n_out}):",
        "        if new[d]:",
        "            shape[d] = 1",
        "        else:",
        "            shape[d] = arr.shape[j]",
        "            j += 1",
        f"    return np.ascontiguousarray(arr).reshape(({parts}))"])
    ex = register_jitable(_kernel(src, "ex"))
    return lambda a, axis: ex(a, to_tuple(axis))


def moveaxis(a, source, destination):
    return np.moveaxis(a, source, destination)


@overload(moveaxis)
def _moveaxis(a, source, destination):
    return lambda a, source, destination: np.moveaxis(a, source, destination)


def broadcast_to(array, shape):
    """``np.broadcast_to`` (a writable copy when compiled)."""
    return np.broadcast_to(array, shape)


@overload(broadcast_to)
def _broadcast_to(array, shape):
    n = len(shape) if isinstance(shape, types.BaseTuple) else 1
    if not _is_array(array):
        return lambda array, shape: np.full(shape, array)
    fill = _broadcast_fill(array.ndim, n)
    return lambda array, shape: fill(array, shape, array.dtype)


def cumsum(a, axis):
    return np.cumsum(a, axis)


@overload(cumsum)
def _cumsum(a, axis):
    if _is_none(axis):
        return lambda a, axis: np.cumsum(a)
    if _is_array(a) and a.ndim == 1:
        return lambda a, axis: np.cumsum(a)
    raise TypingError("np.cumsum with axis on a multi-dimensional array is not compiled yet")


def flip(m, axis):
    return np.flip(m, axis)


@overload(flip)
def _flip(m, axis):
    if _is_none(axis):
        return lambda m, axis: np.flip(m)
    if _is_array(m) and m.ndim == 1:
        return lambda m, axis: m[::-1]
    raise TypingError("np.flip with axis on a multi-dimensional array is not compiled yet")


def dot(a, b):
    """``np.dot``; compiled with float operands (Numba's needs them)."""
    return np.dot(a, b)


@overload(dot)
def _dot(a, b):
    if not _is_array(a) or not _is_array(b):
        return lambda a, b: a * b
    if a.ndim <= 2 and b.ndim <= 2:
        return lambda a, b: np.dot(np.asarray(a, np.float64) if a.dtype != np.float64 else a,
                                   np.asarray(b, np.float64) if b.dtype != np.float64 else b)
    raise TypingError("np.dot of arrays with more than 2 dimensions is not compiled yet")


# --- cotangent helpers on arrays -------------------------------------------------

@overload(runtime.zeros_like)
def _zeros_like(x):
    if _is_array(x):
        return lambda x: np.zeros_like(x)
    if isinstance(x, types.Integer) or isinstance(x, types.Boolean):
        return lambda x: 0.0
    return lambda x: 0.0 * x


@overload(runtime.check_grad_output)
def _check_grad_output(y):
    if _is_array(y) and y.ndim > 0:
        def impl(y):
            raise TypeError("Gradient only defined for scalar-output functions.")
        return impl
    return lambda y: None


@overload(runtime.stop_gradient)
def _stop_gradient(x):
    return lambda x: x


@overload(runtime.tree_add)
def _tree_add(a, b):
    return lambda a, b: a + b


@overload(runtime.iteration_item)
def _iteration_item(items, k):
    return lambda items, k: items[k]


@overload(runtime.unindex)
def _unindex(x, index, g):
    if not _is_array(x):
        return lambda x, index, g: g
    if isinstance(index, (types.Integer, types.SliceType, types.BaseTuple)) and not (
            isinstance(index, types.BaseTuple) and any(_is_array(t) for t in index)):
        def impl(x, index, g):
            z = np.zeros(x.shape, np.float64)
            z[index] = g
            return z
        return impl

    if not (_is_array(index) and index.ndim == 1 or
            _is_array(index) and isinstance(index.dtype, types.Boolean)):
        raise TypingError("unindex: only integers, slices, 1-d integer arrays and boolean "
                          "masks are compiled")
    mask = isinstance(index.dtype, types.Boolean)
    g_array = _is_array(g)

    def scatter(x, index, g):
        z = np.zeros(x.shape, np.float64)
        zf = z.reshape(-1)
        flat_index = np.ascontiguousarray(index).reshape(-1)
        row = zf.size // max(x.shape[0] if not mask else flat_index.size, 1)
        if g_array:
            gf = np.ascontiguousarray(g).reshape(-1)
        else:
            gf = np.full(1, g)
        n = gf.size
        j = 0
        for i in range(flat_index.size):
            if mask:
                if not flat_index[i]:
                    continue
                k = i
            else:
                k = flat_index[i]
                if k < 0:
                    k += x.shape[0]
            for r in range(row):
                zf[k * row + r] += gf[(j * row + r) % n]
            j += 1
        return z
    return scatter


@overload(runtime.add_at)
def _add_at(acc, index, g):
    if not _is_array(acc):
        return lambda acc, index, g: acc + g
    if isinstance(index, (types.Integer, types.SliceType)):
        def impl(acc, index, g):
            acc[index] += g
            return acc
        return impl

    def general(acc, index, g):
        return acc + runtime.unindex(acc, index, g)
    return general


@overload(runtime.index_zero)
def _index_zero(g, index):
    def impl(g, index):
        out = np.copy(g)
        out[index] = 0
        return out
    return impl


@overload(runtime.matmul_adjoint_lhs)
def _matmul_adjoint_lhs(g, a, b):
    if not (_is_array(a) and _is_array(b)):
        raise TypingError("matmul of non-arrays")
    if b.ndim == 1 and a.ndim == 1:
        return lambda g, a, b: g * b
    if b.ndim == 1 and a.ndim == 2:
        return lambda g, a, b: np.outer(g, b)
    if a.ndim == 1 and b.ndim == 2:
        return lambda g, a, b: np.dot(b, g)
    if a.ndim == 2 and b.ndim == 2:
        return lambda g, a, b: np.dot(g, b.T)
    raise TypingError("matmul adjoint for stacked matrices is not compiled yet")


@overload(runtime.matmul_adjoint_rhs)
def _matmul_adjoint_rhs(g, a, b):
    if not (_is_array(a) and _is_array(b)):
        raise TypingError("matmul of non-arrays")
    if b.ndim == 1 and a.ndim == 1:
        return lambda g, a, b: g * a
    if a.ndim == 1 and b.ndim == 2:
        return lambda g, a, b: np.outer(a, g)
    if a.ndim == 2 and b.ndim == 1:
        return lambda g, a, b: np.dot(a.T, g)
    if a.ndim == 2 and b.ndim == 2:
        return lambda g, a, b: np.dot(a.T, g)
    raise TypingError("matmul adjoint for stacked matrices is not compiled yet")
