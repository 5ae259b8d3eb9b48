"""Rules for reductions: sum, mean, prod, max, min, var, std, cumsum.

A reduction's cotangent has the reduced shape; ``unreduce`` puts the
reduced axes back (as size 1 when ``keepdims`` was False) and broadcasts it
over the input, so every rule below is "spread ``g`` back, then weight it".
Parameters the user did not pass drop out of the generated call, so
``np.sum(x)`` gets ``x_bar = unreduce(g, x)``.
"""
import gast
import numpy as np

from ..core import ir
from ..runtime import prod_others, unreduce  # noqa: F401
from .registry import adjoint, adjoint_maker, batching, tangent_maker
from .arithmetic import adjoint_case, adjoint_refusal, constant, passed
from .batching_util import (NO_VALUE, bound_args, call, constant_atom, lanes_axes, respell,
                            shift_axis, static_value, with_args)
from .forward_util import call_like, linear, product_rule, tangent_case


def _refuse(keys, label, *params):
    """Forms with no rule here (masked or seeded reductions, ``out=``): a clear
    error at transform time rather than a silently wrong gradient."""
    hints = {
        "where": "mask the input instead, e.g. np.sum(np.where(mask, x, 0.0))",
        "initial": "combine the initial value separately, e.g. np.maximum(np.max(x), v)",
        "out": "assign the result instead of writing into out=",
        "mean": "let NumPy compute the mean",
        "correction": "pass ddof= instead",
    }
    for position, keyword in params:
        for key in keys:
            adjoint_refusal(key, passed(position, keyword),
                            f"{label}(..., {keyword}=...) has no derivative rule",
                            hints[keyword])


_refuse([np.sum], "np.sum", (3, "out"), (6, "where"))
_refuse([np.mean], "np.mean", (3, "out"), (None, "where"))
_refuse([np.prod], "np.prod", (3, "out"), (5, "initial"), (6, "where"))
_refuse([np.max, "amax"], "np.max", (2, "out"), (4, "initial"), (5, "where"))
_refuse([np.min, "amin"], "np.min", (2, "out"), (4, "initial"), (5, "where"))
_refuse([np.var], "np.var", (3, "out"), (None, "where"), (None, "mean"),
        (None, "correction"))
_refuse([np.std], "np.std", (3, "out"), (None, "where"), (None, "mean"),
        (None, "correction"))
_refuse([np.cumsum], "np.cumsum", (3, "out"))


@adjoint_case(np.sum)
def _(g, ans, a, axis=None, dtype=None, out=None, keepdims=False):
    a_bar = unreduce(g, a, axis=axis, keepdims=keepdims)


@adjoint_case(np.mean)
def _(g, ans, a, axis=None, dtype=None, out=None, keepdims=False):
    count = np.size(a) / np.size(ans)
    a_bar = unreduce(g / count, a, axis=axis, keepdims=keepdims)


@adjoint_case(np.prod)
def _(g, ans, a, axis=None, dtype=None, out=None, keepdims=False):
    a_bar = unreduce(g, a, axis=axis, keepdims=keepdims) * prod_others(a, axis=axis)


@adjoint_case(np.max, np.min, "amax", "amin")
def _(g, ans, a, axis=None, out=None, keepdims=False):
    """The extreme entries share the cotangent equally (as JAX does).  The
    winners are counted in ``a``'s dtype (ones where it ties), so a
    float32 cotangent stays float32 as in JAX, eagerly and under jit."""
    winners = (a == unreduce(ans, a, axis=axis, keepdims=keepdims)) * np.ones_like(a)
    count = np.sum(winners, axis=axis, keepdims=True)
    a_bar = unreduce(g, a, axis=axis, keepdims=keepdims) * winners / count


