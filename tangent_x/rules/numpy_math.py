"""Rules for elementwise NumPy math (each line is the textbook derivative),
copies, casts and constructors.  Under vmap an elementwise op batches by
broadcasting (``batching_util.elementwise``)."""
import gast
import numpy as np

from ..core import ir, primitives as P
from ..runtime import erf, erfc, stop_gradient, unbroadcast  # noqa: F401
from .registry import adjoint, batching, tangent
from .batching_util import all_lanes, bound_args, call, container_truth, respell
from .forward_util import linear


@adjoint(np.abs)
def _(g, ans, x):
    x_bar = g * np.sign(x)


@adjoint(np.sqrt)
def _(g, ans, x):
    x_bar = g / (2.0 * ans)


@adjoint(np.cbrt)
def _(g, ans, x):
    x_bar = g / (3.0 * ans * ans)


@adjoint(np.square)
def _(g, ans, x):
    x_bar = g * 2.0 * x


@adjoint(np.reciprocal)
def _(g, ans, x):
    x_bar = -g * ans * ans


@adjoint(np.exp)
def _(g, ans, x):
    x_bar = g * ans


@adjoint(np.exp2)
def _(g, ans, x):
    x_bar = g * ans * np.log(2.0)


@adjoint(np.expm1)
def _(g, ans, x):
    x_bar = g * (ans + 1.0)


@adjoint(np.log)
def _(g, ans, x):
    x_bar = g / x


@adjoint(np.log2)
def _(g, ans, x):
    x_bar = g / (x * np.log(2.0))


@adjoint(np.log10)
def _(g, ans, x):
    x_bar = g / (x * np.log(10.0))


@adjoint(np.log1p)
def _(g, ans, x):
    x_bar = g / (1.0 + x)


@adjoint(np.sin)
def _(g, ans, x):
    x_bar = g * np.cos(x)


@adjoint(np.cos)
def _(g, ans, x):
    x_bar = -g * np.sin(x)


@adjoint(np.tan)
def _(g, ans, x):
    x_bar = g * (1.0 + ans * ans)


@adjoint(np.arcsin)
def _(g, ans, x):
    x_bar = g / np.sqrt(1.0 - x * x)


@adjoint(np.arccos)
def _(g, ans, x):
    x_bar = -g / np.sqrt(1.0 - x * x)


@adjoint(np.arctan)
def _(g, ans, x):
    x_bar = g / (1.0 + x * x)


@adjoint(np.sinh)
def _(g, ans, x):
    x_bar = g * np.cosh(x)


@adjoint(np.cosh)
def _(g, ans, x):
    x_bar = g * np.sinh(x)


@adjoint(np.tanh)
def _(g, ans, x):
    x_bar = g * (1.0 - ans * ans)


@adjoint(np.arcsinh)
def _(g, ans, x):
    x_bar = g / np.sqrt(x * x + 1.0)


@adjoint(np.arccosh)
def _(g, ans, x):
    x_bar = g / np.sqrt(x * x - 1.0)


@adjoint(np.arctanh)
def _(g, ans, x):
    x_bar = g / (1.0 - x * x)


# d/dx erf(x) = 2/sqrt(pi) exp(-x^2); erfc = 1 - erf
@adjoint(erf)
def _(g, ans, x):
    x_bar = g * 1.1283791670955126 * np.exp(-(x * x))


@adjoint(erfc)
def _(g, ans, x):
    x_bar = -g * 1.1283791670955126 * np.exp(-(x * x))


@adjoint(np.arctan2)
def _(g, ans, y, x):
    y_bar = g * x / (x * x + y * y)
    x_bar = -g * y / (x * x + y * y)


@adjoint(np.hypot)
def _(g, ans, x, y):
    x_bar = g * x / ans
    y_bar = g * y / ans


@adjoint(np.maximum, np.fmax)
def _(g, ans, x, y):
    # masks as booleans, so g keeps its dtype (a float32 g stays float32)
    x_bar = g * (x > y) + 0.5 * g * (x == y)
    y_bar = g * (y > x) + 0.5 * g * (x == y)


@adjoint(np.minimum, np.fmin)
def _(g, ans, x, y):
    x_bar = g * (x < y) + 0.5 * g * (x == y)
    y_bar = g * (y < x) + 0.5 * g * (x == y)


@adjoint(np.logaddexp)
def _(g, ans, x, y):
    x_bar = g * np.exp(x - ans)
    y_bar = g * np.exp(y - ans)


