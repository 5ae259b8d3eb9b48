"""jit of lists filled in a loop with tuples (``items.append((d, x * d))``,
a comprehension of pairs).  The numba stage keeps such a list as one list
per leaf; read as the user's value (``np.array(items)``, ``items[i][j]``,
``for a, b in items``, a ppermute perm) it must be the list of items again,
not its transpose (before: ``np.array`` of it came out transposed and
``items[0][1]`` read ``items[1][0]``).  Each against eager NumPy."""
import numpy as np
import pytest

import tangent_x as tx


def as_array(x):
    items = []
    for d in range(3):
        items.append((d, x * d))
    return np.array(items)


def by_index(x):
    pairs = [(x * d, x * d + 1.0) for d in range(2)]
    return pairs[0][1] + pairs[1][0] * 10 + pairs[-1][1] * 100


def nested_loop(x):
    items = []
    for d in range(3):
        items.append((d, (x * d, x + d)))
    s = 0.0
    for a, (b, c) in items:
        s = s + a * b - c
    return s


def mixed_items(x):
    items = []
    for d in range(4):
        items.append((x * d, np.ones(2) * d))
    t = items[-2]
    return t[0] + t[1].sum() + items[1][1][0]


def as_stack(x):
    items = []
    for d in range(3):
        items.append((x * d, d))
    s = 0.0
    while items:
        a, b = items.pop()
        s = s + a * b + (items[-1][0] if items else 0.0)
    return s


@pytest.mark.parametrize("fn", [as_array, by_index, nested_loop, mixed_items, as_stack])
def test_a_list_of_tuples_filled_in_a_loop_is_its_items_under_jit(fn):
    for x in (2.0, -0.7):
        eager, compiled = fn(x), tx.jit(fn)(x)
        assert np.shape(compiled) == np.shape(eager)
        np.testing.assert_allclose(compiled, eager, rtol=1e-14, atol=1e-14)


def out_of_range(x):
    items = []
    for d in range(3):
        items.append((x * d, x + d))
    return items[5][0]


def test_an_index_past_the_items_is_an_index_error_under_jit():
    with pytest.raises(IndexError):
        out_of_range(1.0)
    with pytest.raises(IndexError):
        tx.jit(out_of_range)(1.0)


# ---- derivatives: list(...) and sum(...) of an iterable are the loops they
# are (before, builtins.list was an opaque call with no gradient, so
# grad(list(zip(a, b)) ...) was silently zero), and under jit the cotangent
# of a list of tuples is a list of tuples (zeros_like, add_at, unindex,
# tree_add item by item).

def zipped_pairs(x):
    pairs = list(zip(x[:3], x[1:4]))
    return sum(a * b for a, b in pairs)


def summed_list(x):
    acc = []
    for i in range(3):
        acc.append(x[i] * x[i + 1])
    return sum(acc) + sum(x[3:])


def list_of_enumerate(x):
    items = list(enumerate(x[:3]))
    return items[2][1] * items[2][0] + items[0][1] ** 2


def pair_items(x):
    items = []
    for d in range(4):
        items.append((x[d] * d, np.ones(2) * x[d + 1]))
    t = items[-2]
    s = 0.0
    for a, v in items:
        s = s + a * v[0]
    return t[0] + t[1].sum() + items[1][1][0] + s


LISTS = [zipped_pairs, summed_list, list_of_enumerate, pair_items]


@pytest.mark.parametrize("fn", LISTS)
def test_gradients_through_lists_equal_finite_differences(fn):
    from _fd import assert_tree_allclose, numerical_grad
    x = np.array([0.5, -1.2, 2.0, 0.7, 1.1])
    assert_tree_allclose(tx.grad(fn)(x), numerical_grad(fn, (x,), 0), rtol=1e-7, atol=1e-8)


@pytest.mark.parametrize("fn", LISTS)
def test_gradients_through_lists_equal_finite_differences_compiled(fn):
    from _fd import assert_tree_allclose, numerical_grad
    x = np.array([0.5, -1.2, 2.0, 0.7, 1.1])
    expected = numerical_grad(fn, (x,), 0)
    assert_tree_allclose(tx.jit(tx.grad(fn))(x), expected, rtol=1e-7, atol=1e-8)
    np.testing.assert_allclose(tx.jit(fn)(x), fn(x), rtol=1e-14)


def tuple_of_zip(x):
    pairs = tuple(zip(x[:2], x[2:4]))
    return pairs[0][0] * pairs[1][1] - pairs[1][0]


def test_a_tuple_of_an_iterable_differentiates_eagerly():
    """``tuple(zip(...))``: eagerly a tuple of the loop's items (under jit a
    tuple of run-time length does not compile: a located refusal)."""
    from _fd import assert_tree_allclose, numerical_grad
    x = np.array([0.5, -1.2, 2.0, 0.7])
    assert_tree_allclose(tx.grad(tuple_of_zip)(x), numerical_grad(tuple_of_zip, (x,), 0),
                         rtol=1e-7, atol=1e-8)


def dict_updated_in_a_loop(x):
    d = {"a": x[0], "b": x[1]}
    for k in ("a", "b"):
        d[k] = d[k] * 3.0
    return d["a"] * d["b"]


def test_a_dict_updated_in_a_loop_differentiates():
    """A dict carried by a loop over its keys: its item update copies it as a
    dict (before, as an array: np.copy of the dict, then an IndexError in
    the generated code)."""
    from _fd import assert_tree_allclose, numerical_grad
    x = np.array([0.5, -1.2, 2.0])
    expected = numerical_grad(dict_updated_in_a_loop, (x,), 0)
    assert_tree_allclose(tx.grad(dict_updated_in_a_loop)(x), expected, rtol=1e-7, atol=1e-8)
    assert_tree_allclose(tx.jit(tx.grad(dict_updated_in_a_loop))(x), expected,
                         rtol=1e-7, atol=1e-8)


def reversed_parts(x):
    parts = [x[:2], x[2:]]
    return np.concatenate(parts[::-1]) @ x


def extremes_of_a_list(x):
    vals = []
    for i, v in enumerate(x):
        if i % 2:
            continue
        vals.append(v ** 2)
    return max(vals) + min(vals)


def test_a_sliced_list_and_the_extremes_of_a_list_differentiate():
    """``parts[::-1]``'s cotangent goes back to the sliced positions (under
    jit it raised a TypeError inside the numba stage); ``max(vals)`` of a
    list is NumPy's max of it as an array (its adjoint failed on the list)."""
    from _fd import assert_tree_allclose, numerical_grad
    x = np.array([0.5, -1.2, 2.0, 0.7, 1.1])
    for fn in (reversed_parts, extremes_of_a_list):
        expected = numerical_grad(fn, (x,), 0)
        assert_tree_allclose(tx.grad(fn)(x), expected, rtol=1e-7, atol=1e-8)


def test_a_sliced_list_differentiates_compiled():
    from _fd import assert_tree_allclose, numerical_grad
    x = np.array([0.5, -1.2, 2.0, 0.7, 1.1])
    assert_tree_allclose(tx.jit(tx.grad(reversed_parts))(x),
                         numerical_grad(reversed_parts, (x,), 0), rtol=1e-7, atol=1e-8)
