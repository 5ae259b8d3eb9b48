"""Found by tools/fuzz.py (seed 194, mode vmap_grad), shrunk: IndexError: index 3 is out of bounds for axis 0 with size 3 [at lanes.py:58]"""
import numpy as np

from tangent_x import lax


def f(x):
    zipped4 = list(zip(np.linspace(-1.0, 1.0, 3) * 0.5, np.linspace(-1.0, 1.0, 3) * 0.5))
    lst3 = [x * u2 for u1, u2 in zipped4]
    k5 = min(lst3) + 0.5 * lst3[1]
    return k5


def loss(x):
    return f(x)


SEED = 194
MODES = ('jac', 'vmap_grad')
ARGS = [-0.761]
