"""Derivative rules for vmap's lane helpers, so vectorised code can be
differentiated again (``grad(vmap(f))`` where ``f`` branches or loops on a
per-example condition).  Both helpers are linear in their array arguments:
a per-lane choice passes the cotangent to the side each lane took, and a
value shared by every lane collects the cotangents of all lanes."""
from ..runtime import (broadcast_lanes, select_lanes, stack_lanes, unbroadcast,  # noqa: F401
                       unstack, zeros_like)
from . import adjoint
from .shapes import linear


@adjoint(select_lanes)
def _(g, ans, pred, on_true, on_false):
    on_true_bar = unbroadcast(select_lanes(pred, g, zeros_like(g)), on_true)
    on_false_bar = unbroadcast(select_lanes(pred, zeros_like(g), g), on_false)


@adjoint(broadcast_lanes)
def _(g, ans, x, batch_size):
    x_bar = unbroadcast(g, x)


@adjoint(stack_lanes)
def _(g, ans, results):
    results_bar = unstack(g)


linear(select_lanes, args=((1, "on_true"), (2, "on_false")))
linear(broadcast_lanes, args=((0, "x"),))
