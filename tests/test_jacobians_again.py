"""A Jacobian of several arguments, or of pytrees (dict, tuple), transformed
again: its source form (``api/jacobian_source.py``) has one vmapped jvp per
differentiated leaf, nested as JAX nests the result (output structure, then
one entry per argnum, then the argument's structure).  Checked against
central differences of the eager Jacobians and gradients, eagerly and
under jit."""
import numpy as np

import tangent_x as tx
from _fd import assert_tree_allclose, numerical_grad

EPS = 1e-6


def _fd_jacobian(fn, args, argnum):
    """Central differences of a pytree-valued ``fn`` with respect to the
    array (or dict of arrays) ``args[argnum]``, nested as JAX's Jacobians."""
    arg = args[argnum]
    keys = sorted(arg) if isinstance(arg, dict) else [None]

    def at(key, k, step):
        new = {kk: np.array(v, dtype=float) for kk, v in arg.items()} \
            if key is not None else np.array(arg, dtype=float)
        leaf = new[key] if key is not None else new
        leaf.reshape(-1)[k] += step
        return fn(*args[:argnum], new, *args[argnum + 1:])

    def per_key(key):
        leaf = arg[key] if key is not None else arg
        diffs = [tx.tree_util.tree_map(lambda a, b: (np.asarray(a) - np.asarray(b)) / (2 * EPS),
                                       at(key, k, EPS), at(key, k, -EPS))
                 for k in range(np.size(leaf))]
        return tx.tree_util.tree_map(
            lambda *cols: np.moveaxis(np.stack(cols), 0, -1).reshape(
                np.shape(cols[0]) + np.shape(leaf)), *diffs)
    if isinstance(arg, dict):
        per = {key: per_key(key) for key in keys}
        out = fn(*args)
        # output structure outside, the argument's dict inside
        return tx.tree_util.tree_map(lambda _, *leaves: dict(zip(keys, leaves)),
                                     out, *[per[k] for k in keys])
    return per_key(None)


def f(x, y):
    return np.sin(x) * y ** 2 + x[::-1] * y


X = np.array([0.3, -0.5, 0.8])
Y = np.array([1.2, -0.7, 0.4])


def test_jacfwd_of_jacrev_of_two_arguments():
    jac = tx.jacrev(f, argnums=(0, 1))
    for outer in (0, (0, 1)):
        got = tx.jacfwd(jac, argnums=outer)(X, Y)
        if outer == 0:
            expected = _fd_jacobian(jac, (X, Y), 0)
        else:
            by_x, by_y = _fd_jacobian(jac, (X, Y), 0), _fd_jacobian(jac, (X, Y), 1)
            expected = tuple((a, b) for a, b in zip(by_x, by_y))
        assert_tree_allclose(got, expected, rtol=1e-6, atol=1e-7)
    assert_tree_allclose(tx.jacrev(tx.jacfwd(f, argnums=(0, 1)))(X, Y),
                         _fd_jacobian(tx.jacfwd(f, argnums=(0, 1)), (X, Y), 0),
                         rtol=1e-6, atol=1e-7)


def layer(q):
    return np.tanh(q['w'] * q['b'])


LAYER_JACOBIAN = tx.jacrev(layer)
P = {'w': np.array([0.3, -0.2, 0.5]), 'b': np.array([1.0, 2.0, 0.5])}


def jacobian_sum(p):
    return np.sum(LAYER_JACOBIAN(p)['w'])


def test_grad_of_a_sum_of_a_dict_jacobian():
    expected = numerical_grad(jacobian_sum, (P,), 0)
    assert_tree_allclose(tx.grad(jacobian_sum)(P), expected, rtol=1e-6, atol=1e-7)
    inline = tx.grad(lambda p: np.sum(tx.jacrev(layer)(p)['w']))(P)
    assert_tree_allclose(inline, expected, rtol=1e-6, atol=1e-7)


def test_jit_grad_of_a_sum_of_a_dict_jacobian():
    assert_tree_allclose(tx.jit(tx.grad(jacobian_sum))(P),
                         numerical_grad(jacobian_sum, (P,), 0), rtol=1e-6, atol=1e-7)


def loss(params, x):
    return np.sum(np.tanh(params['w'] * x + params['b']) ** 2)


def test_jit_hessian_of_two_arguments_with_dict_params():
    hessian = tx.hessian(loss, argnums=(0, 1))
    got = hessian(P, X)
    assert_tree_allclose(tx.jit(hessian)(P, X), got, rtol=1e-12, atol=1e-12)
    for i in (0, 1):      # JAX's nesting: argument i's structure, then a tuple over j
        grad_i = tx.grad(loss, argnums=i)
        for j in (0, 1):
            got_ij = tx.tree_util.tree_map(lambda t: t[j], got[i],
                                           is_leaf=lambda t: isinstance(t, tuple))
            assert_tree_allclose(got_ij, _fd_jacobian(grad_i, (P, X), j),
                                 rtol=1e-6, atol=1e-7)
    # the same matrix by jacfwd of a jacrev of two arguments and a dict
    again = tx.jacfwd(tx.jacrev(loss, argnums=(0, 1)), argnums=(0, 1))(P, X)
    assert_tree_allclose(again, got, rtol=1e-10, atol=1e-12)
