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


# float32 programs: vmap must keep the dtype a loop over the examples gives.
# A Python number is weak in NumPy (NEP 50): ``0.5 * x`` is float32 for a
# float32 ``x``; the same number given the batch axis as a float64 array was
# not (seeds 366, 818, 1490).

def number_carried_through_float32_loop(x):
    """Seed 818: a loop carry that starts as a Python number and meets
    float32 values in the loop (float32 in every example)."""
    acc = -0.8 * 0.47 ** 2
    for xi in x:
        acc = 0.7 * acc + 0.3 * (xi * xi + xi)
    return acc


def number_or_float32_by_branch(y):
    """Seed 366: a Python number replaced by a float32 value in a branch
    whose condition is per example (here true in every example)."""
    b = 0.3
    if (y ** 2).max() >= -0.95:
        b = np.dot(y, y)
    return np.log(1.0 + b * b)


def float64_scalar_or_float32_by_branch(y, t):
    """Seed 1490: a float64 NumPy scalar (np.exp of a number) replaced by a
    float32 value in the examples where ``np.mean(y) > t``."""
    b = 1.0 / (1.0 + np.exp(-(1.45 * 0.39 ** 2)))
    if np.mean(y) > t:
        b = np.sum(y * 0.48)
    return -b


def counter_and_number_in_while(x):
    """A while loop whose lanes stop at different steps: an int counter and
    a number that meets float32 values (weak in every lane until then)."""
    k = 0
    s = 0.0
    while s < 1.0 and k < 5:
        s = s + x[0] * x[0] + 0.1
        k += 1
    return s, k


def number_through_exp(x):
    """A number through np.exp is a float64 NumPy scalar, strong: it makes
    float32 values float64 (the loop over examples gives float64)."""
    acc = 0.5
    for xi in x:
        acc = np.exp(acc * 0.1) * xi
    return acc


def number_summed_in_while_then_float32(x):
    """A number accumulated in a while loop whose lanes stop at different
    steps, meeting float32 values only after the loop: still a number in
    every lane until then (float32 in every example)."""
    s = 0.0
    k = 0
    while k < 4 and k < 10.0 * x[0]:
        s = s + 0.25
        k += 1
    return s * x
