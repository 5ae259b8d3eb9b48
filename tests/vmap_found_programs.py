"""Programs the fuzzer (tests/fuzzing) found vmap/vmap(grad) failing on,
shrunk (tools/fuzz.py; seeds in each docstring)."""
import numpy as np

import tangent_x as tx

from tangent_x import lax


def f_seed19(x, y, p):
    """seed 19: the output does not depend on p['b']: its gradient is a
    symbolic zero that must come out (batch, *shape)."""
    pb = p['b']
    l2 = lax.fori_loop(0, 4, lambda i4, a3: 0.6 * a3 + 0.4 * a3, x)
    if l2:
        return 0.5
    c6 = y * 1.0
    for i7 in range(1, 2):
        c6[i7] = c6[i7] * pb + np.sin(c6[i7 - 1])
    return l2


def loss_seed19(x, y, p):
    return np.sum(np.sin(f_seed19(x, y, p)))


def f_seed1(x, y, z, p):
    """seed 1: p['w'] is unused (a None gradient leaf in the dict)."""
    pb = p['b']
    c1 = y * 1.0
    c1[:, :2] = pb
    return c1


def loss_seed1(x, y, z, p):
    return np.sum(np.sin(f_seed1(x, y, z, p)))


def loss_dict_unused(a, q):
    return np.sum(a * q['b'])


def carry_grows_over_rows(x):
    """A loop variable that starts a number and becomes a vector."""
    s = 0.0
    for row in np.arctan(x):
        s = s + np.sin(row) * row
    return np.sum(s)


def carry_grows_with_shared_vector(y, k):
    i = 0
    while i < 3:
        y = -k * y + np.sin(y)
        i = i + 1
    return np.sum(y * y)


def dot_of_shared_with_batched(x, y):
    """The adjoint of np.dot for x reads only shared values (the other
    operand and the seed): the batching rule wrote a batch index no
    operand had (an einsum error)."""
    return np.dot(np.linspace(-1.0, 1.0, 3) * 0.5, x * (np.linspace(-1.0, 1.0, 3) * 0.5)) * y


def _early_returns(x, y):
    if x[0] > 0.3:
        return np.sum(y)
    if x[1] > 0.3:
        return np.sum(x * y)
    return np.sum(y * 2.0)


_per_example = tx.vmap(_early_returns, in_axes=(None, 0), method="loop")


def sum_of_a_per_example_loop(x, y):
    return np.sum(_per_example(x, y))
