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
