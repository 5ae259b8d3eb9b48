"""Rules for reductions: sum, mean, prod, max, min, var, std, cumsum.

A reduction's cotangent has the reduced shape; ``unreduce`` puts the
reduced axes back (as size 1 when ``keepdims`` was False) and broadcasts it
over the input, so every rule below is "spread ``g`` back, then weight it".
Parameters the user did not pass drop out of the generated call, so
``np.sum(x)`` gets ``x_bar = unreduce(g, x)``.
"""
import numpy as np

from ..runtime import prod_others, unreduce  # noqa: F401
from . import adjoint
from .arithmetic import adjoint_case, constant


@adjoint(np.sum)
def _(g, ans, a, axis=None, dtype=None, out=None, keepdims=False):
    a_bar = unreduce(g, a, axis=axis, keepdims=keepdims)


@adjoint(np.mean)
def _(g, ans, a, axis=None, dtype=None, out=None, keepdims=False):
    count = np.size(a) / np.size(ans)
    a_bar = unreduce(g / count, a, axis=axis, keepdims=keepdims)


@adjoint(np.prod)
def _(g, ans, a, axis=None, dtype=None, out=None, keepdims=False):
    a_bar = unreduce(g, a, axis=axis, keepdims=keepdims) * prod_others(a, axis=axis)


@adjoint(np.max, np.min, "amax", "amin")
def _(g, ans, a, axis=None, out=None, keepdims=False):
    """The extreme entries share the cotangent equally (as JAX does)."""
    winners = a == unreduce(ans, a, axis=axis, keepdims=keepdims)
    count = np.sum(winners, axis=axis, keepdims=True)
    a_bar = unreduce(g, a, axis=axis, keepdims=keepdims) * winners / count


@adjoint(np.var)
def _(g, ans, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    count = np.size(a) / np.size(ans)
    centered = a - np.mean(a, axis=axis, keepdims=True)
    a_bar = unreduce(g, a, axis=axis, keepdims=keepdims) * centered * (2.0 / (count - ddof))


@adjoint(np.std)
def _(g, ans, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    count = np.size(a) / np.size(ans)
    centered = a - np.mean(a, axis=axis, keepdims=True)
    a_bar = unreduce(g / ans, a, axis=axis, keepdims=keepdims) * centered / (count - ddof)


@adjoint_case(np.cumsum, when=constant(1, "axis"))
def _(g, ans, a, axis=None, dtype=None, out=None):
    """Each entry feeds every later partial sum: a reversed cumulative sum."""
    a_bar = np.flip(np.cumsum(np.flip(g, axis), axis), axis)


@adjoint_case(np.cumsum)
def _(g, ans, a, axis=None, dtype=None, out=None):
    """(Without ``axis`` NumPy sums the flattened array, hence the reshape.)"""
    suffix_sums = np.flip(np.cumsum(np.flip(g, axis=axis), axis=axis), axis=axis)
    a_bar = np.reshape(suffix_sums, np.shape(a))


# --- the helpers reduction rules emit, so derivative code can be differentiated --

@adjoint(unreduce)
def _(g, ans, g_in, x, axis=None, keepdims=False):
    """Spreading over axes is transposed by summing over them."""
    g_in_bar = np.sum(g, axis=axis, keepdims=keepdims)
