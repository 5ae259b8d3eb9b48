"""Found by tools/fuzz.py (seed 1583, modes jac and vmap_grad), shrunk: IndexError: invalid index to scalar variable. [at lanes.py:61]"""
import numpy as np

from tangent_x import lax


def f(x, y):
    acc14 = 0.5
    for i15, j16 in zip(x, x):
        y = 0.7 * y + 0.3 * (j16 * (np.ones((2, 3)) * 0.5))[:, 0]
        acc14 = 0.7 * acc14 + 0.3 * i15
    return y


def loss(x, y):
    return np.sum(np.sin(f(x, y)))


SEED = 1583
MODES = ('jac', 'vmap_grad')
ARGS = [np.array([-0.8409008262374911, -1.0307404128957982, 0.1901247801411876]), np.array([1.3418270117574513, -1.0018363413126492])]
