"""Under jit, Python lists where they meet control flow.

A list appended to under an ``if`` in a loop, a comprehension's list
popped by ``while lst:``, a list of (number, array) tuples read back
reversed, and a variable one path leaves unassigned read by a lambda given
to ``lax.scan``: jit, jit(grad) and jit(vmap) give what the plain function
(or its eager gradient, checked against central differences; or a loop
over the examples) gives, value and dtype, on every path."""
import numpy as np
import pytest

import tangent_x as tx
from tangent_x import lax

X = np.array([0.3, 0.9, -0.2])
Y = np.array([1.0, 2.0, 0.5])


def _central_grad(f, x, eps=1e-6):
    g = np.zeros_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e.flat[i] = eps
        g.flat[i] = (f(x + e) - f(x - e)) / (2 * eps)
    return g


def _same(got, want):
    # (a Python number -- ``sum`` of no items -- is weak: compiled, it has
    # the type the other paths give, as for any loop that runs no turn)
    if not isinstance(want, (int, float)):
        assert np.asarray(got).dtype == np.asarray(want).dtype
    tol = 1e-5 if np.asarray(want).dtype == np.float32 else 1e-12    # (sums in another order)
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


# ----------------------------------------------------- appended under an if in a loop
def filtered_while(x, y):
    items = []
    i = 0
    while i < 3:
        if np.sum(x) > 0.16:
            items.append(y * x * (1.0 + 0.25 * i))
        i += 1
    return len(items) * 0.1 + sum(np.sum(t) for t in items[::-1])


def filtered_for(x, y):
    items = []
    for i in range(2):
        if np.sum(np.sin(y * x)) > 0.3:
            items.append(np.sin(x) * (1.0 + 0.25 * i))
    return len(items) * 0.1 + sum(np.sum(t) for t in items[::-1])


def filtered_by_constants(x):
    # the test reads constants only: it could be decided when compiling
    items = []
    for i in range(2):
        if np.sum(np.log(1.0 + (i * np.array([0.5, -0.25])) ** 2)) > 0.05:
            items.append(np.sin(x) * (1.0 + 0.25 * i))
    return len(items) * 0.1 + sum(np.sum(t) for t in items[::-1])


@pytest.mark.parametrize("fn", [filtered_while, filtered_for])
@pytest.mark.parametrize("sign", [1.0, -1.0])       # the if taken, or never
def test_a_list_appended_under_an_if_in_a_loop(fn, sign):
    x, y = sign * X, Y
    _same(tx.jit(fn)(x, y), fn(x, y))
    x32, y32 = x.astype(np.float32), y.astype(np.float32)
    _same(tx.jit(fn)(x32, y32), fn(x32, y32))


def test_a_list_appended_under_an_if_on_constants():
    _same(tx.jit(filtered_by_constants)(X), filtered_by_constants(X))


def test_jit_vmap_of_a_list_appended_under_an_if():
    xs = np.stack([X, -X, 2 * X])
    got = tx.jit(tx.vmap(filtered_while, in_axes=(0, None)))(xs, Y)
    want = np.array([filtered_while(x, Y) for x in xs])
    _same(got, want)


def stacked_filtered(x, y):
    items = []
    for i in range(3):
        if np.sum(x) * (i + 1) > 0.5 * i:
            items.append(x * y * (1.0 + 0.25 * i))
    return np.sum(np.stack(items) ** 2)


def test_np_stack_of_a_list_a_loop_fills():
    _same(tx.jit(stacked_filtered)(X, Y), stacked_filtered(X, Y))
    x32, y32 = X.astype(np.float32), Y.astype(np.float32)
    _same(tx.jit(stacked_filtered)(x32, y32), stacked_filtered(x32, y32))
    xs = np.stack([X, 2 * X])
    got = tx.jit(tx.vmap(stacked_filtered, in_axes=(0, None)))(xs, Y)
    _same(got, np.array([stacked_filtered(x, Y) for x in xs]))
    with pytest.raises(ValueError):       # no items: NumPy's error
        tx.jit(stacked_filtered)(np.full(3, -5.0), Y)


def concatenated_filtered(x):
    items = []
    for i in range(3):
        if np.sum(x) * (i + 1) > 0.5 * i:
            items.append(np.outer(x, x) * (1.0 + 0.25 * i))
    return np.sum(np.sin(np.concatenate([np.ravel(t) for t in items]))) + \
        np.sum(np.concatenate(items) ** 2)


