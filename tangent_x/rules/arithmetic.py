"""Rules for Python's arithmetic operators (and their NumPy ufuncs).

Broadcasting is not handled here: the reverse transform sums each
contribution back to its operand's shape for every primitive marked
``broadcasting`` (see primitives.py).

This module also holds ``adjoint_case``: a primitive whose best derivative
depends on the *form* of the call (``x ** 2`` versus ``x ** y``,
``np.transpose(x)`` versus ``np.transpose(x, axes)``) registers one
template per form, so generated code stays as plain as the call it came
from.
"""
import gast
import numpy as np

from ..core import ir
from ..runtime import matmul_adjoint_lhs, matmul_adjoint_rhs, zeros_like  # noqa: F401
from ..errors import TransformError
from ..core.templates import Template
from .registry import ADJOINT, adjoint, batching, name_of, tangent
from .batching_util import call, container_truth, respell


# --- templates chosen by the form of the call --------------------------------

class Cases(Template):
    """A reverse rule made of templates, each guarded by a test on the equation.

    The first case whose ``when(eqn)`` holds is instantiated; a case
    registered without ``when`` always matches (register it last).
    """

    def __init__(self):            # no template of its own: see ``cases``
        self.cases = []

    def pick(self, eqn):
        for when, template in self.cases:
            if when is None or when(eqn):
                return template
        raise TypeError(f"no derivative template matches {eqn!r}")

    def instantiate(self, g, ans, eqn, namer, wanted):
        rule = self.pick(eqn)
        if isinstance(rule, Refusal):
            raise TransformError(rule.message, eqn.origin, rule.hint)
        return rule.instantiate(g, ans, eqn, namer, wanted)

    def __getattr__(self, attr):   # look like the fallback template
        if attr == "cases":
            raise AttributeError(attr)
        return getattr(self.cases[-1][1], attr)


def _register_case(key, entry):
    name = name_of(key)
    rule = ADJOINT.get(name)
    if not isinstance(rule, Cases):
        rule = ADJOINT[name] = Cases()
    rule.cases.append(entry)


def adjoint_case(*keys, when=None):
    """Register one reverse template of ``keys``, used when ``when(eqn)`` holds."""
    def register(fn):
        template = Template(fn, "_bar")
        for key in keys:
            _register_case(key, (when, template))
        return fn
    return register


class Refusal:
    """A form of a call that has no derivative rule: say so, never guess."""

    def __init__(self, message, hint):
        self.message = message
        self.hint = hint


def adjoint_refusal(key, when, message, hint):
    """Refuse to differentiate ``key`` when ``when(eqn)`` holds (register first)."""
    _register_case(key, (when, Refusal(message, hint)))


def argument(eqn, position, keyword):
    """The atom passed for a parameter (by position or keyword), or None."""
    if position is not None and len(eqn.args) > position:
        return eqn.args[position]
    return eqn.kwargs.get(keyword)


def passed(position, keyword):
    """``when`` test: the call passes this parameter (and not as a literal None)."""
    def when(eqn):
        atom = argument(eqn, position, keyword)
        return atom is not None and not (isinstance(atom, gast.Constant)
                                         and atom.value is None)
    return when


def constant(position, keyword, test=lambda value: True):
    """``when`` test: the parameter is a literal number for which ``test`` holds."""
    def when(eqn):
        atom = argument(eqn, position, keyword)
        return (isinstance(atom, gast.Constant) and type(atom.value) in (int, float)
                and test(atom.value))
    return when


# --- operators -----------------------------------------------------------------

@adjoint("add")
def _(g, ans, x, y):
    x_bar = g
    y_bar = g


@adjoint("sub")
def _(g, ans, x, y):
    x_bar = g
    y_bar = -g


@adjoint("mul")
def _(g, ans, x, y):
    x_bar = g * y
    y_bar = g * x


@adjoint("truediv")
def _(g, ans, x, y):
    x_bar = g / y
    y_bar = -g * ans / y


@adjoint("neg")
def _(g, ans, x):
    x_bar = -g


@adjoint("pos")
def _(g, ans, x):
    x_bar = g


@adjoint_case("pow", when=constant(1, "x2", lambda y: y == 0))
def _(g, ans, x, y):
    """x ** 0 is constant."""
    x_bar = zeros_like(x)


@adjoint_case("pow", when=constant(1, "x2"))
def _(g, ans, x, y):
    """A literal exponent: x ** 2 -> g * 2 * x."""
    x_bar = g * y * x ** (y - 1)


@adjoint_case("pow")
def _(g, ans, x, y):
    """Any exponent: y == 0 contributes nothing even at x == 0, and d/dy is
    taken as 0 where x <= 0 (only integer powers are real there)."""
    x_bar = g * np.where(y == 0, 0.0, y * x ** (y - 1))
    y_bar = g * ans * np.log(np.where(x > 0, x, 1.0))


@adjoint("mod")
def _(g, ans, x, y):
    x_bar = g
    y_bar = -g * np.floor_divide(x, y)


@adjoint("matmul")
def _(g, ans, x, y):
    x_bar = matmul_adjoint_lhs(g, x, y)
    y_bar = matmul_adjoint_rhs(g, x, y)


# --- forward mode ------------------------------------------------------------


@tangent("add")
def _(ans, x, y):
    ans_dot = x_dot + y_dot


@tangent("sub")
def _(ans, x, y):
    ans_dot = x_dot - y_dot


@tangent("mul")
def _(ans, x, y):
    ans_dot = x_dot * y + x * y_dot


@tangent("truediv")
def _(ans, x, y):
    ans_dot = x_dot / y - ans * y_dot / y


@tangent("neg")
def _(ans, x):
    ans_dot = -x_dot


@tangent("pos")
def _(ans, x):
    ans_dot = x_dot


@tangent("pow")
def _(ans, x, y):
    ans_dot = y * x ** (y - 1) * x_dot + ans * np.log(np.where(x > 0, x, 1.0)) * y_dot


@tangent("mod")
def _(ans, x, y):
    ans_dot = x_dot - np.floor_divide(x, y) * y_dot


@tangent("matmul")
def _(ans, x, y):
    ans_dot = x_dot @ y + x @ y_dot


# --- batching ----------------------------------------------------------------

# Operators are elementwise (``batching_util.elementwise``); ``not x`` is
# not, and becomes ``np.logical_not``.

@batching("not_")
def batch_not(eqn, b):
    """``not x`` per example (of a container: its length, every example's)."""
    if container_truth(b, eqn.args[0]):
        b.mark(eqn.out, False)
        return respell(eqn)
    b.mark(eqn.out)
    return [gast.Assign(targets=[ir.name(eqn.out, gast.Store())],
                        value=call("np.logical_not", eqn.args[0]), type_comment=None)]
