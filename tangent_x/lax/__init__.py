"""Structured control flow with JAX's ``jax.lax`` semantics, run eagerly.

Called directly, every function here is the *reference implementation*: it
runs its Python callables on NumPy values and returns NumPy values, with
JAX's signatures, results and errors.  Inside a function transformed by
tangent_x the same names are *primitives*: the transforms know them by
identity and apply their derivative and batching rules (written with the
other rules, not here), and the canonical stage rewrites Python
``if``/``for``/``while`` into calls of these functions.  Because the
canonical stage is itself runnable, these eager versions are what executes
it, so they must agree exactly with what the lowered Python source does.

Why check types at all in eager mode?  In JAX a branch or loop body has one
static type, fixed by tracing, and the derivative/batching rules (and Numba)
rely on that: a loop carry that silently turns from ``int`` into ``float``,
or a ``cond`` whose branches return different shapes, cannot be
differentiated or compiled.  Raising here, in eager mode, makes the error
appear where the user wrote the code rather than deep inside a transform.

Other deliberate differences from JAX
-------------------------------------
* ``fori_loop`` passes ``i`` as a Python ``int`` when both bounds are
  Python ints (a NumPy integer of the bounds' dtype otherwise), since that is
  what NumPy indexing wants; JAX passes an ``int32`` array.
* ``scan`` ignores ``unroll`` (there is nothing to unroll eagerly) and checks
  that the per-step outputs ``y`` keep one type across steps, which JAX gets
  for free from tracing.  With ``length == 0`` the body is called once on
  zeros, as JAX traces it once, to learn the shapes of the empty outputs.
* The collectives raise ``NameError`` outside ``pmap`` exactly as JAX does;
  inside a ``pmap`` worker they dispatch to the handler that ``pmap`` binds
  with ``_bind_axis`` (see ``collectives``); inside transformed code they
  are primitives (``rules/collectives.py``), batched into NumPy over the
  batch by ``vmap(..., axis_name=...)``.

Layout: ``control_flow`` (cond, switch, select, stop_gradient), ``loops``
(while_loop, fori_loop, scan), ``collectives``, and ``avals``: the types of
leaves and the error messages all of them share.
"""
import sys
import types

from . import control_flow
from .collectives import (_bind_axis, all_gather, axis_index, pmax, pmean, pmin,  # noqa: F401
                          ppermute, ppermute_inverse, psum, psum_scatter)
from .control_flow import cond, select, stop_gradient, switch  # noqa: F401
from .loops import fori_loop, scan, while_loop  # noqa: F401
# jax.lax.erf / erfc: SciPy's ufuncs, the objects the primitives are keyed by
from scipy.special import erf, erfc  # noqa: E402,F401

__all__ = [
    "all_gather",
    "axis_index",
    "cond",
    "erf",
    "erfc",
    "fori_loop",
    "pmax",
    "pmean",
    "pmin",
    "ppermute",
    "psum",
    "psum_scatter",
    "scan",
    "select",
    "stop_gradient",
    "switch",
    "while_loop",
]


class _Lax(types.ModuleType):
    """``tangent_x.lax`` itself: its ``CHECK_UNTAKEN_BRANCHES`` is the flag
    ``cond``/``switch`` read (``control_flow.CHECK_UNTAKEN_BRANCHES``)."""

    @property
    def CHECK_UNTAKEN_BRANCHES(self):
        return control_flow.CHECK_UNTAKEN_BRANCHES

    @CHECK_UNTAKEN_BRANCHES.setter
    def CHECK_UNTAKEN_BRANCHES(self, value):
        control_flow.CHECK_UNTAKEN_BRANCHES = value


sys.modules[__name__].__class__ = _Lax
