"""Rules for ``x.at[index].min(v)``, ``.max(v)`` and ``.multiply(v)``.

These are JAX's scatter-min/max/mul: every update written to a repeated
index combines with the others (``np.minimum.at`` etc. on a copy), unlike
``x[index] = v`` where the last write wins.  The primitives are
``index_min``, ``index_max`` and ``index_mul`` (spelled ``y = np.copy(x);
np.minimum.at(y, index, v)``); ``min_index``/``max_index``/``mul_index``
are the same updates as one call (vmap runs them one example at a time
where it has no batched form), with the same rules.

Min/max: the result is one of the values combined; the derivative goes to
the one that won.  Ties (``x`` and updates equal to the result) split it
evenly, as JAX's scatter rules and this library's ``np.minimum`` rule do.

Multiply: the product rule.  ``x`` receives the product of the updates at
its slot; an update receives ``x`` times the other updates at its slot,
computed with zeros counted apart (``product_others_at``), so zero updates
and zero entries give exact derivatives.  Second derivatives through that
helper are not implemented: they raise a located error rather than give a
wrong number.
"""
import numpy as np

from ..errors import TransformError
from ..runtime import (extremum_share_v, extremum_share_x, max_index, min_index,  # noqa: F401
                       mul_index, product_others_at, unbroadcast, unindex)
from .registry import adjoint, adjoint_maker, tangent, tangent_maker


@adjoint("index_min", "index_max", min_index, max_index)
def _(g, ans, x, index, v):
    x_bar = g * extremum_share_x(x, index, v, ans)
    v_bar = unbroadcast(g[index] * extremum_share_v(x, index, v, ans), v)


@tangent("index_min", "index_max", min_index, max_index)
def _(ans, x, index, v):
    ans_dot = x_dot * extremum_share_x(x, index, v, ans) \
        + unindex(ans, index, v_dot * extremum_share_v(x, index, v, ans))


@adjoint("index_mul", mul_index)
def _(g, ans, x, index, v):
    x_bar = g * mul_index(np.ones_like(x), index, v)
    v_bar = unbroadcast(g[index] * product_others_at(x, index, v), v)


@tangent("index_mul", mul_index)
def _(ans, x, index, v):
    ans_dot = x_dot * mul_index(np.ones_like(x), index, v) \
        + unindex(ans, index, v_dot * product_others_at(x, index, v))


def _no_second_derivative(eqn):
    return TransformError(
        "second derivatives through x.at[index].multiply(v) (its derivative along "
        "the updates, product_others_at) are not implemented", eqn.origin,
        "differentiate once, or write the product with an explicit loop over the updates")


@adjoint_maker(product_others_at)
def _(g, eqn, rev=None):
    raise _no_second_derivative(eqn)


@tangent_maker(product_others_at)
def _(eqn, fwd):
    raise _no_second_derivative(eqn)
