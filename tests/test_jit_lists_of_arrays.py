"""jit of Python lists of arrays that a loop fills: ``np.stack``,
``np.concatenate``, ``np.array`` of them (Numba's own take tuples only:
overloads/array_lists.py), ``tuple(list)`` (a copy of the compiled list),
slices of a list of tuples, and ``sum(list)`` (Python's sum starts at
the int 0 and becomes an array: the loop's first iteration runs apart,
``Loops.peel``; an empty list is a located error, where NumPy's result
would be the number 0).  Each is
compared with the untransformed function (value and dtype), derivatives
with central finite differences, jit(vmap) with a loop over examples.
(Before: all refused, "Numba cannot compile this", fuzz seeds 300021,
300024, 300047, 300080, 300110, 300119, 300131, 300160, 300168.)"""
import numpy as np
import pytest

import tangent_x as tx
from _fd import assert_tree_allclose, numerical_grad


def scaled(x, n):
    items = []
    for i in range(n):
        items.append(x * (1.0 + 0.25 * i))
    return items


def stacked(x):
    return np.sum(np.stack(scaled(x, 3)) ** 2, axis=0)


def stacked_last_axis(x):
    return np.stack(scaled(np.sin(x), 3), axis=-1)


def concatenated(x):
    return np.concatenate([np.ravel(t) for t in scaled(x, 2)])


def concatenated_axis_1(x):
    return np.concatenate(scaled(np.cos(x), 3), axis=1)


def as_array(x):
    return np.array(scaled(x, 3)) - np.asarray(scaled(x, 2))[0]


def as_tuple(x):
    items = scaled(np.tanh(x), 2)
    tup = tuple(items)
    items.append(x)          # the tuple is a copy: it keeps two items
    return tup[0] + 2.0 * tup[-1] * len(tup)


def summed(x):
    items = []
    for i in range(3):
        items.append(np.sin(x) * (0.5 + i))
    return sum(items) * 2.0


def summed_generator(x):
    return sum(np.cos(t) for t in scaled(x, 3)[::-1])


def pairs_sliced(x):
    """A slice of a list of tuples: each item's list sliced, the items
    indexed when compiling (before: a run-time index into a tuple of an
    array and a number, seed 300160)."""
    pairs = []
    for i in range(3):
        pairs.append((np.tanh(x * i) * (1.0 + 0.25 * i), i * 0.19))
    k = sum(np.sum(t[0]) - t[1] for t in pairs[::-1])
    return k * x + [t[0] * t[1] for t in pairs[1:]][-1] + len(pairs[:2])


def summed_unbound(x, n):
    return sum(scaled(x, n))


ONE_TO_ONE = [stacked, stacked_last_axis, concatenated, concatenated_axis_1, as_array,
              as_tuple, summed, summed_generator, pairs_sliced]


def _same(got, want):
    assert np.asarray(got).dtype == np.asarray(want).dtype
    assert np.shape(got) == np.shape(want)
    np.testing.assert_allclose(got, want, rtol=1e-6 if np.asarray(want).dtype ==
                               np.float32 else 1e-12, atol=1e-12)


@pytest.mark.parametrize("f", ONE_TO_ONE, ids=lambda f: f.__name__)
def test_jit_matches_eager(f):
    for x in (np.array([[0.3, -1.2, 0.5], [1.1, 0.2, -0.7]]),
              np.array([[0.3, -1.2, 0.5], [1.1, 0.2, -0.7]], np.float32)):
        _same(tx.jit(f)(x), f(x))


def test_integer_and_boolean_items_keep_numpy_dtypes():
    def ints(x):
        items = []
        for i in range(3):
            items.append(x * i)
        return np.stack(items), np.concatenate(items), sum(items)

    def bools(x):
        items = []
        for i in range(3):
            items.append(x > 0.5 * i)
        return np.stack(items), sum(items)        # sum: 0 + bools is int64

    for f, x in ((ints, np.arange(6, dtype=np.int32).reshape(2, 3)),
                 (bools, np.array([0.3, 1.2, -0.5]))):
        for got, want in zip(tx.jit(f)(x), f(x)):
            _same(got, want)


@pytest.mark.parametrize("f", [stacked, concatenated_axis_1, as_array, as_tuple, summed,
                               summed_generator, pairs_sliced], ids=lambda f: f.__name__)
def test_jit_grad_matches_finite_differences(f):
    def loss(x):
        return np.sum(np.sin(f(x)))
    x = np.array([[0.3, -1.2, 0.5], [1.1, 0.2, -0.7]])
    assert_tree_allclose(tx.jit(tx.grad(loss))(x), numerical_grad(loss, (x,), 0),
                         rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("f", [stacked, concatenated, as_tuple, summed, pairs_sliced],
                         ids=lambda f: f.__name__)
def test_jit_vmap_matches_a_loop_over_examples(f):
    xs = np.random.RandomState(0).randn(4, 2, 3)
    got = tx.jit(tx.vmap(f))(xs)
    _same(got, np.stack([f(x) for x in xs]))


def test_shapes_that_differ_raise_numpy_errors():
    def ragged(x):
        items = []
        for i in range(2):
            items.append(x[i:])
        return np.stack(items)

    def ragged_concatenate(x):
        items = []
        for i in range(2):
            items.append(np.reshape(x, (1, -1))[:, i:])
        return np.concatenate(items, axis=0)

    x = np.array([0.3, -1.2, 0.5])
    for f in (ragged, ragged_concatenate):
        with pytest.raises(ValueError) as eager:
            f(x)
        with pytest.raises(ValueError) as compiled:
            tx.jit(f)(x)
        assert str(eager.value).startswith(str(compiled.value))


def test_sum_of_an_empty_list_of_arrays_is_a_located_error():
    """NumPy's sum of no arrays is the int 0; compiled code types the sum as
    the arrays its iterations make, so an empty list is refused at the
    user's line, never a silently different value."""
    x = np.array([0.3, -1.2, 0.5])
    f = tx.jit(summed_unbound)
    _same(f(x, 2), summed_unbound(x, 2))
    assert summed_unbound(x, 0) == 0
    with pytest.raises(tx.TransformError) as err:
        f(x, 0)
    assert "test_jit_lists_of_arrays.py:" in str(err.value)
    assert "sum" in str(err.value)
    _same(f(x, 1), summed_unbound(x, 1))     # the same compiled code, right again
