"""Found by tools/fuzz.py (seed 1246, mode grad_vmap), shrunk: TypeError: only 0-dimensional arrays can be converted to Python scalars [at api.py:360]"""
import numpy as np

from tangent_x import lax


def f(x, y):
    if 0.5:
        return (y, y)
    return x


def loss(x, y):
    first, second = f(x, y)
    return first * 2.0 + np.sum(second)


SEED = 1246
MODE = 'grad_vmap'
ARGS = [np.array([[-1.3815107045565995, 0.8015174276552925, -1.1533043362403643], [-0.169132778645932, -0.5299604771834621, 0.07619467925020773]]), 0.342]
