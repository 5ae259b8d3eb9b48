"""Short names for the pytree utilities, mirroring JAX's ``jax.tree`` module.

``tangent_x.tree.map(f, params)`` is ``tangent_x.tree_util.tree_map(f,
params)``; the functions are the same objects, so behaviour and errors are
identical.  See :mod:`tangent_x.tree_util` for the pytree rules.
"""
from .tree_util import (
    tree_all as all,
    tree_flatten as flatten,
    tree_leaves as leaves,
    tree_map as map,
    tree_reduce as reduce,
    tree_structure as structure,
    tree_transpose as transpose,
    tree_unflatten as unflatten,
)

__all__ = ["all", "flatten", "leaves", "map", "reduce", "structure",
           "transpose", "unflatten"]
