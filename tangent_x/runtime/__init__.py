"""Helpers that generated code imports by name: ``from tangent_x.runtime
import unbroadcast, ...``.

These are the operations a derivative (or batching) rule needs that NumPy
does not spell in one call -- summing a cotangent back to a broadcast
operand's shape, spreading a reduction's cotangent back over the reduced
axes, scattering a cotangent into zeros at an index -- so that every rule
stays a one-line template.  Each is also registered as a primitive, so
generated code can itself be transformed again.

This package is the bottom layer: it imports NumPy, ``scipy.special`` and ``tree_util`` only.
Its modules hold one concept each, and this module re-exports every name
generated code imports (modules in users' caches rely on these paths):

- ``values``: ``Unbound`` placeholders, symbolic zeros, leafwise sums;
- ``broadcasting``: cotangents of broadcasting and of reductions;
- ``indexing``: cotangents of indexing and indexed updates;
- ``containers``: item updates, items of cotangents, scan steps and tapes;
- ``checks``: run-time checks and f-string messages;
- ``shape_adjoints``, ``contractions``, ``linalg``: cotangents of shape ops,
  of products and of ``np.linalg``;
- ``custom``: the cotangents of a ``custom_jvp`` function;
- ``lanes``: the helpers of vectorised (vmap) code;
- ``special``: ``erf`` and ``erfc`` (SciPy's ufuncs);
- ``trees``: the leaves of a pytree and a pytree rebuilt from leaves
  (``tree_map`` and friends inside transformed functions).
"""
# (re-exports: every name below is in __all__, or imported by tangent_x itself)
from .broadcasting import broadcast_like, prod_others, unbroadcast, unreduce  # noqa: F401
from .checks import (  # noqa: F401
    aux_pair_message, check, check_aux_pair, check_grad_output, check_lanes, formatted)
from .containers import (  # noqa: F401
    appended, attr_cotangent, cotangent_item, dense, item_cotangent, iteration_item,
    scan_length, scan_slice, scan_unslice, stack_steps, unstack_steps, with_item)
from .contractions import (  # noqa: F401
    dot_adjoint_lhs, dot_adjoint_rhs, einsum_adjoint, einsum_specs, inner_adjoint_lhs,
    inner_adjoint_rhs, matmul_adjoint_lhs, matmul_adjoint_rhs, tensordot_adjoint_lhs,
    tensordot_adjoint_rhs)
from .custom import custom_jvp_cotangents, pullback_of, register_transposer  # noqa: F401
from .indexing import (  # noqa: F401
    add_at, extremum_share_v, extremum_share_x, index_zero, last_writes, product_others_at,
    unattr, unindex)
from .lanes import (  # noqa: F401
    add_index, broadcast_items, broadcast_lanes, finish_lanes, lane_item, map_lanes, max_index,
    min_index, move_lanes, mul_index, number_lanes, select_lanes, set_index, stack_lanes, unbroadcast_lanes,
    unfinish_lanes, unlane_item)
from .lanes import RaggedLanes  # noqa: F401
from .lanes import __all__ as _lanes_all
from .linalg import norm_adjoint, solve_adjoint_lhs, solve_matvec, solve_transposed  # noqa: F401
from .special import erf, erfc  # noqa: F401
from .trees import tree_def, tree_leaves_like, tree_rebuild  # noqa: F401
from .shape_adjoints import (  # noqa: F401
    rejoin, unconcatenate, undiagonal, unhstack, unrepeat, unstack, untile)
from .values import (  # noqa: F401
    Unbound, inplace_result, is_array, is_view_of, shaped, stop_gradient, tree_add, unbound,
    with_real, zeros_like)

# Every name here is a primitive (core.primitives registers them in this
# order) and may appear in a generated module's import line.
__all__ = ["unbroadcast", "unreduce", "unindex", "unattr", "zeros_like",
           "tree_add", "check_grad_output", "stop_gradient", "index_zero",
           "last_writes",
           "matmul_adjoint_lhs", "matmul_adjoint_rhs", "custom_jvp_cotangents",
           "unbound", "iteration_item", "cotangent_item", "dense", "add_at",
           "broadcast_like", "item_cotangent", "attr_cotangent", "rejoin", "with_item",
           "shaped", "inplace_result", "is_array", "is_view_of",
           # assert / if ...: raise, and f-strings
           "check", "check_lanes", "formatted",
           # lax.scan inside transformed functions
           "scan_length", "scan_slice", "scan_unslice", "appended", "stack_steps",
           "unstack_steps",
           # reductions
           "prod_others",
           # has_aux=True: the function returns a pair
           "check_aux_pair",
           # x.at[i].min/max/multiply(v)
           "extremum_share_x", "extremum_share_v", "product_others_at",
           # shape ops
           "unconcatenate", "unhstack", "unstack", "untile", "unrepeat", "undiagonal",
           # contractions
           "dot_adjoint_lhs", "dot_adjoint_rhs", "inner_adjoint_lhs", "inner_adjoint_rhs",
           "tensordot_adjoint_lhs", "tensordot_adjoint_rhs", "einsum_adjoint",
           # linear algebra
           "solve_transposed", "solve_adjoint_lhs", "norm_adjoint", "solve_matvec",
           # special functions (SciPy's ufuncs)
           "erf", "erfc",
           # tree_util inside transformed functions
           "tree_leaves_like", "tree_rebuild", "tree_def",
           # a write into np.real(x)
           "with_real"]

__all__ = __all__ + list(_lanes_all)