@adjoint_case(np.var)
def _(g, ans, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    count = np.size(a) / np.size(ans)
    centered = a - np.mean(a, axis=axis, keepdims=True)
    a_bar = unreduce(g, a, axis=axis, keepdims=keepdims) * centered * (2.0 / (count - ddof))


@adjoint_case(np.std)
def _(g, ans, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    count = np.size(a) / np.size(ans)
    centered = a - np.mean(a, axis=axis, keepdims=True)
    a_bar = unreduce(g / ans, a, axis=axis, keepdims=keepdims) * centered / (count - ddof)


@adjoint_case(np.cumsum, when=constant(1, "axis"))
def _(g, ans, a, axis=None, dtype=None, out=None):
    """Each entry feeds every later partial sum: a reversed cumulative sum."""
    a_bar = np.flip(np.cumsum(np.flip(g, axis), axis), axis)


@adjoint_case(np.cumsum)
def _(g, ans, a, axis=None, dtype=None, out=None):
    """(Without ``axis`` NumPy sums the flattened array, hence the reshape.)"""
    suffix_sums = np.flip(np.cumsum(np.flip(g, axis=axis), axis=axis), axis=axis)
    a_bar = np.reshape(suffix_sums, np.shape(a))


# --- the helpers reduction rules emit, so derivative code can be differentiated --

@adjoint(unreduce)
def _(g, ans, g_in, x, axis=None, keepdims=False):
    """Spreading over axes is transposed by summing over them."""
    g_in_bar = np.sum(g, axis=axis, keepdims=keepdims)


# --- forward mode ------------------------------------------------------------
# sum, mean and cumsum are linear: the tangent is the same reduction of the
# tangent.  The others weight the tangent, then reduce it the same way.  The
# forms the reverse rules refuse (``out=``, ``where=``...) are refused here too.


linear(np.sum, drop=((5, "initial"),))
linear(np.mean, np.cumsum)
linear(unreduce, args=((0, "g"),))


@tangent_case(np.prod)
def _(ans, a, axis=None, dtype=None, out=None, keepdims=False):
    ans_dot = np.sum(a_dot * prod_others(a, axis=axis), axis=axis, keepdims=keepdims)


@tangent_case(np.max, np.min, "amax", "amin")
def _(ans, a, axis=None, out=None, keepdims=False):
    """The mean of the tangents of the extreme entries (ties share, as in JAX)."""
    winners = (a == unreduce(ans, a, axis=axis, keepdims=keepdims)) * np.ones_like(a)
    count = np.sum(winners, axis=axis, keepdims=keepdims)
    ans_dot = np.sum(a_dot * winners, axis=axis, keepdims=keepdims) / count


@tangent_case(np.var)
def _(ans, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    count = np.size(a) / np.size(ans)
    centered = a - np.mean(a, axis=axis, keepdims=True)
    ans_dot = np.sum(centered * a_dot, axis=axis, keepdims=keepdims) * (2.0 / (count - ddof))


@tangent_case(np.std)
def _(ans, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    count = np.size(a) / np.size(ans)
    centered = a - np.mean(a, axis=axis, keepdims=True)
    ans_dot = np.sum(centered * a_dot, axis=axis, keepdims=keepdims) / ((count - ddof) * ans)


# ``prod_others(a, *tangents, axis=None)`` (the derivative of prod, and with
# tangents its higher derivatives) is linear in each tangent, and its
# derivative along ``a`` appends ``a``'s tangent: the family is closed, and
# symmetric, so the cotangents are members of it too.

@tangent_maker(prod_others)
def _(eqn, fwd):
    def along_a(eqn, fwd):
        dot = fwd.dot_of(eqn.args[0])
        return [] if dot is None else [call_like(eqn, list(eqn.args) + [dot])]
    return product_rule(eqn, fwd, range(1, len(eqn.args)), extra=along_a)


@adjoint_maker(prod_others)
def _(g, eqn, rev=None):
    out = {0: call_like(eqn, list(eqn.args) + [ir.clone(g)])}
    for k in range(1, len(eqn.args)):
        args = list(eqn.args)
        args[k] = ir.clone(g)
        out[k] = call_like(eqn, args)
    return out


# --- batching ----------------------------------------------------------------

# A reduction's axes shift past the batch axis (``axis=None``: every
# per-example axis).

@batching("sum", "mean", "prod", "max", "min", "var", "std", "all", "any",
          "count_nonzero", "argmax", "argmin", "cumsum")
def batch_reduction(eqn, b):
    bound = bound_args(eqn)
    if bound is None or any(b.batched(v) for k, v in bound.items() if k != "a"):
        return None
    a = bound.get("a")
    rank = b.rank(a)
    axis = static_value(b, bound["axis"]) if "axis" in bound else None
    if axis is NO_VALUE or rank is None:
        return None
    b.mark(eqn.out)
    flat = eqn.prim.name in ("argmax", "argmin", "cumsum")
    if axis is None and flat:
        if rank > 1:
            a = b.let(f"{a.id}_rows", call("np.reshape", a,
                                           gast.Tuple(elts=[b.batch_size, ir.const(-1)],
                                                      ctx=gast.Load())))
        if rank == 0:
            return None
        return with_args(eqn, a=a, axis=ir.const(1))
    new_axis = lanes_axes(rank) if axis is None else shift_axis(axis, rank)
    return with_args(eqn, axis=constant_atom(new_axis))


@batching("unreduce")
def batch_unreduce(eqn, b):
    """``unreduce(g, x, axis, keepdims)``: the reduction's rule, backwards."""
    bound = dict(zip(["g", "x", "axis", "keepdims"], eqn.args))
    bound.update(eqn.kwargs)
    x = bound["x"]
    rank = b.rank(x)
    axis = static_value(b, bound.get("axis", ir.const(None)))
    if rank is None or axis is NO_VALUE or not b.batched(x):
        return None
    new_axis = lanes_axes(rank) if axis is None else shift_axis(axis, rank)
    args = list(eqn.args)
    kwargs = dict(eqn.kwargs)
    if not b.batched(args[0]):     # a cotangent shared by every example
        args[0] = b.let("g_lanes", call("broadcast_lanes", args[0], b.batch_size))
    if len(args) > 2:
        args[2] = constant_atom(new_axis)
    else:
        kwargs["axis"] = constant_atom(new_axis)
    b.mark(eqn.out)
    return respell(eqn, args, kwargs)