def test_np_concatenate_of_a_list_a_loop_fills():
    _same(tx.jit(concatenated_filtered)(X), concatenated_filtered(X))
    x32 = X.astype(np.float32)
    _same(tx.jit(concatenated_filtered)(x32), concatenated_filtered(x32))
    with pytest.raises(ValueError):       # no items: NumPy's error
        tx.jit(concatenated_filtered)(np.full(3, -5.0))


# ----------------------------------------------------- a comprehension's list popped
def popped(x):
    lst = [0.79 - u for u in x * 1.2 if True]
    k = lst[0] * 0.0
    while lst:
        k = 0.5 * k + lst.pop()
    return 0.73 + np.cos(k)


def test_a_comprehension_list_popped_by_while():
    _same(tx.jit(popped)(X), popped(X))
    x32 = X.astype(np.float32)
    _same(tx.jit(popped)(x32), popped(x32))
    _same(tx.jit(popped)(np.linspace(-1.0, 1.0, 5)), popped(np.linspace(-1.0, 1.0, 5)))


# ----------------------------------------------------- a list of tuples read reversed
def pairs_reversed(x):
    pairs = []
    for i in range(3):
        pairs.append((np.sum(np.tanh(x)) * (1.0 + 0.25 * i), x * (0.5 + i)))
    k = sum(t[0] - np.sum(t[1] ** 2) for t in pairs[::-1])
    rest = pairs[1:]
    return k + rest[0][0] * np.sum(rest[-1][1])


def test_a_slice_of_a_list_of_number_array_tuples():
    _same(tx.jit(pairs_reversed)(X), pairs_reversed(X))
    x32 = X.astype(np.float32)
    _same(tx.jit(pairs_reversed)(x32), pairs_reversed(x32))


