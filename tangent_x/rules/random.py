"""tangent_x.random inside derivatives.

A draw is a constant: its bits depend on the key alone.  JAX does
differentiate through what some samplers do with their array arguments --
``uniform`` scales the draw by ``minval``/``maxval``, ``permutation`` and
``choice`` gather from ``x``/``a`` -- and tangent_x has no rules for that
yet.  So a derivative that would flow through one of those arguments is
refused with an error naming the user's line and a way to write it that
differentiates; through any other argument (``choice``'s ``p``, say) the
derivative is zero, in JAX as here.
"""
import inspect

from ..core import ir
from .. import random as tx_random
from ..errors import TransformError
from ..random import DIFFERENTIABLE_IN_JAX
from .registry import adjoint_maker, tangent_maker

_HINTS = {
    "uniform": "draw u = random.uniform(key, shape) and write "
               "minval + (maxval - minval) * u",
    "permutation": "shuffle indices instead: x[random.permutation(key, len(x))]",
    "choice": "draw indices instead: a[random.choice(key, len(a), shape, ...)]",
}


def _refuse_active(eqn, active):
    """Raise if an argument JAX differentiates through is ``active``."""
    sampler = eqn.prim.name.split(".", 1)[1]
    params = list(inspect.signature(getattr(tx_random, sampler)).parameters)
    for arg in DIFFERENTIABLE_IN_JAX[sampler]:
        pos = params.index(arg)
        atom = eqn.args[pos] if pos < len(eqn.args) else eqn.kwargs.get(arg)
        if atom is not None and ir.is_name(atom) and atom.id in active:
            raise TransformError(
                f"cannot differentiate random.{sampler} with respect to its argument "
                f"'{arg}' (JAX would; tangent_x has no rule for it yet)", eqn.origin,
                _HINTS[sampler])


@adjoint_maker(*(f"random.{name}" for name in DIFFERENTIABLE_IN_JAX))
def _(g, eqn, rev):
    _refuse_active(eqn, rev.differentiated)
    return {}                   # the draw itself: no cotangent for anything


@tangent_maker(*(f"random.{name}" for name in DIFFERENTIABLE_IN_JAX))
def _(eqn, fwd):
    _refuse_active(eqn, set(fwd.dots))
    return None                 # the primal alone: the draw has no tangent
