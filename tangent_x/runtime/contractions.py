"""Cotangents of products: matmul, dot, inner, tensordot and einsum (NumPy's
1-D promotion rules included).  Each is a contraction of the cotangent with
the other operand, worked out from the ranks at run time."""
import string

import numpy as np

from .broadcasting import unbroadcast


def matmul_adjoint_lhs(g, a, b):
    """Cotangent of ``a`` in ``a @ b`` (NumPy's 1-D promotion rules included)."""
    a, b, g = np.asarray(a), np.asarray(b), np.asarray(g)
    if b.ndim == 1:
        out = g[..., None] * b
    elif a.ndim == 1:
        out = np.matmul(b, g[..., None])[..., 0]
    else:
        out = np.matmul(g, np.swapaxes(b, -1, -2))
    return unbroadcast(out, a)


def matmul_adjoint_rhs(g, a, b):
    """Cotangent of ``b`` in ``a @ b``."""
    a, b, g = np.asarray(a), np.asarray(b), np.asarray(g)
    if a.ndim == 1 and b.ndim == 1:
        out = g * a
    elif a.ndim == 1:
        out = a[:, None] * g[..., None, :]
    elif b.ndim == 1:
        out = np.matmul(np.swapaxes(a, -1, -2), g[..., None])[..., 0]
    else:
        out = np.matmul(np.swapaxes(a, -1, -2), g)
    return unbroadcast(out, b)


def contracted_axes(na, nb, axes):
    """``np.tensordot``'s ``axes`` argument as two lists of non-negative axes."""
    if isinstance(axes, (int, np.integer)):
        return list(range(na - axes, na)), list(range(axes))
    a_axes, b_axes = axes
    a_axes = [a_axes] if np.ndim(a_axes) == 0 else list(a_axes)
    b_axes = [b_axes] if np.ndim(b_axes) == 0 else list(b_axes)
    return [int(i) % na for i in a_axes], [int(i) % nb for i in b_axes]


def _tensordot_lhs(g, a, b, a_axes, b_axes):
    a_free = [i for i in range(np.ndim(a)) if i not in a_axes]
    b_free = [i for i in range(np.ndim(b)) if i not in b_axes]
    g = np.asarray(g)
    out = np.tensordot(g, b, axes=(list(range(len(a_free), g.ndim)), b_free))
    order = a_free + [a_axes[b_axes.index(j)] for j in sorted(b_axes)]
    return np.transpose(out, np.argsort(order))


def _tensordot_rhs(g, a, b, a_axes, b_axes):
    a_free = [i for i in range(np.ndim(a)) if i not in a_axes]
    b_free = [i for i in range(np.ndim(b)) if i not in b_axes]
    out = np.tensordot(a, np.asarray(g), axes=(a_free, list(range(len(a_free)))))
    order = [b_axes[a_axes.index(i)] for i in sorted(a_axes)] + b_free
    return np.transpose(out, np.argsort(order))


def tensordot_adjoint_lhs(g, a, b, axes=2):
    """Cotangent of ``a`` in ``np.tensordot(a, b, axes)``: ``g`` contracted
    with ``b`` over ``b``'s free axes, axes put back in ``a``'s order."""
    a_axes, b_axes = contracted_axes(np.ndim(a), np.ndim(b), axes)
    return _tensordot_lhs(g, a, b, a_axes, b_axes)


def tensordot_adjoint_rhs(g, a, b, axes=2):
    """Cotangent of ``b`` in ``np.tensordot(a, b, axes)``."""
    a_axes, b_axes = contracted_axes(np.ndim(a), np.ndim(b), axes)
    return _tensordot_rhs(g, a, b, a_axes, b_axes)


def dot_adjoint_lhs(g, a, b):
    """Cotangent of ``a`` in ``np.dot(a, b)`` (a product when either is 0-d;
    else a contraction of ``a``'s last axis with ``b``'s second-to-last)."""
    na, nb = np.ndim(a), np.ndim(b)
    if na == 0 or nb == 0:
        return unbroadcast(np.multiply(g, b), a)
    return _tensordot_lhs(g, a, b, [na - 1], [max(nb - 2, 0)])


