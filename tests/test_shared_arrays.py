"""``y op= v`` changes an array in place and rebinds a number, and ``row =
x[0]`` is a view of a 2-d array but a copy (a number) of a 1-d one: which
one happens is known only at run time, so tangent_x decides there
(``is_array``), under every transform.  Each case runs with arrays and with
numbers and is checked against NumPy itself, finite differences, a loop
over examples and the compiled code."""
import numpy as np
import pytest

import tangent_x as tx
from _fd import assert_tree_allclose, numerical_grad


def alias_then_aug(x, y):
    z = x
    x += y                 # z sees it if x is an array
    return np.sum(z * z) + np.sum(x)


def aug_then_aug(x, y):
    z = x
    x += y
    z *= y                 # ... and x sees this
    return np.sum(z * x)


def alias_then_item(x, y):
    z = x
    x += y
    x[0] = 2.0 * y         # z, recorded as x[...], sees this too
    return np.sum(z * z)


def view_then_item(x, y):
    row = x[0]             # a view of a 2-d x; a number from a 1-d x
    x[0] = 5.0 * y
    return np.sum(row * 3.0) + np.sum(x)


def swap(x, y):
    tmp = x[0]
    x[0] = x[1] * y
    x[1] = tmp
    return np.sum(x * np.arange(1.0, 1.0 + np.size(x)).reshape(np.shape(x)))


def view_aug(x, y):
    row = x[0]
    row += y               # changes x if row is a view
    return np.sum(x * x)


def argument_in_helper(x, y):
    def bump(q):
        q *= y             # the caller's array if q is one
        return np.sum(q)
    s = bump(x)
    return s + np.sum(x * x)


def number_alias(x, y):
    s = np.sum(x)          # a NumPy number: += rebinds it
    t = s
    s += y
    return s * t


FUNCTIONS = [alias_then_aug, aug_then_aug, alias_then_item, view_then_item, swap,
             view_aug, argument_in_helper, number_alias]
NEEDS_ITEMS = {alias_then_item, view_then_item, swap, view_aug}
SHAPES = [(3,), (2, 3), (2, 1), ()]


def _cases():
    for fn in FUNCTIONS:
        for shape in SHAPES:
            if shape == () and fn in NEEDS_ITEMS:
                continue
            yield pytest.param(fn, shape, id=f"{fn.__name__}-{shape}")


def _x(shape):
    return (np.arange(1.0, 1.0 + np.prod(shape)).reshape(shape) * 0.7 - 1.1 if shape
            else 0.9)


def _plain(fn, x, y):
    return fn(np.array(x) if np.ndim(x) else x, y)


@pytest.mark.parametrize("fn, shape", list(_cases()))
def test_value_and_grad_follow_numpy(fn, shape):
    x, y = _x(shape), 0.6
    value, grads = tx.value_and_grad(fn, argnums=(0, 1))(x, y)
    assert_tree_allclose(value, _plain(fn, x, y), rtol=1e-12, atol=1e-12)

    def fresh(x, y):          # finite differences never reuse the caller's array
        return _plain(fn, x, y)
    for argnum in (0, 1):
        assert_tree_allclose(grads[argnum], numerical_grad(fresh, (x, y), argnum),
                             rtol=1e-6, atol=1e-7)
    if np.ndim(x):
        before = np.array(x)
        tx.grad(fn)(x, y)
        assert np.array_equal(x, before), "the caller's array changed"


