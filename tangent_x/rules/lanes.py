"""Derivative rules for vmap's lane helpers, so vectorised code can be
differentiated again (``grad(vmap(f))`` where ``f`` branches or loops on a
per-example condition).  Both helpers are linear in their array arguments:
a per-lane choice passes the cotangent to the side each lane took, and a
value shared by every lane collects the cotangents of all lanes."""
from ..runtime import (add_index, broadcast_lanes, finish_lanes, index_zero,  # noqa: F401
                       lane_item, last_writes, number_lanes, unlane_item,
                       select_lanes, set_index, stack_lanes, unbroadcast, unbroadcast_lanes,
                       unfinish_lanes, unstack, zeros_like)
from .registry import adjoint
from .forward_util import linear


@adjoint(select_lanes)
def _(g, ans, pred, on_true, on_false):
    on_true_bar = unbroadcast(select_lanes(pred, g, zeros_like(g)), on_true)
    on_false_bar = unbroadcast(select_lanes(pred, zeros_like(g), g), on_false)


@adjoint(broadcast_lanes)
def _(g, ans, x, batch_size):
    x_bar = unbroadcast(g, x)


@adjoint(number_lanes)
def _(g, ans, x, kind):
    x_bar = g


@adjoint(unbroadcast_lanes)
def _(g, ans, g_in, x, x_batched=False):
    """Summing each lane to a shape and broadcasting each lane up to one are
    each other's transpose; ``g_in`` is batched (vmap calls this helper on
    batched cotangents only)."""
    g_in_bar = unbroadcast_lanes(g, g_in, x_batched=True)


@adjoint(stack_lanes)
def _(g, ans, results):
    results_bar = unstack(g)


@adjoint(finish_lanes)
def _(g, ans, x, batched, axes, batch_size):
    x_bar = unfinish_lanes(g, x, batched, axes, batch_size)


@adjoint(unfinish_lanes)
def _(g, ans, g_in, x, batched, axes, batch_size):
    g_in_bar = finish_lanes(g, batched, axes, batch_size)


@adjoint(lane_item)
def _(g, ans, x, k, batched=None):
    x_bar = unlane_item(g, x, k, batched)


@adjoint(unlane_item)
def _(g, ans, g_in, x, k, batched=None):
    g_in_bar = lane_item(g, k, batched)


@adjoint(set_index)
def _(g, ans, x, index, value):
    x_bar = index_zero(g, index)
    value_bar = unbroadcast(last_writes(g[index], index, g), value)


@adjoint(add_index)
def _(g, ans, x, index, value):
    x_bar = g
    value_bar = unbroadcast(g[index], value)


linear(set_index, add_index, args=((0, "x"), (2, "value")))
linear(select_lanes, args=((1, "on_true"), (2, "on_false")))
linear(broadcast_lanes, args=((0, "x"),))
linear(number_lanes, args=((0, "x"),))
linear(finish_lanes, args=((0, "x"),))
linear(unfinish_lanes, args=((0, "g"),))
linear(stack_lanes, args=((0, "results"),))
linear(lane_item, args=((0, "x"),))
linear(unlane_item, args=((0, "g"),))
linear(unbroadcast_lanes, args=((0, "g"),))
