"""Loop nests generated as source, per rank, and compiled on first use.

The number of axes is part of a Numba type (tuples have a length), so one
small loop nest per combination of ranks is the general mechanism, not a
special case.  Here: compiling generated source, the line builders of the
loop nests the helpers share (filling an array from a broadcastable one,
summing an array down to a shape), and the small generated kernels of axes
(a reduction's keepdims shape, an axis argument as a tuple)."""
import numpy as np
from numba import types
from numba.extending import register_jitable

from .allocation import empty
from .common import is_none


def function_from_source(source, name, env=None):
    """Compile-time generated source -> a Python function Numba inlines."""
    namespace = {"np": np, "register_jitable": register_jitable, "empty": empty,
                 "__name__": __name__}
    namespace.update(env or {})
    exec(compile(source, f"<tangent_x numba kernel {name}>", "exec"), namespace)
    return namespace[name]


def tuple_text(prefix, n):
    """The text of the tuple ``(prefix0, prefix1, ...)`` of ``n`` items."""
    return "(" + "".join(f"{prefix}{i}, " for i in range(n)) + ")"


def loop_nest(ndim, shape, body):
    """Lines of ``ndim`` nested loops over ``shape`` (an expression of a
    tuple) with indices ``i0, i1, ...`` and ``body`` innermost.  Explicit
    loops rather than ``np.ndindex``: measured, they compile faster and run
    ~6x faster (the innermost loop is a plain counted loop LLVM vectorises)."""
    lines = []
    for d in range(ndim):
        lines.append("    " * (d + 1) + f"for i{d} in range({shape}[{d}]):")
    lines.append("    " * (ndim + 1) + body)
    return lines


def index_text(parts):
    """The text of the index tuple of the expressions ``parts``."""
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

def fill_lines(gn, xn, g="g", shape="shape", dtype="g.dtype", out="out"):
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
    return lines + [line[4:] for line in loop_nest(xn, shape, f"{out}[{oidx}] = {src}")]


def sum_to_lines(gn, xn, g="g", shape="shape", out="out"):
    """Lines making ``out``: ``g`` (gn dims) summed down to shape ``shape``
    (xn <= gn dims).  Zeroed by a loop of its own: ``np.zeros`` would be
    one more compiled function."""
    lead = gn - xn
    lines = [f"{out} = empty({shape}, {g}.dtype)"]
    if xn == 0:
        lines.append(f"{out}[()] = 0")
    else:
        zidx = ", ".join(f"i{d}" for d in range(xn))
        lines += [line[4:] for line in loop_nest(xn, shape, f"{out}[{zidx}] = 0")]
    oidx = index_text([f"0 if {shape}[{d}] == 1 else i{d + lead}" for d in range(xn)])
    if gn == 0:
        return lines + [f"{out}[()] += {g}[()]"]
    gidx = ", ".join(f"i{d}" for d in range(gn))
    return lines + [line[4:] for line in
                    loop_nest(gn, f"{g}.shape", f"{out}[{oidx}] += {g}[{gidx}]")]


_FLAT_CACHE = {}


def flat_function(name, params, body, env=None):
    """The function ``def name(params): body`` (body: lines at indent 0),
    compiled from source once per text and ``env`` (the globals it reads:
    the same text with another ``dtype`` is another function)."""
    text = f"def {name}({params}):\n" + "\n".join("    " + line for line in body)
    key = (text, tuple(sorted((env or {}).items(), key=lambda item: item[0])))
    if key not in _FLAT_CACHE:
        _FLAT_CACHE[key] = function_from_source(text, name, env)
    return _FLAT_CACHE[key]


def broadcast_fill(gn, xn):
    """A jitable ``fill(g, shape, dtype)``: an array of shape ``shape`` (xn
    dims) with ``g`` (gn <= xn dims, NumPy-broadcastable) copied in."""
    key = ("fill", gn, xn)
    if key not in _FLAT_CACHE:
        _FLAT_CACHE[key] = register_jitable(flat_function(
            "fill", "g, shape, dtype", fill_lines(gn, xn, dtype="dtype") + ["return out"]))
    return _FLAT_CACHE[key]


_KEEP_CACHE = {}


def keep_shape(xn):
    """The keepdims shape of reducing ``shape`` (xn dims) over ``axes``."""
    if xn not in _KEEP_CACHE:
        lines = ["def keep(shape, axes):", f"    red = np.zeros({max(xn, 1)}, np.bool_)",
                 "    for a in axes:", f"        red[a % {max(xn, 1)}] = True"]
        parts = [f"1 if red[{d}] else shape[{d}]" for d in range(xn)]
        lines.append("    return (" + ", ".join(parts) + ("," if xn == 1 else "") + ")")
        _KEEP_CACHE[xn] = register_jitable(function_from_source("\n".join(lines), "keep"))
    return _KEEP_CACHE[xn]


def axes_tuple(axis, ndim):
    """A jitable ``axis -> tuple of int64`` for a Numba type (a tuple of
    literals may be heterogeneous; the loops want a homogeneous one)."""
    if is_none(axis):
        src = "def to_tuple(axis):\n    return " + tuple_text("", 0) if ndim == 0 else \
            "def to_tuple(axis):\n    return (" + "".join(
                f"np.int64({d}), " for d in range(ndim)) + ")"
    elif isinstance(axis, types.Integer):
        src = "def to_tuple(axis):\n    return (np.int64(axis),)"
    else:
        src = "def to_tuple(axis):\n    return (" + "".join(
            f"np.int64(axis[{i}]), " for i in range(len(axis))) + ")"
    return function_from_source(src, "to_tuple")


def jitable_from_source(source, name, env=None):
    """``function_from_source``, registered as jitable."""
    return register_jitable(function_from_source(source, name, env))
