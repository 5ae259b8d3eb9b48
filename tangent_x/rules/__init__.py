"""Rule registries: one table per rule kind, keyed by primitive name.

The transforms look rules up here and know nothing about individual ops
(JAX's design).  A rule is either a ``Template`` (the usual case: a few
lines of NumPy that read like the math) or, for structural primitives whose
arity varies (tuple/list/dict packing), a *maker*: a function returning the
outputs directly.
"""
from .registry import (ADJOINT, BATCHING, TANGENT, adjoint, adjoint_maker, batching,  # noqa: F401
                       name_of, tangent, tangent_maker)


def load_all():
    """Import every rule module (they register themselves)."""
    # local import: the rule modules load on first use (a transform's), not with tangent_x
    from . import structural, arithmetic, numpy_math, reductions, shapes, products, linalg  # noqa: F401
    from . import batching_util, queries, lanes, at_updates  # noqa: F401
    from . import random, collectives, trees  # noqa: F401
