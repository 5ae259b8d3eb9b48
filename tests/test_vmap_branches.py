"""vmap of branches whose values mix batched and shared ones: if/elif/else,
conditional expressions, early return, lax.cond and lax.switch, under
vmap(f), vmap(grad(f)), grad of a vmapped sum and vmap(jacfwd(f)).

Every expected value comes from a loop over the examples of the plain
function or of ``tx.grad`` (itself checked against central differences):
"slower, never wrong" -- what a per-example loop runs, vmap runs."""
import numpy as np
import pytest

import tangent_x as tx
from tangent_x import lax

BATCH = 5


def sum_or_double(x, y):
    if np.sum(x) > 0.63:
        a = y
    else:
        a = y - -y
    return np.sum(a)


def shared_or_product(x, y):
    if np.sum(x) > 0.3:
        a = y * 1.0
    else:
        a = x * y
    return np.sum(a * a)


def elif_chain(x, y):
    s = np.sum(x)
    if s > 0.8:
        a = y
    elif s > 0.2:
        a = x * y
    else:
        a = y * y
    return np.sum(a)


def nested(x, y):
    if np.sum(x) > 0.2:
        if x[0] > 0.3:
            a = y
        else:
            a = y * x
        b = 2.0 * y
    else:
        a = y * y
        b = x
    return np.sum(a * b)


def early_return(x, y):
    if np.sum(x) > 0.5:
        return np.sum(y * y)
    z = x * y
    return np.sum(np.exp(z))


def assigned_in_one_branch(x, y):
    t = y * 1.0
    if np.sum(x) > 0.4:
        u = y * y
        t = u + x
    return np.sum(t)


def conditional_expression(x, y):
    a = x * y if np.sum(x) > 0.4 else y
    return np.sum(a * a)


def with_lax_cond(x, y):
    a = lax.cond(np.sum(x) > 0.4, lambda u, v: v * 1.0, lambda u, v: u * v, x, y)
    return np.sum(a)


def with_lax_switch(x, y):
    i = (np.sum(x) > 0.3).astype(int) + (np.sum(x) > 0.9).astype(int)
    a = lax.switch(i, [lambda u, v: v, lambda u, v: u * v, lambda u, v: v * v], x, y)
    return np.sum(a)


def tuple_value(x, y):
    if np.sum(x) > 0.4:
        t = (y, x * 2.0)
    else:
        t = (x * y, y)
    return np.sum(t[0]) * np.sum(t[1])


def branch_in_loop(x, y):
    acc = y * 0.0
    for i in range(3):
        if x[i % 2] > 0.3:
            acc = acc + y
        else:
            acc = acc * x[0]
    return np.sum(acc)


FUNCTIONS = [sum_or_double, shared_or_product, elif_chain, nested, early_return,
             assigned_in_one_branch, conditional_expression, with_lax_cond,
             with_lax_switch, tuple_value, branch_in_loop]
# lax.cond and lax.switch require branches of one shape (as JAX does)
SAME_SHAPES_ONLY = {with_lax_cond, with_lax_switch}
IN_AXES = [(0, None), (None, 0), (0, 0), 1, -1]


def _examples(y_shape, seed=0):
    rng = np.random.default_rng(seed)
    xs = [rng.uniform(-0.2, 0.7, size=2) for _ in range(BATCH)]
    ys = [rng.uniform(-0.5, 1.0, size=y_shape) for _ in range(BATCH)]
    return xs, [float(y) if y_shape == () else y for y in ys]


def _cases():
    for fun in FUNCTIONS:
        for y_shape in [(), (2,)]:
            if fun in SAME_SHAPES_ONLY and y_shape == ():
                continue        # a scalar y against x * y of shape (2,)
            for in_axes in IN_AXES:
                axes = in_axes if isinstance(in_axes, tuple) else (in_axes, in_axes)
                if y_shape == () and axes[1] not in (None, 0):
                    continue    # a scalar per example has no axis 1
                yield pytest.param(fun, y_shape, in_axes,
                                   id=f"{fun.__name__}-y{len(y_shape)}d-{in_axes}")