def test_jit_grad_of_a_slice_of_a_list_of_tuples():
    got = tx.jit(tx.grad(pairs_reversed))(X)
    np.testing.assert_allclose(got, _central_grad(pairs_reversed, X), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(got, tx.grad(pairs_reversed)(X), rtol=1e-12)


def test_jit_vmap_of_a_slice_of_a_list_of_tuples():
    xs = np.stack([X, -X, 2 * X])
    got = tx.jit(tx.vmap(pairs_reversed))(xs)
    _same(got, np.array([pairs_reversed(x) for x in xs]))


# ----------------------------------------------------- unassigned on a path, read by a lambda
def scan_of_maybe_unbound(x):
    if np.max(x) > -10.0:
        c = x * 2.0
        if np.mean(x) > 100.0:
            return np.sum(x)
    last, ys = lax.scan(lambda a, xi: (a * 0.5 + c, xi * a), x, c)
    return np.sum(last) + np.sum(ys)


def unbound_then_read(x):
    if np.max(x) > -10.0:
        c = x * 2.0
        if np.mean(x) < 100.0:
            return np.sum(x * x)
    return np.sum(c)


MODES = {"grad": tx.grad, "jit": tx.jit, "jit_grad": lambda f: tx.jit(tx.grad(f))}


@pytest.mark.parametrize("fn", [scan_of_maybe_unbound, unbound_then_read])
def test_a_variable_a_path_leaves_unassigned(fn):
    """Run where Python runs it: the value, and its gradient; where the
    path that leaves it unassigned is taken, Python's UnboundLocalError."""
    _same(tx.jit(fn)(X), fn(X))
    want = _central_grad(fn, X)
    np.testing.assert_allclose(tx.grad(fn)(X), want, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(tx.jit(tx.grad(fn))(X), want, rtol=1e-6, atol=1e-8)
    xs = np.stack([X, 2 * X])
    _same(tx.jit(tx.vmap(fn))(xs), np.array([fn(x) for x in xs]))
    bad = np.full(3, -20.0)
    with pytest.raises(NameError):          # (UnboundLocalError is one)
        fn(bad)
    for name, transform in MODES.items():
        with pytest.raises(NameError):
            transform(fn)(bad)


# ----------------------------------------------------- the gradient keeps each version
def grow_while(x):
    """A compiled while loop (its trip count is the data's) filling a list
    under an if: the gradient reads back the list as each turn began."""
    items = []
    s = np.sum(np.abs(x))
    while s < 3.0:
        if np.max(x) * s > 0.2:
            items.append(x * s)
        s = s + 0.7
    return 0.5 + sum(np.sum(t * t) for t in items)


def grow_for(x, n):
    items = []
    for i in range(n):
        if np.sum(x) * i > 0.2:
            items.append(np.sin(x) * i)
        x = np.sin(x)
    return 0.5 + sum(np.sum(t * t) for t in items) + 0.1 * len(items)


def two_loops(x, n):
    items = []
    for i in range(n):
        items.append(x * i)
    for i in range(n):
        items.append(x + i)
    return 0.5 + sum(np.sum(t * t) for t in items) + len(items)


_VERSIONS = [(filtered_while, (X, Y)), (filtered_while, (-X, Y)), (filtered_for, (X, Y)),
             (filtered_for, (-X, Y)), (filtered_by_constants, (X,)), (popped, (X,)),
             (popped, (-X,)), (grow_while, (X,)), (grow_while, (3 * X,)),
             (grow_for, (X, 5)), (grow_for, (X, 0)), (grow_for, (-X, 4)), (two_loops, (X, 3)),
             (two_loops, (-X, 2))]


@pytest.mark.parametrize("fn,args", _VERSIONS)
def test_jit_grad_of_a_list_whose_versions_the_backward_pass_reads(fn, args):
    """The gradient keeps the list as it is at each turn (its length is
    decided at run time).  A compiled list grows in place, and it only
    grows: each turn keeps its length, and the backward pass reads the list's
    first items back (``Tapes.version_length``).  Before, jit(grad) refused
    these; the gradient is the eager one and the finite differences'."""
    eager = tx.grad(fn)(*args)
    np.testing.assert_allclose(eager, _central_grad(lambda x: fn(x, *args[1:]), args[0]),
                               rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(tx.jit(tx.grad(fn))(*args), eager, rtol=1e-12, atol=1e-14)
    assert tx.jit(fn)(*args) == pytest.approx(fn(*args), rel=1e-14)


def test_a_list_grown_in_place_keeps_its_versions_by_length():
    """The compiled code pushes each turn's length, not the list, and the
    forward loop appends in place."""
    code = tx.source(tx.jit(tx.grad(grow_while)), stage="numba", example_args=(X,))
    assert "items_1_lengths" in code and "[:length]" in code
    assert ".append(x_times_s_1)" in code and "list(items" not in code


def sum_but_last(y):
    lst = [np.maximum(u, 0.1) * (0.5 + k) for k, u in enumerate(y)]
    return sum(t * 0.5 for t in lst[:-1])


def popped_for_its_effect(y):
    items = []
    for v in y:
        items.append(v * v)
    items.pop()
    return sum(items) + len(items)


@pytest.mark.parametrize("f", [sum_but_last, popped_for_its_effect])
def test_a_pop_for_its_effect_is_compiled(f):
    """``lst[:-1]`` of a list read no more is ``lst.pop()`` in the python
    stage; compiled, a pop whose item nobody reads was dropped, so the
    last item stayed in the sum (fuzz seed 320001: a wrong value)."""
    y = np.array([0.3, -0.2, 0.9, 1.4])
    assert tx.jit(f)(y) == pytest.approx(f(y), rel=1e-14)
    ys = np.stack([y, y[::-1] * 0.5])
    np.testing.assert_allclose(tx.jit(tx.vmap(f))(ys), [f(row) for row in ys], rtol=1e-14)
    g = tx.jit(tx.grad(f))(y)
    eye = np.eye(4) * 1e-6
    fd = np.array([(f(y + e) - f(y - e)) / 2e-6 for e in eye])
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("fn,rest", [(grow_while, ()), (filtered_while, (Y,))])
def test_per_example_gradients_of_a_list_whose_versions_are_kept(fn, rest):
    """jit(vmap(grad)): each example's loop keeps its own list's versions."""
    xs = np.stack([X, 3 * X, -X, 0.5 * X])
    g = tx.grad(fn)
    want = np.stack([g(x, *rest) for x in xs])
    in_axes = (0,) + (None,) * len(rest)
    np.testing.assert_allclose(tx.jit(tx.vmap(g, in_axes=in_axes))(xs, *rest), want,
                               rtol=1e-12, atol=1e-14)


def rows_of_empty_lists(x):
    rows = []
    s = np.sum(np.abs(x))
    while s < 3.0:
        rows.append([])
        s = s + 0.7
    total = 0.0
    for i in range(len(rows)):
        total = total + len(rows[i]) + 1.0
    return total * x


def test_a_list_of_empty_lists_is_not_read_as_versions():
    """Only a derivative's stack of a list's versions keeps lengths: a list
    the code reads by index keeps its (empty) items, refused compiled as
    before, never read back as numbers."""
    assert rows_of_empty_lists(X) is not None
    with pytest.raises(tx.TransformError, match="test_jit_lists_control_flow.py:"):
        tx.jit(rows_of_empty_lists)(X)
