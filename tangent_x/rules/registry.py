"""The rule tables (ADJOINT, TANGENT, BATCHING, keyed by primitive name) and
the decorators that fill them.  Each family module imports these to register
its rules; ``tangent_x.rules`` re-exports them."""
from ..core import primitives as P
from ..core.templates import TangentTemplate, Template

ADJOINT = {}
TANGENT = {}
BATCHING = {}


def name_of(key):
    """The primitive name a rule is registered under (``key``: a name or the object)."""
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
            ADJOINT[name_of(key)] = template
        return fn
    return register


def adjoint_maker(*keys):
    """Register a reverse rule written as code.

    ``maker(g, eqn, rev)`` returns ``{argument position: cotangent expr}``, or
    ``(statements, {position: expr})`` when it must compute something first;
    ``rev`` is the running reverse pass (for fresh names and residuals)."""
    def register(fn):
        for key in keys:
            ADJOINT[name_of(key)] = fn
        return fn
    return register


def tangent(*keys):
    """Register a forward-mode template: ``def _(ans, x, y): ans_dot = ...``
    (a sum of terms, each linear in one argument's tangent ``<arg>_dot``)."""
    def register(fn):
        template = TangentTemplate(fn, "_dot")
        for key in keys:
            TANGENT[name_of(key)] = template
        return fn
    return register


def tangent_maker(*keys):
    """Register a forward rule written as code: ``maker(eqn, fwd) -> statements``
    computing the primal and (via ``fwd.new_dot``) its tangent; ``None``
    means the primal alone."""
    def register(fn):
        for key in keys:
            TANGENT[name_of(key)] = fn
        return fn
    return register


def batching(*keys):
    """Register a batching rule (vmap): ``rule(eqn, b)`` returns the statements
    computing the batched result, or None to run the equation once per example
    (helpers and the elementwise rule: ``batching_util``)."""
    def register(fn):
        for key in keys:
            BATCHING[name_of(key)] = fn
        return fn
    return register
