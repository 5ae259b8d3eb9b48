"""A corpus of functions with Python control flow, for reverse mode.

Same conventions as ``tests/corpus`` (read its ``__init__``): each module
defines plain NumPy functions and registers them with ``case``; a case lists
*variants* (tuples of argument specs, one per parameter), every variant is
checked, and inputs come from a ``np.random.default_rng`` seeded by the case
name and variant number.  The spec classes are reused from ``tests/corpus``;
the registry here is separate so each suite counts its own cases.

Inputs are chosen so that finite differences are valid: every comparison
that decides a branch, a trip count or a ``break`` is at least ~1e-3 away
from its threshold, and across the variants every statement of every
function runs at least once (``test_control_flow_corpus.py`` checks both).
Extra specs for that:

    Pos(shape)          uniform in [0.2, 2.0]          clearly positive
    Neg(shape)          uniform in [-2.0, -0.2]        clearly negative
    A(shape)            random sign, |x| in [0.2, 2]   away from zero
    V(*values)          this float64 array (or float, given one number and
                        ``scalar=True``)
    SumSign(shape, s)   normal, flipped so that sign(sum) == s, |sum| >= 0.3

Every case function is run as plain Python by the tests, so it must not
mutate its arguments (copy first: ``y = x.copy()``).
"""
import numpy as np

from corpus import C, Case, F, G, N, P, Spec, U, each, make_registry  # noqa: F401  (re-exported)

CASES = []


def _uniform(low, high, shape, name):
    def make(rng):
        x = rng.uniform(low, high, shape)
        return float(x) if shape == () else np.asarray(x, dtype=np.float64)
    make.__name__ = f"{name}{shape}"
    return F(make)


def Pos(shape=()):
    return _uniform(0.2, 2.0, shape, "Pos")


def Neg(shape=()):
    return _uniform(-2.0, -0.2, shape, "Neg")


def A(shape=()):
    def make(rng):
        mag = rng.uniform(0.2, 2.0, shape)
        sign = np.where(rng.uniform(size=shape) < 0.5, -1.0, 1.0)
        x = mag * sign
        return float(x) if shape == () else np.asarray(x, dtype=np.float64)
    make.__name__ = f"A{shape}"
    return F(make)


def V(*values, scalar=False):
    if scalar:
        assert len(values) == 1
        return C(float(values[0]))
    return C(np.array(values, dtype=np.float64))


def SumSign(shape, sign):
    def make(rng):
        x = rng.standard_normal(shape)
        if np.sum(x) * sign < 0:
            x = -x
        if abs(np.sum(x)) < 0.3:
            x = x + sign * 0.3 / x.size
        return x
    make.__name__ = f"SumSign{shape}{'+' if sign > 0 else '-'}"
    return F(make)


register, case = make_registry(CASES)


def all_cases():
    """Import every control-flow corpus module and return the cases."""
    from . import (branches, loops_range, loops_iter, loops_while,  # noqa: F401
                   jumps, mixed, lax_calls)
    return list(CASES)
