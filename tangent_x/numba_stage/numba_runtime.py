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
in a process costs ~2 s of compile), no ``objmode`` (but for formatting the
message of a failing check, at the end of this file).
"""
import numba
import numpy as np
from numba import types
from numba.core.errors import TypingError
import llvmlite.binding as llvm_binding
import llvmlite.ir as llvm_ir
from numba.core import cgutils
from numba.core.imputils import impl_ret_borrowed
from numba.extending import intrinsic, overload, register_jitable
from numba.core.imputils import lower_cast
from numba.np.arrayobj import make_array
from numba.np.numpy_support import as_dtype, from_dtype

from .. import runtime
from . import beside
from .bounds import checked, check_integer

__all__ = ["sum_axes", "mean_axes", "max_axes", "min_axes", "prod_axes", "var_axes",
           "std_axes", "sum_axes_keepdims", "mean_axes_keepdims", "max_axes_keepdims",
           "min_axes_keepdims", "prod_axes_keepdims", "var_axes_keepdims",
           "std_axes_keepdims", "transpose", "squeeze", "expand_dims",
           "moveaxis", "broadcast_to", "cumsum", "flip", "dot", "matmul", "inner", "reshape",
           "clip", "ndim", "size", "array", "add_at", "minimum_at", "maximum_at",
           "multiply_at", "whole", "mask_select", "mask_assign",
           "add_matmul_adjoint_lhs", "add_matmul_adjoint_rhs", "grown", "checked"]


# Implementations are compiled once per type signature and cached on disk
# next to this module, so that a new user function's first compile reuses
# them (a process starting with an empty generated-code cache compiles only
# the numba stage itself).
_CACHED = {"cache": True}


def _is_array(t):
    return isinstance(t, types.Array)


def _is_none(t):
    return t is None or isinstance(t, (types.NoneType, types.Omitted))


def _kernel(source, name, env=None):
    """Compile-time generated source -> a Python function Numba inlines."""
    namespace = {"np": np, "register_jitable": register_jitable, "empty": empty,
                 "__name__": __name__}
    namespace.update(env or {})
    exec(compile(source, f"<tangent_x numba kernel {name}>", "exec"), namespace)
    return namespace[name]


@intrinsic
def empty(typingctx, shape, dtype):
    """``np.empty(shape, dtype)`` (C-ordered), lowered in place by Numba's
    own allocation code.  Why not ``np.empty``: Numba's is an overload,
    i.e. one more compiled function for every (shape, dtype) type, linked
    into and compiled again in every caller (four of them, ~0.35 s, in the
    cold compile of the benchmark's MLP gradient); this costs nothing to
    compile.  The runtime's helpers allocate with it."""
    from numba.np.arrayobj import _empty_nd_impl, _parse_shape
    if isinstance(shape, types.Integer):
        ndim = 1
    elif isinstance(shape, types.BaseTuple) and all(isinstance(t, types.Integer)
                                                    for t in shape):
        ndim = len(shape)
    else:
        return None
    if isinstance(dtype, types.DType):
        item = dtype.dtype
    elif isinstance(dtype, types.NumberClass):
        item = dtype.instance_type
    else:
        return None
    arrtype = types.Array(item, ndim, "C")

    def codegen(context, builder, sig, args):
        shapes = _parse_shape(context, builder, sig.args[0], args[0])
        return _empty_nd_impl(context, builder, arrtype, shapes)._getvalue()
    return arrtype(shape, dtype), codegen


def _tuple_of(prefix, n):
    return "(" + "".join(f"{prefix}{i}, " for i in range(n)) + ")"


# --- shapes --------------------------------------------------------------------

def _loop_nest(ndim, shape, body):
    """Lines of ``ndim`` nested loops over ``shape`` (an expression of a
    tuple) with indices ``i0, i1, ...`` and ``body`` innermost.  Explicit
    loops rather than ``np.ndindex``: measured, they compile faster and run
    ~6x faster (the innermost loop is a plain counted loop LLVM vectorises)."""
    lines = []
    for d in range(ndim):
        lines.append("    " * (d + 1) + f"for i{d} in range({shape}[{d}]):")
    lines.append("    " * (ndim + 1) + body)
    return lines


def _index(parts):
    return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")" if parts else "()"


# Helpers are written out as *flat* generated functions: an overload's
# implementation holds its loops itself instead of calling another compiled
# helper.  Why: every Numba function a compiled function calls is a library
# of its own, optimised and turned into machine code on its own and then
# again inside each caller, and each level of calls pays Numba's per-function
# cost once more.  A cotangent through ``unbroadcast`` -> ``sum_to`` ->
# ``np.zeros`` -> ``fill`` was compiled four times (measured on the
# benchmark's MLP: ~0.45 s for each ``unbroadcast`` signature, ~0.1 s flat).
# The line builders below are shared by the helpers that need the same loop.

def _fill_lines(gn, xn, g="g", shape="shape", dtype="g.dtype", out="out"):
    """Lines making ``out`` of shape ``shape`` (xn dims) with ``g`` (gn <=
    xn dims, NumPy-broadcastable; gn None for a number) copied in."""
    lines = [f"{out} = empty({shape}, {dtype})"]
    if gn is None:
        src = g
    elif gn == 0:
        src = f"{g}[()]"
    else:
        lead = xn - gn
        lines.append(f"gs = {g}.shape")
        src = f"{g}[" + ", ".join(f"0 if gs[{d}] == 1 else i{d + lead}"
                                  for d in range(gn)) + "]"
    if xn == 0:
        return lines + [f"{out}[()] = {src}"]
    oidx = ", ".join(f"i{d}" for d in range(xn))
    return lines + [line[4:] for line in _loop_nest(xn, shape, f"{out}[{oidx}] = {src}")]


def _sum_to_lines(gn, xn, g="g", shape="shape", out="out"):
    """Lines making ``out``: ``g`` (gn dims) summed down to shape ``shape``
    (xn <= gn dims).  Zeroed by a loop of its own: ``np.zeros`` would be
    one more compiled function."""
    lead = gn - xn
    lines = [f"{out} = empty({shape}, {g}.dtype)"]
    if xn == 0:
        lines.append(f"{out}[()] = 0")
    else:
        zidx = ", ".join(f"i{d}" for d in range(xn))
        lines += [line[4:] for line in _loop_nest(xn, shape, f"{out}[{zidx}] = 0")]
    oidx = _index([f"0 if {shape}[{d}] == 1 else i{d + lead}" for d in range(xn)])
    if gn == 0:
        return lines + [f"{out}[()] += {g}[()]"]
    gidx = ", ".join(f"i{d}" for d in range(gn))
    return lines + [line[4:] for line in
                    _loop_nest(gn, f"{g}.shape", f"{out}[{oidx}] += {g}[{gidx}]")]


_FLAT_CACHE = {}


def _flat(name, params, body, env=None):
    """The function ``def name(params): body`` (body: lines at indent 0),
    compiled from source once per text and ``env`` (the globals it reads:
    the same text with another ``dtype`` is another function)."""
    text = f"def {name}({params}):\n" + "\n".join("    " + line for line in body)
    key = (text, tuple(sorted((env or {}).items(), key=lambda item: item[0])))
    if key not in _FLAT_CACHE:
        _FLAT_CACHE[key] = _kernel(text, name, env)
    return _FLAT_CACHE[key]


def _broadcast_fill(gn, xn):
    """A jitable ``fill(g, shape, dtype)``: an array of shape ``shape`` (xn
    dims) with ``g`` (gn <= xn dims, NumPy-broadcastable) copied in."""
    key = ("fill", gn, xn)
    if key not in _FLAT_CACHE:
        _FLAT_CACHE[key] = register_jitable(
            _flat("fill", "g, shape, dtype", _fill_lines(gn, xn, dtype="dtype") + ["return out"]))
    return _FLAT_CACHE[key]


def _sum_to(gn, xn):
    """A jitable ``sum_to(g, shape)``: ``g`` (gn dims) summed down to shape
    ``shape`` (xn <= gn dims)."""
    key = ("sum_to", gn, xn)
    if key not in _FLAT_CACHE:
        _FLAT_CACHE[key] = register_jitable(
            _flat("sum_to", "g, shape", _sum_to_lines(gn, xn) + ["return out"]))
    return _FLAT_CACHE[key]


def _same_or(contiguous, otherwise):
    """Lines returning ``g`` when it already has ``x``'s shape (as it is when
    C-ordered, known when compiling; else a C-ordered copy), else
    ``otherwise`` with ``shape = x.shape``."""
    same = "g" if contiguous else "np.ascontiguousarray(g)"
    return ["if g.shape == x.shape:", f"    return {same}", "shape = x.shape",
            *otherwise, "return out"]


@overload(runtime.unbroadcast)
def _unbroadcast(g, x):
    if not _is_array(g):
        if not _is_array(x):
            return lambda g, x: g
        return _flat("unbroadcast", "g, x",
                     ["shape = x.shape", *_fill_lines(None, x.ndim, dtype="dtype"), "return out"],
                     {"dtype": as_dtype(g)})
    if not _is_array(x):
        return lambda g, x: np.sum(g)
    gn, xn = g.ndim, x.ndim
    if xn > gn:
        return _flat("unbroadcast", "g, x",
                     ["shape = x.shape", *_fill_lines(gn, xn), "return out"])
    if gn == xn:
        return _flat("unbroadcast", "g, x", _same_or(g.layout == "C", _sum_to_lines(gn, xn)))
    return _flat("unbroadcast", "g, x", ["shape = x.shape", *_sum_to_lines(gn, xn),
                                         "return out"])


@overload(runtime.shaped, jit_options=_CACHED)
def _shaped(shape):
    if len(shape) == 0:
        return lambda shape: 0.0
    return lambda shape: np.broadcast_to(0.0, shape)


@overload(runtime.is_array)
def _is_array_of(x):
    answer = _is_array(x)       # a constant of the type: LLVM drops the other branch
    return lambda x: answer


@overload(runtime.inplace_result)
def _inplace_result(new, old):
    if _is_array(old) and (not _is_array(new) or new.dtype != old.dtype):
        dtype = as_dtype(old.dtype)
        return lambda new, old: np.asarray(new).astype(dtype)
    return lambda new, old: new


@overload(runtime.broadcast_like)
def _broadcast_like(t, ans):
    if not _is_array(ans):
        return lambda t, ans: t
    if not _is_array(t):
        return _flat("broadcast_like", "t, ans",
                     ["shape = ans.shape", *_fill_lines(None, ans.ndim, "t", dtype="dtype"),
                      "return out"], {"dtype": as_dtype(t)})
    fill = ["shape = ans.shape", *_fill_lines(t.ndim, ans.ndim, "t", dtype="t.dtype"),
            "return out"]
    if t.ndim != ans.ndim:
        return _flat("broadcast_like", "t, ans", fill)
    same = "t" if t.layout == "C" else "np.ascontiguousarray(t)"
    return _flat("broadcast_like", "t, ans",
                 ["if t.shape == ans.shape:", f"    return {same}", *fill])


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
    params = "g, x, axis=None, keepdims=False"
    if not _is_array(g):
        return _flat("unreduce", params, ["shape = x.shape", *_fill_lines(None, xn, dtype="dtype"),
                                          "return out"], {"dtype": as_dtype(g)})
    if g.ndim == xn:
        return _flat("unreduce", params, ["shape = x.shape", *_fill_lines(xn, xn),
                                          "return out"])
    fill = _broadcast_fill(xn, xn)
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
        oidx = _index([f"0 if kshape[{d}] == 1 else i{d}" for d in range(xn)])
        aidx = ", ".join(f"i{d}" for d in range(xn))
        nest = _loop_nest(xn, "shape", f"acc = out[{oidx}]")
        indent = "    " * (xn + 1)
        lines += nest + [f"{indent}v = a[{aidx}]", f"{indent}out[{oidx}] = {_STEP[op]}"]
    else:
        lines.append("    acc = out[()]")
        lines.append("    v = a[()]")
        lines.append(f"    out[()] = {_STEP[op]}")
    if keepdims:
        lines.append("    return out")
    elif n_out == 0:
        lines.append("    return out.reshape(-1)[0]")
    else:
        lines.append(f"    kept = empty({n_out}, np.int64)")
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


# --- shape ops -----------------------------------------------------------------

def transpose(a, axes):
    """``np.transpose(a, axes)``; compiled by Numba too."""
    return np.transpose(a, axes)


@overload(transpose, jit_options=_CACHED)
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


@overload(squeeze, jit_options=_CACHED)
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
        f"    kept = empty({max(n_out, 1)}, np.int64)",
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


@overload(expand_dims, jit_options=_CACHED)
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
        f"    shape = empty({n_out}, np.int64)",
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


@overload(moveaxis, jit_options=_CACHED)
def _moveaxis(a, source, destination):
    return lambda a, source, destination: np.moveaxis(a, source, destination)


def broadcast_to(array, shape):
    """``np.broadcast_to`` (a writable copy when compiled)."""
    return np.broadcast_to(array, shape)


@overload(broadcast_to, jit_options=_CACHED)
def _broadcast_to(array, shape):
    n = len(shape) if isinstance(shape, types.BaseTuple) else 1
    if not _is_array(array):
        return lambda array, shape: np.full(shape, array)
    fill = _broadcast_fill(array.ndim, n)
    return lambda array, shape: fill(array, shape, array.dtype)


def cumsum(a, axis):
    return np.cumsum(a, axis)


@overload(cumsum, jit_options=_CACHED)
def _cumsum(a, axis):
    if _is_none(axis):
        return lambda a, axis: np.cumsum(a)
    if _is_array(a) and a.ndim == 1:
        return lambda a, axis: np.cumsum(a)
    raise TypingError("np.cumsum with axis on a multi-dimensional array is not compiled yet")


def flip(m, axis):
    return np.flip(m, axis)


@overload(flip, jit_options=_CACHED)
def _flip(m, axis):
    if _is_none(axis):
        return lambda m, axis: np.flip(m)
    if _is_array(m) and m.ndim == 1:
        return lambda m, axis: m[::-1]
    raise TypingError("np.flip with axis on a multi-dimensional array is not compiled yet")


def dot(a, b):
    """``np.dot``; compiled with float operands (Numba's needs them)."""
    return np.dot(a, b)


@overload(dot, jit_options=_CACHED)
def _dot(a, b):
    if not _is_array(a) or not _is_array(b) or a.ndim == 0 or b.ndim == 0:
        return lambda a, b: a * b
    if a.ndim > 2 or b.ndim > 2:
        raise TypingError("np.dot of arrays with more than 2 dimensions is not compiled yet")
    if _kernel_product(a, b):
        return _product
    if isinstance(a.dtype, types.Float) and isinstance(b.dtype, types.Float):
        return lambda a, b: np.dot(a, b)
    return lambda a, b: np.dot(a.astype(np.float64), b.astype(np.float64))


# --- matrix products --------------------------------------------------------------
#
# Products of two float64 matrices laid out as x @ W.T (see _ENTRY_SOURCE
# for which; the others go to BLAS) run in a kernel of ours rather than in the
# BLAS Numba binds (scipy's OpenBLAS).  Measured on the benchmark machine (an
# AVX-512 AMD EPYC that OpenBLAS drives with its AVX2 "Haswell" kernels):
# (128, 784) @ (784, 64) took ~160 us in the kernel below and ~255 us in
# BLAS in session 3 (237 against 288 us in session 4), because LLVM
# compiles the kernel for the host CPU (AVX-512 fused multiply-adds).
#
# The kernel computes C = A @ B.T for A (M, K) and B (N, K), both
# C-contiguous: every entry is a dot product of two contiguous rows, which
# LLVM vectorises along K ("reassoc" lets it split the sum into vector
# lanes; "contract" makes fused multiply-adds).  Entries are computed in
# blocks of _MR x _NR: each pass over K loads _MR + _NR rows' elements and
# does _MR * _NR multiply-adds, kept in registers.
#
# The kernel is compiled once per process, as a C callable (``numba.cfunc``,
# cached on disk), and called through a pointer (see "the kernel compiled
# beside the caller" below), the way Numba calls BLAS: a compiled function
# that calls a Numba function gets a copy of its LLVM code and optimises it
# again, which for the vectorised kernel cost ~0.5 s per calling function;
# a call through a pointer costs nothing to compile.  It is *one*
# generated function, with no calls to other Numba functions: every Numba
# function a compiled function calls is a library of its own, optimised and
# turned into machine code on its own and then again inside each caller, so
# helpers nested three deep were compiled three times (measured: 1.4 s for
# the kernel written as six helpers, 0.9 s as one; see
# tools/cold_compile.py).  It is paid only by processes that compile a
# product, and not at all when Numba's disk cache has it.

_MR, _NR = 4, 4


def _gemm_nt_lines(mr, nr):
    """Lines computing ``C = A @ B.T`` in blocks of ``mr`` x ``nr``
    accumulators, for C-contiguous A (M, K), B (N, K) and C (M, N)."""
    acc = [[f"s{r}{c}" for c in range(nr)] for r in range(mr)]
    lines = [
        f"Mb = M - M % {mr}",
        f"Nb = N - N % {nr}",
        f"for i in range(0, Mb, {mr}):",
        f"    for j in range(0, Nb, {nr}):",
        "        " + "; ".join(f"a{r} = A[i + {r}]" for r in range(mr)),
        "        " + "; ".join(f"b{c} = B[j + {c}]" for c in range(nr)),
        "        " + " = ".join(sum(acc, [])) + " = 0.0",
        "        for k in range(K):",
        "            " + "; ".join(f"x{r} = a{r}[k]" for r in range(mr)),
        "            " + "; ".join(f"y{c} = b{c}[k]" for c in range(nr))]
    for r in range(mr):
        lines.append("            " + "; ".join(f"{acc[r][c]} += x{r} * y{c}"
                                                for c in range(nr)))
    for r in range(mr):
        lines.append("        " + "; ".join(f"C[i + {r}, j + {c}] = {acc[r][c]}"
                                            for c in range(nr)))
    lines += [
        "# the entries outside whole blocks",
        "for i in range(M):",
        "    for j in range(Nb if i < Mb else 0, N):",
        "        s = 0.0",
        "        for k in range(K):",
        "            s += A[i, k] * B[j, k]",
        "        C[i, j] = s"]
    return lines


# --- large products and other layouts: BLAS ----------------------------------------
#
# The kernel has no cache blocking: every block of C streams a whole row
# panel of both operands.  Measured single-threaded against this machine's
# OpenBLAS: 256^3 0.51 vs 0.65 ms, 512^3 4.6 vs 5.1 ms, 1024^3 43 vs 41 ms,
# 2048^3 812 vs 326 ms.  The threshold is set low (256^3), not at the
# single-thread crossover (~1024^3): BLAS runs on every core, the kernel on
# one, so on a many-core machine BLAS wins much earlier, and a product
# under jit must not be slower than NumPy's.  Past _BLAS_WORK multiply-adds
# the kernel hands the product to BLAS dgemm (scipy's, the one Numba
# binds), called from inside the kernel so that callers compile nothing
# more.  dgemm is called by symbol name: its address changes from process
# to process and must never be baked into cached code, so the kernel's
# ``prepare`` (``_register_dgemm``, see ``MATMUL``) registers it under
# _DGEMM_SYMBOL before the kernel is compiled or loaded from cache.

_DGEMM_SYMBOL = "tangent_x_dgemm"
_BLAS_WORK = 1 << 24
_INT32_MAX = 2 ** 31 - 1


def _register_dgemm():
    from numba.extending import get_cython_function_address
    llvm_binding.add_symbol(_DGEMM_SYMBOL,
                            get_cython_function_address("scipy.linalg.cython_blas", "dgemm"))


@intrinsic
def _dgemm_call(typingctx, transx, transy, m, n, k, x, ldx, y, ldy, c, ldc, keep1, keep2):
    """Fortran ``dgemm``: ``c = op(x) @ op(y)`` column-major, ``op`` the
    transpose when ``transx`` / ``transy`` is true; every argument passed by
    reference, integers as 32-bit ``int`` (scipy's BLAS interface).  ``keep1``,
    ``keep2`` are unused: arrays that must stay alive until the call returns."""
    def codegen(context, builder, sig, args):
        i8, i32, f64 = llvm_ir.IntType(8), llvm_ir.IntType(32), llvm_ir.DoubleType()
        ptr = context.get_value_type(_f64p)
        fnty = llvm_ir.FunctionType(llvm_ir.VoidType(), [
            i8.as_pointer(), i8.as_pointer(), i32.as_pointer(), i32.as_pointer(),
            i32.as_pointer(), f64.as_pointer(), ptr, i32.as_pointer(), ptr, i32.as_pointer(),
            f64.as_pointer(), ptr, i32.as_pointer()])
        fn = cgutils.get_or_insert_function(builder.module, fnty, _DGEMM_SYMBOL)
        tx_, ty_, m_, n_, k_, x_, ldx_, y_, ldy_, c_, ldc_ = args[:11]

        def ref(value):
            return cgutils.alloca_once_value(builder, value)

        def trans(flag):
            return ref(builder.select(flag, i8(ord("T")), i8(ord("N"))))

        def int32(value):
            return ref(builder.trunc(value, i32))
        builder.call(fn, [trans(tx_), trans(ty_), int32(m_), int32(n_), int32(k_),
                          ref(f64(1.0)), x_, int32(ldx_), y_, int32(ldy_), ref(f64(0.0)),
                          c_, int32(ldc_)])
        return context.get_dummy_value()
    sig = types.void(types.boolean, types.boolean, types.intp, types.intp, types.intp,
                     _f64p, types.intp, _f64p, types.intp, _f64p, types.intp, keep1, keep2)
    return sig, codegen


@intrinsic
def _data(typingctx, arr):
    """The data pointer of the float64 array ``arr``."""
    def codegen(context, builder, sig, args):
        return make_array(sig.args[0])(context, builder, args[0]).data
    return _f64p(arr), codegen


_f64p = types.CPointer(types.float64)
_GEMM_SIGNATURE = types.void(_f64p, types.intp, types.intp, _f64p, types.intp, types.intp,
                             _f64p, types.intp, types.intp, types.intp)


def _blas_layout_lines(name, s_inner, s_outer, rows, cols):
    """Lines setting ``t<name>, ld<name>``: how BLAS reads a column-major
    ``rows`` x ``cols`` matrix whose element (r, c) is at ``r * s_inner + c *
    s_outer``: (transposed, leading dimension), or (False, 0) when it
    cannot and the matrix is copied C-ordered into ``<name><name>``."""
    return [
        f"if {s_inner} == 1 and {s_outer} >= max({rows}, 1) and {s_outer} <= INT32_MAX:",
        f"    t{name}, ld{name} = False, {s_outer}",
        f"elif {s_outer} == 1 and {s_inner} >= max({cols}, 1) and {s_inner} <= INT32_MAX:",
        f"    t{name}, ld{name} = True, {s_inner}",
        "else:",
        f"    t{name}, ld{name} = False, 0"]


def _entry_source():
    """``entry(a, as0, as1, b, bs0, bs1, c, M, N, K)``: ``c = a @ b`` for
    float64 matrices given by pointer and strides (in elements): a (M, K),
    b (K, N), c (M, N) C-contiguous.

    Only a product whose operands are read in place by the kernel (``a``
    C-ordered, ``b`` F-ordered, as ``W.T`` is: ``x @ W.T``, the forward
    product of a dense layer) runs in the kernel: measured single-threaded
    on the benchmark machine (session 4, quiet), (128, 784) @ (784, 64).T
    took 237 us there and 288 us in BLAS, but every case that needed
    packing lost to BLAS, which reads transposed operands in place:
    (128, 784).T @ (128, 64) 318 against 285 us, (64, 128) @ (128, 784) 319
    against 260, 256^3 796 against 659, (128, 10) @ (10, 64) 13 against 4.
    So those, and large products (see _BLAS_WORK), go to dgemm.  Past BLAS's
    32-bit dimensions the kernel takes everything, operands in another
    layout first copied whole."""
    body = [
        "pack_a = not (as1 == 1 and as0 == K)",
        "pack_b = not (bs0 == 1 and bs1 == K)",
        "if (pack_a or pack_b or M * N * K > BLAS_WORK) and max(M, N, K) <= INT32_MAX:",
        "    # dgemm is column-major: it computes c.T = b.T @ a.T, the C-ordered c",
        "    # being the column-major c.T; b.T is (N, K), its (j, k) at j*bs1 + k*bs0",
        *["    " + line for line in _blas_layout_lines("b", "bs1", "bs0", "N", "K")],
        "    # a.T is (K, M), its (k, i) at k*as1 + i*as0",
        *["    " + line for line in _blas_layout_lines("a", "as1", "as0", "K", "M")],
        "    bb = empty(K * N if ldb == 0 else 0, np.float64)",
        "    aa = empty(M * K if lda == 0 else 0, np.float64)",
        "    if ldb == 0:",
        "        for k in range(K):",
        "            for j in range(N):",
        "                bb[k * N + j] = b[k * bs0 + j * bs1]",
        "        b, ldb = _data(bb), N",
        "    if lda == 0:",
        "        for i in range(M):",
        "            for k in range(K):",
        "                aa[i * K + k] = a[i * as0 + k * as1]",
        "        a, lda = _data(aa), K",
        "    # the copies are arguments too: alive until dgemm returns",
        "    _dgemm_call(tb, ta, N, M, K, b, ldb, a, lda, c, N, bb, aa)",
        "    return",
        "C = carray(c, (M, N))",
        "A = carray(a, (M, K)) if not pack_a else empty((M, K), np.float64)",
        "B = carray(b, (N, K)) if not pack_b else empty((N, K), np.float64)",
        "if pack_a:",
        "    for i in range(M):",
        "        for k in range(K):",
        "            A[i, k] = a[i * as0 + k * as1]",
        "if pack_b:",
        "    for j in range(N):",
        "        for k in range(K):",
        "            B[j, k] = b[k * bs0 + j * bs1]",
        *_gemm_nt_lines(_MR, _NR)]
    return "\n".join(["def entry(a, as0, as1, b, bs0, bs1, c, M, N, K):"] +
                     ["    " + line for line in body])


_ENTRY_SOURCE = _entry_source()


# The kernel is compiled by a second process while this one compiles its
# caller, and called through a slot (see beside.py).

def _kernel_text():
    return ("# Generated by tangent_x: the float64 matrix product kernel (see\n"
            "# tangent_x/numba_stage/numba_runtime.py). Do not edit.\n"
            "import numpy as np\n"
            "from numba import carray\n"
            "from tangent_x.numba_stage.numba_runtime import _data, _dgemm_call, empty\n\n"
            f"BLAS_WORK = {_BLAS_WORK}\nINT32_MAX = {_INT32_MAX}\n\n\n"
            f"{_ENTRY_SOURCE}\n")


MATMUL = beside.Kernel("matmul_f64", _kernel_text, "entry", _GEMM_SIGNATURE,
                       fastmath={"reassoc", "contract"}, prepare=_register_dgemm)


def may_call_kernel(objects):
    """Whether compiled code calling ``objects`` may call the kernel."""
    users = (matmul, dot, runtime.matmul_adjoint_lhs, runtime.matmul_adjoint_rhs,
             runtime.dot_adjoint_lhs, runtime.dot_adjoint_rhs, runtime.inner_adjoint_lhs,
             runtime.inner_adjoint_rhs)
    return any(obj is user for obj in objects for user in users)


@intrinsic
def _matmul_call(typingctx, a, b, out):
    """``out = a @ b`` by the kernel in its slot (``out`` C-contiguous)."""
    def codegen(context, builder, sig, args):
        intp = context.get_value_type(types.intp)
        arr_a, arr_b, arr_c = (make_array(t)(context, builder, v)
                               for t, v in zip(sig.args, args))
        M, K = cgutils.unpack_tuple(builder, arr_a.shape, 2)
        N = cgutils.unpack_tuple(builder, arr_b.shape, 2)[1]
        eight = intp(8)
        strides = [builder.sdiv(s, eight) for arr in (arr_a, arr_b)
                   for s in cgutils.unpack_tuple(builder, arr.strides, 2)]
        MATMUL.call(context, builder, [arr_a.data, strides[0], strides[1], arr_b.data,
                                       strides[2], strides[3], arr_c.data, M, N, K])
        return context.get_dummy_value()
    return types.void(a, b, out), codegen


def _product(a, b):
    """``a @ b`` for float64 matrices, by the kernel.  A plain function,
    handed to Numba as an overload's implementation: one compiled function
    per call site's types, not a wrapper calling it (see "one generated
    function" above: each level of calls is compiled again)."""
    if b.shape[0] != a.shape[1]:
        raise ValueError("matmul: the operands' inner dimensions differ")
    out = empty((a.shape[0], b.shape[1]), np.float64)
    if out.size:
        _matmul_call(a, b, out)
    return out


def _product_lhs(g, a, b):
    """``g @ b.T`` (the cotangent of ``a`` in ``a @ b``) by the kernel,
    written out for the same reason."""
    bt = b.T
    out = empty((g.shape[0], bt.shape[1]), np.float64)
    if out.size:
        _matmul_call(g, bt, out)
    return out


def _product_rhs(g, a, b):
    """``a.T @ g`` (the cotangent of ``b`` in ``a @ b``) by the kernel."""
    at = a.T
    out = empty((at.shape[0], g.shape[1]), np.float64)
    if out.size:
        _matmul_call(at, g, out)
    return out


def _kernel_product(a, b):
    """Whether ``a @ b`` runs in the kernel: two (aligned) float64 matrices
    (and if so, the kernel is made ready)."""
    if (_is_array(a) and _is_array(b) and a.ndim == 2 and b.ndim == 2 and
            a.dtype == types.float64 and b.dtype == types.float64 and a.aligned and b.aligned):
        beside.request(MATMUL)
        return True
    return False


def matmul(a, b):
    """``a @ b`` (``np.matmul``); compiled by Numba too, two float64 matrices
    in tangent_x's kernel (see above), anything else as Numba's ``@``."""
    return np.matmul(a, b)


@overload(matmul, jit_options=_CACHED)
def _matmul(a, b):
    if _kernel_product(a, b):
        return _product
    return lambda a, b: a @ b


# --- variables first assigned in a loop (optional) ------------------------------

def assigned(value):
    """``value``, a variable the code reads after a loop that assigns it
    (see optional.py); eagerly the python stage's ``unbound`` placeholder
    raises by itself, so this is the value."""
    return value


@intrinsic
def _optional_value(typingctx, value):
    """The value inside an optional one (Numba's own cast, which raises
    TypeError on None: ``assigned`` checks first)."""
    if not isinstance(value, types.Optional):
        return None

    def codegen(context, builder, signature, args):
        inner = context.cast(builder, args[0], signature.args[0], signature.return_type)
        # the cast borrows the optional's reference; a result is a new one
        # (without this an array is freed twice: heap corruption)
        return impl_ret_borrowed(context, builder, signature.return_type, inner)
    return value.type(value), codegen


# helpers whose Numba forms take an optional (maybe never assigned) value as it is
TAKES_OPTIONAL = (runtime.zeros_like,)


@overload(assigned, jit_options=_CACHED)
def _assigned(value):
    if isinstance(value, types.NoneType):
        # typed before the loop's assignments are: resolved once they are
        return None
    if isinstance(value, types.Optional):
        def impl(value):
            if value is None:
                raise UnboundLocalError("a local variable is used but was not assigned "
                                        "on the path the code took")
            return _optional_value(value)
        return impl
    return lambda value: value


# --- tapes kept with a size (specialize.Specializer.sizes) ---------------------

def grown(tape, item):
    """The tape (``None`` before its first push) with room for one item
    more, which the caller then writes at the tape's size:

        if y_tape is None or y_tape_size == len(y_tape):
            y_tape = grown(y_tape, y)
        y_tape[y_tape_size] = y

    The tape starts as None because its items' type is known only when
    Numba types the push; it is never shrunk, so popping (``y_tape[size]``
    after lowering the size) and pushing again reuse its memory, and a push
    with room is a store, with no call and no reference counting.

    Why not a Numba list throughout: for a number pushed per iteration of
    a short loop, the list's allocations and appends cost as much as the
    arithmetic (Newton's sqrt: 250 ns with a list, 215 ns with an array,
    the hand-written gradient 195 ns).  So compiled, numbers (and bools)
    go in a NumPy array of their dtype, 16 items at first, doubled when
    full; anything else (arrays, shape tuples, values that may be None) in
    a Numba list, appended to.  This eager form is the list form."""
    if tape is None:
        tape = []
    tape.append(item)
    return tape


_TAPE_START = 16          # items of a number tape's first allocation


class NumberTape(types.Array):
    """Numba's type of a tape of numbers: a 1-D C array of their dtype,
    whose type unifies with the tape type of another dtype (to the common
    dtype) as Numba's list types do.  Numba types a loop in rounds, and a
    carried variable may first be typed narrower than it ends up (``acc =
    0`` before the loop, ``acc = acc + x`` in it: int64, then float64), so
    a push is typed first with the narrow item, then with the final one;
    plain array types of two dtypes would not unify and the function would
    not compile.  No value of the narrow type exists at run time: code is
    generated from the final types only."""

    def __init__(self, dtype):
        super().__init__(dtype, 1, "C", name=f"tape({dtype})")

    def unify(self, typingctx, other):
        if isinstance(other, NumberTape):
            dtype = typingctx.unify_pairs(self.dtype, other.dtype)
            if _number_tape(dtype):
                return NumberTape(dtype)
        return None


from numba.core.datamodel.models import ArrayModel  # noqa: E402
from numba.core.datamodel.registry import register_default  # noqa: E402
register_default(NumberTape)(ArrayModel)


@intrinsic
def _new_tape(typingctx, dtype, size):
    """An uninitialised tape of ``size`` items of the NumPy scalar type
    ``dtype``.  Lowered straight to Numba's array allocation rather than
    through ``np.empty``, whose overload costs ~0.1 s of compiling in every
    new process (it is not cached on disk), for a function that may
    otherwise never allocate an array."""
    item = dtype.instance_type

    def codegen(context, builder, signature, args):
        from numba.core.imputils import impl_ret_new_ref
        from numba.np.arrayobj import _empty_nd_impl
        n = context.cast(builder, args[1], signature.args[1], types.intp)
        array = _empty_nd_impl(context, builder, types.Array(item, 1, "C"), [n])
        return impl_ret_new_ref(context, builder, signature.return_type, array._getvalue())
    return NumberTape(item)(dtype, size), codegen


def _number_tape(item):
    return isinstance(item, (types.Number, types.Boolean))


@register_jitable
def _same(value):
    return value


@overload(grown, inline="always", jit_options=_CACHED)
def _grown(tape, item):
    item = types.unliteral(item)
    held = tape.type if isinstance(tape, types.Optional) else tape
    if isinstance(item, types.NoneType):
        # typed before the loop's assignments are (a variable None before
        # the loop): resolved once they are (an optional item, kept in a list)
        return None
    # the tape when it is not None, of its plain type
    unwrap = _optional_value if isinstance(tape, types.Optional) else _same
    start = _TAPE_START
    if _number_tape(item):
        if isinstance(held, types.List):
            raise TypingError(f"a tape of {held.dtype} is pushed a {item}")
        if isinstance(tape, types.NoneType):      # typed before the loop's pushes are
            dtype = as_dtype(item).type
            return lambda tape, item: _new_tape(dtype, start)
        # The items kept in the common dtype of the tape's and the item's:
        # a round of typing may see an item narrower or wider than the
        # tape's (see NumberTape), and pushes of two types at two places
        # make one tape of the common type, as a Numba list would.
        dtype = np.promote_types(as_dtype(held.dtype), as_dtype(item)).type

        def number(tape, item):
            if tape is None:
                return _new_tape(dtype, start)
            old = unwrap(tape)
            out = _new_tape(dtype, 2 * len(old))     # (a tape has 16 items or more)
            for k in range(len(old)):
                out[k] = old[k]
            return out
        return number
    if isinstance(held, NumberTape):
        raise TypingError(f"a tape of {held.dtype} is pushed a {item}")
    if isinstance(tape, types.NoneType):
        return lambda tape, item: [item]

    def listed(tape, item):
        if tape is None:
            return [item]
        out = unwrap(tape)
        out.append(item)
        return out
    return listed


# --- Python numbers next to narrow arrays (weak_scalars) ------------------------

def weak_scalar(value, *likes):
    """The Python number ``value`` as NumPy types it in an operation whose
    other operands promote to the type of ``likes`` (NEP 50: next to a
    float32 array ``0.5`` is a float32).  Eagerly NumPy does that itself,
    so this is ``value``; compiled, a cast chosen when Numba types the call
    (see weak_scalars)."""
    return value


def _weak_type(value, like):
    """The Numba type NEP 50 gives the number type ``value`` next to an
    operand of (scalar) type ``like``, or None for Numba's own promotion."""
    kinds = (types.Boolean, types.Integer, types.Float, types.Complex)
    rank = next((i for i, k in enumerate(kinds) if isinstance(value, k)), None)
    like_rank = next((i for i, k in enumerate(kinds) if isinstance(like, k)), None)
    if rank is None or like_rank is None or like_rank == 0:
        return None
    if rank <= like_rank:
        return like                          # the number takes the operand's type
    if like_rank == 2 and rank == 3:         # a complex number next to float32
        return types.complex64 if like.bitwidth <= 32 else None
    return None


@overload(weak_scalar, jit_options=_CACHED)
def _weak_scalar(value, *likes):
    if isinstance(value, types.Array):
        if not likes:
            # weak_scalar(broadcast_lanes(0.5, n)): a Python number's lanes
            # (weak_scalars tells them apart from a NumPy scalar's)
            return lambda value, *likes: _as_weak_lanes(value)
        if not isinstance(value, WeakLanes):
            return lambda value, *likes: value       # a strong array: as it is
        return _weak_lanes_scalar(value, likes)
    dtypes = []
    for like in likes:
        dtype = like.dtype if isinstance(like, types.Array) else like
        if not isinstance(dtype, types.Number) and not isinstance(dtype, types.Boolean):
            return lambda value, *likes: value
        dtypes.append(as_dtype(dtype))
    promoted = from_dtype(np.result_type(*dtypes)) if dtypes else None
    target = _weak_type(value, promoted)
    if target is None or target == value:
        return lambda value, *likes: value
    cast = as_dtype(target).type
    return lambda value, *likes: cast(value)


def widen_dtype(x, dtype):
    """``x`` as an array of ``dtype`` when it is an array of another dtype,
    else ``x``: put on every assignment of a variable whose arrays NumPy
    gives two dtypes (``acc = x`` float32 before a loop, float64 after
    ``acc = acc + c`` with a float64 ``c`` in it), which Numba cannot type
    as one (see ``Jitted._widened``)."""
    if isinstance(x, np.ndarray) and x.dtype != dtype:
        return x.astype(dtype)
    return x


@overload(widen_dtype, jit_options=_CACHED)
def _widen_dtype(x, dtype):
    target = getattr(dtype, "instance_type", None)
    if not _is_array(x) or target is None or x.dtype == target:
        return lambda x, dtype: x
    return lambda x, dtype: x.astype(dtype)


def _weak_lanes_scalar(value, likes):
    """``weak_scalar`` of ``WeakLanes``: the lanes cast to the dtype NumPy
    gives their numbers next to ``likes`` (as ``lanes.WeakLanes`` does)."""
    dtypes = []
    for like in likes:
        dtype = like.dtype if isinstance(like, types.Array) else like
        if not isinstance(dtype, (types.Number, types.Boolean)):
            return lambda value, *likes: value
        dtypes.append(as_dtype(dtype))
    promoted = from_dtype(np.result_type(*dtypes)) if dtypes else None
    target = _weak_type(value.dtype, promoted)
    if target is None or target == value.dtype:
        return lambda value, *likes: value
    dtype = as_dtype(target)
    return lambda value, *likes: value.astype(dtype)


# --- cotangent helpers on arrays -------------------------------------------------

@overload(runtime.zeros_like, jit_options=_CACHED)
def _zeros_like(x):
    if isinstance(x, types.Optional):
        # A value that may still be None (a return value not yet assigned,
        # read only where it was): its zero is the zero of its type.
        inner = x.type
        if _is_array(inner):
            raise TypingError("an array that may be None has no zero of known shape")

        def optional(x):
            if x is None:
                return 0.0
            return 0.0 * x
        return optional
    if isinstance(x, types.NoneType):
        return lambda x: 0.0
    if _is_array(x):
        return lambda x: np.zeros_like(x)
    if isinstance(x, types.Integer) or isinstance(x, types.Boolean):
        return lambda x: 0.0
    return lambda x: 0.0 * x


@overload(runtime.check_grad_output, jit_options=_CACHED)
def _check_grad_output(y):
    if isinstance(y, (types.Optional, types.NoneType)):
        def maybe_none(y):
            if y is None:
                raise TypeError("Gradient only defined for scalar-output functions. "
                                "Output was None.")
        return maybe_none
    if _is_array(y) and y.ndim > 0:
        message = ("Gradient only defined for scalar-output functions. "
                   f"Output was an array of {y.ndim} dimension{'s' if y.ndim > 1 else ''}.")

        def impl(y):
            raise TypeError(message)
        return impl
    if isinstance(getattr(y, "dtype", y), types.Complex):
        def complex_output(y):
            raise TypeError("grad requires real-valued outputs (output dtype that is a "
                            "sub-dtype of np.floating); tangent_x differentiates real "
                            "values only")
        return complex_output
    return lambda y: None


@overload(runtime.stop_gradient, jit_options=_CACHED)
def _stop_gradient(x):
    return lambda x: x


@overload(runtime.tree_add, jit_options=_CACHED)
def _tree_add(a, b):
    if isinstance(a, types.NoneType):
        return lambda a, b: b
    if isinstance(b, types.NoneType):
        return lambda a, b: a
    return lambda a, b: a + b


@overload(runtime.iteration_item, jit_options=_CACHED)
def _iteration_item(items, k):
    return lambda items, k: items[k]


def _flat_rows(b, m, trailing):
    """``b`` broadcast to ``m`` rows of shape ``trailing`` (the selection of
    an index array or mask), flat; a number: one entry."""
    return None


@overload(_flat_rows, jit_options=_CACHED)
def _flat_rows_impl(b, m, trailing):
    if _is_array(b):
        def rows(b, m, trailing):
            target = (m,) + trailing
            out = np.empty(target, b.dtype)
            out[...] = np.broadcast_to(b, target)
            return out.reshape(-1)
        return rows
    return lambda b, m, trailing: np.full(1, b)


@overload(runtime.unindex, jit_options=_CACHED)
def _unindex(x, index, g):
    if not _is_array(x):
        return lambda x, index, g: g
    if isinstance(index, (types.Integer, types.SliceType, types.BaseTuple,
                          types.EllipsisType)) and not (
            isinstance(index, types.BaseTuple) and any(_is_array(t) for t in index)):
        def impl(x, index, g):
            z = np.zeros(x.shape, np.float64)
            z[checked(x, index)] = g
            return z
        return impl

    if not (_is_array(index) and index.ndim == 1 or
            _is_array(index) and isinstance(index.dtype, types.Boolean)):
        raise TypingError("unindex: only integers, slices, 1-d integer arrays and boolean "
                          "masks are compiled")
    mask = isinstance(index.dtype, types.Boolean)
    lead = index.ndim if mask else 1        # axes the index selects over

    def scatter(x, index, g):
        checked(x, index)
        z = np.zeros(x.shape, np.float64)
        zf = z.reshape(-1)
        flat_index = np.ascontiguousarray(index).reshape(-1)
        row = zf.size // max(x.shape[0] if not mask else flat_index.size, 1)
        m = flat_index.size if not mask else np.sum(flat_index)
        gf = _flat_rows(g, m, x.shape[lead:])   # g broadcast to the selected rows
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


@overload(runtime.add_at, jit_options=_CACHED)
def _add_at(acc, index, g):
    if not _is_array(acc):
        return lambda acc, index, g: acc + g
    if isinstance(index, (types.Integer, types.SliceType)):
        def impl(acc, index, g):
            acc[checked(acc, index)] += g
            return acc
        return impl

    def general(acc, index, g):
        return acc + runtime.unindex(acc, index, g)
    return general


@overload(runtime.index_zero, jit_options=_CACHED)
def _index_zero(g, index):
    if _is_array(index) and isinstance(index.dtype, types.Boolean) and index.ndim > 1:
        def masked(g, index):
            out = np.copy(g)
            mask_assign(out, index, 0.0)
            return out
        return masked

    def impl(g, index):
        out = np.copy(g)
        out[checked(g, index)] = 0
        return out
    return impl


@register_jitable
def _memory_extent(a):
    """The first and one-past-last byte addresses ``a`` reaches."""
    lo = np.int64(a.ctypes.data)
    hi = lo
    for i in range(a.ndim):
        step = (a.shape[i] - 1) * a.strides[i]
        if step < 0:
            lo += step
        else:
            hi += step
    return lo, hi + a.itemsize


@overload(runtime.is_view_of, jit_options=_CACHED)
def _is_view_of(view, base):
    if not (_is_array(view) and _is_array(base)):
        return lambda view, base: False

    def impl(view, base):
        if view.size == 0 or base.size == 0:
            return False
        lo, hi = _memory_extent(view)
        base_lo, base_hi = _memory_extent(base)
        return lo < base_hi and base_lo < hi
    return impl


@overload(runtime.last_writes, jit_options=_CACHED)
def _last_writes(items, index, like):
    if not (_is_array(index) and not isinstance(index.dtype, types.Boolean)):
        if isinstance(index, types.BaseTuple) and any(_is_array(t) for t in index):
            def general(items, index, like):    # one index array among slices and ints
                order = np.arange(items.size).reshape(items.shape)
                last = np.empty(like.shape, np.intp)
                last[index] = order
                return np.where(last[index] == order, items, 0.0)
            return general
        return lambda items, index, like: items     # no integer array: nothing repeats
    if index.ndim != 1:
        raise TypingError("last_writes: only 1-d integer index arrays are compiled")

    def impl(items, index, like):
        n = like.shape[0]
        last = np.empty(n, np.intp)         # only written positions are read
        for j in range(index.size):
            k = index[j]
            last[k + n if k < 0 else k] = j
        out = np.ascontiguousarray(items)
        copied = False
        for j in range(index.size):
            k = index[j]
            if last[k + n if k < 0 else k] != j:     # a later write overwrote this one
                if not copied:
                    out = out.copy()
                    copied = True
                rows = out.reshape(index.size, -1)
                for r in range(rows.shape[1]):
                    rows[j, r] = 0
        return out
    return impl


# Matrix products of two matrices run in ``matmul``'s kernel (see there).

def _outer(u, v):
    """A jitable ``np.outer`` of the vectors typed ``u`` and ``v``, as a loop
    nest: Numba's ``np.outer`` goes through its generic broadcasting ufunc
    and costs several times more (it is the rank-one cotangent of every
    matrix-vector product, once per step of a loop)."""
    dtype = np.result_type(as_dtype(u.dtype), as_dtype(v.dtype))

    @register_jitable
    def outer(u, v):
        out = empty((u.shape[0], v.shape[0]), dtype)
        for i in range(u.shape[0]):
            ui = u[i]
            for j in range(v.shape[0]):
                out[i, j] = ui * v[j]
        return out
    return outer


@overload(runtime.matmul_adjoint_lhs, jit_options=_CACHED)
def _matmul_adjoint_lhs(g, a, b):
    if not (_is_array(a) and _is_array(b)):
        raise TypingError("matmul of non-arrays")
    if b.ndim == 1 and a.ndim == 1:
        return lambda g, a, b: g * b
    if b.ndim == 1 and a.ndim == 2:
        outer = _outer(g, b)
        return lambda g, a, b: outer(g, b)
    if a.ndim == 1 and b.ndim == 2:
        return lambda g, a, b: np.dot(b, g)
    if a.ndim == 2 and b.ndim == 2:
        if _kernel_product(g, b):
            return _product_lhs
        return lambda g, a, b: matmul(g, b.T)
    raise TypingError("matmul adjoint for stacked matrices is not compiled yet")


@overload(runtime.matmul_adjoint_rhs, jit_options=_CACHED)
def _matmul_adjoint_rhs(g, a, b):
    if not (_is_array(a) and _is_array(b)):
        raise TypingError("matmul of non-arrays")
    if b.ndim == 1 and a.ndim == 1:
        return lambda g, a, b: g * a
    if a.ndim == 1 and b.ndim == 2:
        outer = _outer(a, g)
        return lambda g, a, b: outer(a, g)
    if a.ndim == 2 and b.ndim == 1:
        return lambda g, a, b: np.dot(a.T, g)
    if a.ndim == 2 and b.ndim == 2:
        if _kernel_product(a, g):
            return _product_rhs
        return lambda g, a, b: matmul(a.T, g)
    raise TypingError("matmul adjoint for stacked matrices is not compiled yet")


def add_matmul_adjoint_lhs(acc, g, a, b):
    """``acc + matmul_adjoint_lhs(g, a, b)``, added into ``acc`` when it is
    an array (the caller owns it: see ``specialize.Specializer.owns``)."""
    acc += runtime.matmul_adjoint_lhs(g, a, b)
    return acc


def add_matmul_adjoint_rhs(acc, g, a, b):
    """``acc + matmul_adjoint_rhs(g, a, b)``, added into ``acc`` when it is
    an array."""
    acc += runtime.matmul_adjoint_rhs(g, a, b)
    return acc


def _add_outer(acc, u, v):
    """A jitable ``acc += np.outer(u, v)`` (same shapes) without the
    product's temporary; else None."""
    if not (_is_array(acc) and acc.ndim == 2 and _is_array(u) and _is_array(v)
            and u.ndim == 1 and v.ndim == 1):
        return None

    @register_jitable
    def add_outer(acc, u, v):
        m, n = acc.shape
        if u.shape[0] != m or v.shape[0] != n:
            return False
        for i in range(m):
            ui = u[i]
            row = acc[i]         # a row view: the inner loop vectorises
            for j in range(n):
                row[j] += ui * v[j]
        return True
    return add_outer


@overload(add_matmul_adjoint_lhs, jit_options=_CACHED)
def _add_matmul_adjoint_lhs(acc, g, a, b):
    add_outer = _add_outer(acc, g, b) if _is_array(a) and a.ndim == 2 else None
    if add_outer is None:
        return _add_fallback(runtime.matmul_adjoint_lhs, acc)

    def impl(acc, g, a, b):
        if not add_outer(acc, g, b):
            acc += runtime.matmul_adjoint_lhs(g, a, b)
        return acc
    return impl


@overload(add_matmul_adjoint_rhs, jit_options=_CACHED)
def _add_matmul_adjoint_rhs(acc, g, a, b):
    add_outer = _add_outer(acc, a, g) if _is_array(b) and b.ndim == 2 else None
    if add_outer is None:
        return _add_fallback(runtime.matmul_adjoint_rhs, acc)

    def impl(acc, g, a, b):
        if not add_outer(acc, a, g):
            acc += runtime.matmul_adjoint_rhs(g, a, b)
        return acc
    return impl


def _add_fallback(helper, acc):
    if _is_array(acc):
        def into(acc, g, a, b):
            acc += helper(g, a, b)
            return acc
        return into
    return lambda acc, g, a, b: acc + helper(g, a, b)


# Helpers whose contribution ``acc += helper(...)`` can be written straight
# into an owned accumulator (``specialize`` spells the update with these).
ACCUMULATING = {runtime.matmul_adjoint_lhs: add_matmul_adjoint_lhs,
                runtime.matmul_adjoint_rhs: add_matmul_adjoint_rhs}

# --- keepdims variants (the flag is part of the helper's name: a Numba
# type must know the result's rank) -------------------------------------------

def _define_keepdims(op, eager_op):
    def eager(a, axes):
        return eager_op(a, axes, True)
    eager.__name__ = f"{op}_axes_keepdims"
    eager.__doc__ = f"``np.{op}(a, axis=axes, keepdims=True)``; compiled by Numba too."
    return eager


def _reduction_overload(eager, op, keep):
    @overload(eager, jit_options=_CACHED)
    def _ov(a, axes):
        if not _is_array(a):
            return lambda a, axes: a
        kernel = _reduce_kernel(op, a.ndim, _count_axes(axes, a.ndim), keep, _dtype_expr(op, a))
        to_tuple = register_jitable(_axes_tuple(axes, a.ndim))
        return lambda a, axes: kernel(a, to_tuple(axes))


def _define_drop(op):
    def eager(a, axes):
        return getattr(np, op)(a, axis=axes)
    eager.__name__ = f"{op}_axes"
    eager.__doc__ = f"``np.{op}(a, axis=axes)``; compiled by Numba too."
    return eager


for _op in ("sum", "prod", "max", "min"):
    _drop = _define_drop(_op)
    _keep = _define_keepdims(_op, lambda a, axes, k, _o=_op: getattr(np, _o)(a, axis=axes,
                                                                            keepdims=k))
    _reduction_overload(_drop, _op, False)
    _reduction_overload(_keep, _op, True)
    globals()[f"{_op}_axes"] = _drop
    globals()[f"{_op}_axes_keepdims"] = _keep


def _mean_like(keep):
    def mean(a, axes):
        return np.mean(a, axis=axes, keepdims=keep)

    @overload(mean, jit_options=_CACHED)
    def _ov(a, axes):
        if not _is_array(a):
            return lambda a, axes: a
        dtype = "a.dtype" if isinstance(a.dtype, types.Float) else "np.float64"
        kernel = _reduce_kernel("sum", a.ndim, _count_axes(axes, a.ndim), keep, dtype)
        to_tuple = register_jitable(_axes_tuple(axes, a.ndim))

        def impl(a, axes):
            total = kernel(a, to_tuple(axes))
            return total / (a.size / max(np.size(total), 1))
        return impl
    return mean


mean_axes = _mean_like(False)
mean_axes.__name__ = "mean_axes"
mean_axes_keepdims = _mean_like(True)
mean_axes_keepdims.__name__ = "mean_axes_keepdims"


def _var_like(keep, root):
    def var(a, axes):
        out = np.var(a, axis=axes, keepdims=keep)
        return np.sqrt(out) if root else out

    @overload(var, jit_options=_CACHED)
    def _ov(a, axes):
        if not _is_array(a):
            return lambda a, axes: 0.0 * a
        final = mean_axes_keepdims if keep else mean_axes

        def impl(a, axes):
            centered = a - mean_axes_keepdims(a, axes)
            out = final(centered * centered, axes)
            return np.sqrt(out) if root else out
        return impl
    return var


var_axes, var_axes_keepdims = _var_like(False, False), _var_like(True, False)
std_axes, std_axes_keepdims = _var_like(False, True), _var_like(True, True)
for _f, _n in ((var_axes, "var_axes"), (var_axes_keepdims, "var_axes_keepdims"),
               (std_axes, "std_axes"), (std_axes_keepdims, "std_axes_keepdims")):
    _f.__name__ = _n


# --- more NumPy forms ---------------------------------------------------------------

def reshape(a, shape):
    """``np.reshape``; compiled on a contiguous copy when the array is a view
    Numba cannot reshape in place."""
    return np.reshape(a, shape)


@overload(reshape, jit_options=_CACHED)
def _reshape(a, shape):
    if not _is_array(a):
        return lambda a, shape: np.full(shape, a) if False else np.array([a]).reshape(shape)
    if isinstance(shape, types.Integer):
        return lambda a, shape: np.ascontiguousarray(a).reshape((shape,))
    return lambda a, shape: np.ascontiguousarray(a).reshape(shape)


def clip(a, a_min, a_max):
    return np.clip(a, a_min, a_max)


@overload(clip, jit_options=_CACHED)
def _clip(a, a_min, a_max):
    if _is_array(a):
        return lambda a, a_min, a_max: np.clip(a, a_min, a_max)

    def scalar(a, a_min, a_max):
        v = a
        if a_min is not None and v < a_min:
            v = a_min
        if a_max is not None and v > a_max:
            v = a_max
        return v
    return scalar


def ndim(a):
    return np.ndim(a)


@overload(ndim, jit_options=_CACHED)
def _ndim(a):
    n = a.ndim if _is_array(a) else 0
    return lambda a: n


def size(a):
    return np.size(a)


@intrinsic
def _size(typingctx, a):
    """``a.size``, 1 for a number, lowered in place (Numba's ``np.size`` is
    two compiled functions per type: ``np.asarray`` and the size; the
    rules' ``np.size(a) / np.size(ans)`` of a mean is in every MLP loss)."""
    def codegen(context, builder, sig, args):
        if _is_array(sig.args[0]):
            return make_array(sig.args[0])(context, builder, args[0]).nitems
        return context.get_constant(types.intp, 1)
    if _is_array(a) or isinstance(a, (types.Number, types.Boolean)):
        return types.intp(a), codegen
    return None


@overload(size)
def _size_overload(a):
    return lambda a: _size(a)


def array(object):
    """``np.array(object)``: a copy of an array, or an array of a tuple of
    numbers or of equally shaped arrays."""
    return np.array(object)


@overload(array, jit_options=_CACHED)
def _array(object):
    if _is_array(object):
        return lambda object: object.copy()
    if isinstance(object, types.BaseTuple) and len(object) and \
            all(_is_array(t) for t in object):
        return lambda object: np.stack(object)
    if isinstance(object, (types.Number, types.Boolean)):
        return lambda object: np.full((), object)
    return lambda object: np.array(object)


def add_at(a, indices, b):
    """``np.add.at(a, indices, b)`` (unbuffered: repeated indices add up)."""
    np.add.at(a, indices, b)


@overload(add_at, jit_options=_CACHED)
def _add_at_ufunc(a, indices, b):
    if isinstance(indices, (types.Integer, types.SliceType)):
        def basic(a, indices, b):
            a[checked(a, indices)] += b
        return basic

    def scatter(a, indices, b):
        a += runtime.unindex(a, indices, b)
    return scatter


def minimum_at(a, indices, b):
    """``np.minimum.at(a, indices, b)`` (every value at a repeated index counts)."""
    np.minimum.at(a, indices, b)


def maximum_at(a, indices, b):
    """``np.maximum.at(a, indices, b)``."""
    np.maximum.at(a, indices, b)


def multiply_at(a, indices, b):
    """``np.multiply.at(a, indices, b)``."""
    np.multiply.at(a, indices, b)


@register_jitable
def _combine(op, old, new):
    if op == 2:
        return old * new
    if old != old or new != new:        # NaN propagates, as np.minimum does
        return old + new
    if op == 0:
        return min(old, new)
    return max(old, new)


def _ufunc_at_overload(op):
    """The compiled ``np.<ufunc>.at``: a basic index (which cannot repeat) in
    one vectorised step, a 1-d integer array or a boolean mask on axis 0 one
    selected row at a time, in order, so repeated rows combine."""
    def impl_for(a, indices, b):
        if not _is_array(a):
            raise TypingError("np.<ufunc>.at needs an array to update")
        if isinstance(indices, (types.Integer, types.SliceType)):
            if op == 0:
                def basic(a, indices, b):
                    checked(a, indices)
                    a[indices] = np.minimum(a[indices], b)
            elif op == 1:
                def basic(a, indices, b):
                    checked(a, indices)
                    a[indices] = np.maximum(a[indices], b)
            else:
                def basic(a, indices, b):
                    checked(a, indices)
                    a[indices] = a[indices] * b
            return basic
        if not (_is_array(indices) and (indices.ndim == 1 or
                                        isinstance(indices.dtype, types.Boolean))):
            raise TypingError("np.minimum.at / np.maximum.at / np.multiply.at: only "
                              "integers, slices, 1-d integer arrays and boolean masks are "
                              "compiled")
        mask = isinstance(indices.dtype, types.Boolean)
        lead = indices.ndim if mask else 1      # axes the index selects over

        def scatter(a, indices, b):
            checked(a, indices)
            af = a.reshape(-1)
            flat_index = np.ascontiguousarray(indices).reshape(-1)
            row = af.size // max(a.shape[0] if not mask else flat_index.size, 1)
            m = flat_index.size if not mask else np.sum(flat_index)
            bf = _flat_rows(b, m, a.shape[lead:])   # b broadcast to the selected rows
            n = bf.size
            j = 0
            for i in range(flat_index.size):
                if mask:
                    if not flat_index[i]:
                        continue
                    k = i
                else:
                    k = flat_index[i]
                    if k < 0:
                        k += a.shape[0]
                for r in range(row):
                    af[k * row + r] = _combine(op, af[k * row + r], bf[(j * row + r) % n])
                j += 1
        return scatter
    return impl_for


for _helper, _op in ((minimum_at, 0), (maximum_at, 1), (multiply_at, 2)):
    overload(_helper, jit_options=_CACHED)(_ufunc_at_overload(_op))


def _as_slice_index(index, n):
    """An integer index as the one-row slice it selects (``[i]`` -> ``[i:i+1]``)."""
    return None


@overload(_as_slice_index, jit_options=_CACHED)
def _as_slice_index_impl(index, n):
    def impl(index, n):
        check_integer(index, n)
        i = index + n if index < 0 else index
        return slice(i, i + 1)
    return impl


def _index_overload(fn, selected):
    """Helpers of ``x.at[index].<op>(v)`` for the index kinds the compiled
    ``np.<ufunc>.at`` takes; an integer index runs as its one-row slice
    (``selected``: the result is shaped like ``x[index]``, so its one row
    is taken; otherwise it is shaped like ``x``)."""
    def make(x, index, *rest):
        if not _is_array(x):
            raise TypingError(f"{fn.__name__}: x must be an array")
        if isinstance(index, types.Integer) and selected:
            def one(x, index, *rest):
                return fn(x, _as_slice_index(index, x.shape[0]), *rest)[0]
            return one
        if isinstance(index, types.Integer):
            def whole_x(x, index, *rest):
                return fn(x, _as_slice_index(index, x.shape[0]), *rest)
            return whole_x
        if not (isinstance(index, types.SliceType) or _is_array(index) and (
                index.ndim == 1 or isinstance(index.dtype, types.Boolean))):
            raise TypingError(f"{fn.__name__}: only integers, slices, 1-d integer arrays and "
                              "boolean masks are compiled")

        def general(x, index, *rest):
            return fn(x, index, *rest)
        return general
    return make


@register_jitable
def _extremum_winners(x, index, v, ans):
    won_x = (x == ans) * 1.0
    chosen = ans[index]
    won_v = (v == chosen) * 1.0
    count = won_x + runtime.unindex(ans, index, won_v)
    count = np.where(count == 0, 1.0, count)
    return won_x, won_v, count


@register_jitable
def _share_x(x, index, v, ans):
    won_x, won_v, count = _extremum_winners(x, index, v, ans)
    return won_x / count


@register_jitable
def _share_v(x, index, v, ans):
    won_x, won_v, count = _extremum_winners(x, index, v, ans)
    return won_v / count[index]


@register_jitable
def _others_at(x, index, v):
    chosen = x[index] * 1.0
    vb = chosen * 0.0 + v
    zero = vb == 0
    n_zero = runtime.unindex(x, index, zero * 1.0)
    safe = np.where(zero, 1.0, vb)
    nonzero_product = np.ones(x.shape)
    multiply_at(nonzero_product, index, safe)
    base = (x * nonzero_product)[index]
    n_zero_k = n_zero[index]
    return np.where(zero, np.where(n_zero_k == 1, base, 0.0),
                    np.where(n_zero_k == 0, base / safe, 0.0))


overload(runtime.extremum_share_x, jit_options=_CACHED)(_index_overload(_share_x, False))
overload(runtime.extremum_share_v, jit_options=_CACHED)(_index_overload(_share_v, True))
overload(runtime.product_others_at, jit_options=_CACHED)(_index_overload(_others_at, True))


def _updated_copy_overload(update):
    """``min_index``/``max_index``/``mul_index``: a copy of ``x`` in the
    common dtype, then the compiled ``np.<ufunc>.at``."""
    def make(x, index, value):
        if not _is_array(x):
            raise TypingError("x.at[index] updates need an array")
        value_dtype = as_dtype(value.dtype if _is_array(value) else value)
        dtype = from_dtype(np.result_type(as_dtype(x.dtype), value_dtype))

        def impl(x, index, value):
            out = np.empty(x.shape, dtype)
            out[...] = x
            update(out, index, value)
            return out
        return impl
    return make


for _helper, _at in ((runtime.min_index, minimum_at), (runtime.max_index, maximum_at),
                     (runtime.mul_index, multiply_at)):
    overload(_helper, jit_options=_CACHED)(_updated_copy_overload(_at))


def whole(x):
    """``x[...]``: the whole array (a view), spelled for Numba."""
    return x[...]


@overload(whole, jit_options=_CACHED)
def _whole(x):
    if _is_array(x) and x.ndim == 0:
        return lambda x: x.reshape(1).reshape(())
    if _is_array(x):
        return lambda x: x[:]
    return lambda x: x


@overload(runtime.cotangent_item, jit_options=_CACHED)
def _cotangent_item(g, key, like):
    return lambda g, key, like: g[key]


@overload(runtime.dot_adjoint_lhs, jit_options=_CACHED)
def _dot_adjoint_lhs(g, a, b):
    if not _is_array(a) or not _is_array(b) or a.ndim == 0 or b.ndim == 0:
        return lambda g, a, b: runtime.unbroadcast(g * b, a)
    return lambda g, a, b: runtime.matmul_adjoint_lhs(g, a, b)


@overload(runtime.dot_adjoint_rhs, jit_options=_CACHED)
def _dot_adjoint_rhs(g, a, b):
    if not _is_array(a) or not _is_array(b) or a.ndim == 0 or b.ndim == 0:
        return lambda g, a, b: runtime.unbroadcast(g * a, b)
    return lambda g, a, b: runtime.matmul_adjoint_rhs(g, a, b)


@overload(runtime.inner_adjoint_lhs, jit_options=_CACHED)
def _inner_adjoint_lhs(g, a, b):
    if not _is_array(a) or not _is_array(b) or a.ndim == 0 or b.ndim == 0:
        return lambda g, a, b: runtime.unbroadcast(g * b, a)
    if a.ndim == 1 and b.ndim == 1:
        return lambda g, a, b: g * b
    if b.ndim == 1:
        return lambda g, a, b: np.outer(g, b)
    return lambda g, a, b: runtime.matmul_adjoint_lhs(g, a, b.T)


@overload(runtime.inner_adjoint_rhs, jit_options=_CACHED)
def _inner_adjoint_rhs(g, a, b):
    if not _is_array(a) or not _is_array(b) or a.ndim == 0 or b.ndim == 0:
        return lambda g, a, b: runtime.unbroadcast(g * a, b)
    if a.ndim == 1 and b.ndim == 1:
        return lambda g, a, b: g * a
    if a.ndim == 1:
        return lambda g, a, b: np.outer(g, a)
    return lambda g, a, b: runtime.matmul_adjoint_rhs(g, a, b.T).T


@overload(runtime.prod_others, jit_options=_CACHED)
def _prod_others(a, axis=None):
    if not _is_array(a) or not (_is_none(axis) or a.ndim == 1):
        raise TypingError("prod_others over an axis is not compiled yet")

    def impl(a, axis=None):
        flat = np.ascontiguousarray(a).reshape(-1)
        n = flat.size
        out = empty(n, flat.dtype)
        before = 1.0
        for i in range(n):
            out[i] = before
            before *= flat[i]
        after = 1.0
        for i in range(n - 1, -1, -1):
            out[i] *= after
            after *= flat[i]
        return out.reshape(a.shape)
    return impl


@overload(runtime.unstack, jit_options=_CACHED)
def _unstack(g, axis=0):
    if isinstance(axis, int) or _is_none(axis) or (
            isinstance(axis, types.IntegerLiteral) and axis.literal_value == 0):
        return lambda g, axis=0: [np.ascontiguousarray(g[i]) for i in range(g.shape[0])]

    if not isinstance(axis, types.Integer):
        raise TypingError("unstack: axis must be an int")

    def impl(g, axis=0):
        moved = np.moveaxis(g, axis, 0)
        return [np.ascontiguousarray(moved[i]) for i in range(moved.shape[0])]
    return impl


_BLOCK_CACHE = {}


def _block(ndim):
    """``g`` sliced ``start:stop`` along a run-time ``axis`` (one branch per axis)."""
    if ndim not in _BLOCK_CACHE:
        lines = ["def block(g, axis, start, stop):"]
        for d in range(ndim):
            index = ", ".join([":"] * d + ["start:stop"])
            lines.append(f"    if axis == {d}:")
            lines.append(f"        return np.ascontiguousarray(g[{index}])")
        lines.append("    return np.ascontiguousarray(g[start:stop])")
        _BLOCK_CACHE[ndim] = register_jitable(_kernel("\n".join(lines), "block"))
    return _BLOCK_CACHE[ndim]


@overload(runtime.unconcatenate, jit_options=_CACHED)
def _unconcatenate(g, arrays, axis=0):
    if not _is_array(g) or _is_none(axis) or not isinstance(
            arrays, (types.List, types.UniTuple)) or not _is_array(arrays.dtype):
        raise TypingError("unconcatenate: compiled for a list of arrays of one rank and an "
                          "integer axis")
    block = _block(g.ndim)
    ndim = g.ndim

    def impl(g, arrays, axis=0):
        ax = axis % ndim
        # extents from sizes, pieces shaped like their arrays: vstack/hstack
        # first promote 1-d arrays to 2-d (see runtime.unconcatenate)
        across = g.size // g.shape[ax] if g.shape[ax] else 1
        out = []
        start = 0
        for x in arrays:
            stop = start + x.size // max(across, 1)
            out.append(block(g, ax, start, stop).reshape(x.shape))
            start = stop
        return out
    return impl


def inner(a, b):
    return np.inner(a, b)


@overload(inner, jit_options=_CACHED)
def _inner(a, b):
    if not _is_array(a) or not _is_array(b) or a.ndim == 0 or b.ndim == 0:
        return lambda a, b: a * b
    if a.ndim <= 2 and b.ndim <= 2:
        return lambda a, b: np.dot(a, b.T)
    raise TypingError("np.inner of arrays with more than 2 dimensions is not compiled yet")


def mask_select(x, mask):
    """``x[mask]`` for a boolean ``mask`` of any rank (Numba's own takes 1-d)."""
    return x[mask]


@overload(mask_select, jit_options=_CACHED)
def _mask_select(x, mask):
    if _is_array(mask) and mask.ndim == 1:
        return lambda x, mask: x[mask]

    def impl(x, mask):
        flat_mask = np.ascontiguousarray(mask).reshape(-1)
        row = x.size // max(flat_mask.size, 1)
        flat_x = np.ascontiguousarray(x).reshape(-1)
        out = empty(np.count_nonzero(flat_mask) * row, x.dtype)
        j = 0
        for i in range(flat_mask.size):
            if flat_mask[i]:
                for r in range(row):
                    out[j] = flat_x[i * row + r]
                    j += 1
        if row == 1:
            return out.reshape((out.size,) + x.shape[mask.ndim:mask.ndim])
        return out.reshape((out.size // row,) + x.shape[mask.ndim:])
    return impl


def mask_assign(x, mask, v):
    """``x[mask] = v`` in place, for a boolean ``mask`` of any rank."""
    x[mask] = v


@overload(mask_assign, jit_options=_CACHED)
def _mask_assign(x, mask, v):
    v_array = _is_array(v)

    def impl(x, mask, v):
        flat_mask = np.ascontiguousarray(mask).reshape(-1)
        row = x.size // max(flat_mask.size, 1)
        flat_x = x.reshape(-1)
        if v_array:
            flat_v = np.ascontiguousarray(v).reshape(-1)
        else:
            flat_v = np.full(1, v)
        n = flat_v.size
        j = 0
        for i in range(flat_mask.size):
            if flat_mask[i]:
                for r in range(row):
                    flat_x[i * row + r] = flat_v[j % n]
                    j += 1
    return impl


# --- vmap's lane helpers (arrays and numbers; pytrees are flattened by jit) ---

class WeakLanes(types.Array):
    """Numba's type of ``broadcast_lanes`` of a Python number (eagerly
    ``lanes.WeakLanes``): lanes each holding a Python number, weak in NumPy's
    sense.  A loop carry that starts as one (``acc = 0.0`` before ``acc =
    acc + np.sum(x)``) is typed first as these lanes, then as the array the
    loop makes of them: the two unify to the latter, its dtype included (a
    float32 sum keeps the carry float32, as NumPy does), and the first lanes
    are cast to it where they meet (``weak_scalar`` of the lanes, and the
    loop's entry)."""

    def __init__(self, dtype, ndim, layout):
        super().__init__(dtype, ndim, layout, name=f"weak_lanes({dtype}, {ndim}d, {layout})")

    def unify(self, typingctx, other):
        if not isinstance(other, types.Array) or other.ndim != self.ndim:
            return None
        if isinstance(other, WeakLanes):
            dtype = typingctx.unify_pairs(self.dtype, other.dtype)
            if dtype is None:
                return None
            return WeakLanes(dtype, self.ndim, self.layout if self.layout == other.layout
                             else "A")
        if other.layout == self.layout:
            return types.Array(other.dtype, other.ndim, other.layout)
        return types.Array(other.dtype, other.ndim, "A")


register_default(WeakLanes)(ArrayModel)


@intrinsic
def _as_weak_lanes(typingctx, arr):
    """``arr`` (a fresh array) typed as ``WeakLanes``: the same data."""
    def codegen(context, builder, signature, args):
        return impl_ret_borrowed(context, builder, signature.return_type, args[0])
    return WeakLanes(arr.dtype, arr.ndim, arr.layout)(arr), codegen


@lower_cast(WeakLanes, types.Array)
def _weak_lanes_to_array(context, builder, fromty, toty, val):
    plain = types.Array(fromty.dtype, fromty.ndim, fromty.layout)
    if fromty.dtype == toty.dtype:
        return context.cast(builder, val, plain, toty) if plain != toty else val
    dtype = as_dtype(toty.dtype)

    def convert(a):
        return a.astype(dtype)
    out_type = types.Array(toty.dtype, fromty.ndim, "C")
    res = context.compile_internal(builder, convert, out_type(plain), [val])
    return context.cast(builder, res, out_type, toty) if out_type != toty else res


@overload(runtime.broadcast_lanes)
def _broadcast_lanes(x, batch_size):
    if not _is_array(x):
        return lambda x, batch_size: np.full(batch_size, x)
    fill = _broadcast_fill(x.ndim, x.ndim + 1)
    return lambda x, batch_size: fill(x, (batch_size,) + x.shape, x.dtype)


@overload(runtime.select_lanes)
def _select_lanes(pred, on_true, on_false):
    """Lane ``k`` of ``on_true`` where ``pred[k]``, else of ``on_false``: one
    loop over the lanes and the elements of each (no slice assignment)."""
    if not _is_array(pred):
        return None
    if not _is_array(on_true) and not _is_array(on_false):
        return lambda pred, on_true, on_false: np.where(pred, on_true, on_false)

    if not _is_array(on_true) or not _is_array(on_false):
        return None        # vmap gives both sides the batch axis first (lanes_of)

    def impl(pred, on_true, on_false):
        a = np.ascontiguousarray(on_true)
        b = np.ascontiguousarray(on_false)
        out = empty(a.shape, a.dtype)
        n = pred.shape[0]
        per = a.size // n if n else 0
        flat = out.reshape(a.size)
        fa = a.reshape(a.size)
        fb = b.reshape(b.size)
        for k in range(n):
            take = pred[k]
            for j in range(per):
                i = k * per + j
                flat[i] = fa[i] if take else fb[i]
        return out
    return impl


def tile(A, reps):
    """``np.tile(A, reps)``; compiled by Numba too (see ``shape_ops``)."""
    return np.tile(A, reps)


def diagonal(a, offset=0, axis1=0, axis2=1):
    """``np.diagonal`` (a copy when compiled; see ``shape_ops``)."""
    return np.diagonal(a, offset, axis1, axis2)


def repeat(a, repeats, axis):
    """``np.repeat(a, repeats, axis)`` with an axis (see ``shape_ops``)."""
    return np.repeat(a, repeats, axis)


# Registered on import: Numba implementations kept in modules of their own.
from .contractions import einsum, tensordot  # noqa: E402,F401
from . import shape_ops  # noqa: E402,F401


def stack_items(items, n, reverse):
    """``np.stack(items[:n])`` (``reverse``: last item first) for a list of
    equally shaped arrays or of numbers: a scan's stacked outputs."""
    items = list(items[:n])
    if reverse:
        items = items[::-1]
    return np.stack([np.asarray(i) for i in items])


@overload(stack_items, jit_options=_CACHED)
def _stack_items(items, n, reverse):
    item = items.dtype
    if _is_array(item):
        def impl(items, n, reverse):
            first = items[0]
            out = np.empty((n,) + first.shape, first.dtype)
            for k in range(n):
                out[n - 1 - k if reverse else k] = items[k]
            return out
        return impl

    from numba.np.numpy_support import as_dtype
    dtype = as_dtype(item)

    def impl_numbers(items, n, reverse):
        out = np.empty(n, dtype)
        for k in range(n):
            out[n - 1 - k if reverse else k] = items[k]
        return out
    return impl_numbers


# --- assert / raise / f-strings ------------------------------------------------
#
# A failing check raises the user's exception with the user's message: the
# message is formatted by Python (an ``objmode`` block, entered only when the
# check fails), so compiled code reports exactly what eager code reports.

def _raise_formatted(error, template, parts):
    runtime.check(False, error, template, *parts)


def _message_literal(template):
    if isinstance(template, (types.NoneType, types.Omitted)) or template is None:
        return True, None
    if isinstance(template, types.StringLiteral):
        return True, template.literal_value
    return False, None


def _truth_of(ok):
    """Python's ``bool(ok)`` for Numba: an array must hold one element."""
    if _is_array(ok):
        def array_truth(ok):
            if ok.size != 1:
                raise ValueError("The truth value of an array with more than one element "
                                 "is ambiguous. Use a.any() or a.all()")
            return bool(ok.ravel()[0])
        return array_truth
    return lambda ok: bool(ok)


@overload(runtime.check, prefer_literal=True)
def _check(ok, error, template, *parts):
    cls = getattr(error, "exc_class", None)
    known, text = _message_literal(template)
    if cls is None or not known:
        return None
    truth = register_jitable(_truth_of(ok))

    def impl(ok, error, template, *parts):
        if not truth(ok):
            with numba.objmode():
                _raise_formatted(cls, text, parts)
    return impl


@overload(runtime.check_lanes, prefer_literal=True)
def _check_lanes(ok, error, template, batched, *parts):
    cls = getattr(error, "exc_class", None)
    known, text = _message_literal(template)
    if cls is None or not known:
        return None

    def impl(ok, error, template, batched, *parts):
        for k in range(ok.shape[0]):
            if not ok[k]:
                with numba.objmode():
                    runtime.check_lanes(ok, cls, text, batched, *parts)
    return impl


@overload(runtime.formatted, prefer_literal=True)
def _formatted(template, *parts):
    if not isinstance(template, types.StringLiteral):
        return None
    text = template.literal_value

    def impl(template, *parts):
        with numba.objmode(out="unicode_type"):
            out = text.format(*parts)
        return out
    return impl
