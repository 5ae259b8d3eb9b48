"""Finite-difference reference gradients for tests, independent of tangent_x.

Two helpers:

``numerical_grad(f, args, argnum=0)``
    Central differences ``(f(x + eps e_i) - f(x - eps e_i)) / (2 eps)``,
    one coordinate at a time, with ``eps = 1e-6``.  ``f`` must return a
    scalar (a Python float or a 0-d array).  Arguments are pytrees of float64
    arrays and Python floats built from dict, list, tuple, NamedTuple and
    None; the result has the same structure as ``args[argnum]`` (a Python
    float leaf gets a float, an array leaf an array of the same shape).  With
    a tuple ``argnum`` the result is a tuple, one entry per argument, as
    ``tx.grad(f, argnums=(...))`` returns.  ``f`` is always called on fresh
    copies, so a function that mutates its inputs cannot corrupt the
    reference.

``assert_tree_allclose(actual, expected, rtol=1e-5, atol=1e-6)``
    Asserts that two pytrees have the same structure (same container types,
    same dict keys, same lengths), that each leaf has the expected shape and
    a floating dtype, and that the values agree within tolerance.

Flattening is written here on purpose instead of using
``tangent_x.tree_util``: the reference must not share code with the library
under test.
"""
import copy

import numpy as np

EPS = 1e-6


def _is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def _leaves(tree):
    """Leaves of ``tree`` in JAX's order (dict keys sorted)."""
    if tree is None:
        return []
    if isinstance(tree, dict):
        return [leaf for k in sorted(tree) for leaf in _leaves(tree[k])]
    if isinstance(tree, (list, tuple)):
        return [leaf for item in tree for leaf in _leaves(item)]
    return [tree]


def _rebuild(tree, leaves):
    """``tree`` with its leaves replaced, in ``_leaves`` order, by ``leaves``."""
    it = iter(leaves)

    def go(t):
        if t is None:
            return None
        if isinstance(t, dict):
            new = {k: go(t[k]) for k in sorted(t)}
            return type(t)((k, new[k]) for k in t)   # keep insertion order
        if _is_namedtuple(t):
            return type(t)(*[go(item) for item in t])
        if isinstance(t, (list, tuple)):
            return type(t)(go(item) for item in t)
        return next(it)

    return go(tree)


def _leaf_grad(f, args, argnum, leaves, k):
    """Central-difference gradient of ``f`` with respect to leaf ``k``."""
    def at(leaf):
        new_leaves = [copy.deepcopy(v) for v in leaves]
        new_leaves[k] = leaf
        new_args = [copy.deepcopy(a) for a in args]
        new_args[argnum] = _rebuild(args[argnum], new_leaves)
        return float(f(*new_args))

    x = leaves[k]
    if isinstance(x, np.ndarray):
        x = np.asarray(x, dtype=np.float64)
        grad = np.zeros(x.shape)
        for i in np.ndindex(x.shape):
            plus, minus = x.copy(), x.copy()
            plus[i] += EPS
            minus[i] -= EPS
            grad[i] = (at(plus) - at(minus)) / (2 * EPS)
        return grad
    x = float(x)
    return (at(x + EPS) - at(x - EPS)) / (2 * EPS)


def numerical_grad(f, args, argnum=0):
    """Gradient of scalar ``f(*args)`` by central differences (see module doc)."""
    args = tuple(args)
    if isinstance(argnum, tuple):
        return tuple(numerical_grad(f, args, a) for a in argnum)
    leaves = _leaves(args[argnum])
    grads = [_leaf_grad(f, args, argnum, leaves, k) for k in range(len(leaves))]
    return _rebuild(args[argnum], grads)


def _structure(tree):
    """A comparable description of the containers of ``tree``."""
    if tree is None:
        return None
    if isinstance(tree, dict):
        return (type(tree).__name__, tuple((k, _structure(tree[k])) for k in sorted(tree)))
    if isinstance(tree, (list, tuple)):
        return (type(tree).__name__, tuple(_structure(t) for t in tree))
    return "*"


def assert_tree_allclose(actual, expected, rtol=1e-5, atol=1e-6, err_msg=""):
    """Same structure, shapes, floating dtypes and close values (see module doc)."""
    s_act, s_exp = _structure(actual), _structure(expected)
    assert s_act == s_exp, (f"{err_msg}\npytree structure differs:\n  actual   "
                            f"{s_act}\n  expected {s_exp}")
    for i, (a, e) in enumerate(zip(_leaves(actual), _leaves(expected))):
        where = f"{err_msg} (leaf {i})"
        assert np.shape(a) == np.shape(e), (
            f"{where}: shape {np.shape(a)} != expected {np.shape(e)}")
        dtype = np.asarray(a).dtype
        assert dtype.kind in "fc", f"{where}: dtype {dtype} is not floating"
        np.testing.assert_allclose(np.asarray(a, dtype=np.float64), e,
                                   rtol=rtol, atol=atol, err_msg=where)


def assert_tree_equal(actual, expected, err_msg=""):
    """Exact equality of two pytrees (used to check inputs were not mutated)."""
    s_act, s_exp = _structure(actual), _structure(expected)
    assert s_act == s_exp, f"{err_msg}: structure {s_act} != {s_exp}"
    for i, (a, e) in enumerate(zip(_leaves(actual), _leaves(expected))):
        np.testing.assert_array_equal(a, e, err_msg=f"{err_msg} (leaf {i})")
