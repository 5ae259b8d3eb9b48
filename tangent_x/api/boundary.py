"""What crosses between the caller and generated code, checked and shaped.

Inputs: the differentiated arguments must be floats (``check_inputs``).
Outputs: gradients take their primal's dtype, shape and structure, as in
JAX, symbolic zeros become real zeros (``fill``, ``cast_like``), and no
gradient shares memory with an input or another gradient (``owned``).
"""
import numpy as np

from .. import runtime, tree_nodes, tree_util
from . import complex_values


def check_inputs(kind, fun, args, argnums, plain=False):
    """Inputs a derivative takes (``plain``: the caller saw that every leaf
    is a plain real array or number, see ``arguments.plain_real``)."""
    if kind == "python":
        return
    if not plain:
        complex_values.refuse_in_arguments(kind, fun, args)
    for i in argnums:
        if i >= len(args) or i < -len(args):
            raise TypeError(f"{kind}({getattr(fun, '__name__', 'f')}) was called with "
                            f"{len(args)} positional argument(s) but argnums={i}")
        for leaf in _leaves(args[i]):
            dtype = np.result_type(leaf) if not isinstance(leaf, bool) else np.dtype(bool)
            if not np.issubdtype(dtype, np.inexact):
                raise TypeError(
                    f"{kind} requires real- or complex-valued inputs (a float "
                    f"dtype), but argument {i} of {getattr(fun, '__name__', 'f')} "
                    f"has dtype {dtype}; pass floats (e.g. 1.0 instead of 1) or "
                    "exclude it with argnums")


def cast_like(g, x):
    """Gradients take the dtype and shape of their primal, as in JAX; a
    symbolic zero (None) becomes real zeros."""
    if g is None:
        return np.zeros_like(x) if isinstance(x, (np.ndarray, np.generic)) else 0.0 * x
    if np.iscomplexobj(g) and not np.iscomplexobj(x):
        raise TypeError("a complex cotangent reached a real argument: the function "
                        "computes with complex values somewhere tangent_x could not see "
                        f"before running it; {complex_values.HINT}")
    if isinstance(x, np.ndarray):
        return np.asarray(np.broadcast_to(g, x.shape) if np.shape(g) != x.shape else g,
                          dtype=x.dtype)
    if isinstance(x, np.generic):
        return x.dtype.type(g)
    if isinstance(x, float):
        return float(g)
    return g


def cast_grads(grads, args, argnums, single):
    if single:
        grads = (grads,)
    out = tuple(fill(g, args[i]) for g, i in zip(grads, argnums))
    out = owned(out, args)
    return out[0] if single else out


def fill(g, x):
    """Cast a gradient to its argument's structure, filling symbolic zeros."""
    if g is None:
        return runtime.zeros_like(x)
    if isinstance(x, dict):
        # a plain dict's keys in sorted order, as JAX (and tree_util) give them
        keys = tree_nodes._sorted_keys(x) if type(x) is dict else list(x)
        return type(x)((k, fill(g.get(k) if isinstance(g, dict) else None, x[k]))
                       for k in keys)
    if isinstance(x, (list, tuple)) and isinstance(g, (list, tuple)):
        items = [fill(u, v) for u, v in zip(g, x)]
        if hasattr(x, "_fields"):
            return type(x)(*items)
        return type(x)(items)
    if tree_util._node_kind(x) is not None:
        return tree_util.tree_map(cast_like, g, x)
    return cast_like(g, x)


def owned(grads, args):
    """Every gradient leaf a writable array that shares memory with no input
    and no other leaf: never a read-only broadcast view, never the caller's
    own array (generated code may legitimately return ``x_bar = y``).  A
    view of a fresh temporary (``np.transpose(w_bar_t)``) is kept as it is."""
    seen = {id(_root(leaf)) for leaf in _leaves(args) if isinstance(leaf, np.ndarray)}

    def own(leaf):
        if isinstance(leaf, np.ndarray):
            root = _root(leaf)
            if id(root) in seen or not leaf.flags.writeable:
                leaf = leaf.copy()
                root = leaf
            seen.add(id(root))
        return leaf

    return _map(own, grads)


# Walks of plain containers (dict, list, tuple) for the eager call path:
# tree_util's flatten builds a PyTreeDef and sorts dict keys, which here
# nothing needs (the leaves are checked or collected as a set; a map keeps
# the structure it is given).  Other node types go to tree_util.  For the
# MLP's list of dicts, ~25 us a call less.

def _leaves(tree, out=None):
    """The leaves of ``tree`` in no particular order (None is no leaf)."""
    out = [] if out is None else out
    kind = type(tree)
    if kind is dict:
        for v in tree.values():
            _leaves(v, out)
    elif kind is list or kind is tuple:
        for v in tree:
            _leaves(v, out)
    elif tree is not None:
        if tree_util._node_kind(tree) is None:
            out.append(tree)
        else:
            out.extend(tree_util.tree_leaves(tree))
    return out


def _map(f, tree):
    """``tree_util.tree_map(f, tree)`` keeping a plain dict's key order."""
    kind = type(tree)
    if kind is dict:
        return {k: _map(f, v) for k, v in tree.items()}
    if kind is list:
        return [_map(f, v) for v in tree]
    if kind is tuple:
        return tuple(_map(f, v) for v in tree)
    if tree is None:
        return None
    if tree_util._node_kind(tree) is None:
        return f(tree)
    return tree_util.tree_map(f, tree)


def _root(a):
    """The object that owns an array's memory."""
    while isinstance(a, np.ndarray) and a.base is not None:
        a = a.base
    return a
