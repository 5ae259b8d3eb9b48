"""Found by tools/fuzz.py (seed 91000, mode vmap_grad), shrunk: IndexError: index 3 is out of bounds for axis 0 with size 3 [at lanes.py:58]"""
import numpy as np

from tangent_x import lax


def f(x, y):
    if y > 0.5:
        return 0.5
    for i6 in y * x:
        return np.maximum(i6, 0.1)
    l7 = lax.fori_loop(0, 2, lambda i9, a8: 0.6 * a8 + 0.4 * i9, y)
    return l7


def loss(x, y):
    return f(x, y)


SEED = 91000
MODE = 'vmap_grad'
ARGS = [np.array([1.0542743343975043, 1.2385979322920213, -0.296094617565307]), -0.532]
