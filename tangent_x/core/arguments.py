"""Checks on the arguments a transformed function is called with, shared by
every transform (grad, jvp, vjp, vmap, jit, the Jacobians)."""
import inspect
import numbers

import numpy as np

from .. import tree_paths, tree_util

_SHOWN_KIND = {"vjp_split": "vjp", "python": "the transform"}


def plain_real(tree):
    """True when every leaf is a plain (not masked) real-or-integer array or
    a Python float, int or bool: the common case, which needs neither
    ``refuse_masked`` nor the complex check (one cheap walk)."""
    kind = type(tree)
    if kind is tuple or kind is list:
        return all(plain_real(v) for v in tree)
    if kind is dict:
        return all(plain_real(v) for v in tree.values())
    if kind is np.ndarray:
        return tree.dtype.kind != "c"
    return kind is float or kind is int or kind is bool or tree is None


def refuse_masked(kind, fun, args, kwargs=None, what="argument"):
    """NumPy masked arrays are refused as arguments, as JAX refuses them:
    the function's value would honour the mask and its derivatives would
    not.  The error names the argument (its position and parameter, or
    keyword, and the path to the leaf within a container); ``what`` names
    the arguments' role ("primal", "tangent", "cotangent")."""
    if not _any_masked((args, kwargs)):
        return
    names = _parameter_names(fun) if what == "argument" else []
    given = [(f"{what} {i}" + (f" ({names[i]})" if i < len(names) else ""), a)
             for i, a in enumerate(args)] + \
        [(f"keyword argument {k!r}", a) for k, a in (kwargs or {}).items()]
    for label, value in given:
        leaves, treedef = tree_util.tree_flatten(value)
        for path, leaf in zip(tree_paths._leaf_paths(treedef), leaves):
            if isinstance(leaf, np.ma.MaskedArray):
                where = f"{label}{' at ' + path if path else ''}"
                shown = _SHOWN_KIND.get(kind, kind)
                raise ValueError(
                    f"{shown}({getattr(fun, '__name__', 'f')}): {where} is a numpy masked "
                    "array; numpy masked arrays are not supported as direct inputs to "
                    "tangent_x transforms (as in JAX: derivatives would ignore the mask). "
                    "Use arr.filled(value) to convert it to a standard numpy array, and "
                    "apply the mask inside the function if it matters "
                    "(e.g. np.where(mask, x, 0.0))")


def any_leaf(tree, test):
    """Whether ``test`` holds for a leaf of ``tree``: a plain walk of lists,
    tuples and dicts (the common arguments, cheaply), other containers
    through tree_util."""
    kind = type(tree)
    if kind is tuple or kind is list:
        return any(any_leaf(v, test) for v in tree)
    if kind is dict:
        return any(any_leaf(v, test) for v in tree.values())
    if tree is not None and not isinstance(tree, np.ndarray) and \
            tree_util._node_kind(tree) is not None:
        return any(any_leaf(v, test) for v in tree_util.tree_leaves(tree))
    return test(tree)


def _any_masked(tree):
    return any_leaf(tree, lambda leaf: isinstance(leaf, np.ma.MaskedArray))


def _parameter_names(fun):
    try:
        return [p.name for p in inspect.signature(fun).parameters.values()
                if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        return []


def param_names(fun, n):
    """The names of ``fun``'s first ``n`` parameters, ``#i`` past them (for
    messages naming an argument)."""
    try:
        params = list(inspect.signature(fun).parameters)
    except (TypeError, ValueError):
        params = []
    return [params[i] if i < len(params) else f"#{i}" for i in range(n)]


def broadcast_prefix(spec, tree):
    """``spec`` (an axis or None, or a pytree prefix of ``tree``) expanded to
    one entry per leaf of ``tree``, with ``tree``'s structure."""
    if spec is None or isinstance(spec, numbers.Integral):
        return tree_util.tree_map(lambda _: spec, tree)
    if isinstance(spec, dict):
        if not isinstance(tree, dict) or set(spec) != set(tree):
            raise ValueError(f"{spec!r} against {type(tree).__name__}")
        return type(tree)((k, broadcast_prefix(spec[k], tree[k])) for k in tree)
    if isinstance(spec, (tuple, list)):
        if not isinstance(tree, (tuple, list)) or len(spec) != len(tree):
            raise ValueError(f"{spec!r} against {type(tree).__name__}")
        items = [broadcast_prefix(s, t) for s, t in zip(spec, tree)]
        return type(tree)(*items) if hasattr(tree, "_fields") else type(tree)(items)
    raise ValueError(f"unsupported in_axes entry {spec!r}")
