"""A compiled call's flat results made into what the transform returns.

``grad``'s finishing step (gradients shaped and typed like their arguments,
sharing memory with none) made cheap for compiled results, whose flat
leaves in and out are at hand.  The transform (``inner``, given by the api
layer) supplies its own casts: ``inner.fill_gradient`` and
``inner.cast_gradient``.
"""
import numpy as np
from numba.core.runtime._nrt_python import _MemInfo as _MEMINFO

from .. import tree_util

__all__ = ["identity_finish", "finish_grads", "leaf_caster", "cast_to_arguments"]


def identity_finish(out, args):
    """The finishing step of a plain function's python stage: none."""
    return out


def cast_to_arguments(inner):
    """Whether every result of the transform ``inner`` compiles to is a
    gradient that ``finish_grads`` casts to its argument's dtype (``grad``
    without ``has_aux``): a cotangent's dtype inside its code does not
    show in what the caller gets (``joins``' module doc)."""
    return getattr(inner, "_kind", None) == "grad" and not getattr(inner, "_has_aux", True)


def finish_grads(inner, single, out, args, leaves, values, fill=None):
    """``grad``/``value_and_grad``'s finishing step (gradients shaped and
    typed like their arguments, sharing memory with none), made cheap for
    compiled results: the flat leaves in and out are at hand, so copies are
    needed only when a result may share memory with an argument.  ``fill``:
    ``leaf_caster``'s when every argument is a leaf (the fast path), else
    the transform's ``fill_gradient``."""
    if fill is None:
        fill = inner.fill_gradient
    kind, nums = inner._kind, inner._argnums
    if kind == "grad":
        grads, aux = out if inner._has_aux else (out, None)
    else:
        value, grads = out
        primal = value[0] if inner._has_aux else value
        if np.shape(primal) != ():
            raise TypeError("Gradient only defined for scalar-output functions. "
                            f"Output had shape: {np.shape(primal)}.")
    grads = (grads,) if single else grads
    filled = tuple([fill(g, args[i]) for g, i in zip(grads, nums)])
    if _may_share(leaves, values):
        filled = _owned(filled, leaves)
    filled = filled[0] if single else filled
    if kind == "grad":
        return (filled, aux) if inner._has_aux else filled
    return value, filled


def leaf_caster(cast_like):
    """``cast_like`` (a gradient shaped and typed like its argument, the
    transform's ``cast_gradient``), with the usual case first: an array
    already of the argument's shape and dtype, which ``cast_like`` would
    give back as it is."""

    def cast_leaf(g, x):
        if type(g) is np.ndarray and type(x) is np.ndarray and g.dtype == x.dtype and \
                g.shape == x.shape:
            return g
        return cast_like(g, x)

    return cast_leaf


def _owned(grads, leaves):
    """Every gradient array writable and sharing memory with no argument and
    no other gradient: the others are copied.  (The eager finishing finds
    shared memory by following ``.base`` to a common owner, but arrays
    Numba returns each have their own wrapper of Numba's buffer as their
    base, so here the memory ranges are compared.)"""
    inputs = [a for a in leaves if isinstance(a, np.ndarray)]
    kept = []

    def own(leaf):
        if isinstance(leaf, np.ndarray):
            if not leaf.flags.writeable or any(np.may_share_memory(leaf, other)
                                               for other in inputs + kept):
                leaf = leaf.copy()
            kept.append(leaf)
        return leaf

    return tree_util.tree_map(own, grads)


def _may_share(leaves, values):
    """Whether an array the compiled code returned is read-only or may
    share memory with an argument or with another returned array.

    First the common case, decided without comparing addresses: every
    returned array is writable and is the whole of a buffer Numba
    allocated in this call (its base is a Numba MemInfo with no parent
    array), each a different buffer."""
    outputs = [v for v in values if isinstance(v, np.ndarray)]
    if not outputs:
        return False
    buffers = set()
    for o in outputs:
        base = o.base
        if type(base) is not _MEMINFO or base.parent is not None or \
                base.data in buffers or not o.flags.writeable:
            break
        buffers.add(base.data)
    else:
        return False
    inputs = [a for a in leaves if isinstance(a, np.ndarray)]
    for k, o in enumerate(outputs):
        if not o.flags.writeable:
            return True
        for other in inputs:
            if np.may_share_memory(o, other):
                return True
        for other in outputs[k + 1:]:       # (the same array twice shares too)
            if np.may_share_memory(o, other):
                return True
    return False
