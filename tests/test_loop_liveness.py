"""A name bound afresh at the top of a loop body (``zs = []``) is not live
across iterations: the value it held in the last iteration is never read.
Liveness counted every name a loop body read as read in the next
iteration, so a list made at the top of an outer loop's body, named twice
and appended to in an inner loop, was refused as an alias whose sharing
changes between iterations -- in user code and in tangent_x's own
derivative code transformed again (Hessian-vector products and vmap(grad)
of the program generator's seed 170041).  A ``break`` or ``continue`` that
may skip the binding, or a local function that reads names when called,
keeps the old, coarse liveness.  Against finite differences and a loop."""
import numpy as np

import tangent_x as tx
from _fd import assert_tree_allclose, numerical_grad


def fresh_list_each_turn(x):
    acc = x * 1.0
    for i in range(3):
        zs = []
        ys = zs
        for v in acc:
            ys.append(v * 0.5 + i)
            ys2 = ys
            ys = ys2
        acc = acc + np.sin(np.array(ys))
    return np.sum(acc * acc)


def rebound_after_a_continue(x):
    s = x * 1.0
    t = x * 2.0
    for i in range(4):
        u = s * t       # t's value from the last turn when the continue skipped
        if i % 2 == 1:
            continue
        t = np.cos(u)
        s = s + 0.1 * t
    return np.sum(s * t)


X = np.array([0.3, -0.7, 1.1])


def test_gradients_hessian_products_and_vmap_grad():
    for fn in (fresh_list_each_turn, rebound_after_a_continue):
        expected = numerical_grad(fn, (X,))
        assert_tree_allclose(tx.grad(fn)(X), expected)
        v = np.array([0.5, -1.0, 2.0])
        grad_fn = tx.grad(fn)
        hvp = tx.jvp(grad_fn, (X,), (v,))[1]
        step = 1e-5
        assert_tree_allclose(hvp, (grad_fn(X + step * v) - grad_fn(X - step * v)) / (2 * step),
                             rtol=1e-5, atol=1e-6)
        xs = np.stack([X, -X, X + 0.5])
        np.testing.assert_allclose(tx.vmap(tx.grad(fn))(xs),
                                   np.stack([numerical_grad(fn, (x,)) for x in xs]),
                                   rtol=1e-6, atol=1e-7)


def halved_sum(q):
    return np.sum(q) * 0.5


def after_a_returned_helper(x):
    x = x * 1.0
    s = halved_sum(x)       # q names x's array, but the call has returned
    for i in range(3):
        x += 0.1 * s
        x = 0.7 * x + 0.3 * np.sin(x)
    return np.sum(x * x)


def test_a_returned_helpers_parameter_is_not_read_again():
    """A loop that changes ``x`` in place and rebinds it, after a helper
    took ``x`` as its parameter and returned: the parameter is never read
    again, so the array's sharing does not matter (before: refused as an
    alias whose sharing changes between iterations; program generator,
    seed 170122)."""
    expected = numerical_grad(after_a_returned_helper, (X,))
    assert_tree_allclose(tx.grad(after_a_returned_helper)(X), expected)
    xs = np.stack([X, -X])
    np.testing.assert_allclose(tx.vmap(after_a_returned_helper)(xs),
                               [after_a_returned_helper(x) for x in xs], rtol=1e-14)
    np.testing.assert_allclose(tx.vmap(tx.grad(after_a_returned_helper))(xs),
                               np.stack([numerical_grad(after_a_returned_helper, (x,))
                                         for x in xs]), rtol=1e-6, atol=1e-7)


def star_unpacked_each_turn(x):
    # fuzz seeds 570197 and 581306, shrunk: ``a, *rest, z = ...`` binds its
    # three names each turn; liveness took them for names read before they
    # are bound, so the loop carried them from unbound, and jit(grad)
    # refused the unbound list its tape pushes first
    for i in np.sqrt(1.0 + x * x):
        a, *rest, z = (-0.37 * i, x ** 2, i)
        k = a * z + sum(rest) * 0.5 + len(rest)
        x = 0.7 * x + 0.3 * k
    return np.sum(x)


def test_a_starred_unpacking_binds_each_of_its_names():
    g = tx.grad(star_unpacked_each_turn)
    want = numerical_grad(star_unpacked_each_turn, (X,))
    assert_tree_allclose(g(X), want, rtol=1e-6)
    assert_tree_allclose(tx.jit(g)(X), g(X), rtol=1e-12)
    assert "rest_tape" not in tx.source(g)
