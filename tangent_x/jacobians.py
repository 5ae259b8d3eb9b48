"""jacfwd, jacrev and hessian, built from jvp and vjp.

Until vmap exists they loop over basis vectors: one jvp per input element
(jacfwd) or one backward pass per output element (jacrev, sharing a single
forward pass).  Shapes follow JAX: the Jacobian of an output leaf of shape
``o`` with respect to an input leaf of shape ``i`` has shape ``o + i``; the
result is a pytree shaped like the output whose leaves are pytrees shaped
like the inputs (a tuple of them when ``argnums`` is a tuple).
"""
import functools

import numpy as np

from . import tree_util
from .api import _argnums_tuple, _cached, _check_inputs, call_jvp, grad


def _basis(leaves):
    """One-hot tangents: for each element of each leaf, (leaf index, tangents)."""
    for j, leaf in enumerate(leaves):
        size = int(np.size(leaf))
        for k in range(size):
            tangents = [np.zeros_like(np.asarray(x, dtype=float)) for x in leaves]
            flat = tangents[j].reshape(-1)
            flat[k] = 1.0
            yield j, tangents


def _assemble(out, columns_per_leaf, in_leaves, in_tree, single, axis_last):
    """Stack per-element derivatives into JAX's nested Jacobian structure."""
    out_leaves, out_tree = tree_util.tree_flatten(out)
    blocks = []
    for o, out_leaf in enumerate(out_leaves):
        per_input = []
        for j, in_leaf in enumerate(in_leaves):
            cols = [np.asarray(c[o]) for c in columns_per_leaf[j]]
            o_shape, i_shape = np.shape(out_leaf), np.shape(in_leaf)
            if axis_last:      # columns: d out / d in_k, each of the output's shape
                block = np.stack(cols, axis=-1) if cols else np.zeros(o_shape + (0,))
                block = block.reshape(o_shape + i_shape)
            else:              # rows: d out_k / d in, each of the input's shape
                block = np.stack(cols, axis=0) if cols else np.zeros((0,) + i_shape)
                block = block.reshape(o_shape + i_shape)
            per_input.append(block)
        inner = tree_util.tree_unflatten(in_tree, per_input)
        blocks.append(inner[0] if single else tuple(inner))
    return tree_util.tree_unflatten(out_tree, blocks)


def jacfwd(fun, argnums=0, has_aux=False):
    """Jacobian by forward mode: one jvp per input element."""
    nums, single = _argnums_tuple(argnums)

    @functools.wraps(fun)
    def jacobian(*args):
        _check_inputs("jacfwd", fun, args, nums)
        transformed = _cached(fun, "jvp", nums, lambda out, a: out)
        wrt = [args[i] for i in nums]
        in_leaves, in_tree = tree_util.tree_flatten(list(wrt))
        columns = [[] for _ in in_leaves]
        out = None
        for j, tangent_leaves in _basis(in_leaves):
            tangents = tree_util.tree_unflatten(in_tree, tangent_leaves)
            out, out_dot = call_jvp(transformed, args, nums, tangents)
            columns[j].append(tree_util.tree_leaves(out_dot))
        if out is None:
            out = fun(*args)
        return _assemble(out, columns, in_leaves, in_tree, single, axis_last=True)

    jacobian.__tangent_x_loop__ = True     # Python driver code: vmap loops over it
    return jacobian


def jacrev(fun, argnums=0, has_aux=False):
    """Jacobian by reverse mode: one forward pass, one backward pass per
    output element."""
    nums, single = _argnums_tuple(argnums)

    @functools.wraps(fun)
    def jacobian(*args):
        _check_inputs("jacrev", fun, args, nums)
        transformed = _cached(fun, "vjp_split", nums, lambda out, a: out)
        out, residuals = transformed(*args)
        backward = getattr(transformed.generated.module,
                           transformed.generated.function.__name__.replace("vjp_fwd_",
                                                                           "vjp_bwd_"))
        wrt = [args[i] for i in nums]
        in_leaves, in_tree = tree_util.tree_flatten(list(wrt))
        out_leaves, out_tree = tree_util.tree_flatten(out)
        rows = [[] for _ in in_leaves]
        for o, _ in enumerate(out_leaves):
            for k in range(int(np.size(out_leaves[o]))):
                cts = [np.zeros(np.shape(leaf)) for leaf in out_leaves]
                cts[o].reshape(-1)[k] = 1.0
                ct = tree_util.tree_unflatten(out_tree, [c if np.ndim(c) else float(c)
                                                         for c in cts])
                grads = backward(residuals, ct)
                grads = grads if isinstance(grads, tuple) else (grads,)
                leaves = tree_util.tree_leaves(list(grads))
                for j in range(len(in_leaves)):
                    rows[j].append((o, leaves[j]))
        per_leaf = [[[r for (oo, r) in rows[j] if oo == o] for o in range(len(out_leaves))]
                    for j in range(len(in_leaves))]
        blocks = []
        for o, out_leaf in enumerate(out_leaves):
            per_input = []
            for j, in_leaf in enumerate(in_leaves):
                rs = [np.asarray(r) for r in per_leaf[j][o]]
                block = np.stack(rs, axis=0).reshape(np.shape(out_leaf) + np.shape(in_leaf))
                per_input.append(block)
            inner = tree_util.tree_unflatten(in_tree, per_input)
            blocks.append(inner[0] if single else tuple(inner))
        return tree_util.tree_unflatten(out_tree, blocks)

    jacobian.__tangent_x_loop__ = True
    return jacobian


def hessian(fun, argnums=0):
    """Forward over reverse: the jacfwd of the gradient."""
    hess = jacfwd(grad(fun, argnums=argnums), argnums=argnums)
    return hess
