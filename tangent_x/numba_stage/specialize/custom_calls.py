"""``runtime.custom_jvp_cotangents`` evaluated by the specialiser (see
``registry``): the transposed tangent map of a custom_jvp function,
compiled as a callee (``callees``)."""
import numpy as np

from ... import runtime
from ...core.custom import _Custom
from .registry import handles
from .values import Const, Zero, children, is_container, rebuild


@handles(runtime.custom_jvp_cotangents)
def _custom_jvp_cotangents(s, args, kwargs):
    """The cotangents of a custom_jvp function: its transposed tangent map
    (``runtime.pullback_of``) compiled as a callee, called as the runtime
    calls it (tangent arguments at zero, the output cotangent, the
    non-differentiable and primal arguments)."""
    fun, primal_args, g = args
    if not isinstance(fun, Const) or not isinstance(fun.value, _Custom):
        return NotImplemented
    if isinstance(primal_args, Const) and isinstance(primal_args.value, tuple):
        primal_args = tuple(Const(a) for a in primal_args.value)
    if not isinstance(primal_args, tuple):
        return NotImplemented
    fun = fun.value
    nondiff, primals = fun.split(list(primal_args))
    pullback = runtime.pullback_of(fun, len(primal_args))

    def zero(p):          # the tangent of a primal, at zero (the map is linear)
        if is_container(p):
            return rebuild(p, [zero(c) for c in children(p)])
        if isinstance(p, Const):
            return p if p.value is None else Const(np.zeros_like(p.value))
        return Zero(s.materialize(p, "p"))
    zeros = [zero(p) for p in primals]
    out = s.compiled_call(pullback, [*zeros, g, *nondiff, *primals], {},
                          f"{fun.__name__}_cotangents")
    if out is NotImplemented:
        return out
    bars = out[1]
    return bars if isinstance(bars, tuple) else (bars,)