def dot_adjoint_rhs(g, a, b):
    """Cotangent of ``b`` in ``np.dot(a, b)``."""
    na, nb = np.ndim(a), np.ndim(b)
    if na == 0 or nb == 0:
        return unbroadcast(np.multiply(g, a), b)
    return _tensordot_rhs(g, a, b, [na - 1], [max(nb - 2, 0)])


def inner_adjoint_lhs(g, a, b):
    """Cotangent of ``a`` in ``np.inner(a, b)`` (last axes contracted)."""
    na, nb = np.ndim(a), np.ndim(b)
    if na == 0 or nb == 0:
        return unbroadcast(np.multiply(g, b), a)
    return _tensordot_lhs(g, a, b, [na - 1], [nb - 1])


def inner_adjoint_rhs(g, a, b):
    """Cotangent of ``b`` in ``np.inner(a, b)``."""
    na, nb = np.ndim(a), np.ndim(b)
    if na == 0 or nb == 0:
        return unbroadcast(np.multiply(g, a), b)
    return _tensordot_rhs(g, a, b, [na - 1], [nb - 1])


def einsum_specs(subscripts, ndims):
    """Explicit input and output subscripts of an einsum, ellipses spelled
    out as letters (``ndims``: the operands' ranks).  Implicit output is
    NumPy's: the broadcast axes, then the letters used once, sorted."""
    if not isinstance(subscripts, str):
        raise NotImplementedError("einsum's interleaved (operand, sublist) form has no "
                                  "derivative rule; pass a subscripts string")
    subscripts = subscripts.replace(" ", "")
    ins, arrow, out = subscripts.partition("->")
    ins = ins.split(",")
    spare = [c for c in string.ascii_letters if c not in subscripts]
    ranks = [n - (len(s) - 3) for s, n in zip(ins, ndims) if "..." in s]
    ellipsis = "".join(spare[:max(ranks, default=0)])
    specs = [s.replace("...", ellipsis[len(ellipsis) - (n - len(s) + 3):]) if "..." in s else s
             for s, n in zip(ins, ndims)]
    if arrow:
        out = out.replace("...", ellipsis)
    else:
        letters = "".join(ins).replace(".", "")
        out = ellipsis + "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    return specs, out


def einsum_adjoint(g, subscripts, k, *operands):
    """Cotangent of operand ``k`` of ``np.einsum(subscripts, *operands)``.

    It is itself an einsum of ``g`` with the other operands, then broadcast
    over axes that only operand ``k`` summed, summed over axes it broadcast,
    and written onto the diagonal when a letter repeats (``'ii->i'``).
    """
    specs, out = einsum_specs(subscripts, [np.ndim(x) for x in operands])
    target, shape = specs[k], np.shape(operands[k])
    sizes = dict(zip(target, shape))
    others = [s for j, s in enumerate(specs) if j != k]
    unique = "".join(dict.fromkeys(target))
    available = set(out).union(*others)
    kept = "".join(c for c in unique if c in available)
    result = np.einsum(",".join([out] + others) + "->" + kept, g,
                       *[x for j, x in enumerate(operands) if j != k])
    broadcast = tuple(i for i, c in enumerate(kept) if sizes[c] == 1 and result.shape[i] != 1)
    if broadcast:
        result = np.sum(result, axis=broadcast, keepdims=True)
    missing = [i for i, c in enumerate(unique) if c not in available]
    result = np.broadcast_to(np.expand_dims(result, missing), [sizes[c] for c in unique])
    if len(unique) == len(target):
        return result
    full = np.zeros(shape, dtype=result.dtype)
    grids = np.ix_(*[np.arange(sizes[c]) for c in unique])
    full[tuple(grids[unique.index(c)] for c in target)] = result
    return full
