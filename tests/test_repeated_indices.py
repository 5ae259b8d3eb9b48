"""In-place updates through an index that repeats a position (issue #17, item 4).

NumPy's ``y[idx] += v`` is ``y[idx] = y[idx] + v``: a gather, then an
assignment where the last value written to a repeated position is kept.  So
only that last write's value (and the one read it came from) reaches the
result; an earlier duplicate gets a zero cotangent.  ``y.at[idx].add(v)``
and ``np.add.at`` accumulate instead, as in JAX.  Every form is checked
against NumPy for the value and against central differences for every
derivative (grad, vjp, jvp, second order, hessian), vmap against a loop
over examples; two compiled (jit) checks at the end."""
import numpy as np
import pytest

import tangent_x as tx
from _fd import assert_tree_allclose, numerical_grad
from tangent_x.runtime import last_writes
from tangent_x.test_util import check_grads

W = np.array([1.0, 2.0, 3.0, 5.0])
IDX = np.array([0, 2, 0])
NEG = np.array([-1, 3, 1])          # -1 and 3 are the same position of a length-4 y
MASK = np.array([True, False, True, True])
W2 = np.array([[1.0, 2.0], [3.0, 5.0]])


def add(y, v):
    y = y * 1.0
    y[IDX] += v
    return np.sum(np.sin(y) * W)


def sub(y, v):
    y = y * 1.0
    y[IDX] -= v
    return np.sum(np.sin(y) * W)


def mul(y, v):
    y = y * 1.0
    y[IDX] *= v
    return np.sum(np.sin(y) * W)


def div(y, v):
    y = y * 1.0
    y[IDX] /= v
    return np.sum(np.sin(y) * W)


def assign(y, v):
    y = y * 1.0
    y[IDX] = v * v
    return np.sum(np.sin(y) * W)


def assign_negative(y, v):
    y = y * 1.0
    y[NEG] = v * v
    return np.sum(np.sin(y) * W)


def add_negative(y, v):
    y = y * 1.0
    y[NEG] += v * y[0]
    return np.sum(np.sin(y) * W)


def list_index(y, v):
    y = y * 1.0
    y[[0, 0, 3]] += v
    return np.sum(np.sin(y) * W)


def mask(y, v):
    y = y * 1.0
    y[MASK] += v
    return np.sum(np.sin(y) * W)


def stepped_slices(y, v):
    y = y * 1.0
    y[::2] *= v[:2]
    y[::-3] = v[1:]
    return np.sum(np.sin(y) * W)


def at_set(y, v):
    return np.sum(np.sin(y.at[IDX].set(v * y[1])) * W)


def at_add(y, v):
    return np.sum(np.sin(y.at[IDX].add(v * y[1])) * W)


def ufunc_add_at(y, v):
    y = y * 1.0
    np.add.at(y, IDX, v)
    return np.sum(np.sin(y) * W)


def rows(y, v):
    Y = np.reshape(y, (2, 2)) * 1.0
    Y[np.array([1, 1, 0])] += np.reshape(v[:2], (1, 2)) * v[2]
    return np.sum(np.sin(Y) * W2)


def columns(y, v):
    Y = np.reshape(y, (2, 2)) * 1.0
    Y[:, np.array([1, 1])] = np.reshape(v[:2], (1, 2)) * v[2]
    return np.sum(np.sin(Y) * W2)


def pairs(y, v):
    Y = np.reshape(y, (2, 2)) * 1.0
    Y[np.array([0, 1, 0]), np.array([1, 0, 1])] += v
    return np.sum(np.sin(Y) * W2)


def _at_set_numpy(y, v):
    y = y.copy()
    y[IDX] = v * y[1]
    return np.sum(np.sin(y) * W)


def _at_add_numpy(y, v):
    y = y.copy()
    np.add.at(y, IDX, v * y[1])
    return np.sum(np.sin(y) * W)


FORMS = [add, sub, mul, div, assign, assign_negative, add_negative, list_index, mask,
         stepped_slices, at_set, at_add, ufunc_add_at, rows, columns, pairs]
# what NumPy computes (``x.at`` is JAX's spelling: NumPy has no ``.at``)
NUMPY = {at_set: _at_set_numpy, at_add: _at_add_numpy}


def numpy_of(f):
    ref = NUMPY.get(f, f)
    return lambda y, v: ref(y.copy(), v.copy())


def _point(seed=0):
    rng = np.random.default_rng(seed)
    return rng.uniform(0.5, 1.5, 4), rng.uniform(0.5, 1.5, 3)


def test_the_issue_example():
    def f(y, v):
        y = y * 1.0
        y[np.array([0, 0])] += v
        return np.sum(y * np.array([6.0]))
    y_bar, v_bar = tx.grad(f, argnums=(0, 1))(np.array([1.0]), np.array([1.0, 2.0]))
    np.testing.assert_array_equal(y_bar, [6.0])
    np.testing.assert_array_equal(v_bar, [0.0, 6.0])


