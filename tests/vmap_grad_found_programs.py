"""Programs the fuzzer (mode vmap_grad) found, shrunk; see test_vmap_grad_found.py."""
import numpy as np


def loss_seed105(x, y):
    # an element index held in a name (``tup = 0, 1``): under vmap it was
    # one part, ``y[:, (0, 1)]``, picking whole rows
    return y[0, 1]


def loss_seed295(x, y):
    return y[-1, -1]


def loss_seed281(x, y):
    return (x * (np.ones((2, 3)) * 0.5))[-1, -1]


def loss_seed269(x, y, z):
    g18 = lambda p19: p19  # noqa: E731
    v20 = g18(y * (np.ones((2, 3)) * 0.5))
    return v20[-1, -1]


def loss_seed287(x, y):
    # a loop over a range that breaks: vmap ran the body once more with every
    # lane past the end, reading ``range(2)[2]``
    acc12 = x * (np.array([0.5, -0.25]) * 0.5)
    for i14 in range(2):
        acc12 = acc12 + 0.1 * i14
        if acc12.max() >= 0.6:
            break
    return (x * acc12).sum()


def f_seed46(x, y):
    x += (np.ones((2, 3)) * 0.5)[1, :]
    return (0.5, x)


def loss_seed46(x, y):
    # ``x += <float64 array>`` writes into x's float32 array; it was
    # rebound to a float64 sum (grad, jvp and vmap gave float64)
    first, second = f_seed46(x, y)
    return first * 2.0 + np.sum(second * second)


def loss_seed1583(x, y):
    """The pair of ``zip(x, x)`` items: ``j``'s cotangent batched, ``i``'s
    (feeding only ``acc``) a shared zero."""
    acc = 0.5
    for i, j in zip(x, x):
        y = 0.7 * y + 0.3 * j * np.array([0.5, 0.25])
        acc = 0.7 * acc + 0.3 * i
    return np.sum(np.sin(y))
