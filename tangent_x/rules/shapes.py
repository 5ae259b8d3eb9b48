"""Rules for shape ops: each moves entries without changing them, so its
adjoint moves the cotangent back (reshape back, transpose back, split what
was joined, sum what was copied).

Sequence-taking ops (``concatenate``, ``stack``, ``hstack``, ``vstack``)
receive their sequence as one argument, packed by an equation of its own;
their rules return a *list* of cotangents, one per item, and the packing
rule hands item i to the i-th array.
"""
import numpy as np

from ..runtime import (dense, index_zero, tree_add, unbroadcast, unconcatenate,  # noqa: F401
                       undiagonal, unhstack, unindex, unrepeat, unstack, untile)
from . import adjoint
from .arithmetic import adjoint_case, passed


@adjoint(np.reshape)
def _(g, ans, a, shape=None, order="C"):
    a_bar = np.reshape(g, np.shape(a), order=order)


@adjoint(np.ravel)
def _(g, ans, a, order="C"):
    a_bar = np.reshape(g, np.shape(a), order=order)


@adjoint(np.squeeze, np.expand_dims)
def _(g, ans, a, axis=None):
    a_bar = np.reshape(g, np.shape(a))


@adjoint_case(np.transpose, when=passed(1, "axes"))
def _(g, ans, a, axes=None):
    a_bar = np.transpose(g, np.argsort(axes))


@adjoint_case(np.transpose)
def _(g, ans, a, axes=None):
    a_bar = np.transpose(g)


@adjoint(np.swapaxes)
def _(g, ans, a, axis1, axis2):
    a_bar = np.swapaxes(g, axis1, axis2)


@adjoint(np.moveaxis)
def _(g, ans, a, source, destination):
    a_bar = np.moveaxis(g, destination, source)


@adjoint(np.flip)
def _(g, ans, m, axis=None):
    m_bar = np.flip(g, axis=axis)


@adjoint(np.broadcast_to)
def _(g, ans, array, shape, subok=False):
    array_bar = unbroadcast(g, array)


@adjoint(np.concatenate)
def _(g, ans, arrays, axis=0):
    arrays_bar = unconcatenate(g, arrays, axis=axis)


@adjoint(np.stack)
def _(g, ans, arrays, axis=0):
    arrays_bar = unstack(g, axis=axis)


@adjoint(np.vstack)
def _(g, ans, tup):
    tup_bar = unconcatenate(g, tup)


@adjoint(np.hstack)
def _(g, ans, tup):
    tup_bar = unhstack(g, tup)


@adjoint(np.tile)
def _(g, ans, A, reps):
    A_bar = untile(g, A, reps)


@adjoint(np.repeat)
def _(g, ans, a, repeats, axis=None):
    a_bar = unrepeat(g, a, repeats, axis=axis)


@adjoint(np.diagonal)
def _(g, ans, a, offset=0, axis1=0, axis2=1):
    a_bar = undiagonal(g, a, offset=offset, axis1=axis1, axis2=axis2)


# --- the helpers shape rules emit, so derivative code can be differentiated -----
# Each is linear in its cotangent argument ``g_in``; its adjoint is the
# forward op it undoes.

@adjoint(unbroadcast)
def _(g, ans, g_in, x):
    """Summing to a shape and broadcasting to it are each other's transpose."""
    g_in_bar = unbroadcast(g, g_in)


@adjoint(unstack)
def _(g, ans, g_in, axis=0):
    g_in_bar = np.stack(dense(g, ans), axis=axis)


@adjoint(untile)
def _(g, ans, g_in, A, reps):
    g_in_bar = np.tile(g, reps)


@adjoint(unrepeat)
def _(g, ans, g_in, a, repeats, axis=None):
    g_in_bar = np.repeat(g, repeats, axis=axis)


@adjoint(undiagonal)
def _(g, ans, g_in, a, offset=0, axis1=0, axis2=1):
    g_in_bar = np.diagonal(g, offset=offset, axis1=axis1, axis2=axis2)


@adjoint(unindex)
def _(g, ans, x, index, g_in):
    """Scattering into zeros is transposed by gathering (structural rules emit it)."""
    g_in_bar = g[index]


@adjoint(index_zero)
def _(g, ans, g_in, index):
    g_in_bar = index_zero(g, index)


@adjoint(tree_add)
def _(g, ans, a, b):
    a_bar = g
    b_bar = g