@pytest.mark.parametrize("f", FORMS, ids=lambda f: f.__name__)
def test_value_and_first_derivatives(f):
    y, v = _point()
    ref = numpy_of(f)
    with tx.disable_jit():
        assert tx.jit(f)(y, v) == pytest.approx(ref(y, v), rel=1e-12)
    expected = numerical_grad(ref, (y, v), argnum=(0, 1))
    assert_tree_allclose(tx.grad(f, argnums=(0, 1))(y, v), expected)
    out, pullback = tx.vjp(f, y, v)
    assert out == pytest.approx(ref(y, v), rel=1e-12)
    assert_tree_allclose(pullback(1.0), expected)
    t = np.random.default_rng(1).normal(size=4), np.random.default_rng(2).normal(size=3)
    _, out_dot = tx.jvp(f, (y, v), t)
    assert out_dot == pytest.approx(np.sum(expected[0] * t[0]) + np.sum(expected[1] * t[1]),
                                    rel=1e-6)


@pytest.mark.parametrize("f", FORMS, ids=lambda f: f.__name__)
def test_second_derivatives(f):
    y, v = _point(3)
    with tx.disable_jit():      # ``x.at`` runs only transformed: through jit's Python stage
        check_grads(tx.jit(f) if f in NUMPY else f, (y, v), order=2)
    eps = 1e-5
    grad_y = tx.grad(f)
    columns = [(grad_y(y + eps * e, v) - grad_y(y - eps * e, v)) / (2 * eps) for e in np.eye(4)]
    np.testing.assert_allclose(tx.hessian(f)(y, v), np.stack(columns, axis=1),
                               rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("f", FORMS, ids=lambda f: f.__name__)
def test_vmap_and_vmap_of_grad_against_a_loop(f):
    rng = np.random.default_rng(4)
    Y, V = rng.uniform(0.5, 1.5, (3, 4)), rng.uniform(0.5, 1.5, (3, 3))
    ref = numpy_of(f)
    np.testing.assert_allclose(tx.vmap(f)(Y, V), [ref(Y[b], V[b]) for b in range(3)],
                               rtol=1e-12)
    got = tx.vmap(tx.grad(f, argnums=(0, 1)))(Y, V)
    for b in range(3):
        assert_tree_allclose((got[0][b], got[1][b]),
                             numerical_grad(ref, (Y[b], V[b]), argnum=(0, 1)))


@pytest.mark.parametrize("f", [add, assign, columns], ids=lambda f: f.__name__)
def test_grad_of_vmap(f):
    """The lane helper ``set_index`` (vmap's spelling of ``x[i] = v``) has the
    same rule."""
    rng = np.random.default_rng(5)
    Y, V = rng.uniform(0.5, 1.5, (3, 4)), rng.uniform(0.5, 1.5, (3, 3))
    weights = np.array([1.0, 2.0, 3.0])
    vf = tx.vmap(f)
    ref = numpy_of(f)

    def total(Y, V):
        return np.sum(vf(Y, V) * weights)

    def total_numpy(Y, V):
        return sum(ref(Y[b], V[b]) * weights[b] for b in range(3))
    assert_tree_allclose(tx.grad(total, argnums=(0, 1))(Y, V),
                         numerical_grad(total_numpy, (Y, V), argnum=(0, 1)))


def test_last_writes_keeps_only_the_last_value_written_to_a_position():
    g = np.array([10.0, 20.0, 30.0, 40.0])
    index = np.array([1, -3, 2, 1])            # -3 is position 1 too
    np.testing.assert_array_equal(last_writes(g[index], index, g), [0.0, 0.0, 30.0, 20.0])
    rows_g = np.arange(6.0).reshape(3, 2)
    index = np.array([2, 0, 2])
    np.testing.assert_array_equal(last_writes(rows_g[index], index, rows_g),
                                  [[0.0, 0.0], [0.0, 1.0], [4.0, 5.0]])
    index = (np.array([0, 0]), np.array([1, 1]))
    np.testing.assert_array_equal(last_writes(rows_g[index], index, rows_g), [0.0, 1.0])


def test_last_writes_returns_unique_and_basic_selections_as_they_are():
    """No position written twice: nothing is copied or multiplied."""
    g = np.arange(5.0)
    for index in (np.array([4, 0, 2]), slice(None, None, 2), 3, np.array([1, 0, 1, 0, 1]) > 0):
        items = g[index]
        assert last_writes(items, index, g) is items


@pytest.mark.slow        # Numba compiles: CI's slow step
def test_jit_grad_with_repeated_indices():
    y, v = _point(6)
    for f in (add, assign_negative, columns):
        expected = numerical_grad(numpy_of(f), (y, v), argnum=(0, 1))
        assert_tree_allclose(tx.jit(tx.grad(f, argnums=(0, 1)))(y, v), expected)


@pytest.mark.slow        # Numba compiles: CI's slow step
def test_jit_vmap_of_grad_with_repeated_rows():
    rng = np.random.default_rng(7)
    Y, V = rng.uniform(0.5, 1.5, (3, 4)), rng.uniform(0.5, 1.5, (3, 3))
    got = tx.jit(tx.vmap(tx.grad(rows, argnums=(0, 1))))(Y, V)
    for b in range(3):
        assert_tree_allclose((got[0][b], got[1][b]),
                             numerical_grad(numpy_of(rows), (Y[b], V[b]), argnum=(0, 1)))