@adjoint(np.where)
def _(g, ans, condition, x, y):
    x_bar = np.where(condition, g, 0.0)
    y_bar = np.where(condition, 0.0, g)


@adjoint(np.clip)
def _(g, ans, a, a_min=None, a_max=None, out=None, min=None, max=None):
    """Where ``a`` was inside the bounds it passes through (``ans == a``), so
    a missing (None) bound needs no special case; a bound receives the
    cotangent where it was the one taken.  ``min``/``max`` are NumPy 2's
    keyword spellings of the bounds."""
    a_bar = g * (ans == a)
    a_min_bar = g * (a < a_min)
    a_max_bar = g * (a > a_max)
    min_bar = g * (a < min)
    max_bar = g * (a > max)


@adjoint(np.real, np.conj)
def _(g, ans, x):
    x_bar = g


@adjoint(np.copy, np.asarray, np.array)
def _(g, ans, a, dtype=None):
    a_bar = g


@adjoint("float")
def _(g, ans, x):
    x_bar = g


@adjoint(np.full_like)
def _(g, ans, a, fill_value, dtype=None):
    fill_value_bar = unbroadcast(g, fill_value)


@adjoint(np.full)
def _(g, ans, shape, fill_value, dtype=None):
    fill_value_bar = unbroadcast(g, fill_value)


# --- forward mode ------------------------------------------------------------
# ``ans_dot`` is a sum of terms, each linear in one argument's tangent, so the
# terms of arguments without a tangent drop out.  Ops that are linear in their
# array argument (real, conj, copy, asarray, array, float, full, full_like)
# apply themselves to the tangent: see ``forward_util.linear``.


@tangent(np.abs)
def _(ans, x):
    ans_dot = x_dot * np.sign(x)


@tangent(np.sqrt)
def _(ans, x):
    ans_dot = x_dot / (2.0 * ans)


@tangent(np.cbrt)
def _(ans, x):
    ans_dot = x_dot / (3.0 * ans * ans)


@tangent(np.square)
def _(ans, x):
    ans_dot = 2.0 * x * x_dot


@tangent(np.reciprocal)
def _(ans, x):
    ans_dot = -x_dot * ans * ans


@tangent(np.exp)
def _(ans, x):
    ans_dot = x_dot * ans


@tangent(np.exp2)
def _(ans, x):
    ans_dot = x_dot * ans * np.log(2.0)


@tangent(np.expm1)
def _(ans, x):
    ans_dot = x_dot * (ans + 1.0)


@tangent(np.log)
def _(ans, x):
    ans_dot = x_dot / x


@tangent(np.log2)
def _(ans, x):
    ans_dot = x_dot / (x * np.log(2.0))


@tangent(np.log10)
def _(ans, x):
    ans_dot = x_dot / (x * np.log(10.0))


@tangent(np.log1p)
def _(ans, x):
    ans_dot = x_dot / (1.0 + x)


@tangent(np.sin)
def _(ans, x):
    ans_dot = x_dot * np.cos(x)


@tangent(np.cos)
def _(ans, x):
    ans_dot = -x_dot * np.sin(x)


@tangent(np.tan)
def _(ans, x):
    ans_dot = x_dot * (1.0 + ans * ans)


@tangent(np.arcsin)
def _(ans, x):
    ans_dot = x_dot / np.sqrt(1.0 - x * x)


@tangent(np.arccos)
def _(ans, x):
    ans_dot = -x_dot / np.sqrt(1.0 - x * x)


@tangent(np.arctan)
def _(ans, x):
    ans_dot = x_dot / (1.0 + x * x)


@tangent(np.sinh)
def _(ans, x):
    ans_dot = x_dot * np.cosh(x)


@tangent(np.cosh)
def _(ans, x):
    ans_dot = x_dot * np.sinh(x)


@tangent(np.tanh)
def _(ans, x):
    ans_dot = x_dot * (1.0 - ans * ans)


@tangent(np.arcsinh)
def _(ans, x):
    ans_dot = x_dot / np.sqrt(x * x + 1.0)


@tangent(np.arccosh)
def _(ans, x):
    ans_dot = x_dot / np.sqrt(x * x - 1.0)


@tangent(np.arctanh)
def _(ans, x):
    ans_dot = x_dot / (1.0 - x * x)


@tangent(erf)
def _(ans, x):
    ans_dot = x_dot * 1.1283791670955126 * np.exp(-(x * x))


@tangent(erfc)
def _(ans, x):
    ans_dot = -x_dot * 1.1283791670955126 * np.exp(-(x * x))


