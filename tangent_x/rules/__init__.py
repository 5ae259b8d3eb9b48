"""Rule registries: one table per rule kind, keyed by primitive name.

The transforms look rules up here and know nothing about individual ops
(JAX's design).  A rule is either a ``Template`` (the usual case: a few
lines of NumPy that read like the math) or, for structural primitives whose
arity varies (tuple/list/dict packing), a *maker*: a function returning the
outputs directly.
"""
from ..core import primitives as P
from ..core.templates import TangentTemplate, Template

ADJOINT = {}
TANGENT = {}
BATCHING = {}


def _name(key):
    if isinstance(key, str):
        return key
    prim = P.lookup(key)
    if prim is None:
        raise KeyError(f"{key!r} is not a registered primitive")
    return prim.name


def adjoint(*keys):
    """Register a reverse-mode template: ``def _(g, ans, *args): x_bar = ...``."""
    def register(fn):
        template = Template(fn, "_bar")
        for key in keys:
            ADJOINT[_name(key)] = template
        return fn
    return register


def adjoint_maker(*keys):
    """Register a reverse rule written as code.

    ``maker(g, eqn, rev)`` returns ``{argument position: cotangent expr}``, or
    ``(statements, {position: expr})`` when it must compute something first;
    ``rev`` is the running reverse pass (for fresh names and residuals)."""
    def register(fn):
        for key in keys:
            ADJOINT[_name(key)] = fn
        return fn
    return register


def tangent(*keys):
    """Register a forward-mode template: ``def _(ans, x, y): ans_dot = ...``
    (a sum of terms, each linear in one argument's tangent ``<arg>_dot``)."""
    def register(fn):
        template = TangentTemplate(fn, "_dot")
        for key in keys:
            TANGENT[_name(key)] = template
        return fn
    return register


def tangent_maker(*keys):
    """Register a forward rule written as code: ``maker(eqn, fwd) -> statements``
    computing the primal and (via ``fwd.new_dot``) its tangent; ``None``
    means the primal alone."""
    def register(fn):
        for key in keys:
            TANGENT[_name(key)] = fn
        return fn
    return register


def batching(*keys):
    """Register a batching rule (vmap): ``rule(eqn, b)`` returns the statements
    computing the batched result, or None to run the equation once per example
    (helpers and the elementwise rule: ``batching_util``)."""
    def register(fn):
        for key in keys:
            BATCHING[_name(key)] = fn
        return fn
    return register


def load_all():
    """Import every rule module (they register themselves)."""
    # local import: the rule modules import this registry
    from . import structural, arithmetic, numpy_math, reductions, shapes, linalg  # noqa: F401
    from . import batching_util, queries, lanes, at_updates  # noqa: F401
    from . import random  # noqa: F401