def _batch(xs, ys, in_axes):
    axes = in_axes if isinstance(in_axes, tuple) else (in_axes, in_axes)
    x = xs[0] if axes[0] is None else np.stack(xs, axis=axes[0])
    y = ys[0] if axes[1] is None else np.stack(ys, axis=axes[1])
    examples = [(xs[0] if axes[0] is None else xs[k], ys[0] if axes[1] is None else ys[k])
                for k in range(BATCH)]
    return axes, x, y, examples


def _central_differences(fun, x, y, eps=1e-6):
    def partial(arg, bump):
        arg = np.asarray(arg, float)
        out = np.zeros_like(arg)
        for i in np.ndindex(arg.shape):
            step = np.zeros_like(arg)
            step[i] = eps
            out[i] = (bump(arg + step) - bump(arg - step)) / (2 * eps)
        return out
    return (partial(x, lambda a: fun(a, y)), partial(y, lambda b: fun(x, b)))


def _assert_tree_close(got, expected):
    got_leaves, expected_leaves = tx.tree_util.tree_leaves(got), \
        tx.tree_util.tree_leaves(expected)
    assert len(got_leaves) == len(expected_leaves)
    for g, e in zip(got_leaves, expected_leaves):
        assert np.shape(g) == np.shape(e)
        np.testing.assert_allclose(g, e, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("fun,y_shape,in_axes", list(_cases()))
def test_vmap_matches_loop(fun, y_shape, in_axes):
    xs, ys = _examples(y_shape)
    _, x, y, examples = _batch(xs, ys, in_axes)
    expected = np.array([fun(*e) for e in examples])
    _assert_tree_close(tx.vmap(fun, in_axes=in_axes)(x, y), expected)


@pytest.mark.parametrize("fun,y_shape,in_axes", list(_cases()))
def test_vmap_of_grad_matches_loop(fun, y_shape, in_axes):
    xs, ys = _examples(y_shape, seed=1)
    _, x, y, examples = _batch(xs, ys, in_axes)
    grad = tx.grad(fun, argnums=(0, 1))
    per_example = [grad(*e) for e in examples]
    for e, g in zip(examples[:2], per_example):     # the oracle itself
        _assert_tree_close(tuple(np.asarray(v, float) for v in g),
                           _central_differences(fun, *e))
    expected = tuple(np.stack([np.asarray(g[i]) for g in per_example]) for i in range(2))
    _assert_tree_close(tx.vmap(grad, in_axes=in_axes)(x, y), expected)


# elif_chain with y a number (branches of different ranks nested in an
# ``if``) was refused until vmap's probe ran both branches of nested ``if``s
@pytest.mark.parametrize("fun,y_shape,in_axes", list(_cases()))
def test_grad_of_vmapped_sum_matches_loop(fun, y_shape, in_axes):
    """A shared argument's gradient is the sum over examples, a mapped one's
    the per-example gradients on the mapped axis."""
    xs, ys = _examples(y_shape, seed=2)
    axes, x, y, examples = _batch(xs, ys, in_axes)
    # grad reads a vmapped function's latest specialisation: a function of
    # this test's own, which earlier tests did not specialise to other
    # argument structures
    def example(x, y):
        return fun(x, y)
    vmapped = tx.vmap(example, in_axes=in_axes)
    vmapped(x, y)

    def total(x, y):
        return np.sum(vmapped(x, y))
    per_example = [tx.grad(fun, argnums=(0, 1))(*e) for e in examples]
    expected = []
    for i, ax in enumerate(axes):
        parts = [np.asarray(g[i], float) for g in per_example]
        expected.append(sum(parts) if ax is None else np.stack(parts, axis=ax))
    _assert_tree_close(tx.grad(total, argnums=(0, 1))(x, y), tuple(expected))


def test_shared_operand_cotangent_is_per_example():
    """The case that summed the shared ``y``'s cotangent over every lane in
    both branches: d/dy is 1 where sum(x) > 0.63, else 2, per example."""
    x = np.array([[0.1, 0.2], [0.5, 0.6], [-0.3, 0.1]])
    _, dy = tx.vmap(tx.grad(sum_or_double, argnums=(0, 1)), in_axes=(0, None))(x, 0.856)
    expected = [_central_differences(sum_or_double, row, 0.856)[1] for row in x]
    np.testing.assert_allclose(dy, expected, rtol=1e-8)


def test_branches_of_different_ranks_run_per_example():
    """``y`` (a number) in one branch, ``x * y`` (a vector) in the other: no
    batched array holds both, so vmap runs the function once per example."""
    xs, ys = _examples(())
    x, y = np.stack(xs), ys[0]
    vmapped = tx.vmap(shared_or_product, in_axes=(0, None))
    np.testing.assert_allclose(vmapped(x, y), [shared_or_product(r, y) for r in xs])
    assert "method='loop'" in vmapped.generated.description


def test_shared_side_is_broadcast_before_the_choice():
    """The vectorised code gives a shared branch value the batch axis itself
    (``broadcast_lanes``) instead of relying on NumPy broadcasting."""
    xs, ys = _examples((2,))
    vmapped = tx.vmap(sum_or_double, in_axes=(0, None))
    vmapped(np.stack(xs), ys[0])
    text = tx.source(vmapped)
    assert "y_lanes = broadcast_lanes(y, batch_size)" in text
    assert "select_lanes(gt, y_lanes," in text


def guarded_loop(x):
    # the loop ends only under its guard: on an example that returns early
    # it would run forever (vmap's probe runs both branches of an ``if``)
    if x > 0.0:
        return x * 2.0
    w = x
    while w < 1.0:
        w = w + 0.5 - x      # ends when x <= 0 only
    return w * x


def test_untaken_branch_that_never_ends_is_cut_short():
    xs = np.array([1.5, 0.5, -2.0])
    want = np.array([guarded_loop(x) for x in xs])
    np.testing.assert_allclose(tx.vmap(guarded_loop)(xs), want)
    np.testing.assert_allclose(tx.vmap(tx.grad(guarded_loop))(xs), [tx.grad(guarded_loop)(x) for x in xs])


def dead_item_update(x, c):
    c = c * 1.0
    if np.max(x) >= 0.1:
        return c[0] * x[0]
    if np.max(x) > 0.4:         # never true here: no example runs the next line,
        c[2] *= 0.5 * c[1::2]   # on which NumPy raises (a size-1 array into an item)
    return c[1] * x[1]


def test_inner_branch_runs_only_for_the_lanes_that_reach_it():
    """A branch inside a branch (here after an early return) runs when a
    lane that gets there takes it.  Before, its test counted every lane:
    the lanes that had returned took the inner branch, so vmap ran a line
    no example reaches, and NumPy's error there crashed vmap (program
    generator, seed 160009)."""
    xs = np.array([[0.8, 0.12], [-0.3, 0.05], [0.5, 0.45], [-1.0, -2.0]])
    c = np.array([-0.7, 1.2, -0.8])
    expected = [dead_item_update(x, c) for x in xs]
    np.testing.assert_allclose(tx.vmap(dead_item_update, in_axes=(0, None))(xs, c), expected,
                               rtol=1e-15)
    grads = [tx.grad(dead_item_update, argnums=(0, 1))(x, c) for x in xs]
    got = tx.vmap(tx.grad(dead_item_update, argnums=(0, 1)), in_axes=(0, None))(xs, c)
    np.testing.assert_allclose(got[0], np.stack([g[0] for g in grads]), rtol=1e-15)
    np.testing.assert_allclose(got[1], np.stack([g[1] for g in grads]), rtol=1e-15)
    # the reference gradient itself against central differences
    for x in xs:
        d = np.zeros(2)
        for i in range(2):
            e = np.eye(2)[i] * 1e-6
            d[i] = (dead_item_update(x + e, c) - dead_item_update(x - e, c)) / 2e-6
        np.testing.assert_allclose(tx.grad(dead_item_update)(x, c), d, rtol=1e-6, atol=1e-8)