@tangent(np.arctan2)
def _(ans, y, x):
    radius2 = x * x + y * y
    ans_dot = y_dot * x / radius2 - x_dot * y / radius2


@tangent(np.hypot)
def _(ans, x, y):
    ans_dot = x_dot * x / ans + y_dot * y / ans


@tangent(np.maximum, np.fmax)
def _(ans, x, y):
    """Ties split the tangents equally (as the reverse rule and JAX do)."""
    ans_dot = x_dot * (x > y) + y_dot * (y > x) + 0.5 * (x_dot + y_dot) * (x == y)


@tangent(np.minimum, np.fmin)
def _(ans, x, y):
    ans_dot = x_dot * (x < y) + y_dot * (y < x) + 0.5 * (x_dot + y_dot) * (x == y)


@tangent(np.logaddexp)
def _(ans, x, y):
    ans_dot = x_dot * np.exp(x - ans) + y_dot * np.exp(y - ans)


@tangent(np.where)
def _(ans, condition, x, y):
    ans_dot = np.where(condition, x_dot, 0.0) + np.where(condition, 0.0, y_dot)


@tangent(np.clip)
def _(ans, a, a_min=None, a_max=None, out=None, min=None, max=None):
    """The tangent of whichever of ``a`` and the bounds was taken (a missing
    bound has no tangent, so its term drops out)."""
    ans_dot = a_dot * (ans == a) + a_min_dot * (a < a_min) + a_max_dot * (a > a_max) \
        + min_dot * (a < min) + max_dot * (a > max)


linear(np.real, args=((0, "val"),))
linear(np.conj, "float", args=((0, "x"),))
linear(np.copy, np.asarray)
linear(np.array, args=((0, "object"),))
linear(np.full, np.full_like, args=((1, "fill_value"),))


# --- batching ----------------------------------------------------------------

# Elementwise ops batch by broadcasting (``batching_util.elementwise``, given
# to every primitive marked elementwise); copies, casts and constructors
# act on the whole batch alike.

@batching("zeros_like", "ones_like", "empty_like", "copy", "float32", "float64",
          "int32", "int64")
def batch_same(eqn, b):
    """Ops that act on each element (or the whole value) alike.  ``zeros_like``
    of a container (a list cotangent's zeros) is zeros of each leaf: of the
    lanes of a batched leaf, with its flag -- not one zero list per example
    stacked, whose flag the probe's last list (of another length in a
    loop) would decide (fuzz seed 451579)."""
    if b.shape(eqn.args[0]) is not None and b.shape(eqn.args[0]).kind != "array":
        if eqn.prim.name != "zeros_like" or b.flag(eqn.args[0]) is None:
            return None
    for o in eqn.outs:
        b.mark(o, b.flag(eqn.args[0]))
    return respell(eqn)



@batching("full_like")
def batch_full_like(eqn, b):
    bound = bound_args(eqn)
    if bound is None:
        return None
    if b.batched(bound.get("fill_value", ir.const(0))):
        return None
    b.mark(eqn.out)
    return respell(eqn)


@batching("asarray", "array")
def batch_asarray(eqn, b):
    x = eqn.args[0]
    shape = b.shape(x)
    if shape is not None and shape.kind == "array":
        b.mark(eqn.out)
        return respell(eqn)
    if shape is not None and shape.kind in ("list", "tuple") and \
            all(s.kind == "array" and s.ndim == shape.items[0].ndim for s in shape.items) \
            and len(eqn.args) == 1 and not eqn.kwargs:
        items = all_lanes(b, x)
        b.mark(eqn.out)
        return [ir.spell(ir.Eqn(eqn.outs, P.get("stack"), [items],
                                {"axis": ir.const(1)}))[0]]
    return None



@batching("float", "builtins.int", "builtins.bool")
def batch_scalar_cast(eqn, b):
    dtype = {"builtins.int": "int", "builtins.bool": "bool"}.get(eqn.prim.name, "float")
    if eqn.prim.name == "builtins.bool" and container_truth(b, eqn.args[0]):
        b.mark(eqn.out, False)          # a container's length, every example's
        return respell(eqn)
    b.mark(eqn.out)
    # each lane a Python number, weak next to a float32 array as the
    # example's code had it
    value = call("number_lanes", eqn.args[0], ir.const(dtype))
    return [gast.Assign(targets=[ir.name(eqn.out, gast.Store())], value=value,
                        type_comment=None)]