@pytest.mark.parametrize("fn, shape", [c for c in _cases() if c.values[1] != ()])
def test_vmap_matches_a_loop_over_examples(fn, shape):
    xs = np.stack([_x(shape) * (1.0 + 0.3 * k) for k in range(3)])
    ys = np.array([0.6, -0.4, 1.3])
    expected = np.array([_plain(fn, xs[k], ys[k]) for k in range(3)])
    assert_tree_allclose(tx.vmap(fn)(xs, ys), expected, rtol=1e-12, atol=1e-12)
    expected_grads = np.stack([tx.grad(fn)(xs[k], ys[k]) for k in range(3)])
    assert_tree_allclose(tx.vmap(tx.grad(fn))(xs, ys), expected_grads, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("fn, shape", [c for c in _cases()
                                       if c.values[1] in ((3,), ())])
def test_jit_matches_eager(fn, shape):
    x, y = _x(shape), 0.6
    assert_tree_allclose(tx.jit(fn)(x, y), _plain(fn, x, y), rtol=1e-12, atol=1e-12)
    assert_tree_allclose(tx.jit(tx.grad(fn))(x, y), tx.grad(fn)(x, y), rtol=1e-10,
                         atol=1e-12)


def test_generated_code_says_what_it_decides():
    text = tx.source(tx.grad(alias_then_aug))
    assert "x_is_array = is_array(x)" in text
    assert "if x_is_array:" in text


# Loops: a view or alias taken before the loop and changed inside it.

def view_written_in_loop(x, y):
    row = x[0]                     # a view of a 2-d x
    for i in range(2):
        row[i] = row[i] * y
    return np.sum(x * x)


def base_written_in_loop(x, y):
    row = x[0]
    for i in range(2):
        x[0, i] = x[0, i] * y      # row sees it
    return np.sum(row * row) + np.sum(x)


@pytest.mark.parametrize("fn", [view_written_in_loop, base_written_in_loop])
def test_view_and_base_in_a_loop(fn):
    x, y = _check_loop(fn, (2, 3))
    assert_tree_allclose(tx.jit(fn)(x, y), _plain(fn, x, y), rtol=1e-12)


def _check_loop(fn, shape):
    """Value and gradient against NumPy and differences, vmap against a
    loop over examples; returns the point checked."""
    x, y = _x(shape), 0.6
    value, grads = tx.value_and_grad(fn, argnums=(0, 1))(x, y)
    assert_tree_allclose(value, _plain(fn, x, y), rtol=1e-12, atol=1e-12)
    for argnum in (0, 1):
        assert_tree_allclose(grads[argnum], numerical_grad(lambda *a: _plain(fn, *a), (x, y),
                                                           argnum), rtol=1e-6, atol=1e-7)
    xs = np.stack([x, 2.0 * x])
    assert_tree_allclose(tx.vmap(fn, in_axes=(0, None))(xs, y),
                         np.array([_plain(fn, xs[0], y), _plain(fn, xs[1], y)]))
    return x, y


def aug_of_view_in_loop(x):
    acc = x[:, -1]
    for i in range(3):
        acc *= acc                 # x's column on the first pass only:
        acc = 0.5 * acc + 1.0      # then acc is a new array
    return np.sum(x)


def aug_of_alias_in_loop(x):
    acc = x
    for i in range(2):
        acc *= acc                 # x too, on every pass
    return np.sum(x)


def _scaled_then_rebound(q):
    for i in range(2):
        q *= 2.0                   # the caller's array on the first pass only:
        q = q + 1.0                # then q is a new array
    return 0.5


def callers_array_in_helper_loop(x):
    w = x * 1.0
    return _scaled_then_rebound(w) + np.sum(w)


def _check_against_references(fn):
    """Gradient equal to differences, jit and vmap to the function on copies."""
    x = _x((2, 3))
    assert_tree_allclose(tx.grad(fn)(x.copy()),
                         numerical_grad(lambda v: fn(v.copy()), (x,), 0), rtol=1e-6, atol=1e-7)
    assert_tree_allclose(tx.jit(fn)(x.copy()), fn(x.copy()), rtol=1e-13)
    xs = np.stack([x, 2.0 * x])
    assert_tree_allclose(tx.vmap(fn)(xs.copy()), np.array([fn(v.copy()) for v in xs]),
                         rtol=1e-13)


@pytest.mark.parametrize("fn", [aug_of_view_in_loop, callers_array_in_helper_loop])
def test_sharing_that_changes_after_the_first_iteration_is_peeled(fn):
    """The sharing holds in the first turn only (the name is rebound after):
    the loop's first turn is peeled into straight-line code, where it is
    followed (``canonical/loops.py``); these were refused (seed 95094: the
    caller's array had kept its old value, in every mode).  Gradient equal
    to differences, jit and vmap to the function on copies."""
    _check_against_references(fn)


def aug_alias_read_after_loop(x):
    y = x * 2.0
    z = y
    for i in range(3):
        y += 1.0                   # z too, on every pass
    return np.sum(z * z)


@pytest.mark.parametrize("fn", [aug_of_alias_in_loop, aug_alias_read_after_loop])
def test_an_alias_changed_by_op_on_every_pass_is_followed(fn):
    """``acc = x`` before a loop whose ``acc *= acc`` changes the shared
    array on every pass (``op=`` on an array is no rebinding): followed in
    every transform; it was refused (the sharing was taken to change
    between passes).  Gradient equal to differences, jit and vmap to the
    function on copies."""
    _check_against_references(fn)
    # a Python number: ``op=`` rebinds it, the other name keeps its value
    assert_tree_allclose(tx.grad(fn)(0.7), numerical_grad(fn, (0.7,), 0), rtol=1e-6)


# ``for row in x``: row is a view of x's row (x 2-d) or a number (x 1-d).

def rows_scaled_in_place(x, y):
    for row in x:
        row *= y                   # x's row, when row is a view
        row = row + 1.0            # then a new array
    return np.sum(x * x)


def items_bumped(x, y):
    t = 0.0
    for v in x:
        v += y                     # a number (x 1-d) or x's row
        t = t + np.sum(v)
    return t * np.sum(x)


def row_item_written(x, y):
    for row in x:
        row[0] = row[1] * y
    return np.sum(x * x)


@pytest.mark.parametrize("fn, shape", [(rows_scaled_in_place, (2, 3)), (items_bumped, (3,)),
                                       (items_bumped, (2, 3)), (row_item_written, (2, 3))])
def test_loop_variable_changed_in_place(fn, shape):
    _check_loop(fn, shape)
