"""Cotangents of a ``custom_jvp`` function: the transpose of its (linear)
tangent map, built by transforming the user's rule.

Transforming code is what ``tangent_x.api`` does, a layer above this one, so
the api registers how (``register_transposer``) and the runtime only calls
it: the runtime never imports the api.
"""
from .values import zeros_like

_TRANSPOSER = []


def register_transposer(transpose):
    """Set how to transpose a tangent map: ``transpose(tangent_map,
    tangent_argnums)`` returns a function of the map's arguments, with the
    output's cotangent first, that returns ``(out, cotangents of
    tangent_argnums)``.  ``tangent_x.api`` registers it on import."""
    _TRANSPOSER[:] = [transpose]


def pullback_of(fun, n):
    """The transposed tangent map of the custom_jvp function ``fun`` called
    with ``n`` arguments: a function of (zeros for the tangents, the
    output's cotangent, the non-differentiable arguments, the primals)
    returning ``(out, cotangents)`` (built once per ``n``)."""
    key = ("pullback", n)
    pullback = fun._pullbacks.get(key)
    if pullback is None:
        first = n
        n_primals = n - len(fun.nondiff_argnums)
        tangent_argnums = tuple(range(first, first + n_primals))
        transpose, = _TRANSPOSER
        pullback = transpose(fun.tangent_map(n), tangent_argnums)
        fun._pullbacks[key] = pullback
    return pullback


def custom_jvp_cotangents(fun, args, g):
    """Cotangents of a custom_jvp function's differentiable arguments: the
    transpose of its (linear) tangent map, built by transforming the rule."""
    nondiff, primals = fun.split(args)
    pullback = pullback_of(fun, len(args))
    zeros = [zeros_like(p) for p in primals]
    _, bars = pullback(*zeros, g, *nondiff, *primals)    # (api._with_extra's order)
    return bars if isinstance(bars, tuple) else (bars,)
